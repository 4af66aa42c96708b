package acp

import (
	"context"
	"log/slog"
	"strings"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/events"
)

// turnFailure answers a prompt whose turn codex ended as failed
// (end.FailedMessage is set), on either backend: what happened and what to
// do (events.ClassifyFailure, docs/errors.md) goes to the editor as agent
// text and the prompt ends with its stop reason; credentials OpenAI refused
// answer auth_required, so that the client offers sign-in (a custom model
// provider's refusal does not: no sign-in is offered for it). Never -32603:
// that says codexacp broke.
func (a *Agent) turnFailure(ctx context.Context, s *session, end events.Outcome, log *slog.Logger) (acpsdk.PromptResponse, error) {
	be := a.opts.Backend
	f := end.Failure(events.FailureContext{Now: time.Now(), Limits: be.LastRateLimits(), CanCompact: be.Capabilities().Has(backend.Compact),
		CustomProvider: a.opts.Auth.CustomProvider})
	log.Warn("turn failed", "kind", f.Kind, "message", end.FailedMessage)
	if f.AuthRequired {
		return acpsdk.PromptResponse{}, authRequired(strings.TrimPrefix(f.Message, "⚠ "))
	}
	s.trMu.Lock()
	updates := s.translator.Notice(f.Message)
	s.trMu.Unlock()
	for _, u := range updates {
		a.sendUpdate(ctx, s.id, u)
	}
	return acpsdk.PromptResponse{StopReason: f.StopReason, Usage: end.Usage.ACP()}, nil
}
