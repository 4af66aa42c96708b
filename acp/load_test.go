package acp

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/e2e/fakeeditor"
)

const loadThreadID = "01a20602-22f9-7a33-a8c4-4064f84c2b10"

// codexHomeWithRollout makes a CODEX_HOME holding the rollout of
// loadThreadID (a real codex 0.169 rollout from events' test data).
func codexHomeWithRollout(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	dir := filepath.Join(home, "sessions", "2026", "11", "23")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join("..", "events", "testdata", "rollout", "edit_command_resume.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rollout-2026-11-23T01-25-33-"+loadThreadID+".jsonl"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CODEX_HOME", home)
	return home
}

func TestSessionsPersistListAndLoad(t *testing.T) {
	codexHomeWithRollout(t)
	state := t.TempDir()
	be := &fakeBackend{script: playLines(
		`{"type":"thread.started","thread_id":"`+loadThreadID+`"}`, `{"type":"turn.started"}`,
		`{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"hi"}}`,
		`{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":0,"output_tokens":10,"reasoning_output_tokens":0}}`)}
	cwd := t.TempDir()

	// First agent process: one session, one turn, a mode change.
	h1 := startAgentWith(t, Options{Backend: be, StateDir: state}, fakeeditor.Options{})
	init, err := h1.editor.Initialize(h1.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !init.AgentCapabilities.LoadSession || init.AgentCapabilities.SessionCapabilities.List == nil {
		t.Errorf("load/list not advertised with a state dir: %+v", init.AgentCapabilities)
	}
	resp, err := h1.editor.Conn.NewSession(h1.ctx, sdk.NewSessionRequest{Cwd: cwd, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	sid := resp.SessionId
	if _, err := h1.prompt(sid, "Please edit the file\nwith details"); err != nil {
		t.Fatal(err)
	}
	if _, err := h1.editor.Conn.SetSessionMode(h1.ctx, sdk.SetSessionModeRequest{SessionId: sid, ModeId: "auto"}); err != nil {
		t.Fatal(err)
	}

	// Second agent process on the same state: list and load.
	h2 := startAgentWith(t, Options{Backend: be, StateDir: state}, fakeeditor.Options{})
	if _, err := h2.editor.Initialize(h2.ctx); err != nil {
		t.Fatal(err)
	}
	list, err := h2.editor.Conn.ListSessions(h2.ctx, sdk.ListSessionsRequest{Cwd: &cwd})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Sessions) != 1 || list.Sessions[0].SessionId != sid || list.Sessions[0].Title == nil ||
		*list.Sessions[0].Title != "Please edit the file" || list.Sessions[0].UpdatedAt == nil {
		t.Fatalf("session/list = %+v", list.Sessions)
	}
	other := t.TempDir()
	if l, _ := h2.editor.Conn.ListSessions(h2.ctx, sdk.ListSessionsRequest{Cwd: &other}); len(l.Sessions) != 0 {
		t.Errorf("cwd filter: %+v", l.Sessions)
	}

	load, err := h2.editor.Conn.LoadSession(h2.ctx, sdk.LoadSessionRequest{SessionId: sid, Cwd: cwd, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if load.Modes == nil || load.Modes.CurrentModeId != "auto" {
		t.Errorf("restored mode = %+v", load.Modes)
	}
	kinds := strings.Join(fakeeditor.UpdateKinds(h2.editor.Updates()), ",")
	if kinds != "user_message_chunk,agent_thought_chunk,tool_call,tool_call,agent_message_chunk,user_message_chunk,agent_message_chunk" {
		t.Errorf("history replay = %s", kinds)
	}

	// The loaded session resumes the stored thread.
	if _, err := h2.prompt(sid, "continue"); err != nil {
		t.Fatal(err)
	}
	runs := be.invocations()
	if last := runs[len(runs)-1]; last.ThreadID != loadThreadID || last.Sandbox != "workspace-write" {
		t.Errorf("after load: run = %+v", last)
	}
}

func TestLoadSessionErrors(t *testing.T) {
	codexHomeWithRollout(t)
	state := t.TempDir()
	h := startAgentWith(t, Options{Backend: &fakeBackend{}, StateDir: state}, fakeeditor.Options{})
	if _, err := h.editor.Initialize(h.ctx); err != nil {
		t.Fatal(err)
	}
	cwd := t.TempDir()
	_, err := h.editor.Conn.LoadSession(h.ctx, sdk.LoadSessionRequest{SessionId: "sess_unknown", Cwd: cwd, McpServers: []sdk.McpServer{}})
	var re *sdk.RequestError
	if !errors.As(err, &re) || re.Code != -32602 || !strings.Contains(re.Message, "unknown session") {
		t.Errorf("unknown session: %v", err)
	}
	_, err = h.editor.Conn.LoadSession(h.ctx, sdk.LoadSessionRequest{SessionId: "../../etc/passwd", Cwd: cwd, McpServers: []sdk.McpServer{}})
	if err == nil {
		t.Error("a path as session id was accepted")
	}

	// A stored session whose codex thread is gone cannot be loaded.
	st := &sessionStore{dir: state}
	if err := st.save(sessionRecord{SessionID: "sess_gone", ThreadID: "no-such-thread", Cwd: cwd, Mode: ModeAsk}); err != nil {
		t.Fatal(err)
	}
	_, err = h.editor.Conn.LoadSession(h.ctx, sdk.LoadSessionRequest{SessionId: "sess_gone", Cwd: cwd, McpServers: []sdk.McpServer{}})
	if !errors.As(err, &re) || !strings.Contains(re.Message, "no rollout") {
		t.Errorf("missing rollout: %v", err)
	}
}

// TestObserveStoredSeesWhatListAndLoadRead checks the hook the transcript
// recorder copies stored files through: a list reports the records it
// returns (not those of other workspaces), a load the record and the
// rollout, and a failed load nothing it did not read.
func TestObserveStoredSeesWhatListAndLoadRead(t *testing.T) {
	home := codexHomeWithRollout(t)
	rollout := filepath.Join(home, "sessions", "2026", "11", "23", "rollout-2026-11-23T01-25-33-"+loadThreadID+".jsonl")
	state := t.TempDir()
	cwd, other := t.TempDir(), t.TempDir()
	st := &sessionStore{dir: state}
	for _, rec := range []sessionRecord{
		{SessionID: "sess_here", ThreadID: loadThreadID, Cwd: cwd, Mode: ModeAsk},
		{SessionID: "sess_elsewhere", ThreadID: loadThreadID, Cwd: other, Mode: ModeAsk},
		{SessionID: "sess_gone", ThreadID: "no-such-thread", Cwd: cwd, Mode: ModeAsk},
	} {
		if err := st.save(rec); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var seen []string
	observe := func(path string) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, path)
	}
	h := startAgentWith(t, Options{Backend: &fakeBackend{}, StateDir: state, ObserveStored: observe}, fakeeditor.Options{})
	if _, err := h.editor.Initialize(h.ctx); err != nil {
		t.Fatal(err)
	}
	record := func(id string) string { return filepath.Join(state, id+".json") }
	tests := []struct {
		name string
		call func() error
		want []string
	}{
		{"list of a workspace", func() error {
			_, err := h.editor.Conn.ListSessions(h.ctx, sdk.ListSessionsRequest{Cwd: &other})
			return err
		}, []string{record("sess_elsewhere")}},
		{"load", func() error {
			_, err := h.editor.Conn.LoadSession(h.ctx, sdk.LoadSessionRequest{SessionId: "sess_here", Cwd: cwd, McpServers: []sdk.McpServer{}})
			return err
		}, []string{record("sess_here"), rollout}},
		{"load without a rollout", func() error {
			_, err := h.editor.Conn.LoadSession(h.ctx, sdk.LoadSessionRequest{SessionId: "sess_gone", Cwd: cwd, McpServers: []sdk.McpServer{}})
			if err == nil {
				return errors.New("loaded a session without a rollout")
			}
			return nil
		}, []string{record("sess_gone")}},
		{"load of an unknown session", func() error {
			_, err := h.editor.Conn.LoadSession(h.ctx, sdk.LoadSessionRequest{SessionId: "sess_unknown", Cwd: cwd, McpServers: []sdk.McpServer{}})
			if err == nil {
				return errors.New("loaded an unknown session")
			}
			return nil
		}, nil},
	}
	for _, tt := range tests {
		mu.Lock()
		seen = nil
		mu.Unlock()
		if err := tt.call(); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		mu.Lock()
		got := seen
		mu.Unlock()
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: observed %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestNoStateDirNoLoad(t *testing.T) {
	h := startAgent(t, &fakeBackend{}, fakeeditor.Options{})
	init, err := h.editor.Initialize(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if init.AgentCapabilities.LoadSession || init.AgentCapabilities.SessionCapabilities.List != nil {
		t.Errorf("load/list advertised without a state dir")
	}
	_, err = h.editor.Conn.ListSessions(h.ctx, sdk.ListSessionsRequest{})
	var re *sdk.RequestError
	if !errors.As(err, &re) || re.Code != -32601 {
		t.Errorf("session/list: %v", err)
	}
}

func TestSessionTitle(t *testing.T) {
	for in, want := range map[string]string{
		"fix the bug":            "fix the bug",
		"  first line\nsecond":   "first line",
		strings.Repeat("é", 100): strings.Repeat("é", 79) + "…",
		"":                       "",
	} {
		if got := sessionTitle(in); got != want {
			t.Errorf("sessionTitle(%q) = %q, want %q", in, got, want)
		}
	}
}
