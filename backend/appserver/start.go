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
