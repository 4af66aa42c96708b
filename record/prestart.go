package record

import (
	"time"

	"github.com/codexacp/codexacp/codex/execrun"
)

// prestarter is a Runner that can start a turn's codex before its prompt
// (execrun.Runner).
type prestarter interface {
	Prestart(inv execrun.Invocation, idle time.Duration) error
	Discard(inv execrun.Invocation)
	Close()
}

// Prestart passes on to the wrapped runner when it can prestart: a run is
// recorded when its prompt comes, whichever process takes it.
func (b *backend) Prestart(inv execrun.Invocation, idle time.Duration) error {
	if p, ok := b.inner.(prestarter); ok {
		return p.Prestart(inv, idle)
	}
	return nil
}

// Discard passes on to the wrapped runner.
func (b *backend) Discard(inv execrun.Invocation) {
	if p, ok := b.inner.(prestarter); ok {
		p.Discard(inv)
	}
}

// Close passes on to the wrapped runner.
func (b *backend) Close() {
	if p, ok := b.inner.(prestarter); ok {
		p.Close()
	}
}
