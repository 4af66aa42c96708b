package codexexec

import (
	"bytes"
	"context"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/backend/backendtest"
	"github.com/codexacp/codexacp/codex/execrun"
	"github.com/codexacp/codexacp/codex/proc"
	"github.com/codexacp/codexacp/internal/testkit"
)

// imageRunner is a LineRunner and Prestarter that checks the turn's image
// files while "codex" runs, then ends the way end says.
type imageRunner struct {
	t   *testing.T
	end func(ctx context.Context) error

	mu        sync.Mutex
	seen      [][]byte // contents of each image file, read while running
	runs      []execrun.Invocation
	prestarts []execrun.Invocation
	discards  []execrun.Invocation
}

func (r *imageRunner) Run(ctx context.Context, inv execrun.Invocation, onLine func([]byte)) error {
	r.mu.Lock()
	r.runs = append(r.runs, inv)
	for _, p := range inv.Images {
		b, err := os.ReadFile(p)
		if err != nil {
			r.t.Errorf("image file unreadable while codex runs: %v", err)
		}
		r.seen = append(r.seen, b)
	}
	r.mu.Unlock()
	return r.end(ctx)
}

func (r *imageRunner) Prestart(inv execrun.Invocation, idle time.Duration) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.prestarts = append(r.prestarts, inv)
	return nil
}

func (r *imageRunner) Discard(inv execrun.Invocation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.discards = append(r.discards, inv)
}

func (r *imageRunner) Close() {}

type discardOutput struct{ backendtest.NopOutput }

func (discardOutput) ApproveCommand(context.Context, backend.CommandApproval) backend.ApprovalDecision {
	return backend.ApprovalCancel
}

// The exec backend's image files exist while codex runs and are gone after
// the turn however it ends.
func TestExecImageFilesLifetime(t *testing.T) {
	errCrash := &proc.ExitError{Code: 139, Signal: 11}
	for _, tc := range []struct {
		name   string
		end    func(ctx context.Context) error
		cancel bool
		want   error
	}{
		{name: "completed", end: func(context.Context) error { return nil }},
		{name: "codex failed", end: func(context.Context) error { return errCrash }, want: errCrash},
		{name: "cancelled", cancel: true, end: func(ctx context.Context) error {
			<-ctx.Done()
			return context.Cause(ctx)
		}, want: context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			r := &imageRunner{t: t, end: tc.end}
			b := &Backend{Runner: r, Logger: testkit.DiscardLogger(), ImageDir: root}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancel {
				// While codex runs: a turn cancelled before writes no
				// image at all (images.TestWriteImageFilesStopsAtCancel).
				end := tc.end
				r.end = func(ctx context.Context) error {
					cancel()
					return end(ctx)
				}
			}
			turn := backend.Turn{SessionID: "s1", Cwd: t.TempDir(), Prompt: "what is this?",
				Images: []backend.Image{{MimeType: "image/png", Data: testkit.PNG(t)}, {MimeType: "image/jpeg", Data: testkit.JPEGBytes}}}
			err := b.Run(ctx, turn, discardOutput{})
			if !errors.Is(err, tc.want) {
				t.Errorf("Run = %v, want %v", err, tc.want)
			}
			if len(r.seen) != 2 || !bytes.Equal(r.seen[0], testkit.PNG(t)) || !bytes.Equal(r.seen[1], testkit.JPEGBytes) {
				t.Errorf("codex saw %d image files with other contents", len(r.seen))
			}
			if left, _ := os.ReadDir(root); len(left) != 0 {
				t.Errorf("left behind after the turn: %v", left)
			}
		})
	}
}

// A turn with images runs a codex of its own; the one waiting for the
// session's next turn, started without them, stays for the turn after.
func TestExecImageTurnKeepsWaitingCodex(t *testing.T) {
	r := &imageRunner{t: t, end: func(context.Context) error { return nil }}
	b := &Backend{Runner: r, Logger: testkit.DiscardLogger(), ImageDir: t.TempDir()}
	turn := backend.Turn{SessionID: "s1", Cwd: t.TempDir(), ThreadID: "t1", Mode: backend.ModeAsk}
	b.Prepare(turn)
	waitPrestarts(t, b)
	if len(r.prestarts) != 1 {
		t.Fatalf("prestarts = %d, want 1", len(r.prestarts))
	}

	withImage := turn
	withImage.Prompt, withImage.Images = "look", []backend.Image{{MimeType: "image/png", Data: testkit.PNG(t)}}
	if err := b.Run(context.Background(), withImage, discardOutput{}); err != nil {
		t.Fatal(err)
	}
	if len(r.runs[0].Images) != 1 {
		t.Errorf("image turn ran without its image: %+v", r.runs[0])
	}
	if sameCommand(r.runs[0], r.prestarts[0]) {
		t.Error("the image turn's command is the waiting codex's: the runner would hand it the turn")
	}
	if len(r.discards) != 0 {
		t.Errorf("waiting codex discarded by an image turn: %d", len(r.discards))
	}
	b.Prepare(turn) // after the turn: the waiting one is still right
	waitPrestarts(t, b)
	if len(r.prestarts) != 1 {
		t.Errorf("prestarts = %d after the image turn, want the first still waiting", len(r.prestarts))
	}

	plain := turn
	plain.Prompt = "and now?"
	if err := b.Run(context.Background(), plain, discardOutput{}); err != nil {
		t.Fatal(err)
	}
	if !sameCommand(r.runs[1], r.prestarts[0]) || len(r.discards) != 0 {
		t.Errorf("the next turn did not take the waiting codex: %+v", r.runs[1])
	}

	// Settings changed: the waiting codex is of no use to an image turn either.
	b.Prepare(turn)
	waitPrestarts(t, b)
	changed := withImage
	changed.Mode = backend.ModeAuto
	if err := b.Run(context.Background(), changed, discardOutput{}); err != nil {
		t.Fatal(err)
	}
	if len(r.discards) != 1 {
		t.Errorf("discards = %d, want the stale waiting codex ended", len(r.discards))
	}
}
