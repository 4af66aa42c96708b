package acp

import (
	"context"
	"time"

	"github.com/codexacp/codexacp/fsops"
)

// Tool calls belong to the turn during which codex made them. The session
// tracks the ones in flight so that a turn ends only after its tool calls
// did: a cancelled turn cancels their contexts (pending permission
// questions, editor fs requests and lock waits end with it), and the prompt
// answers after their last update (or marks them failed if they do not
// finish in time). Calls arriving while no turn runs write nothing.

// toolCallGrace bounds how long a turn's end waits for its tool calls once
// codex has exited and their context is cancelled.
const toolCallGrace = 2 * time.Second

// turnCalls is the tool-call state of the running turn, guarded by
// session.mu.
type turnCalls struct {
	ctx    context.Context // cancelled when the turn ends; nil when idle
	cancel context.CancelFunc
	calls  map[string]*turnCall
	// ended is closed (and replaced) whenever a call is done, waking
	// finishToolCalls.
	ended chan struct{}
}

// turnCall is one tool call of the running turn.
type turnCall struct {
	reporting bool          // its last update is being written
	change    *fsops.Change // the computed change, for the completion update
	release   func()        // releases the call's context
}

// startToolCalls opens the turn's tool-call scope, derived from the turn.
func (s *session) startToolCalls(turn context.Context) {
	ctx, cancel := context.WithCancel(turn)
	s.mu.Lock()
	s.calls = turnCalls{ctx: ctx, cancel: cancel, calls: map[string]*turnCall{}, ended: make(chan struct{})}
	s.mu.Unlock()
}

// callBegin registers a tool call with the running turn and returns the
// context the call runs under: it ends with the call's request or with the
// turn. It reports false (and ctx unchanged) when no turn runs.
func (s *session) callBegin(ctx context.Context, id string) (context.Context, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.calls.ctx == nil || s.calls.ctx.Err() != nil {
		return ctx, false
	}
	merged, release := mergeContext(ctx, s.calls.ctx)
	s.calls.calls[id] = &turnCall{release: release}
	return merged, true
}

// callContext is the context that ends with the call's turn; false when the
// call does not belong to the running turn.
func (s *session) callContext(id string) (context.Context, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.calls.ctx == nil || s.calls.calls[id] == nil {
		return nil, false
	}
	return s.calls.ctx, true
}

// setChange keeps a call's computed change for its completion update.
func (s *session) setChange(id string, ch *fsops.Change) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.calls.calls[id]; c != nil {
		c.change = ch
	}
}

// callReporting marks a call as writing its last update and returns its
// change. It reports false when the call was not registered, or was given
// up when its turn ended: then it must not report.
func (s *session) callReporting(id string) (*fsops.Change, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.calls.calls[id]
	if c == nil || c.reporting {
		return nil, false
	}
	c.reporting = true
	return c.change, true
}

// callDone ends a call whose last update has been written.
func (s *session) callDone(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.calls.calls[id]
	if c == nil {
		return
	}
	c.release()
	delete(s.calls.calls, id)
	close(s.calls.ended)
	s.calls.ended = make(chan struct{})
}

// finishToolCalls closes the turn's scope: it cancels what is still running,
// waits up to grace for those calls to write their last update, and returns
// the ids of the ones still running then (their later reports are dropped).
func (s *session) finishToolCalls(grace time.Duration) []string {
	s.mu.Lock()
	if s.calls.cancel == nil {
		s.mu.Unlock()
		return nil
	}
	s.calls.cancel()
	s.mu.Unlock()

	deadline := time.NewTimer(grace)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		ended := s.calls.ended
		if len(s.calls.calls) == 0 {
			s.calls = turnCalls{}
			s.mu.Unlock()
			return nil
		}
		s.mu.Unlock()
		select {
		case <-ended:
			continue
		case <-deadline.C:
		}
		break
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var left []string
	for id, c := range s.calls.calls {
		c.release()
		if !c.reporting {
			left = append(left, id)
		}
	}
	s.calls = turnCalls{} // the changes of calls given up go with it
	return left
}

// mergeContext returns a context done when either ctx or other is done.
func mergeContext(ctx, other context.Context) (context.Context, context.CancelFunc) {
	merged, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(other, cancel)
	return merged, func() {
		stop()
		cancel()
	}
}
