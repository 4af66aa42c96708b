package e2e_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/e2e/mockapi"
	"github.com/codexacp/codexacp/internal/fakeeditor"
)

func TestHelloTurn(t *testing.T) { eachBackend(t, testHelloTurn) }

func testHelloTurn(t *testing.T, backend string) {
	e := start(t, setup{backend: backend, fs: true})
	e.mock.Enqueue(mockapi.Reply(mockapi.Reasoning("Thinking about a greeting"), mockapi.Message("Hello from the mock model")))

	resp := e.mustPrompt("say hello")
	if resp.StopReason != acpsdk.StopReasonEndTurn {
		t.Errorf("stopReason = %q", resp.StopReason)
	}
	// (The app-server streams the message in several chunks.)
	kinds := strings.Join(collapse(fakeeditor.UpdateKinds(e.editor.Updates())), ",")
	// The first turn gives the session its title: the prompt's first line.
	if kinds != "agent_thought_chunk,agent_message_chunk,usage_update,session_info_update" {
		t.Errorf("updates = %s", kinds)
	}
	for _, n := range e.editor.Updates() {
		if u := n.Update.SessionInfoUpdate; u != nil && (u.Title == nil || *u.Title != "say hello") {
			t.Errorf("session_info_update title = %v, want %q", u.Title, "say hello")
		}
	}
	if got := agentText(e); got != "Hello from the mock model" {
		t.Errorf("message = %q", got)
	}
	reqs := e.mock.Requests()
	if len(reqs) != 1 {
		t.Fatalf("model requests = %d", len(reqs))
	}
	if !strings.Contains(strings.Join(reqs[0].Texts("user"), "\n"), "say hello") {
		t.Errorf("the prompt did not reach the model")
	}
	// Our tools are offered and codex's own patch tool is not.
	if reqs[0].HasTool("apply_patch") {
		t.Errorf("apply_patch is still offered: %v", reqs[0].ToolNames())
	}
	if !strings.Contains(string(reqs[0].Raw), "mcp__acp") {
		t.Errorf("the acp tools are not offered to the model: %v", reqs[0].ToolNames())
	}
}

func TestShellCommandTurn(t *testing.T) { eachBackend(t, testShellCommandTurn) }

func testShellCommandTurn(t *testing.T, backend string) {
	e := start(t, setup{backend: backend, fs: true})
	e.mock.Enqueue(
		mockapi.Reply(mockapi.ExecCommand("call_sh", "echo codexacp-e2e-output")),
		mockapi.Reply(mockapi.Message("ran it")),
	)
	e.mustPrompt("run echo")

	tools := toolUpdates(e)
	if len(tools) < 2 || tools[0].ToolCall == nil {
		t.Fatalf("tool updates = %+v", tools)
	}
	call := tools[0].ToolCall
	if call.Kind != acpsdk.ToolKindExecute || call.Title != "echo codexacp-e2e-output" || call.Status != acpsdk.ToolCallStatusInProgress {
		t.Errorf("tool_call = kind %q title %q status %q", call.Kind, call.Title, call.Status)
	}
	last := tools[len(tools)-1].ToolCallUpdate
	if last == nil || last.Status == nil || *last.Status != acpsdk.ToolCallStatusCompleted || last.ToolCallId != call.ToolCallId {
		t.Fatalf("last tool update = %+v", tools[len(tools)-1])
	}
	out, ok := e.mock.Requests()[1].FunctionCallOutput("call_sh")
	if !ok || !strings.Contains(out, "codexacp-e2e-output") {
		t.Errorf("the model did not get the command output: %q", out)
	}
}

func TestResumeContinuesThread(t *testing.T) { eachBackend(t, testResumeContinuesThread) }

func testResumeContinuesThread(t *testing.T, backend string) {
	e := start(t, setup{backend: backend, fs: true})
	e.mock.Enqueue(mockapi.Reply(mockapi.Message("first answer")))
	e.mustPrompt("first question")
	e.mock.Enqueue(mockapi.Reply(mockapi.Message("second answer")))
	e.mustPrompt("second question")

	reqs := e.mock.Requests()
	if len(reqs) != 2 {
		t.Fatalf("model requests = %d", len(reqs))
	}
	user := strings.Join(reqs[1].Texts("user"), "\n")
	assistant := strings.Join(reqs[1].Texts("assistant"), "\n")
	if !strings.Contains(user, "first question") || !strings.Contains(user, "second question") || !strings.Contains(assistant, "first answer") {
		t.Errorf("second request lacks the first turn's history:\nuser: %s\nassistant: %s", user, assistant)
	}
}

func TestCancelMidStream(t *testing.T) { eachBackend(t, testCancelMidStream) }

func testCancelMidStream(t *testing.T, backend string) {
	e := start(t, setup{backend: backend, fs: true})
	resp, hold := mockapi.Hang(mockapi.Reasoning("working on it"))
	e.mock.Enqueue(resp)
	defer hold.Release()

	done := e.promptAsync("long task")
	select {
	case <-hold.Reached():
	case <-time.After(60 * time.Second):
		t.Fatal("codex never reached the model")
	}
	e.cancelAndExpectCancelled(done)
	if !eventually(3*time.Second, func() bool { return len(e.turnProcesses()) == 0 }) {
		t.Errorf("codex processes left after cancel: %v", e.turnProcesses())
	}
}

func TestCancelMidCommandLeavesNoProcesses(t *testing.T) {
	eachBackend(t, testCancelMidCommandLeavesNoProcesses)
}

func testCancelMidCommandLeavesNoProcesses(t *testing.T, backend string) {
	e := start(t, setup{backend: backend, fs: true, mode: "full-access"})
	const marker = "97.4321"
	e.mock.Enqueue(mockapi.Reply(mockapi.ExecCommand("call_sleep", "sleep "+marker)))

	done := e.promptAsync("sleep")
	// Cancel once the editor shows the command running and it really runs.
	if err := e.editor.WaitForUpdate(e.ctx, func(u acpsdk.SessionUpdate) bool {
		return u.ToolCall != nil && u.ToolCall.Kind == acpsdk.ToolKindExecute
	}); err != nil {
		t.Fatalf("no tool call for the command: %v", err)
	}
	if !eventually(10*time.Second, func() bool { return len(processesMatching("sleep "+marker)) > 0 }) {
		t.Fatal("the command never started")
	}
	e.cancelAndExpectCancelled(done)
	if !eventually(3*time.Second, func() bool { return len(processesMatching("sleep "+marker)) == 0 }) {
		t.Errorf("command orphaned after cancel: %v", processesMatching("sleep "+marker))
	}
	if !eventually(3*time.Second, func() bool { return len(e.turnProcesses()) == 0 }) {
		t.Errorf("codex processes left after cancel: %v", e.turnProcesses())
	}
	// The running tool call is not left spinning.
	tools := toolUpdates(e)
	if len(tools) == 0 {
		t.Fatal("no tool call for the command")
	}
	last := tools[len(tools)-1]
	if last.ToolCallUpdate == nil || last.ToolCallUpdate.Status == nil || *last.ToolCallUpdate.Status != acpsdk.ToolCallStatusFailed {
		t.Errorf("last tool update after cancel = %+v", last)
	}
}

func TestModelHTTP400FailsPrompt(t *testing.T) { eachBackend(t, testModelHTTP400FailsPrompt) }

func testModelHTTP400FailsPrompt(t *testing.T, backend string) {
	e := start(t, setup{backend: backend, fs: true})
	e.mock.Enqueue(mockapi.HTTPError(400, "Invalid value for model: no-such-model"))
	// The prompt ends saying why (docs/errors.md), not as codexacp's
	// internal error.
	r, err := e.prompt("hi")
	if err != nil || r.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("prompt = %+v, %v; want stopReason end_turn", r, err)
	}
	if err := e.editor.Sync(e.ctx); err != nil {
		t.Fatal(err)
	}
	if text := agentText(e); !strings.Contains(text, "no-such-model") || !strings.Contains(text, "refused codex's request as invalid") ||
		strings.Contains(strings.ToLower(text), "backtrace") {
		t.Errorf("agent text = %q", text)
	}
	// The session still works afterwards.
	e.mock.Enqueue(mockapi.Reply(mockapi.Message("recovered")))
	if r := e.mustPrompt("again"); r.StopReason != acpsdk.StopReasonEndTurn {
		t.Errorf("stopReason after failure = %q", r.StopReason)
	}
}

func TestCodexNotFound(t *testing.T) { eachBackend(t, testCodexNotFound) }

func testCodexNotFound(t *testing.T, backend string) {
	e := start(t, setup{backend: backend, fs: true, codexPath: "/nonexistent/codex"})
	_, err := e.prompt("hi")
	var re *acpsdk.RequestError
	if !errors.As(err, &re) || !strings.Contains(re.Message, "npm i -g @openai/codex") {
		t.Fatalf("err = %v, want a message saying how to install codex", err)
	}
}

// promptAsync sends a prompt and delivers its response on the channel.
func (e *env) promptAsync(text string) <-chan acpsdk.PromptResponse {
	done := make(chan acpsdk.PromptResponse, 1)
	go func() {
		r, err := e.prompt(text)
		if err != nil {
			e.t.Errorf("prompt: %v", err)
		}
		done <- r
	}()
	return done
}

// cancelAndExpectCancelled sends session/cancel and requires the running
// prompt to answer stopReason "cancelled" promptly.
func (e *env) cancelAndExpectCancelled(done <-chan acpsdk.PromptResponse) {
	e.t.Helper()
	if err := e.editor.Conn.Cancel(e.ctx, acpsdk.CancelNotification{SessionId: e.session}); err != nil {
		e.t.Fatal(err)
	}
	select {
	case r := <-done:
		if r.StopReason != acpsdk.StopReasonCancelled {
			e.t.Errorf("stopReason = %q, want cancelled", r.StopReason)
		}
	case <-time.After(10 * time.Second):
		e.t.Fatal("prompt did not answer after cancel")
	}
}

// After a restart of the agent, session/list shows the session and
// session/load replays its conversation from codex's rollout; the next
// prompt continues the same codex thread.
func TestSessionLoadAfterRestart(t *testing.T) { eachBackend(t, testSessionLoadAfterRestart) }

func testSessionLoadAfterRestart(t *testing.T, backend string) {
	e := start(t, setup{backend: backend, fs: true})
	e.mock.Enqueue(mockapi.Reply(mockapi.Reasoning("recalling"), mockapi.Message("the answer is 42")))
	e.mustPrompt("what is the answer?")
	if backend == "app-server" {
		// Codex lets one process at a time write a thread, and an
		// app-server lets go of it only when it exits: the editor restarts.
		e.stop()
	}

	e2 := e.restart(setup{backend: backend, fs: true})
	list, err := e2.editor.Conn.ListSessions(e2.ctx, acpsdk.ListSessionsRequest{Cwd: &e.cwd})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Sessions) != 1 || list.Sessions[0].SessionId != e.session || list.Sessions[0].Title == nil || *list.Sessions[0].Title != "what is the answer?" {
		t.Fatalf("session/list = %+v", list.Sessions)
	}
	if _, err := e2.editor.Conn.LoadSession(e2.ctx, acpsdk.LoadSessionRequest{SessionId: e.session, Cwd: e.cwd, McpServers: []acpsdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	kinds := strings.Join(fakeeditor.UpdateKinds(e2.editor.Updates()), ",")
	if kinds != "user_message_chunk,agent_thought_chunk,agent_message_chunk" {
		t.Errorf("history = %s", kinds)
	}
	var user string
	for _, u := range e2.editor.Updates() {
		if c := u.Update.UserMessageChunk; c != nil && c.Content.Text != nil {
			user += c.Content.Text.Text
		}
	}
	if user != "what is the answer?" || agentText(e2) != "the answer is 42" {
		t.Errorf("history texts: user %q, agent %q", user, agentText(e2))
	}

	e2.session = e.session
	e.mock.Enqueue(mockapi.Reply(mockapi.Message("still 42")))
	e2.mustPrompt("are you sure?")
	reqs := e.mock.Requests()
	last := strings.Join(reqs[len(reqs)-1].Texts("user"), "\n")
	if !strings.Contains(last, "what is the answer?") || !strings.Contains(last, "are you sure?") {
		t.Errorf("the loaded session did not resume the codex thread: %s", last)
	}
}

// Codex exits before printing any JSONL when a required MCP server cannot
// start: the prompt fails with codex's own words from stderr.
func TestCodexStartupFailureShowsStderr(t *testing.T) {
	e := start(t, setup{backend: "exec", fs: true, args: []string{"-c", `mcp_servers.broken={command="/nonexistent/mcp-server", required=true}`}})
	_, err := e.prompt("hi")
	var re *acpsdk.RequestError
	if !errors.As(err, &re) {
		t.Fatalf("err = %v, want a JSON-RPC error", err)
	}
	if !strings.Contains(re.Message, "broken") || !strings.Contains(re.Message, "codex exited with status 1") {
		t.Errorf("message = %q, want codex's stderr about the server", re.Message)
	}
	if len(e.mock.Requests()) != 0 {
		t.Errorf("codex reached the model despite the failed startup")
	}
}

// Codex dying mid-turn (killed, crashed) fails the prompt with a clear error,
// and the session works again on the next prompt.
func TestCodexCrashMidTurn(t *testing.T) { eachBackend(t, testCodexCrashMidTurn) }

func testCodexCrashMidTurn(t *testing.T, backend string) {
	e := start(t, setup{backend: backend, fs: true})
	resp, hold := mockapi.Hang(mockapi.Reasoning("about to crash"))
	e.mock.Enqueue(resp)
	defer hold.Release()

	type result struct {
		err error
	}
	done := make(chan result, 1)
	go func() {
		_, err := e.prompt("crash please")
		done <- result{err}
	}()
	select {
	case <-hold.Reached():
	case <-time.After(60 * time.Second):
		t.Fatal("codex never reached the model")
	}
	var codexPID int
	for _, p := range e.sessionProcesses() {
		if pid, cmdline, ok := strings.Cut(p, ": "); ok && strings.Contains(cmdline, codexCommand[backend]) {
			codexPID, _ = strconv.Atoi(pid)
		}
	}
	if codexPID == 0 {
		t.Fatalf("codex process not found: %v", e.sessionProcesses())
	}
	if p, err := os.FindProcess(codexPID); err != nil {
		t.Fatal(err)
	} else if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	var r result
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("prompt did not answer after codex died")
	}
	var re *acpsdk.RequestError
	if !errors.As(r.err, &re) || !strings.Contains(re.Message, "codex exited with status 137") {
		t.Fatalf("err = %v, want codex's exit status", r.err)
	}
	e.mock.Enqueue(mockapi.Reply(mockapi.Message("back again")))
	if resp := e.mustPrompt("are you there?"); resp.StopReason != acpsdk.StopReasonEndTurn {
		t.Errorf("next prompt: stopReason %q", resp.StopReason)
	}
	if backend == "app-server" {
		// A new app-server resumed the thread: the model sees the earlier prompt.
		reqs := e.mock.Requests()
		if user := strings.Join(reqs[len(reqs)-1].Texts("user"), "\n"); !strings.Contains(user, "crash please") {
			t.Errorf("the thread was not resumed after the restart: %s", user)
		}
	}
}

// The model and effort pickers change what codex asks the model for, from
// the next turn on.
func TestConfigOptionsReachTheModel(t *testing.T) { eachBackend(t, testConfigOptionsReachTheModel) }

func testConfigOptionsReachTheModel(t *testing.T, backend string) {
	e := start(t, setup{backend: backend, fs: true})
	for option, value := range map[string]string{"model": "gpt-6-luna", "reasoning_effort": "high"} {
		if _, err := e.editor.Conn.SetSessionConfigOption(e.ctx, acpsdk.SetSessionConfigOptionRequest{ValueId: &acpsdk.SetSessionConfigOptionValueId{
			SessionId: e.session, ConfigId: acpsdk.SessionConfigId(option), Value: acpsdk.SessionConfigValueId(value)}}); err != nil {
			t.Fatalf("set %s: %v", option, err)
		}
	}
	e.mock.Enqueue(mockapi.Reply(mockapi.Message("ok")))
	e.mustPrompt("hi")
	var body struct {
		Model     string `json:"model"`
		Reasoning struct {
			Effort string `json:"effort"`
		} `json:"reasoning"`
	}
	if err := json.Unmarshal(e.mock.Requests()[0].Raw, &body); err != nil {
		t.Fatal(err)
	}
	if body.Model != "gpt-6-luna" || body.Reasoning.Effort != "high" {
		t.Errorf("the model was asked with model %q effort %q", body.Model, body.Reasoning.Effort)
	}
}

// A model and effort set in the user's config.toml (and no -c model=) are
// what the pickers and /status show, and what codex asks the model for.
func TestUserConfigModelShown(t *testing.T) { eachBackend(t, testUserConfigModelShown) }

func testUserConfigModelShown(t *testing.T, backend string) {
	first := start(t, setup{backend: backend, fs: true})
	config := "model = \"gpt-6-luna\"\nmodel_reasoning_effort = \"high\"\n"
	if err := os.WriteFile(filepath.Join(first.codexHome, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	// codexacp reads the user's configuration when it starts; the harness's
	// -c model= would hide config.toml's.
	var args []string
	for i := 0; i < len(first.args); i++ {
		if first.args[i] == "-c" && i+1 < len(first.args) && first.args[i+1] == `model="gpt-5.5"` {
			i++
			continue
		}
		args = append(args, first.args[i])
	}
	first.args = args
	e := first.restart(setup{fs: true})
	resp, err := e.editor.Conn.NewSession(e.ctx, acpsdk.NewSessionRequest{Cwd: e.cwd, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	e.session = resp.SessionId
	got := map[string]string{}
	for _, o := range resp.ConfigOptions {
		if o.Select != nil {
			got[string(o.Select.Id)] = string(o.Select.CurrentValue)
		}
	}
	if got["model"] != "gpt-6-luna" || got["reasoning_effort"] != "high" {
		t.Errorf("pickers show %v; want config.toml's gpt-6-luna, high", got)
	}
	e.mustPrompt("/status")
	text := agentText(e)
	for _, s := range []string{"Model: gpt-6-luna\n", "Reasoning effort: high\n"} {
		if !strings.Contains(text, s) {
			t.Errorf("/status lacks %q:\n%s", s, text)
		}
	}
	e.mock.Enqueue(mockapi.Reply(mockapi.Message("ok")))
	e.mustPrompt("hi")
	var body struct {
		Model     string `json:"model"`
		Reasoning struct {
			Effort string `json:"effort"`
		} `json:"reasoning"`
	}
	reqs := e.mock.Requests()
	if err := json.Unmarshal(reqs[len(reqs)-1].Raw, &body); err != nil {
		t.Fatal(err)
	}
	if body.Model != "gpt-6-luna" || body.Reasoning.Effort != "high" {
		t.Errorf("the model was asked with model %q effort %q", body.Model, body.Reasoning.Effort)
	}
	e.checkSchema()
}
