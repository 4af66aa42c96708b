package skillflight

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codexacp/codexacp/codex"
	"github.com/codexacp/codexacp/internal/testkit"
)

// Listings of one workspace that overlap share one request; another
// workspace's, and one that starts after the request ended, ask again.
func TestSkillListingsShareARequestInFlight(t *testing.T) {
	var f Group
	var calls atomic.Int32
	release := make(chan struct{})
	started := make(chan struct{})
	slow := func(context.Context) ([]codex.Skill, error) {
		if calls.Add(1) == 1 {
			close(started)
		}
		<-release
		return []codex.Skill{{Name: "deploy"}}, nil
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	results := make([][]codex.Skill, 20)
	wg.Go(func() { results[0], _ = f.List(ctx, "/w", slow) })
	testkit.WaitFor(t, started, "the first listing never started")
	for i := 1; i < 20; i++ {
		wg.Go(func() { results[i], _ = f.List(ctx, "/w", slow) })
	}
	// The joiners are waiting (or about to): another workspace asks anew.
	other, err := f.List(ctx, "/other", func(context.Context) ([]codex.Skill, error) { calls.Add(1); return nil, nil })
	if err != nil || other != nil {
		t.Fatalf("other workspace: %v, %v", other, err)
	}
	waitJoined(t, &f, "/w", 19)
	close(release)
	wg.Wait()
	if n := calls.Load(); n != 2 {
		t.Errorf("%d requests for 20 overlapping listings of /w and one of /other, want 2", n)
	}
	for i, r := range results {
		if len(r) != 1 || r[0].Name != "deploy" {
			t.Errorf("listing %d = %v", i, r)
		}
	}
	if _, err := f.List(ctx, "/w", func(context.Context) ([]codex.Skill, error) { calls.Add(1); return nil, errors.New("boom") }); err == nil {
		t.Error("a listing after the shared one ended did not ask again")
	}
	if n := calls.Load(); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
}

// A caller that joined a listing stops waiting when its own context ends.
func TestSkillListingsJoinerCancelled(t *testing.T) {
	var f Group
	release := make(chan struct{})
	started := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.List(context.Background(), "/w", func(context.Context) ([]codex.Skill, error) { close(started); <-release; return nil, nil })
	}()
	testkit.WaitFor(t, started, "the listing never started")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.List(ctx, "/w", nil); !errors.Is(err, context.Canceled) {
		t.Errorf("joiner with a cancelled context: %v", err)
	}
	close(release)
	testkit.WaitFor(t, done, "the listing never ended")
}

// waitJoined waits until n callers have joined cwd's listing in flight.
func waitJoined(t *testing.T, f *Group, cwd string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		f.mu.Lock()
		l := f.inFlight[cwd]
		joined := l != nil && l.joined == n
		f.mu.Unlock()
		if joined {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d callers never joined the listing of %s", n, cwd)
		}
		time.Sleep(time.Millisecond)
	}
}

// A listing that starts after codex said the skills changed asks codex
// again rather than join one that started before, which may have read the
// old skills; later callers join the new one.
func TestSkillListingsAfterChangeAskAgain(t *testing.T) {
	var f Group
	var calls atomic.Int32
	releaseOld, releaseNew := make(chan struct{}), make(chan struct{})
	startedOld := make(chan struct{})
	listing := func(release chan struct{}, started chan struct{}, skills ...string) func(context.Context) ([]codex.Skill, error) {
		return func(context.Context) ([]codex.Skill, error) {
			calls.Add(1)
			if started != nil {
				close(started)
			}
			<-release
			var list []codex.Skill
			for _, name := range skills {
				list = append(list, codex.Skill{Name: name})
			}
			return list, nil
		}
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	var before, after, joiner []codex.Skill
	oldDone := make(chan struct{})
	go func() {
		defer close(oldDone)
		before, _ = f.List(ctx, "/w", listing(releaseOld, startedOld, "deploy"))
	}()
	testkit.WaitFor(t, startedOld, "the first listing never started")
	f.mu.Lock()
	first := f.inFlight["/w"]
	f.mu.Unlock()

	f.Changed()
	wg.Go(func() { after, _ = f.List(ctx, "/w", listing(releaseNew, nil, "deploy", "review")) })
	// Either the listing asks codex (2 calls) or it joined the first.
	deadline := time.Now().Add(10 * time.Second)
	for {
		f.mu.Lock()
		joinedOld := first.joined
		f.mu.Unlock()
		if joinedOld > 0 {
			close(releaseOld)
			close(releaseNew)
			wg.Wait()
			testkit.WaitFor(t, oldDone, "the first listing never ended")
			t.Fatalf("a listing after the skills changed joined the one before: got %v", after)
		}
		if calls.Load() == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the listing after the change never asked codex")
		}
		time.Sleep(time.Millisecond)
	}
	close(releaseOld) // the old listing ends: the new one stays the one to join
	testkit.WaitFor(t, oldDone, "the first listing never ended")
	wg.Go(func() { joiner, _ = f.List(ctx, "/w", listing(releaseNew, nil, "stale")) })
	waitJoined(t, &f, "/w", 1)
	close(releaseNew)
	wg.Wait()
	if len(before) != 1 || len(after) != 2 || len(joiner) != 2 || after[1].Name != "review" {
		t.Errorf("listings: before the change %v, after %v, joining after %v", before, after, joiner)
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}
