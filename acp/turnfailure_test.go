package acp

import (
	"context"
	"strings"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/codex/execrun"
	"github.com/codexacp/codexacp/codex/proc"
	"github.com/codexacp/codexacp/events"
	"github.com/codexacp/codexacp/internal/fakeeditor"
)

// failingBackend plays a failed codex exec turn (exit status 1, as codex
// exec exits) and, when limits is set, knows the account's usage limits
// as the app-server backend does.
type failingBackend struct {
	fakeBackend
	limits *events.RateLimits
}

func newFailingBackend(t *testing.T, fixture string) *failingBackend {
	lines := fixtureLines(t, fixture)
	return &failingBackend{fakeBackend: fakeBackend{script: func(ctx context.Context, n int, inv execrun.Invocation, onLine func([]byte)) error {
		_ = playLines(lines...)(ctx, n, inv, onLine)
		return &proc.ExitError{Code: 1}
	}}}
}

type limitedBackend struct{ *failingBackend }

func (b limitedBackend) Capabilities() backend.Capabilities { return backend.RateLimits }
func (b limitedBackend) LastRateLimits() *events.RateLimits { return b.limits }
func (b limitedBackend) RateLimits(context.Context) ([]events.RateLimits, error) {
	return []events.RateLimits{*b.limits}, nil
}

// namedBackend is a backend under another name.
type namedBackend struct {
	*failingBackend
	name string
}

func (b namedBackend) Name() string { return b.name }

// agentText is the agent_message_chunk text the editor got.
func agentText(ed *fakeeditor.Editor) string {
	var b strings.Builder
	for _, n := range ed.Updates() {
		if c := n.Update.AgentMessageChunk; c != nil && c.Content.Text != nil {
			b.WriteString(c.Content.Text.Text)
		}
	}
	return b.String()
}

// A failed turn ends the prompt with the cause and the action, never with
// -32603 (before: "Codex turn failed: …" as an internal error).
func TestTurnFailureEndsPromptWithExplanation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		fixture string
		stop    acpsdk.StopReason
		want    []string
	}{
		{"turn_failed_context_window.jsonl", acpsdk.StopReasonEndTurn, []string{"context window", "Start a new session"}},
		{"turn_failed_usage_limit.jsonl", acpsdk.StopReasonEndTurn, []string{"usage limit", "Wait until it resets"}},
		{"turn_failed_http429_retries.jsonl", acpsdk.StopReasonEndTurn, []string{"rate-limiting", "send the prompt again"}},
		{"turn_failed_http400.jsonl", acpsdk.StopReasonEndTurn, []string{"refused codex's request as invalid", "mock bad request"}},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			h := startAgent(t, newFailingBackend(t, tc.fixture), fakeeditor.Options{})
			sid := h.newSession(t, t.TempDir())
			resp, err := h.prompt(sid, "hi")
			if err != nil {
				t.Fatalf("prompt: %v, want a stop reason", err)
			}
			if resp.StopReason != tc.stop {
				t.Errorf("stopReason = %q, want %q", resp.StopReason, tc.stop)
			}
			if err := h.editor.Sync(h.ctx); err != nil {
				t.Fatal(err)
			}
			text := agentText(h.editor)
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("agent text %q lacks %q", text, w)
				}
			}
			// Codex's own text shows once (exec's error event), not again.
			first := strings.Index(text, "⚠ ")
			if first < 0 || strings.Count(text, text[first+len("⚠ "):first+len("⚠ ")+12]) != 1 {
				t.Errorf("codex's message repeated or missing: %q", text)
			}
		})
	}
}

func TestTurnFailureUnauthorizedIsAuthRequired(t *testing.T) {
	t.Parallel()
	h := startAgent(t, newFailingBackend(t, "turn_failed_http401.jsonl"), fakeeditor.Options{})
	sid := h.newSession(t, t.TempDir())
	_, err := h.prompt(sid, "hi")
	wantAuthRequired(t, err, "OpenAI refused codex's credentials", "codex login", "Incorrect API key provided")
}

// With a model provider of the user's own (no sign-in offered), a 401 is
// that provider refusing its key: the turn ends saying to check it, not
// auth_required, which would send the user to an OpenAI sign-in that
// authenticate then answers with "no sign-in is needed".
func TestTurnFailureUnauthorizedCustomProvider(t *testing.T) {
	t.Parallel()
	h := startAgentWith(t, Options{Backend: newFailingBackend(t, "turn_failed_http401.jsonl"), Auth: Auth{CustomProvider: "ollama"}}, fakeeditor.Options{})
	sid := h.newSession(t, t.TempDir())
	resp, err := h.prompt(sid, "hi")
	if err != nil || resp.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("prompt = %+v, %v; want end_turn", resp, err)
	}
	if err := h.editor.Sync(h.ctx); err != nil {
		t.Fatal(err)
	}
	text := agentText(h.editor)
	for _, w := range []string{`The model provider "ollama" refused codex's credentials`, "env_key", "Incorrect API key provided"} {
		if !strings.Contains(text, w) {
			t.Errorf("agent text %q lacks %q", text, w)
		}
	}
	if strings.Contains(text, "codex login") {
		t.Errorf("agent text %q sends the user to codex login", text)
	}
}

// The usage limit's reset comes from the limits codex sent (app-server).
func TestTurnFailureUsageLimitSaysWhenItResets(t *testing.T) {
	t.Parallel()
	reset := time.Now().Add(90 * time.Minute).Unix()
	b := newFailingBackend(t, "turn_failed_usage_limit.jsonl")
	b.limits = &events.RateLimits{LimitID: "codex", Primary: &events.RateLimitWindow{UsedPercent: 100, ResetsAt: &reset}}
	h := startAgent(t, limitedBackend{b}, fakeeditor.Options{})
	sid := h.newSession(t, t.TempDir())
	if _, err := h.prompt(sid, "hi"); err != nil {
		t.Fatal(err)
	}
	if err := h.editor.Sync(h.ctx); err != nil {
		t.Fatal(err)
	}
	if text := agentText(h.editor); !strings.Contains(text, "it resets at ") || !strings.Contains(text, "(in 1 h 30 min)") {
		t.Errorf("agent text %q does not say when the limit resets", text)
	}
}

func TestStatusShowsUsageLimits(t *testing.T) {
	t.Parallel()
	reset := time.Now().Add(2 * time.Hour).Unix()
	mins := int64(300)
	b := newFailingBackend(t, "turn_failed_usage_limit.jsonl")
	b.limits = &events.RateLimits{LimitID: "codex", Primary: &events.RateLimitWindow{UsedPercent: 42, WindowMinutes: &mins, ResetsAt: &reset}}
	for _, tc := range []struct {
		backend backend.Backend
		want    string
	}{
		{limitedBackend{b}, "- Usage limit (5 h window): 42% used, resets at "},
		{namedBackend{b, "mine"}, "- Usage limits: not available with the mine backend ("},
	} {
		h := startAgent(t, tc.backend, fakeeditor.Options{})
		sid := h.newSession(t, t.TempDir())
		if _, err := h.editor.WaitForCommands(h.ctx, sid); err != nil {
			t.Fatal(err)
		}
		if _, err := h.prompt(sid, "/status"); err != nil {
			t.Fatal(err)
		}
		if err := h.editor.Sync(h.ctx); err != nil {
			t.Fatal(err)
		}
		if text := agentText(h.editor); !strings.Contains(text, tc.want) {
			t.Errorf("/status %q lacks %q", text, tc.want)
		}
	}
}
