package appserver

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codexacp/codexacp/backend"
	codexapp "github.com/codexacp/codexacp/codex/appserver"
	"github.com/codexacp/codexacp/internal/testkit"
)

// Start starts the app-server once in the background, however often it is
// called; a turn's need then finds it running.
func TestAppServerStartAhead(t *testing.T) {
	script := filepath.Join(t.TempDir(), "codex")
	if err := os.WriteFile(script, []byte(shAnyAppServer), 0o755); err != nil {
		t.Fatal(err)
	}
	b := New(codexapp.Options{Path: script, Logger: testkit.DiscardLogger()})
	defer b.Close()
	var starts atomic.Int32
	start := b.start
	b.start = func(ctx context.Context, o codexapp.Options) (*codexapp.Server, error) {
		starts.Add(1)
		return start(ctx, o)
	}
	b.Start()
	b.Start()
	deadline := time.Now().Add(30 * time.Second)
	for {
		b.mu.Lock()
		up := b.server != nil
		b.mu.Unlock()
		if up {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no app-server 30 s after Start")
		}
		time.Sleep(time.Millisecond)
	}
	b.Start()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := b.running(ctx); err != nil {
		t.Fatal(err)
	}
	if n := starts.Load(); n != 1 {
		t.Errorf("codex app-server started %d times, want 1", n)
	}
}

// Close cuts a start in progress short and waits for it; Start after
// Close starts nothing.
func TestAppServerStartClosed(t *testing.T) {
	b := New(codexapp.Options{Logger: testkit.DiscardLogger()})
	var starts atomic.Int32
	began := make(chan struct{})
	b.start = func(ctx context.Context, _ codexapp.Options) (*codexapp.Server, error) {
		if starts.Add(1) == 1 {
			close(began)
		}
		<-ctx.Done()
		return nil, ctx.Err()
	}
	b.Start()
	<-began
	closed := make(chan error, 1)
	go func() { closed <- b.Close() }()
	select {
	case <-closed:
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not end a start in progress")
	}
	b.Start()
	b.warming.Wait()
	if n := starts.Load(); n != 1 {
		t.Errorf("%d starts, want the one before Close", n)
	}
}

// Threads warmed for sessions opened one after another while the
// app-server starts go to codex in that order, every time: a replay's fake
// app-server matches them in order.
func TestAppServerWarmInOrder(t *testing.T) {
	script := filepath.Join(t.TempDir(), "codex")
	if err := os.WriteFile(script, []byte(shAnyAppServer), 0o755); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []string
	opts := codexapp.Options{Path: script, Logger: testkit.DiscardLogger(), Trace: func(sent bool, line []byte) {
		if !sent || !strings.Contains(string(line), `"method":"thread/start"`) {
			return
		}
		for _, id := range []string{"s1", "s2", "s3", "s4"} {
			if strings.Contains(string(line), `"shell_environment_policy.set.`+sessionTagEnv+`":"`+id+`"`) {
				mu.Lock()
				order = append(order, id)
				mu.Unlock()
			}
		}
	}}
	b := New(opts)
	defer b.Close()
	release := make(chan struct{})
	start := b.start
	b.start = func(ctx context.Context, o codexapp.Options) (*codexapp.Server, error) {
		<-release // every session below waits for the start
		return start(ctx, o)
	}
	b.Start()
	cwd := t.TempDir()
	ids := []string{"s1", "s2", "s3", "s4"}
	for _, id := range ids {
		b.Warm(backend.Turn{SessionID: id, Cwd: cwd, Mode: backend.ModeAsk})
	}
	close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, id := range ids {
		if p := b.awaitPrepared(ctx, id); p == nil || p.err != nil {
			t.Fatalf("%s prepared = %+v", id, p)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(order, ids) {
		t.Errorf("thread/start sent for %v, want %v", order, ids)
	}
}
