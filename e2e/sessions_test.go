package e2e_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/e2e/mockapi"
)

// rollouts are codex's rollout files in the env's codex home.
func (e *env) rollouts() []string {
	e.t.Helper()
	var out []string
	_ = filepath.WalkDir(filepath.Join(e.codexHome, "sessions"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), "rollout-") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// initializeResult is the agent's raw answer to initialize (the typed one
// drops what acp-go-sdk v0.13.0 has no field for, such as delete).
func (e *env) initializeResult() string {
	for _, raw := range e.editor.Raw() {
		if bytes.Contains(raw, []byte(`"agentCapabilities"`)) {
			return string(raw)
		}
	}
	e.t.Fatal("no initialize response")
	return ""
}

// session/delete removes the session from session/list and (app-server)
// codex's thread with it; deleting it again succeeds. Fork is advertised
// where it works: the app-server.
func TestSessionDelete(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		e := start(t, setup{backend: backend, fs: true})
		init := e.initializeResult()
		if !strings.Contains(init, `"delete":{}`) || strings.Contains(init, `"fork":{}`) != (backend == "app-server") {
			t.Errorf("sessionCapabilities in %s", init)
		}
		e.mock.Enqueue(mockapi.Reply(mockapi.Message("hello")))
		e.mustPrompt("hi")
		list, err := e.editor.Conn.ListSessions(e.ctx, acpsdk.ListSessionsRequest{Cwd: &e.cwd})
		if err != nil || len(list.Sessions) != 1 || len(e.rollouts()) != 1 {
			t.Fatalf("before: list %+v (%v), rollouts %v", list.Sessions, err, e.rollouts())
		}
		for i := range 2 { // the second time: already deleted, still fine
			if _, err := e.editor.Conn.CallExtension(e.ctx, "_codexacp/session/delete", map[string]any{"sessionId": e.session}); err != nil {
				t.Fatalf("delete %d: %v", i, err)
			}
		}
		list, err = e.editor.Conn.ListSessions(e.ctx, acpsdk.ListSessionsRequest{Cwd: &e.cwd})
		if err != nil || len(list.Sessions) != 0 {
			t.Errorf("after: list %+v (%v)", list.Sessions, err)
		}
		// exec: codex has no delete; its rollout stays (docs/sessions.md).
		if want := map[string]int{"exec": 1, "app-server": 0}[backend]; len(e.rollouts()) != want {
			t.Errorf("rollouts after delete: %v, want %d", e.rollouts(), want)
		}
		if _, err := e.prompt("again"); err == nil {
			t.Error("a deleted session still takes prompts")
		}
		if _, err := e.editor.Conn.LoadSession(e.ctx, acpsdk.LoadSessionRequest{SessionId: e.session, Cwd: e.cwd, McpServers: []acpsdk.McpServer{}}); err == nil {
			t.Error("a deleted session still loads")
		}
	})
}

// session/fork (app-server): the fork continues a copy of the conversation
// in the source's fast and collaboration modes, gets its commands, and the
// two diverge.
func TestSessionFork(t *testing.T) {
	e := start(t, setup{backend: "app-server", fs: true})
	e.mock.Enqueue(mockapi.Reply(mockapi.Message("noted")))
	e.mustPrompt("remember the word apple")
	if _, err := e.editor.Conn.SetSessionConfigOption(e.ctx, acpsdk.SetSessionConfigOptionRequest{ValueId: &acpsdk.SetSessionConfigOptionValueId{
		SessionId: e.session, ConfigId: "service_tier", Value: "priority"}}); err != nil {
		t.Fatalf("service_tier: %v", err)
	}
	e.setPlanMode(true)
	fork, err := e.editor.Conn.UnstableForkSession(e.ctx, acpsdk.UnstableForkSessionRequest{SessionId: e.session, Cwd: e.cwd})
	if err != nil {
		t.Fatal(err)
	}
	if fork.SessionId == e.session || fork.Modes == nil || fork.Modes.CurrentModeId != "ask" {
		t.Fatalf("fork = %+v", fork)
	}
	var opts []acpsdk.SessionConfigOption
	if b, err := json.Marshal(fork.ConfigOptions); err == nil {
		_ = json.Unmarshal(b, &opts)
	}
	if tier, collab := configValue(opts, "service_tier"), configValue(opts, "collaboration_mode"); tier != "priority" || collab != "plan" {
		t.Errorf("the fork's service_tier %q, collaboration_mode %q; want the source's priority, plan", tier, collab)
	}
	cmds, err := e.editor.WaitForCommands(e.ctx, fork.SessionId)
	if err != nil || len(cmds) == 0 || cmds[0].Name != "status" {
		t.Errorf("the fork's commands: %+v (%v)", cmds, err)
	}
	e.setPlanMode(false)
	lastUserTexts := func() string {
		reqs := e.mock.Requests()
		return strings.Join(reqs[len(reqs)-1].Texts("user"), "\n")
	}
	original := e.session
	e.session = fork.SessionId
	e.setPlanMode(false)
	e.mock.Enqueue(mockapi.Reply(mockapi.Message("apple")))
	e.mustPrompt("which word, in the fork?")
	if got := lastUserTexts(); !strings.Contains(got, "remember the word apple") || !strings.Contains(got, "which word, in the fork?") {
		t.Errorf("the fork's turn did not carry the history: %s", got)
	}
	if reqs := e.mock.Requests(); reqs[len(reqs)-1].Body["service_tier"] != "priority" {
		t.Errorf("the fork's turn asked for service_tier %v, want the source's priority", reqs[len(reqs)-1].Body["service_tier"])
	}
	e.session = original
	e.mock.Enqueue(mockapi.Reply(mockapi.Message("apple")))
	e.mustPrompt("which word, in the original?")
	if got := lastUserTexts(); !strings.Contains(got, "remember the word apple") || strings.Contains(got, "in the fork") {
		t.Errorf("the original saw the fork's turn: %s", got)
	}
	list, err := e.editor.Conn.ListSessions(e.ctx, acpsdk.ListSessionsRequest{Cwd: &e.cwd})
	if err != nil || len(list.Sessions) != 2 {
		t.Errorf("list after fork: %+v (%v)", list.Sessions, err)
	}
	b, _ := json.Marshal(list.Sessions)
	if !strings.Contains(string(b), string(fork.SessionId)) {
		t.Errorf("the fork is not listed: %s", b)
	}
}
