package acp

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/codex"
	"github.com/codexacp/codexacp/events"
	"github.com/codexacp/codexacp/internal/fakeeditor"
	"github.com/codexacp/codexacp/mcp"
)

var testModels = []codex.Model{
	{Slug: "m-fast", Name: "Fast", ContextWindow: 1000, DefaultEffort: "low", Efforts: []string{"low", "medium"}},
	{Slug: "m-big", Name: "Big", ContextWindow: 2000, DefaultEffort: "medium", Efforts: []string{"low", "medium", "high", "xhigh"}},
}

// current returns each option's current value by id.
func current(opts []acpsdk.SessionConfigOption) map[string]string {
	m := map[string]string{}
	for _, o := range opts {
		m[string(o.Select.Id)] = string(o.Select.CurrentValue)
	}
	return m
}

func setConfig(h *harness, id acpsdk.SessionId, option, value string) (acpsdk.SetSessionConfigOptionResponse, error) {
	return h.editor.Conn.SetSessionConfigOption(h.ctx, acpsdk.SetSessionConfigOptionRequest{ValueId: &acpsdk.SetSessionConfigOptionValueId{
		SessionId: id, ConfigId: acpsdk.SessionConfigId(option), Value: acpsdk.SessionConfigValueId(value)}})
}

func TestConfigOptions(t *testing.T) {
	codexHomeWithRollout(t)
	be := &fakeBackend{script: oneTurn}
	state := t.TempDir()
	h := startAgentWith(t, Options{Backend: be, StateDir: state, Models: testModels}, fakeeditor.Options{})
	cwd := t.TempDir()
	resp := h.openSession(t, cwd)
	id := resp.SessionId
	if got := current(resp.ConfigOptions); got["model"] != "m-fast" || got["reasoning_effort"] != "low" || got["mode"] != "ask" {
		t.Fatalf("new session options = %v", got)
	}

	// A first turn leaves model and effort to codex's configuration.
	prompt := func() {
		t.Helper()
		if _, err := h.editor.Conn.Prompt(h.ctx, acpsdk.PromptRequest{SessionId: id, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock("hi")}}); err != nil {
			t.Fatal(err)
		}
	}
	prompt()
	if inv := be.invocations()[0]; inv.Model != "" || strings.Contains(strings.Join(inv.Config, " "), "model_reasoning_effort") {
		t.Errorf("first turn: model %q config %q", inv.Model, inv.Config)
	}

	for _, step := range []struct {
		option, value string
		want          map[string]string
		errCode       int
	}{
		{"model", "m-big", map[string]string{"model": "m-big", "reasoning_effort": "medium", "mode": "ask"}, 0},
		{"reasoning_effort", "xhigh", map[string]string{"model": "m-big", "reasoning_effort": "xhigh", "mode": "ask"}, 0},
		{"mode", "auto", map[string]string{"model": "m-big", "reasoning_effort": "xhigh", "mode": "auto"}, 0},
		{"reasoning_effort", "ultra", nil, -32602}, // not offered by m-big
		{"model", "nope", nil, -32602},
		{"colour", "red", nil, -32602},
	} {
		r, err := setConfig(h, id, step.option, step.value)
		if step.errCode != 0 {
			var re *acpsdk.RequestError
			if !errors.As(err, &re) || re.Code != step.errCode || !strings.Contains(re.Message, "available:") {
				t.Errorf("%s=%s: err = %v, want %d listing what is available", step.option, step.value, err, step.errCode)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s=%s: %v", step.option, step.value, err)
		}
		if got := current(r.ConfigOptions); !sameMap(got, step.want) {
			t.Errorf("%s=%s: options = %v, want %v", step.option, step.value, got, step.want)
		}
	}
	// Each change was announced; the mode change also as current_mode_update.
	var updates, modeUpdates int
	for _, n := range h.editor.Updates() {
		if n.Update.ConfigOptionUpdate != nil {
			updates++
		}
		if n.Update.CurrentModeUpdate != nil {
			modeUpdates++
		}
	}
	if updates != 3 || modeUpdates != 1 {
		t.Errorf("config_option_update %d, current_mode_update %d; want 3, 1", updates, modeUpdates)
	}

	// The next turn asks codex for them.
	prompt()
	inv := be.invocations()[1]
	if inv.Model != "m-big" || !strings.Contains(strings.Join(inv.Config, " "), `model_reasoning_effort="xhigh"`) || inv.Sandbox != "workspace-write" {
		t.Errorf("second turn: model %q sandbox %q config %q", inv.Model, inv.Sandbox, inv.Config)
	}

	// Stored with the session: a load in a new agent shows them again.
	h2 := startAgentWith(t, Options{Backend: be, StateDir: state, Models: testModels}, fakeeditor.Options{})
	if _, err := h2.editor.Initialize(h2.ctx); err != nil {
		t.Fatal(err)
	}
	loaded, err := h2.editor.Conn.ResumeSession(h2.ctx, acpsdk.ResumeSessionRequest{SessionId: id, Cwd: cwd, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if got := current(loaded.ConfigOptions); !sameMap(got, map[string]string{"model": "m-big", "reasoning_effort": "xhigh", "mode": "auto"}) {
		t.Errorf("resumed options = %v", got)
	}

	// set_mode keeps the mode picker in step.
	if _, err := h2.editor.Conn.SetSessionMode(h2.ctx, acpsdk.SetSessionModeRequest{SessionId: id, ModeId: "read-only"}); err != nil {
		t.Fatal(err)
	}
	var last map[string]string
	for _, n := range h2.editor.Updates() {
		if n.Update.ConfigOptionUpdate != nil {
			last = current(n.Update.ConfigOptionUpdate.ConfigOptions)
		}
	}
	if last["mode"] != "read-only" {
		t.Errorf("after set_mode the options say mode %q", last["mode"])
	}
}

func sameMap(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// Without a model catalog only the mode is offered.
func TestConfigOptionsWithoutCatalog(t *testing.T) {
	t.Parallel()
	h := startAgent(t, &fakeBackend{}, fakeeditor.Options{})
	resp := h.openSession(t, t.TempDir())
	if got := current(resp.ConfigOptions); !sameMap(got, map[string]string{"mode": "ask"}) {
		t.Errorf("options = %v", got)
	}
}

// Describing a turn waits for the catalog prepared in the background only
// as long as the turn's context lasts.
func TestTurnWaitsForTheCatalogUntilCancelled(t *testing.T) {
	t.Parallel()
	host, err := mcp.NewHost(&mcp.HostOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	release := make(chan struct{})
	a := NewAgent(Options{Tools: host, ModelInfo: func() ModelInfo {
		<-release // codex is slow to answer
		return ModelInfo{Catalog: "/cache/b.json"}
	}})
	s := newSession(newSessionID(), t.TempDir(), nil, nil, events.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if turn, _ := a.turn(ctx, s, "hi"); turn.Catalog != "" || turn.Tools != nil {
		t.Errorf("turn without the catalog = %+v, want no catalog and no tools", turn)
	}
	close(release)
	if turn, _ := a.turn(context.Background(), s, "hi"); turn.Catalog != "/cache/b.json" || turn.Tools == nil {
		t.Errorf("turn once the catalog is ready = %+v", turn)
	}
	// Ready, it is there whatever the context.
	if turn, _ := a.turn(ctx, s, "hi"); turn.Catalog != "/cache/b.json" {
		t.Errorf("cancelled turn once the catalog is ready = %+v", turn)
	}
}

// The catalog without apply_patch reaches every turn that has the file
// tools, whether it was given as a value or prepared in the background.
func TestTurnCarriesTheCatalog(t *testing.T) {
	t.Parallel()
	host, err := mcp.NewHost(&mcp.HostOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	for _, tc := range []struct {
		name string
		opts Options
		want string
	}{
		{"value", Options{Tools: host, Catalog: "/cache/a.json"}, "/cache/a.json"},
		{"prepared", Options{Tools: host, ModelInfo: func() ModelInfo { return ModelInfo{Catalog: "/cache/b.json"} }}, "/cache/b.json"},
		{"none", Options{Tools: host}, ""},
		{"no file tools", Options{Catalog: "/cache/a.json"}, ""}, // codex keeps its own apply_patch
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := NewAgent(tc.opts)
			s := newSession(newSessionID(), t.TempDir(), nil, nil, events.Options{})
			if turn, _ := a.turn(context.Background(), s, "hi"); turn.Catalog != tc.want {
				t.Errorf("turn catalog %q, want %q", turn.Catalog, tc.want)
			}
		})
	}
}

// The pickers and /status show the model and effort of the user's codex
// configuration (config.toml, as codex reports it) when codexacp names
// none, with that model's context window; a -c override wins over it.
func TestConfigOptionsFollowUserConfig(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                  string
		opts                  Options
		model, effort, window string
	}{
		{"catalog default", Options{}, "m-fast", "low", "context window 1000"},
		{"config.toml", Options{UserConfig: func() codex.UserConfig {
			return codex.UserConfig{Model: "m-big", ReasoningEffort: "high"}
		}}, "m-big", "high", "context window 2000"},
		{"config.toml model only", Options{UserConfig: func() codex.UserConfig { return codex.UserConfig{Model: "m-big"} }},
			"m-big", "medium", "context window 2000"},
		{"-c wins", Options{DefaultModel: "m-fast", UserConfig: func() codex.UserConfig {
			return codex.UserConfig{Model: "m-fast", ReasoningEffort: "medium"}
		}}, "m-fast", "medium", "context window 1000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			be := &fakeBackend{}
			opts.Backend, opts.Models, opts.ContextWindow = be, testModels, 1000
			h := startAgentWith(t, opts, fakeeditor.Options{})
			resp := h.openSession(t, t.TempDir())
			if got := current(resp.ConfigOptions); got["model"] != tc.model || got["reasoning_effort"] != tc.effort {
				t.Errorf("options = %v, want model %s effort %s", got, tc.model, tc.effort)
			}
			n := len(h.editor.Updates())
			if _, err := h.prompt(resp.SessionId, "/status"); err != nil {
				t.Fatal(err)
			}
			var text string
			for _, u := range h.editor.Updates()[n:] {
				if c := u.Update.AgentMessageChunk; c != nil && c.Content.Text != nil {
					text += c.Content.Text.Text
				}
			}
			for _, want := range []string{"Model: " + tc.model + "\n", "Reasoning effort: " + tc.effort + "\n", tc.window} {
				if !strings.Contains(text, want) {
					t.Errorf("/status lacks %q:\n%s", want, text)
				}
			}
			if len(be.invocations()) != 0 {
				t.Errorf("/status ran codex")
			}
		})
	}
}
