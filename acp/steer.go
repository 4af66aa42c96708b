package acp

import (
	"context"
	"sync"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/backend"
)

// A prompt sent while one of the session's turns runs is never lost and
// never cancels that turn (see docs/codex-app-server.md, "Steering"):
//   - steered: on a backend that can (the app-server, turn/steer), it joins
//     the running turn, and answers when that turn ends, with its stop
//     reason (or its error);
//   - queued: otherwise (the exec backend, or the turn did not start, or
//     codex refused the steer: the turn was ending), it waits and runs as
//     the next turn, prompts in the order they came.
//
// session/cancel ends the running turn and every prompt sent before it:
// steered ones answer cancelled with the turn they joined, queued ones
// answer cancelled without running. A prompt sent after a cancel (while the
// cancelled turn winds down) is not cancelled: it queues, and runs.

// turnQueue lets one prompt at a time run a session's turn, and the waiting
// ones go in the order they came (a sync.Mutex does not promise that).
type turnQueue struct {
	mu      sync.Mutex
	busy    bool
	waiting []chan struct{} // closed when its prompt is handed the turn
}

// acquire waits for the session's turn, or ctx. On success the caller must
// release.
func (q *turnQueue) acquire(ctx context.Context) error {
	q.mu.Lock()
	if !q.busy {
		q.busy = true
		q.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	q.waiting = append(q.waiting, ch)
	q.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
	}
	q.mu.Lock()
	for i, w := range q.waiting {
		if w == ch {
			q.waiting = append(q.waiting[:i], q.waiting[i+1:]...)
			q.mu.Unlock()
			return context.Cause(ctx)
		}
	}
	q.mu.Unlock()
	// Handed the turn while giving up: pass it on.
	q.release()
	return context.Cause(ctx)
}

// isBusy reports whether a prompt has the turn.
func (q *turnQueue) isBusy() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.busy
}

// release hands the turn to the prompt that waited longest.
func (q *turnQueue) release() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.waiting) == 0 {
		q.busy = false
		return
	}
	ch := q.waiting[0]
	q.waiting = q.waiting[1:]
	close(ch)
}

// runningTurn is one Prompt's turn (with the follow-up turn a plan's
// approval starts) as prompts that join it see it.
type runningTurn struct {
	ctx  context.Context // the turn's: done once it is cancelled
	done chan struct{}   // closed when the Prompt running it has its answer
	resp acpsdk.PromptResponse
	err  error
}

// joinable is the running turn a new prompt may be steered into: nil when
// none runs or it is being cancelled (a prompt after a cancel is a new turn).
func (s *session) joinable() *runningTurn {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running == nil || s.running.ctx.Err() != nil {
		return nil
	}
	return s.running
}

// steer tries to hand the prompt to the running turn. ok is false when it
// was not (nothing runs, the backend cannot steer, codex refused): the
// prompt then queues for a turn of its own.
func (a *Agent) steer(ctx context.Context, s *session, text string, images []backend.Image) (resp acpsdk.PromptResponse, err error, ok bool) {
	if !a.can(backend.Steer) {
		return resp, nil, false
	}
	rt := s.joinable()
	if rt == nil {
		return resp, nil, false
	}
	log := a.log.With("session", s.id)
	if err := a.opts.Backend.Steer(ctx, s.id, text, images); err != nil {
		log.Info("the running turn cannot take the prompt", "err", err)
		return resp, nil, false
	}
	log.Info("prompt steered into the running turn")
	select {
	case <-rt.done:
	case <-ctx.Done():
		return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonCancelled}, nil, true
	}
	// The usage is the turn's: the prompt that started it reports it.
	return acpsdk.PromptResponse{StopReason: rt.resp.StopReason}, rt.err, true
}
