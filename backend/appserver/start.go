package appserver

import (
	"context"
	"time"

	"github.com/codexacp/codexacp/internal/recovery"
)

// Start implements backend.Backend: it starts the app-server in the
// background if none runs or is starting, so that the first session's
// thread (Warm) finds it running or on its way. Close waits for it, and
// cuts a start in progress short.
func (b *Backend) Start() {
	b.mu.Lock()
	if b.closed || b.server != nil || b.starting != nil {
		b.mu.Unlock()
		return
	}
	b.warming.Add(1) // under b.mu: Close sets closed under it before it waits
	b.mu.Unlock()
	go func() {
		defer b.warming.Done()
		defer recovery.Recover(b.log, "starting codex app-server ahead", nil)
		ctx, cancel := context.WithTimeout(b.life, time.Minute)
		defer cancel()
		if _, err := b.running(ctx); err != nil {
			b.log.Warn("could not start codex app-server ahead; the session's first need starts it", "err", err)
		}
	}()
}

// warmInOrder makes p the latest thread Warm prepares (under b.mu) and
// returns the done of the one before it, which p's preparation waits for
// (awaitTurn): threads warmed for sessions opened one after another start
// in that order, also when they all wait for the app-server's start (a
// burst of session/new right after launch, which no longer waits for the
// previous session's commands). Codex then sees the same requests in the
// same order every time, which a replay's fake app-server, matching
// requests by method and order, relies on; and a burst started them one
// at a time before as well.
func (b *Backend) warmInOrder(p *preparedThread) <-chan struct{} {
	prev := b.lastWarm
	b.lastWarm = p.done
	return prev
}

// awaitTurn waits for after (nil: at once) or Close.
func (b *Backend) awaitTurn(after <-chan struct{}) {
	if after == nil {
		return
	}
	select {
	case <-after:
	case <-b.life.Done():
	}
}
