package e2e_test

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/e2e/mockapi"
	"github.com/codexacp/codexacp/internal/testkit"
)

// The editor's own MCP servers (session/new mcpServers) in every mode: a
// tool codex cannot tell is read-only asks the editor on the app-server
// backend (read-only, ask and auto), runs as configured on exec in auto and
// full-access (no one to ask), and is refused in read-only and ask mode on
// exec (ask mode must not run it without a question); read-only tools run
// everywhere.
// docs/codex.md, "The editor's MCP servers".

// mcpFixtureBin builds e2e/mcpfixture once, next to the agent binary,
// linked again only when it changed (testkit.BuildCommands).
var mcpFixtureBin = sync.OnceValues(func() (string, error) {
	bins, err := testkit.BuildCommands(binDir, "github.com/codexacp/codexacp/e2e/mcpfixture")
	if err != nil {
		return "", fmt.Errorf("building mcpfixture: %w", err)
	}
	return bins[0], nil
})

// fixtureServer is the MCP fixture as the editor passes it, run from a copy
// in dir, writing what its note tool records to notes.
func fixtureServer(t *testing.T, dir, notes string) acpsdk.McpServer {
	t.Helper()
	built, err := mcpFixtureBin()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(built)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "mcpfixture")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return acpsdk.McpServer{Stdio: &acpsdk.McpServerStdio{Name: "fixture", Command: bin, Args: []string{},
		Env: []acpsdk.EnvVariable{{Name: "MCPFIXTURE_LOG", Value: notes}}}}
}

// mcpSession opens the test's session with the fixture as the editor's MCP
// server, in mode; it returns the file the note tool writes. The fixture
// runs from the test's temporary directory, so that a recorded transcript
// names no path of the machine (see recordCorpus).
func (e *env) mcpSession(t *testing.T, mode string) (notes string) {
	t.Helper()
	root := filepath.Dir(e.cwd)
	notes = filepath.Join(root, "notes.log")
	resp, err := e.editor.Conn.NewSession(e.ctx, acpsdk.NewSessionRequest{Cwd: e.cwd, McpServers: []acpsdk.McpServer{fixtureServer(t, root, notes)}})
	if err != nil {
		t.Fatalf("session/new: %v", err)
	}
	e.session = resp.SessionId
	if _, err := e.editor.Conn.SetSessionMode(e.ctx, acpsdk.SetSessionModeRequest{SessionId: e.session, ModeId: acpsdk.SessionModeId(mode)}); err != nil {
		t.Fatalf("set mode: %v", err)
	}
	return notes
}

// fixtureCall is the model calling a tool of the fixture.
func fixtureCall(t *testing.T, callID, tool string, args map[string]any) mockapi.Item {
	t.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return mockapi.NamespacedCall(callID, "mcp__fixture", tool, string(b))
}

func notesOf(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return ""
	} else if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// codexRefusal is what codex tells the model when a tool needs an approval
// its policy cannot give (read-only and ask mode on exec).
const codexRefusal = "MCP tool call requires approval, but approval policy is never"

func TestEditorMCPToolsInEveryMode(t *testing.T) {
	for _, tc := range []struct {
		backend, mode string
		noteRuns      bool // the destructive tool runs
		asks          bool // after the editor was asked (allow once)
	}{
		{"exec", "read-only", false, false},
		{"exec", "ask", false, false},
		{"exec", "auto", true, false},
		{"exec", "full-access", true, false},
		{"app-server", "read-only", true, true},
		{"app-server", "ask", true, true},
		{"app-server", "auto", true, true},
		{"app-server", "full-access", true, false},
	} {
		t.Run(tc.backend+"/"+tc.mode, func(t *testing.T) {
			e := start(t, setup{backend: tc.backend, fs: true})
			notes := e.mcpSession(t, tc.mode)
			e.mock.Enqueue(
				mockapi.Reply(fixtureCall(t, "call_lookup", "lookup", map[string]any{"key": "answer"})),
				mockapi.Reply(fixtureCall(t, "call_note", "note", map[string]any{"text": "remember the milk"})),
				mockapi.Reply(mockapi.Message("done")),
			)
			if r := e.mustPrompt("use the fixture"); r.StopReason != acpsdk.StopReasonEndTurn {
				t.Fatalf("stopReason = %q", r.StopReason)
			}

			// A read-only tool runs in every mode, without a question.
			if out := toolOutput(t, e, "call_lookup"); !strings.Contains(out, "value of answer is 42") {
				t.Errorf("lookup output = %s", out)
			}
			out := toolOutput(t, e, "call_note")
			if tc.noteRuns {
				if !strings.Contains(out, "noted: remember the milk") || notesOf(t, notes) != "remember the milk\n" {
					t.Errorf("note did not run: model got %s, notes %q", out, notesOf(t, notes))
				}
			} else if !strings.Contains(out, codexRefusal) || notesOf(t, notes) != "" {
				t.Errorf("note was not refused: model got %s, notes %q", out, notesOf(t, notes))
			}

			perms := permissionRequests(e)
			if !tc.asks {
				if len(perms) != 0 {
					t.Errorf("the editor was asked %d times: %+v", len(perms), perms)
				}
			} else {
				if len(perms) != 1 {
					t.Fatalf("permission requests = %d, want 1 (the note call only)", len(perms))
				}
				checkFixtureQuestion(t, e, perms[0], "note", `{"text":"remember the milk"}`)
			}
			// Both calls are tool calls the editor shows with their server and tool.
			var titles []string
			for _, u := range toolUpdates(e) {
				if u.ToolCall != nil {
					titles = append(titles, u.ToolCall.Title)
				}
			}
			if strings.Join(titles, ",") != "fixture: lookup,fixture: note" {
				t.Errorf("tool calls = %v", titles)
			}
		})
	}
}

// checkFixtureQuestion checks a permission request for a fixture tool: it
// names the server and tool, carries the arguments, belongs to the call's
// tool call, and offers allow once / always for the session / reject.
func checkFixtureQuestion(t *testing.T, e *env, req acpsdk.RequestPermissionRequest, tool, args string) {
	t.Helper()
	if req.ToolCall.Title == nil || *req.ToolCall.Title != "fixture: "+tool {
		t.Errorf("question title = %v", req.ToolCall.Title)
	}
	if b, _ := json.Marshal(req.ToolCall.RawInput); string(b) != args {
		t.Errorf("question rawInput = %s, want %s", b, args)
	}
	text := ""
	for _, c := range req.ToolCall.Content {
		if c.Content != nil && c.Content.Content.Text != nil {
			text += c.Content.Content.Text.Text
		}
	}
	if !strings.Contains(text, "fixture") || !strings.Contains(text, tool) {
		t.Errorf("question text = %q", text)
	}
	var opts []string
	for _, o := range req.Options {
		opts = append(opts, string(o.OptionId)+"="+string(o.Kind))
	}
	if strings.Join(opts, ",") != "allow_once=allow_once,allow_session=allow_always,reject=reject_once" {
		t.Errorf("options = %v", opts)
	}
	found := false
	for _, u := range toolUpdates(e) {
		if u.ToolCall != nil && u.ToolCall.ToolCallId == req.ToolCall.ToolCallId && u.ToolCall.Title == "fixture: "+tool {
			found = true
		}
	}
	if !found {
		t.Errorf("question %q is not about the %s call's tool call", req.ToolCall.ToolCallId, tool)
	}
}

// On the app-server backend the editor's answer decides: rejected, the model
// is told and nothing runs; allowed for the session, the next call of the
// tool is not asked about; a turn cancelled while asked ends cleanly.
func TestAppServerEditorMCPApproval(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mode   string // "" is ask
		answer string // "" cancels the turn while the editor is asked
		calls  int    // note calls the model makes
		asked  int
		notes  string
		output string // what the model got for the first call
	}{
		{name: "rejected", answer: "reject", calls: 1, asked: 1, notes: "", output: "user rejected MCP tool call"},
		{name: "session", answer: "allow_session", calls: 2, asked: 1, notes: "one\ntwo\n", output: "noted: one"},
		{name: "cancelled", answer: "", calls: 1, asked: 1, notes: ""},
		{name: "read-only rejected", mode: "read-only", answer: "reject", calls: 1, asked: 1, notes: "", output: "user rejected MCP tool call"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asked := make(chan acpsdk.RequestPermissionRequest, 4)
			release := make(chan struct{})
			e := start(t, setup{backend: "app-server", fs: true, permission: func(req acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse {
				asked <- req
				if tc.answer == "" {
					<-release
					return acpsdk.RequestPermissionResponse{Outcome: acpsdk.RequestPermissionOutcome{Cancelled: &acpsdk.RequestPermissionOutcomeCancelled{Outcome: "cancelled"}}}
				}
				return acpsdk.RequestPermissionResponse{Outcome: acpsdk.RequestPermissionOutcome{Selected: &acpsdk.RequestPermissionOutcomeSelected{Outcome: "selected", OptionId: acpsdk.PermissionOptionId(tc.answer)}}}
			}})
			defer close(release)
			notes := e.mcpSession(t, cmp.Or(tc.mode, "ask"))
			e.mock.Enqueue(mockapi.Reply(fixtureCall(t, "call_1", "note", map[string]any{"text": "one"})))
			if tc.calls > 1 {
				e.mock.Enqueue(mockapi.Reply(fixtureCall(t, "call_2", "note", map[string]any{"text": "two"})))
			}
			e.mock.Enqueue(mockapi.Reply(mockapi.Message("done")))

			done := e.promptAsync("take notes")
			var req acpsdk.RequestPermissionRequest
			select {
			case req = <-asked:
			case <-time.After(60 * time.Second):
				t.Fatal("the editor was never asked")
			}
			checkFixtureQuestion(t, e, req, "note", `{"text":"one"}`)
			if tc.answer == "" {
				e.cancelAndExpectCancelled(done)
			} else if r := <-done; r.StopReason != acpsdk.StopReasonEndTurn {
				t.Errorf("stopReason = %q", r.StopReason)
			}

			if n := len(permissionRequests(e)); n != tc.asked {
				t.Errorf("the editor was asked %d times, want %d", n, tc.asked)
			}
			if got := notesOf(t, notes); got != tc.notes {
				t.Errorf("notes = %q, want %q", got, tc.notes)
			}
			if tc.output != "" {
				if out := toolOutput(t, e, "call_1"); !strings.Contains(out, tc.output) {
					t.Errorf("the model got %s, want %q", out, tc.output)
				}
			}
			if tc.calls > 1 {
				if out := toolOutput(t, e, "call_2"); !strings.Contains(out, "noted: two") {
					t.Errorf("second call: the model got %s", out)
				}
			}
			if tc.answer == "reject" {
				// The rejected call's tool call ends failed, showing why.
				var last *acpsdk.SessionToolCallUpdate
				for _, u := range toolUpdates(e) {
					if u.ToolCallUpdate != nil && u.ToolCallUpdate.ToolCallId == req.ToolCall.ToolCallId {
						last = u.ToolCallUpdate
					}
				}
				if last == nil || last.Status == nil || *last.Status != acpsdk.ToolCallStatusFailed {
					t.Errorf("rejected call's last update = %+v", last)
				}
			}
		})
	}
}

// Read-only mode on the app-server asks for the editor's MCP tools and for
// nothing else: a command that writes fails in the read-only sandbox, and
// one asking to run outside it is refused, neither with a question.
func TestAppServerReadOnlyAsksOnlyForMCPTools(t *testing.T) {
	e := start(t, setup{backend: "app-server", fs: true})
	notes := e.mcpSession(t, "read-only")
	plain := filepath.Join(e.cwd, "plain.txt")
	escalated := filepath.Join(e.cwd, "escalated.txt")
	e.mock.Enqueue(
		mockapi.Reply(mockapi.ExecCommand("call_plain", "touch "+plain)),
		mockapi.Reply(escalatedCommand(t, "call_esc", "touch "+escalated, "create the marker file")),
		mockapi.Reply(fixtureCall(t, "call_note", "note", map[string]any{"text": "read-only note"})),
		mockapi.Reply(mockapi.Message("done")),
	)
	if r := e.mustPrompt("try everything"); r.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("stopReason = %q", r.StopReason)
	}
	for _, f := range []string{plain, escalated} {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("%s: a command wrote in read-only mode (stat: %v)", filepath.Base(f), err)
		}
	}
	if out := toolOutput(t, e, "call_plain"); !strings.Contains(out, "Read-only file system") {
		t.Errorf("plain command: the model got %s", out)
	}
	if out := toolOutput(t, e, "call_esc"); !strings.Contains(out, "you cannot ask for escalated permissions") {
		t.Errorf("escalated command: the model got %s", out)
	}
	perms := permissionRequests(e)
	if len(perms) != 1 {
		t.Fatalf("permission requests = %d, want 1 (the note call only): %+v", len(perms), perms)
	}
	checkFixtureQuestion(t, e, perms[0], "note", `{"text":"read-only note"}`)
	if got := notesOf(t, notes); got != "read-only note\n" {
		t.Errorf("notes = %q after the editor allowed the call", got)
	}
}

// TestDefaultBackendMCPTurn: a user who configured nothing (no --backend,
// the default ask mode) gets a turn on the app-server in which a tool of
// the editor's MCP server that is not read-only is put to the user before
// it runs, and the answer streams. Its corpus transcript is the one
// recorded on the newest tested codex (issue 25): codex 0.171 adds
// environmentId to MCP items and elicitations.
func TestDefaultBackendMCPTurn(t *testing.T) {
	e := start(t, setup{fs: true})
	if e.backend != "app-server" {
		t.Fatalf("default backend %q, want app-server", e.backend)
	}
	notes := e.mcpSession(t, "ask")
	e.mock.Enqueue(
		mockapi.Reply(fixtureCall(t, "call_note", "note", map[string]any{"text": "remember the milk"})),
		mockapi.Reply(mockapi.Message("Noted.")),
	)
	if r := e.mustPrompt("note it down"); r.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("stopReason = %q", r.StopReason)
	}
	if out := toolOutput(t, e, "call_note"); !strings.Contains(out, "noted: remember the milk") || notesOf(t, notes) != "remember the milk\n" {
		t.Errorf("note did not run: model got %s, notes %q", out, notesOf(t, notes))
	}
	perms := permissionRequests(e)
	if len(perms) != 1 {
		t.Fatalf("permission requests = %d, want 1 (the note call)", len(perms))
	}
	checkFixtureQuestion(t, e, perms[0], "note", `{"text":"remember the milk"}`)
	if !strings.Contains(e.stderr.String(), "backend=app-server") {
		t.Errorf("the agent did not log the app-server backend:\n%s", e.stderr.String())
	}
}
