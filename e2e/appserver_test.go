package e2e_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/e2e/mockapi"
)

// What only the app-server backend does: text streamed as it is written,
// shell commands approved in the editor, one process for every session.

// escalatedCommand is the model asking to run cmd outside the sandbox,
// which codex puts to the user under the on-request approval policy.
func escalatedCommand(t *testing.T, callID, cmd, why string) mockapi.Item {
	t.Helper()
	b, err := json.Marshal(map[string]string{"cmd": cmd, "sandbox_permissions": "require_escalated", "justification": why})
	if err != nil {
		t.Fatal(err)
	}
	return mockapi.FunctionCall(callID, "exec_command", string(b))
}

func TestAppServerStreamsText(t *testing.T) {
	e := start(t, setup{backend: "app-server", fs: true})
	text := strings.Repeat("Streaming answers arrive piece by piece. ", 6)
	e.mock.Enqueue(mockapi.Reply(mockapi.Message(text)))
	e.mustPrompt("tell me something long")

	var chunks int
	for _, u := range e.editor.Updates() {
		if u.Update.AgentMessageChunk != nil {
			chunks++
		}
	}
	want := (len(text) + mockapi.DeltaSize - 1) / mockapi.DeltaSize
	if chunks != want {
		t.Errorf("agent_message_chunk updates = %d, want one per model delta (%d)", chunks, want)
	}
	if got := agentText(e); got != text {
		t.Errorf("streamed text = %q, want %q", got, text)
	}
}

func TestAppServerCommandApproval(t *testing.T) {
	for _, tc := range []struct {
		name    string
		answer  string // option chosen by the user; "" cancels the prompt while asked
		ran     bool
		stop    acpsdk.StopReason
		message string // what the model says after the command
	}{
		{name: "allowed", answer: "run_once", ran: true, stop: acpsdk.StopReasonEndTurn},
		{name: "rejected", answer: "reject", ran: false, stop: acpsdk.StopReasonEndTurn},
		{name: "cancelled", answer: "", ran: false, stop: acpsdk.StopReasonCancelled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asked := make(chan acpsdk.RequestPermissionRequest, 1)
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
			target := filepath.Join(e.cwd, "made-by-shell.txt")
			e.mock.Enqueue(
				mockapi.Reply(escalatedCommand(t, "call_touch", "touch "+target, "create the marker file")),
				mockapi.Reply(mockapi.Message("done")),
			)
			done := e.promptAsync("make the marker file")
			var req acpsdk.RequestPermissionRequest
			select {
			case req = <-asked:
			case <-time.After(60 * time.Second):
				t.Fatal("the editor was never asked")
			}
			if tc.answer == "" {
				e.cancelAndExpectCancelled(done)
			} else {
				select {
				case r := <-done:
					if r.StopReason != tc.stop {
						t.Errorf("stopReason = %q, want %q", r.StopReason, tc.stop)
					}
				case <-time.After(60 * time.Second):
					t.Fatal("the prompt did not finish")
				}
			}

			if req.ToolCall.Kind == nil || *req.ToolCall.Kind != acpsdk.ToolKindExecute ||
				req.ToolCall.Title == nil || !strings.Contains(*req.ToolCall.Title, "touch "+target) {
				t.Errorf("permission request tool call = %+v", req.ToolCall)
			}
			text := ""
			for _, c := range req.ToolCall.Content {
				if c.Content != nil && c.Content.Content.Text != nil {
					text += c.Content.Content.Text.Text
				}
			}
			if !strings.Contains(text, "create the marker file") {
				t.Errorf("the request does not give codex's reason: %q", text)
			}
			var opts []string
			for _, o := range req.Options {
				opts = append(opts, string(o.Kind))
			}
			if strings.Join(opts, ",") != "allow_once,allow_always,reject_once" {
				t.Errorf("options = %v", opts)
			}
			// The question belongs to the command's tool call.
			if tools := toolUpdates(e); len(tools) == 0 || tools[0].ToolCall == nil || tools[0].ToolCall.ToolCallId != req.ToolCall.ToolCallId {
				t.Errorf("permission asked for %q, not for the command's tool call %+v", req.ToolCall.ToolCallId, tools)
			}
			_, err := os.Stat(target)
			if ran := err == nil; ran != tc.ran {
				t.Errorf("command ran = %v, want %v", ran, tc.ran)
			}
		})
	}
}

// Each mode means what it says for shell commands: read-only never writes
// and never asks, auto writes inside the workspace without asking,
// full-access writes anywhere without asking.
func TestAppServerModes(t *testing.T) {
	for _, tc := range []struct {
		mode    string
		outside bool // the command writes outside the workspace
		wrote   bool
	}{
		{mode: "read-only", wrote: false},
		{mode: "ask", wrote: false},
		{mode: "auto", wrote: true},
		{mode: "auto", outside: true, wrote: false},
		{mode: "full-access", outside: true, wrote: true},
	} {
		name := tc.mode
		if tc.outside {
			name += "-outside"
		}
		t.Run(name, func(t *testing.T) {
			e := start(t, setup{backend: "app-server", fs: true, mode: tc.mode})
			dir := e.cwd
			if tc.outside {
				// Not under /tmp: codex's workspace-write sandbox lets
				// commands write there (and TMPDIR), as with exec.
				var err error
				if dir, err = os.MkdirTemp("/var/tmp", "codexacp-outside-"); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { os.RemoveAll(dir) })
			}
			target := filepath.Join(dir, "made-by-shell.txt")
			e.mock.Enqueue(
				mockapi.Reply(mockapi.ExecCommand("call_touch", "touch "+target)),
				mockapi.Reply(mockapi.Message("done")),
			)
			if r := e.mustPrompt("touch it"); r.StopReason != acpsdk.StopReasonEndTurn {
				t.Errorf("stopReason = %q", r.StopReason)
			}
			if n := len(permissionRequests(e)); n != 0 {
				t.Errorf("%d permission requests for a sandboxed command", n)
			}
			_, err := os.Stat(target)
			if wrote := err == nil; wrote != tc.wrote {
				t.Errorf("file written = %v, want %v", wrote, tc.wrote)
			}
		})
	}
}

// Sessions share one app-server, each with its own tool token: both edit
// through their own tool server.
func TestAppServerSessionsShareOneProcess(t *testing.T) {
	e := start(t, setup{backend: "app-server", fs: true, mode: "auto"})
	second := e.newSession()
	if _, err := e.editor.Conn.SetSessionMode(e.ctx, acpsdk.SetSessionModeRequest{SessionId: second, ModeId: "auto"}); err != nil {
		t.Fatal(err)
	}
	for i, s := range []acpsdk.SessionId{e.session, second} {
		path := e.writeFile("f"+string(rune('a'+i))+".txt", "old\n")
		e.mock.Enqueue(
			mockapi.Reply(acpCall(t, "call_w", "write_text_file", map[string]any{"path": path, "content": "new\n"})),
			mockapi.Reply(mockapi.Message("written")),
		)
		r, err := e.editor.Conn.Prompt(e.ctx, acpsdk.PromptRequest{SessionId: s, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock("write")}})
		if err != nil || r.StopReason != acpsdk.StopReasonEndTurn {
			t.Fatalf("session %d: %v %v", i, r.StopReason, err)
		}
		if got, _ := e.editor.Buffer(path); got != "new\n" {
			t.Errorf("session %d: buffer = %q", i, got)
		}
	}
	var servers int
	for _, p := range e.sessionProcesses() {
		if strings.Contains(p, " app-server") {
			servers++
		}
	}
	if servers != 1 {
		t.Errorf("app-server processes = %d, want 1: %v", servers, e.sessionProcesses())
	}
	// The sessions' tokens reached codex over its stdin only: not on its
	// command line, not in the agent's debug log.
	for _, p := range e.codexProcesses() {
		if strings.Contains(p, "Bearer") || strings.Contains(p, "http_headers") {
			t.Errorf("a token on codex's command line: %s", p)
		}
	}
	if strings.Contains(e.stderr.String(), "Bearer") {
		t.Error("a bearer token in the agent's log")
	}
	// Closing the agent's stdin ends the app-server.
	e.stop()
	if !eventually(3*time.Second, func() bool { return len(e.codexProcesses()) == 0 }) {
		t.Errorf("codex processes left after the agent exited: %v", e.codexProcesses())
	}
}

// "Always" covers the same command for the rest of the session: codex does
// not ask again.
func TestAppServerAllowAlwaysAsksOnce(t *testing.T) {
	var asked atomic.Int32
	e := start(t, setup{backend: "app-server", fs: true, permission: func(acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse {
		asked.Add(1)
		return acpsdk.RequestPermissionResponse{Outcome: acpsdk.RequestPermissionOutcome{Selected: &acpsdk.RequestPermissionOutcomeSelected{Outcome: "selected", OptionId: "run_always"}}}
	}})
	target := filepath.Join(e.cwd, "marker.txt")
	for i := range 2 {
		e.mock.Enqueue(
			mockapi.Reply(escalatedCommand(t, "call_touch", "touch "+target, "create the marker file")),
			mockapi.Reply(mockapi.Message("done")),
		)
		e.mustPrompt("touch it")
		if _, err := os.Stat(target); err != nil {
			t.Fatalf("turn %d: the command did not run: %v", i, err)
		}
		os.Remove(target)
	}
	if n := asked.Load(); n != 1 {
		t.Errorf("asked %d times, want 1", n)
	}
}

// An app-server that dies mid-command takes the command with it: its
// commands, reparented away from it, are found by the session's tag.
func TestAppServerCrashMidCommandLeavesNoProcesses(t *testing.T) {
	e := start(t, setup{backend: "app-server", fs: true, mode: "full-access"})
	const marker = "66.4321"
	e.mock.Enqueue(mockapi.Reply(mockapi.ExecCommand("call_sleep", "sleep "+marker+"; echo done")))
	done := make(chan error, 1)
	go func() {
		_, err := e.prompt("sleep")
		done <- err
	}()
	if !eventually(30*time.Second, func() bool { return len(processesMatching("sleep "+marker)) > 0 }) {
		t.Fatal("the command never started")
	}
	var server int
	for _, p := range e.sessionProcesses() {
		if pid, cmdline, ok := strings.Cut(p, ": "); ok && strings.Contains(cmdline, " app-server") {
			server, _ = strconv.Atoi(pid)
		}
	}
	if server == 0 {
		t.Fatalf("no app-server among %v", e.sessionProcesses())
	}
	if p, err := os.FindProcess(server); err != nil {
		t.Fatal(err)
	} else if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil {
			t.Error("the prompt succeeded although codex died")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the prompt did not answer after the app-server died")
	}
	if !eventually(3*time.Second, func() bool { return len(processesMatching("sleep "+marker)) == 0 }) {
		t.Errorf("the command outlived its app-server: %v", processesMatching("sleep "+marker))
	}
}
