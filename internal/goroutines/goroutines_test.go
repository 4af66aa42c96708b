package goroutines

import (
	"runtime"
	"strings"
	"sync"
	"testing"
)

const thisPackage = "codexacp/internal/goroutines."

// parked blocks until its channel is closed.
func parked(release <-chan struct{}, wg *sync.WaitGroup) {
	defer wg.Done()
	<-release
}

func TestLeaked(t *testing.T) {
	var wg sync.WaitGroup
	older := make(chan struct{})
	wg.Add(1)
	go parked(older, &wg) // before the snapshot: never reported
	s := Take()

	release := make(chan struct{})
	wg.Add(2)
	go parked(release, &wg)
	go parked(release, &wg)
	var done sync.WaitGroup
	done.Go(func() {}) // started and ended: not reported
	done.Wait()

	// The two parked goroutines started after the snapshot are reported once
	// they have reached their receive, which is up to the scheduler: yield
	// until then (no time limit but the test's).
	left := s.Leaked(thisPackage)
	for len(left) < 2 {
		runtime.Gosched()
		left = s.Leaked(thisPackage)
	}
	if len(left) != 2 {
		t.Errorf("%d reported, want 2:\n%s", len(left), Stacks(left))
	}
	for _, g := range left {
		if !strings.Contains(g.Stack, "goroutines.parked") || g.State != "chan receive" || !g.Blocked() {
			t.Errorf("reported %d [%s]:\n%s", g.ID, g.State, g.Stack)
		}
	}
	if got := s.Leaked("no/such/package."); len(got) != 0 {
		t.Errorf("code filter: %d reported", len(got))
	}
	close(release)
	close(older)
	wg.Wait()
}

func TestParse(t *testing.T) {
	dump := `goroutine 7 [running]:
main.main()
	/x/main.go:3 +0x1

goroutine 12 [chan receive, 3 minutes]:
github.com/codexacp/codexacp/codex.(*Runner).Run.func1()
	/x/runner.go:10 +0x2
created by github.com/codexacp/codexacp/codex.(*Runner).Run in goroutine 7
	/x/runner.go:9 +0x3

goroutine 13 [runnable, locked to thread]:
runtime.goexit()

goroutine 14 [IO wait]:
internal/poll.runtime_pollWait()

goroutine 15 [GC assist marking]:
runtime.gcAssistAlloc()
`
	gs := parse(dump)
	want := []struct {
		id      uint64
		state   string
		blocked bool
	}{{7, "running", false}, {12, "chan receive", true}, {13, "runnable", false}, {14, "IO wait", true}, {15, "GC assist marking", false}}
	if len(gs) != len(want) {
		t.Fatalf("parsed %d goroutines, want %d: %+v", len(gs), len(want), gs)
	}
	for i, w := range want {
		if g := gs[i]; g.ID != w.id || g.State != w.state || g.Blocked() != w.blocked {
			t.Errorf("goroutine %d: id %d state %q blocked %v, want %d %q %v", i, g.ID, g.State, g.Blocked(), w.id, w.state, w.blocked)
		}
	}
	if !strings.HasPrefix(gs[1].Stack, "goroutine 12 [chan receive, 3 minutes]:\n") || !strings.Contains(gs[1].Stack, "created by github.com/codexacp/codexacp/codex.") {
		t.Errorf("stack of goroutine 12:\n%s", gs[1].Stack)
	}
}

func TestAllGrowsItsBuffer(t *testing.T) {
	// Enough parked goroutines that their stacks pass the first 64 KiB.
	release := make(chan struct{})
	var wg sync.WaitGroup
	for range 1000 {
		wg.Add(1)
		go parked(release, &wg)
	}
	if n := len(All()); n < 1000 {
		t.Errorf("All found %d goroutines, want at least 1000", n)
	}
	close(release)
	wg.Wait()
}
