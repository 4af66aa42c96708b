package acp

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/codexacp/codexacp/internal/goroutines"
	"github.com/codexacp/codexacp/internal/syncbuf"
)

// Serve returns why it stopped, and only once its input guard has stopped.
func TestServeReturnsWhyItStopped(t *testing.T) {
	errRead := errors.New("read failed")
	errSignal := errors.New("terminated")
	for _, tc := range []struct {
		name string
		in   func(t *testing.T) io.Reader
		stop bool // end ctx (a signal) instead of the input
		want error
	}{
		{"input ends", func(*testing.T) io.Reader { return strings.NewReader("") }, false, nil},
		{"input fails", func(*testing.T) io.Reader { return iotest.ErrReader(errRead) }, false, errRead},
		{"signal while reading", func(t *testing.T) io.Reader {
			r, w := io.Pipe() // never written: the guard blocks reading it
			t.Cleanup(func() { w.Close() })
			return r
		}, true, errSignal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := goroutines.Take()
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			if tc.stop {
				cancel(errSignal)
			}
			var out syncbuf.Buffer
			a := NewAgent(Options{Backend: &fakeBackend{}, Logger: slog.New(slog.DiscardHandler)})
			err := a.Serve(ctx, tc.in(t), &out)
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Errorf("Serve = %v, want %v", err, tc.want)
			}
			for _, g := range before.Leaked("github.com/codexacp/codexacp/acp.") {
				if strings.Contains(g.Stack, "stdioguard.(*Guard)") {
					t.Errorf("the input guard still runs after Serve returned:\n%s", g.Stack)
				}
			}
			if out.String() != "" {
				t.Errorf("wrote %q", out.String())
			}
		})
	}
}

// stuckWriter is an editor that stopped reading its input: every write
// blocks until release is closed.
type stuckWriter struct {
	entered chan struct{} // closed by the first write
	release chan struct{}
	once    sync.Once
}

func (w *stuckWriter) Write(p []byte) (int, error) {
	w.once.Do(func() { close(w.entered) })
	<-w.release
	return len(p), nil
}

// A signal stops Serve even when the input guard is stuck answering a bad
// line to an editor that no longer reads.
func TestServeStopsWhileWriteBlocked(t *testing.T) {
	t.Parallel()
	errSignal := errors.New("terminated")
	out := &stuckWriter{entered: make(chan struct{}), release: make(chan struct{})}
	defer close(out.release)
	in, feed := io.Pipe()
	defer feed.Close()
	go feed.Write([]byte("not json\n")) //nolint:errcheck // fails once the test ended
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	a := NewAgent(Options{Backend: &fakeBackend{}, Logger: slog.New(slog.DiscardHandler), shutdownGrace: time.Millisecond})
	served := make(chan error, 1)
	go func() { served <- a.Serve(ctx, in, out) }()
	<-out.entered // the guard is answering the bad line
	cancel(errSignal)
	if err := <-served; !errors.Is(err, errSignal) {
		t.Errorf("Serve = %v, want %v", err, errSignal)
	}
}
