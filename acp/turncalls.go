package acp

import (
	"context"
	"time"
)

// Tool calls belong to the turn during which codex made them. The session
// tracks the ones in flight so that a turn ends only after its tool calls
// did: a cancelled turn cancels their pending permission requests, and the
// prompt answers after their last update (or marks them failed if they do
// not finish in time). Calls arriving while no turn runs write nothing.

// toolCallGrace bounds how long a turn's end waits for its tool calls once
// codex has exited and their context is cancelled.
const toolCallGrace = 2 * time.Second

// turnCalls is the tool-call state of the running turn, guarded by
// session.mu.
type turnCalls struct {
	ctx      context.Context // cancelled when the turn ends; nil when idle
	cancel   context.CancelFunc
	inflight map[string]bool // ids of calls started and not finished
}

// startToolCalls opens the turn's tool-call scope, derived from the turn.
func (s *session) startToolCalls(turn context.Context) {
	ctx, cancel := context.WithCancel(turn)
	s.mu.Lock()
	s.calls = turnCalls{ctx: ctx, cancel: cancel, inflight: map[string]bool{}}
	s.mu.Unlock()
}

// callBegin registers a tool call with the running turn. It reports false
// when no turn runs.
func (s *session) callBegin(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.calls.ctx == nil || s.calls.ctx.Err() != nil {
		return false
	}
	s.calls.inflight[id] = true
	return true
}

// callContext is the context that ends with the call's turn; false when the
// call does not belong to the running turn.
func (s *session) callContext(id string) (context.Context, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.calls.ctx == nil || !s.calls.inflight[id] {
		return nil, false
	}
	return s.calls.ctx, true
}

// callEnd unregisters a call. It reports false when the call was not
// registered, or was given up when its turn ended: then it must not report.
func (s *session) callEnd(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.calls.inflight[id] {
		return false
	}
	delete(s.calls.inflight, id)
	return true
}

// finishToolCalls closes the turn's scope: it cancels what is still running,
// waits up to grace for those calls to end, and returns the ids of the ones
// that did not (their later reports are dropped).
func (s *session) finishToolCalls(grace time.Duration) []string {
	s.mu.Lock()
	calls := s.calls
	s.mu.Unlock()
	if calls.cancel == nil {
		return nil
	}
	calls.cancel()
	deadline := time.Now().Add(grace)
	for {
		s.mu.Lock()
		n := len(s.calls.inflight)
		if n == 0 || time.Now().After(deadline) {
			var left []string
			for id := range s.calls.inflight {
				left = append(left, id)
			}
			s.calls = turnCalls{}
			s.mu.Unlock()
			return left
		}
		s.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
	}
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
