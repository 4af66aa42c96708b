package acp

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Listings of one workspace that overlap share one request; another
// workspace's, and one that starts after the request ended, ask again.
func TestSkillListingsShareARequestInFlight(t *testing.T) {
	var f skillListings
	var calls atomic.Int32
	release := make(chan struct{})
	started := make(chan struct{})
	slow := func(context.Context) ([]Skill, error) {
		if calls.Add(1) == 1 {
			close(started)
		}
		<-release
		return []Skill{{Name: "deploy"}}, nil
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	results := make([][]Skill, 20)
	wg.Go(func() { results[0], _ = f.list(ctx, "/w", slow) })
	<-started
	for i := 1; i < 20; i++ {
		wg.Go(func() { results[i], _ = f.list(ctx, "/w", slow) })
	}
	// The joiners are waiting (or about to): another workspace asks anew.
	other, err := f.list(ctx, "/other", func(context.Context) ([]Skill, error) { calls.Add(1); return nil, nil })
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
	if _, err := f.list(ctx, "/w", func(context.Context) ([]Skill, error) { calls.Add(1); return nil, errors.New("boom") }); err == nil {
		t.Error("a listing after the shared one ended did not ask again")
	}
	if n := calls.Load(); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
}

// A caller that joined a listing stops waiting when its own context ends.
func TestSkillListingsJoinerCancelled(t *testing.T) {
	var f skillListings
	release := make(chan struct{})
	started := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.list(context.Background(), "/w", func(context.Context) ([]Skill, error) { close(started); <-release; return nil, nil })
	}()
	<-started
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.list(ctx, "/w", nil); !errors.Is(err, context.Canceled) {
		t.Errorf("joiner with a cancelled context: %v", err)
	}
	close(release)
	<-done
}

// waitJoined waits until n callers have joined cwd's listing in flight.
func waitJoined(t *testing.T, f *skillListings, cwd string, n int) {
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
