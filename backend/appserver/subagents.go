package appserver

import (
	"context"
	"encoding/json"
	"sync"

	codexapp "github.com/codexacp/codexacp/codex/appserver"
	"github.com/codexacp/codexacp/codex/appserver/protocol"
	"github.com/codexacp/codexacp/events"
)

// Subagents on the app-server (see docs/codex-app-server.md, "Subagents"):
// codex runs a spawned agent in a thread of its own, whose notifications
// and requests name that child thread, not the session's. A parent turn's
// item naming a child (events.Item.ChildThreads) routes the child thread to
// the parent's turn until that turn's Run returns: the child's tool calls
// show in the session like the parent's (its edits go through our tools,
// as diffs), its messages in the content of the parent's tool call that
// named it (events.ChildEvent), and its approvals and questions go to the
// user as the parent's would. The parent's Run waits for the child turns
// still running when the parent's turn ends, so the prompt answers once its
// subagents are done; a cancel interrupts them along with the parent's turn.

// subagents are the child threads routed to one parent turn.
type subagents struct {
	route func(thread string, h codexapp.Handler) (remove func()) // nil: not routed (tests)

	mu       sync.Mutex
	children map[string]*childThread
	ended    bool // the parent's Run is returning: nothing more is routed
}

// add routes thread to the parent, once: callID is the parent's tool call
// item that named it (the subagent's messages show there); called from the
// parent's Notify.
func (s *subagents) add(parent *TurnHandler, thread, callID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended || s.route == nil || s.children[thread] != nil {
		return
	}
	if s.children == nil {
		s.children = map[string]*childThread{}
	}
	c := &childThread{parent: parent, callID: callID, conv: events.NewAppServer(), done: turnDone{}}
	c.remove = s.route(thread, c)
	s.children[thread] = c
	parent.log.Info("subagent thread routed to the turn", "thread", thread)
}

// running is each child thread's turn still running.
func (s *subagents) running() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{}
	for thread, c := range s.children {
		if turn, _ := c.current(); turn != "" {
			out[thread] = turn
		}
	}
	return out
}

// wait returns once no child turn runs (true), or when stop or ctx ends
// first (false). A child that starts a turn while others end is waited for too.
func (s *subagents) wait(ctx context.Context, stop <-chan struct{}) bool {
	for {
		var pending <-chan struct{}
		s.mu.Lock()
		for _, c := range s.children {
			if turn, done := c.current(); turn != "" {
				pending = done
				break
			}
		}
		s.mu.Unlock()
		if pending == nil {
			return true
		}
		select {
		case <-pending:
		case <-stop:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// end removes the child routes: what the children do later is not the
// turn's.
func (s *subagents) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended = true
	for _, c := range s.children {
		c.remove()
	}
}

// childThread receives a child thread's notifications and requests on
// behalf of the parent turn.
type childThread struct {
	parent *TurnHandler
	callID string // the parent's tool call item that named the child
	remove func()

	mu   sync.Mutex
	conv *events.AppServer // used only by Notify, on the client's reader goroutine
	turn string            // the child's running turn; "" when none
	done turnDone
}

// current is the child's running turn and the channel closed when it ends.
func (c *childThread) current() (string, <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.turn == "" {
		return "", nil
	}
	return c.turn, c.done.of(c.turn)
}

// Notify implements codexapp.Handler: the child's turn is tracked,
// its tool calls and messages go to the parent turn's output
// (events.ChildEvent).
func (c *childThread) Notify(method string, params json.RawMessage) {
	turn := turnOf(params)
	c.mu.Lock()
	switch method {
	case protocol.TurnStarted.Method():
		if turn != "" {
			c.turn = turn
			c.done.of(turn)
		}
	case protocol.TurnCompleted.Method():
		if turn != "" {
			c.done.close(turn)
			if c.turn == turn {
				c.turn = ""
			}
		}
	}
	evs, err := c.conv.Convert(method, params)
	c.mu.Unlock()
	if err != nil {
		c.parent.log.Warn("unreadable app-server notification of a subagent", "method", method, "err", err)
	}
	h := c.parent
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	for _, ev := range evs {
		if ev, ok := events.ChildEvent(ev, c.callID); ok {
			h.trackMCPCall(ev)
			h.out.Event(ev)
		}
	}
	h.closeIfOver()
}

// Request implements codexapp.Handler: the child's approvals and
// questions are the parent turn's.
func (c *childThread) Request(ctx context.Context, method string, params json.RawMessage) (any, error) {
	return c.parent.Request(ctx, method, params)
}
