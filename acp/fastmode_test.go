package acp

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/codex"
	"github.com/codexacp/codexacp/events"
	"github.com/codexacp/codexacp/internal/fakeeditor"
)

// tierBackend is a backend that applies service tiers (as the app-server
// does) and records each turn.
type tierBackend struct {
	backend.Unsupported
	mu    sync.Mutex
	turns []backend.Turn
}

func (b *tierBackend) Run(_ context.Context, t backend.Turn, out backend.Output) error {
	b.mu.Lock()
	b.turns = append(b.turns, t)
	b.mu.Unlock()
	out.Event(events.Event{Type: events.TypeThreadStarted, ThreadID: loadThreadID})
	out.Event(events.Event{Type: events.TypeTurnStarted})
	out.Event(events.Event{Type: events.TypeTurnCompleted, Usage: &events.Usage{}})
	return nil
}

func (b *tierBackend) Name() string { return "tiers" }

func (b *tierBackend) Capabilities() backend.Capabilities { return backend.FastMode }

func (b *tierBackend) last() backend.Turn {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.turns[len(b.turns)-1]
}

var tierModels = []codex.Model{
	{Slug: "m-tiers", Name: "Tiers", ServiceTiers: []codex.ServiceTier{{ID: "priority", Name: "Fast", Description: "1.5x speed"}}},
	{Slug: "m-plain", Name: "Plain"},
}

func TestFastModeOption(t *testing.T) {
	codexHomeWithRollout(t)
	be := &tierBackend{}
	state := t.TempDir()
	h := startAgentWith(t, Options{Backend: be, StateDir: state, Models: tierModels}, fakeeditor.Options{})
	cwd := t.TempDir()
	resp := h.openSession(t, cwd)
	id := resp.SessionId
	if got := current(resp.ConfigOptions)["service_tier"]; got != "off" {
		t.Fatalf("new session: service_tier = %q, want off", got)
	}
	for _, o := range resp.ConfigOptions {
		if o.Select.Id != "service_tier" {
			continue
		}
		var values []string
		for _, c := range *o.Select.Options.Ungrouped {
			values = append(values, string(c.Value)+"="+c.Name)
		}
		if strings.Join(values, ",") != "off=Off,priority=Fast" || o.Select.Name != "Fast mode" {
			t.Errorf("option %q: %v", o.Select.Name, values)
		}
	}
	prompt := func() backend.Turn {
		t.Helper()
		if _, err := h.editor.Conn.Prompt(h.ctx, acpsdk.PromptRequest{SessionId: id, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock("hi")}}); err != nil {
			t.Fatal(err)
		}
		return be.last()
	}
	if tier := prompt().ServiceTier; tier != "" {
		t.Errorf("before any choice the turn asks for tier %q; codex's configuration should decide", tier)
	}
	for _, step := range []struct {
		option, value string
		current       string // the picker afterwards; "-" when not offered
		turn          string // the next turn's ServiceTier
		errCode       int
	}{
		{"service_tier", "priority", "priority", "priority", 0},
		{"service_tier", "off", "off", "off", 0},
		{"service_tier", "turbo", "", "", -32602},
		{"service_tier", "priority", "priority", "priority", 0},
		{"model", "m-plain", "-", "off", 0}, // a model without tiers: no picker, the tier cleared
		{"model", "m-tiers", "priority", "priority", 0},
	} {
		r, err := setConfig(h, id, step.option, step.value)
		if step.errCode != 0 {
			var re *acpsdk.RequestError
			if !errors.As(err, &re) || re.Code != step.errCode || !strings.Contains(re.Message, "off, priority") {
				t.Errorf("%s=%s: err = %v, want %d listing off, priority", step.option, step.value, err, step.errCode)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s=%s: %v", step.option, step.value, err)
		}
		got, offered := current(r.ConfigOptions)["service_tier"]
		if (step.current == "-") == offered || (offered && got != step.current) {
			t.Errorf("%s=%s: picker %q (offered %v), want %q", step.option, step.value, got, offered, step.current)
		}
		if tier := prompt().ServiceTier; tier != step.turn {
			t.Errorf("%s=%s: the next turn asks for %q, want %q", step.option, step.value, tier, step.turn)
		}
	}

	// Stored with the session.
	h2 := startAgentWith(t, Options{Backend: be, StateDir: state, Models: tierModels}, fakeeditor.Options{})
	if _, err := h2.editor.Initialize(h2.ctx); err != nil {
		t.Fatal(err)
	}
	resumed, err := h2.editor.Conn.ResumeSession(h2.ctx, acpsdk.ResumeSessionRequest{SessionId: id, Cwd: cwd, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if got := current(resumed.ConfigOptions)["service_tier"]; got != "priority" {
		t.Errorf("resumed: service_tier = %q", got)
	}
}

// The user's -c service_tier= is the picker's starting value ("fast" is
// codex's older name for priority); the exec backend offers no picker, as
// codex exec cannot change a thread's tier after its first turn.
func TestFastModeDefaultsAndBackends(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		backend    backend.Backend
		configured string
		want       string // "-": not offered
	}{
		{"configured fast", &tierBackend{}, "fast", "priority"},
		{"configured priority", &tierBackend{}, "priority", "priority"},
		{"configured flex (not the model's)", &tierBackend{}, "flex", "off"},
		{"exec", &fakeBackend{}, "priority", "-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := startAgentWith(t, Options{Backend: tc.backend, Models: tierModels, DefaultServiceTier: tc.configured}, fakeeditor.Options{})
			resp := h.openSession(t, t.TempDir())
			got, offered := current(resp.ConfigOptions)["service_tier"]
			if (tc.want == "-") == offered || (offered && got != tc.want) {
				t.Errorf("service_tier = %q (offered %v), want %q", got, offered, tc.want)
			}
		})
	}
}
