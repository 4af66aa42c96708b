package appserver

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/codexacp/codexacp/backend"
	codexapp "github.com/codexacp/codexacp/codex/appserver"
	"github.com/codexacp/codexacp/internal/testkit"
)

// shAnyAppServer is a stand-in `codex app-server` in sh that answers
// thread/start with a thread and any other request with an empty result.
const shAnyAppServer = `#!/bin/sh
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/^{"id":\([0-9]*\),.*/\1/p')
  [ -n "$id" ] || continue
  case "$line" in
  *'"method":"initialize"'*) echo "{\"id\":$id,\"result\":{\"userAgent\":\"sh\"}}" ;;
  *'"method":"thread/start"'*) echo "{\"id\":$id,\"result\":{\"thread\":{\"id\":\"th$id\"}}}" ;;
  *) echo "{\"id\":$id,\"result\":{}}" ;;
  esac
done
`

// A burst of sessions has threads started ahead for MaxWarm of them at
// most: codex keeps every thread it loads until it exits. A session beyond
// gets its thread when a request needs it, and once a prepared thread has
// been taken or forgotten, the next session is prepared again.
func TestAppServerWarmBounded(t *testing.T) {
	script := filepath.Join(t.TempDir(), "codex")
	if err := os.WriteFile(script, []byte(shAnyAppServer), 0o755); err != nil {
		t.Fatal(err)
	}
	b := New(codexapp.Options{Path: script, Logger: testkit.DiscardLogger()})
	b.MaxWarm = 3
	defer b.Close()
	cwd := t.TempDir()
	turn := func(i int) backend.Turn {
		return backend.Turn{SessionID: fmt.Sprintf("s%02d", i), Cwd: cwd, Mode: backend.ModeAsk}
	}
	prepared := func() []string {
		b.mu.Lock()
		defer b.mu.Unlock()
		var ids []string
		for id := range b.prepared {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		return ids
	}
	for i := 1; i <= 20; i++ {
		b.Warm(turn(i))
	}
	if got, want := prepared(), []string{"s01", "s02", "s03"}; !slices.Equal(got, want) {
		t.Fatalf("prepared after 20 sessions: %v, want %v", got, want)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, id := range []string{"s01", "s02", "s03"} {
		if p := b.awaitPrepared(ctx, id); p == nil || p.err != nil || p.thread == "" {
			t.Fatalf("%s prepared = %+v", id, p)
		}
	}
	if err := b.RenameThread(ctx, turn(7), "x"); err != nil {
		t.Errorf("thread request of a session not prepared ahead: %v", err)
	}
	if p := b.awaitPrepared(ctx, "s07"); p == nil || p.thread == "" {
		t.Errorf("s07 has no thread after its request: %+v", p)
	}
	b.Forget("s01")
	b.Forget("s07")
	b.Warm(turn(21))
	if got, want := prepared(), []string{"s02", "s03", "s21"}; !slices.Equal(got, want) {
		t.Errorf("prepared: %v, want %v", got, want)
	}
}

// Sessions that never send their first prompt (restored, then left) do not
// keep the bound for good: a thread ready for warmStale stops counting, and
// stays its session's. One being prepared counts however long it takes.
func TestAppServerWarmStaleStopsCounting(t *testing.T) {
	release := make(chan struct{})
	b := New(codexapp.Options{Logger: testkit.DiscardLogger()})
	b.MaxWarm = 2
	defer b.Close()
	b.start = func(ctx context.Context, _ codexapp.Options) (*codexapp.Server, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil, fmt.Errorf("no app-server in this test")
	}
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	later := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	prepared := func() []string {
		b.mu.Lock()
		defer b.mu.Unlock()
		return slices.Sorted(maps.Keys(b.prepared))
	}
	awaitAll := func() { // as sessions that only wait: not awaitPrepared, a thread request's
		t.Helper()
		b.mu.Lock()
		all := slices.Collect(maps.Values(b.prepared))
		b.mu.Unlock()
		for _, p := range all {
			testkit.WaitFor(t, p.done, "a session was never prepared")
		}
	}
	warm := func(ids ...string) {
		for _, id := range ids {
			b.Warm(backend.Turn{SessionID: id})
		}
	}

	warm("s1", "s2", "s3")
	later(time.Hour) // still being prepared: they count
	warm("s4")
	if got, want := prepared(), []string{"s1", "s2"}; !slices.Equal(got, want) {
		t.Fatalf("prepared while in flight: %v, want %v", got, want)
	}
	close(release)
	awaitAll()
	warm("s5")
	later(warmStale - time.Second)
	warm("s6")
	if got, want := prepared(), []string{"s1", "s2"}; !slices.Equal(got, want) {
		t.Fatalf("prepared before warmStale: %v, want %v", got, want)
	}
	later(time.Second)
	warm("s7", "s8", "s9")
	if got, want := prepared(), []string{"s1", "s2", "s7", "s8"}; !slices.Equal(got, want) {
		t.Fatalf("prepared after warmStale: %v, want %v (the first ones kept, two more ahead)", got, want)
	}
}
