package acp

import (
	"context"
	"maps"
	"strings"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

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

// rateLimitsMeta is the key of a usage_update's _meta that carries the
// account's usage limits: codex's latest RateLimitSnapshot (limitId,
// primary and secondary windows with usedPercent, windowDurationMins and
// resetsAt in Unix seconds, credits, planType), as the app-server sent it.
// ACP's usage_update has no field for a plan's windows.
const rateLimitsMeta = "codex/rateLimits"

// withRateLimits adds the account's latest usage limits to a usage_update
// (each turn's end sends one), where the backend knows them; other updates
// pass unchanged.
func (a *Agent) withRateLimits(u acpsdk.SessionUpdate) acpsdk.SessionUpdate {
	if u.UsageUpdate == nil || !a.can(backend.RateLimits) {
		return u
	}
	l := a.opts.Backend.LastRateLimits()
	if l == nil {
		return u
	}
	uu := *u.UsageUpdate
	meta := make(map[string]any, len(uu.Meta)+1)
	maps.Copy(meta, uu.Meta)
	meta[rateLimitsMeta] = l
	uu.Meta = meta
	u.UsageUpdate = &uu
	return u
}
