package acp

import (
	"context"
	"strings"
	"time"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/events"
)

// rateLimitLines are /status's lines about usage limits.
func (a *Agent) rateLimitLines(ctx context.Context) string {
	if !a.opts.Backend.Capabilities().Has(backend.RateLimits) {
		return "- Usage limits: not available with the " + a.opts.Backend.Name() + " backend (it reports none; `--backend app-server` shows them)\n"
	}
	ls, err := a.opts.Backend.RateLimits(ctx)
	if err != nil {
		a.log.Debug("usage limits unknown", "err", err)
		return "- Usage limits: not known yet (codex reports them with its first model response of this agent; reading them ahead needs a ChatGPT sign-in)\n"
	}
	return strings.TrimRight(events.FormatRateLimits(ls, time.Now()), "\n") + "\n"
}
