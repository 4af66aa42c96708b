package recovery

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

func TestRecover(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	before, _ := Recovered()
	var err error
	var wg sync.WaitGroup
	wg.Go(func() {
		defer Recover(log, "a refresh", &err)
		var m map[string]int
		//lint:ignore SA5000 the bug this test recovers from
		m["x"] = 1
	})
	wg.Wait()
	var pe *PanicError
	if !errors.As(err, &pe) || pe.What != "a refresh" || !strings.Contains(err.Error(), "assignment to entry in nil map") {
		t.Fatalf("err = %v", err)
	}
	// Logged once, with the stack of the panic (this test's function).
	if got := strings.Count(buf.String(), "recovered from a panic"); got != 1 {
		t.Errorf("logged %d times:\n%s", got, buf.String())
	}
	if !strings.Contains(buf.String(), "TestRecover.func1") {
		t.Errorf("the log has no stack of the panic:\n%s", buf.String())
	}
	if n, all := Recovered(); n != before+1 || all[len(all)-1] != pe {
		t.Errorf("Recovered = %d, %v", n, all)
	}
	// Main fails a package on it; a test's own Injected panics are fine.
	dropLastKept()
	if code := Main(runs(0)); code != 0 {
		t.Errorf("Main without panics = %d", code)
	}
	func() { defer Recover(log, "injected", nil); panic(Injected("on purpose")) }()
	if code := Main(runs(0)); code != 0 {
		t.Errorf("Main after an injected panic = %d", code)
	}
	func() { defer Recover(log, "a bug", nil); panic("a bug") }()
	if code := Main(runs(0)); code != 1 {
		t.Errorf("Main after a panic = %d", code)
	}
	dropLastKept() // this package's own TestMain would fail on it
}

// dropLastKept forgets the last panic kept, under mu as Handle keeps them:
// another test's goroutine may recover one at the same time.
func dropLastKept() {
	mu.Lock()
	defer mu.Unlock()
	kept = kept[:len(kept)-1]
}

// Without a panic nothing happens and the error is left alone.
func TestRecoverNoPanic(t *testing.T) {
	err := errors.New("kept")
	func() { defer Recover(nil, "x", &err) }()
	if err == nil || err.Error() != "kept" {
		t.Errorf("err = %v", err)
	}
	if Handle(nil, "x", nil) != nil {
		t.Error("Handle(nil) != nil")
	}
}

type runs int

func (r runs) Run() int { return int(r) }
