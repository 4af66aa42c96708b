package e2e_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/codexacp/codexacp/e2e/acpxtest"
	"github.com/codexacp/codexacp/e2e/codextest"
	"github.com/codexacp/codexacp/e2e/mockapi"
	"github.com/codexacp/codexacp/internal/acpschema"
)

// The edit both acpx tests script: the model edits config.toml in the
// workspace with our edit tool, then answers.
const (
	acpxBefore = "[server]\nport = 8080\n"
	acpxAfter  = "[server]\nport = 3000\n"
)

// TestAcpxEditTurn drives codexacp with acpx, an ACP client written by
// others, through one edit turn against real codex and the mock model. acpx
// picks no mode, so codexacp's default (ask) makes the edit ask permission,
// which --approve-all grants; acpx reads and writes the real disk.
func TestAcpxEditTurn(t *testing.T) {
	r := runAcpxEdit(t, "--approve-all")
	if r.exitCode != 0 {
		t.Fatalf("acpx exited %d, want 0", r.exitCode)
	}
	if got := readDisk(t, r.path); got != acpxAfter {
		t.Errorf("file on disk = %q, want %q", got, acpxAfter)
	}
	// Announced, the file read through acpx, the permission (carrying the
	// diff preview) acpx granted, the write through acpx, the completed
	// update with the diff.
	want := []string{
		"tool_call:pending", "read_text_file", "permission+diff→allow_once",
		"tool_call_update:in_progress", "write_text_file", "tool_call_update:completed+diff",
	}
	if got := toolCallSteps(t, r.msgs, r.path); !slices.Equal(got, want) {
		t.Errorf("the tool call as acpx saw it:\n got %v\nwant %v", got, want)
	}
	if got := agentMessage(r.msgs); got != "changed the port" {
		t.Errorf("agent text = %q", got)
	}
	if got := stopReason(t, r.msgs); got != "end_turn" {
		t.Errorf("stopReason = %q, want end_turn", got)
	}
	if out := r.toolOutput("call_edit"); !strings.Contains(out, `"success":true`) {
		t.Errorf("the model got %q for the edit, want success", out)
	}
}

// TestAcpxWithoutApprovalRejectsEdit: without --approve-all and with no
// terminal to ask on, acpx rejects the edit; nothing is written, the model is
// told, and acpx reports the denial by exiting 5.
func TestAcpxWithoutApprovalRejectsEdit(t *testing.T) {
	r := runAcpxEdit(t)
	if r.exitCode != 5 {
		t.Fatalf("acpx exited %d, want 5 (permission denied)", r.exitCode)
	}
	if got := readDisk(t, r.path); got != acpxBefore {
		t.Errorf("file on disk = %q, want it unchanged", got)
	}
	want := []string{"tool_call:pending", "read_text_file", "permission+diff→reject_once", "tool_call_update:failed"}
	if got := toolCallSteps(t, r.msgs, r.path); !slices.Equal(got, want) {
		t.Errorf("the tool call as acpx saw it:\n got %v\nwant %v", got, want)
	}
	if got := stopReason(t, r.msgs); got != "end_turn" {
		t.Errorf("stopReason = %q, want end_turn", got)
	}
	if out := r.toolOutput("call_edit"); !strings.Contains(out, "Permission denied") || strings.Contains(out, `"success":true`) {
		t.Errorf("the model got %q for the edit, want a permission denial", out)
	}
}

// acpxRun is one finished `acpx exec` of the scripted edit turn.
type acpxRun struct {
	exitCode int
	path     string // the edited file
	msgs     transcript
	mock     *mockapi.Server
}

// toolOutput is what the model received for callID.
func (r *acpxRun) toolOutput(callID string) string {
	for _, req := range r.mock.Requests() {
		if out, ok := req.FunctionCallOutput(callID); ok {
			return out
		}
	}
	return ""
}

// runAcpxEdit runs `acpx [flags] --format json exec` with codexacp as the
// agent (real codex, mock model) on the scripted edit turn, checks every
// message codexacp sent against the ACP schema, and checks that codexacp
// and codex are gone once acpx has exited.
func runAcpxEdit(t *testing.T, flags ...string) *acpxRun {
	t.Helper()
	ax := newAcpxEnv(t)
	path := filepath.Join(ax.cwd, "config.toml")
	if err := os.WriteFile(path, []byte(acpxBefore), 0o644); err != nil {
		t.Fatal(err)
	}
	ax.mock.Enqueue(
		mockapi.Reply(acpCall(t, "call_edit", "edit_text_file", map[string]any{
			"path": path, "old_string": "port = 8080", "new_string": "port = 3000"})),
		mockapi.Reply(mockapi.Message("changed the port")),
	)
	code, msgs := ax.rpc(slices.Concat(flags, []string{"exec", "change the port to 3000"})...)
	ax.checkGone()
	return &acpxRun{exitCode: code, path: path, msgs: msgs, mock: ax.mock}
}

// acpxEnv runs acpx with codexacp as its agent (real codex, the mock model)
// in a workspace of its own, with a home of its own for acpx's session
// records and codexacp's state.
type acpxEnv struct {
	t         *testing.T
	acpx      string
	agent     string // the --agent command line
	env       []string
	cwd       string
	codexHome string
	mock      *mockapi.Server
}

func newAcpxEnv(t *testing.T) *acpxEnv {
	t.Helper()
	acpx := acpxtest.Binary(t)
	codexPath := codextest.Binary(t)
	mock := mockapi.New(t)
	env, codexHome := codextest.Env(t) // fresh CODEX_HOME; no CODEX_*/OPENAI_* from outside
	home := t.TempDir()                // acpx reads ~/.acpx/config.json
	env = append(env, "HOME="+home, "XDG_CACHE_HOME="+filepath.Join(home, "cache"))
	cwd, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	argv := []string{agentBin(t), "--codex-path", codexPath, "--log-level", "debug", "-c", `model="gpt-5.5"`}
	for _, c := range append(mockapi.CodexConfig(mock.URL()), codextest.OfflineConfig...) {
		argv = append(argv, "-c", c)
	}
	agent, err := acpxtest.CommandLine(argv...)
	if err != nil {
		t.Fatal(err)
	}
	return &acpxEnv{t: t, acpx: acpx, agent: agent, env: env, cwd: cwd, codexHome: codexHome, mock: mock}
}

// rpc runs `acpx --format json … args` in the workspace and returns its
// exit code and the JSON-RPC it printed, every message codexacp sent
// checked against the ACP schema.
func (ax *acpxEnv) rpc(args ...string) (int, transcript) {
	ax.t.Helper()
	code, stdout := ax.run(args...)
	msgs := parseTranscript(ax.t, stdout)
	for _, m := range msgs {
		if m.fromAgent {
			if err := m.validate(); err != nil {
				ax.t.Errorf("agent message violates the ACP schema: %v\n%s", err, m.raw)
			}
		}
	}
	return code, msgs
}

// newSession runs `acpx sessions new` and returns acpx's session id.
func (ax *acpxEnv) newSession() string {
	t := ax.t
	t.Helper()
	code, out := ax.run("sessions", "new")
	if code != 0 {
		t.Fatalf("acpx sessions new exited %d", code)
	}
	var created struct {
		SessionID string `json:"acpxSessionId"`
	}
	mustUnmarshal(t, out, &created)
	return created.SessionID
}

// run runs `acpx --format json … args` in the workspace and returns its
// exit code and what it printed.
func (ax *acpxEnv) run(args ...string) (int, []byte) {
	t := ax.t
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// --verbose makes acpx copy the agent's stderr (its logs) to its own;
	// acpx's --timeout fires well before the context kills it.
	args = slices.Concat([]string{"--format", "json", "--verbose", "--timeout", "90",
		"--cwd", ax.cwd, "--agent", ax.agent}, args)
	cmd := exec.CommandContext(ctx, ax.acpx, args...)
	cmd.Dir = ax.cwd
	cmd.Env = ax.env
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("acpx %s\nstdout:\n%s\nstderr (with codexacp's logs):\n%s", strings.Join(args, " "), stdout.String(), stderr.String())
		}
	})
	code := 0
	var exitErr *exec.ExitError
	switch err := cmd.Run(); {
	case errors.As(err, &exitErr):
		code = exitErr.ExitCode()
	case err != nil:
		t.Fatalf("running acpx: %v", err)
	}
	return code, stdout.Bytes()
}

// checkGone checks that no process of this test's codex home (codexacp,
// codex, an acpx queue owner) outlives acpx.
func (ax *acpxEnv) checkGone() {
	ax.t.Helper()
	if !eventually(10*time.Second, func() bool { return len(processesWithEnv("CODEX_HOME="+ax.codexHome, -1)) == 0 }) {
		ax.t.Errorf("processes of this run outlived acpx: %v", processesWithEnv("CODEX_HOME="+ax.codexHome, -1))
	}
}

// TestAcpxSessionsFlow is acpx's persistent-session workflow: `sessions
// new` creates a session in one codexacp process and exits; each `prompt`
// then has acpx's queue owner start another codexacp that loads the session
// (session/load, whose replay acpx hides) and prompts it. Both prompts
// succeed, and the second continues the codex thread the first started.
func TestAcpxSessionsFlow(t *testing.T) {
	ax := newAcpxEnv(t)
	ax.mock.Enqueue(
		mockapi.Reply(mockapi.Message("noted: kiwi")),
		mockapi.Reply(mockapi.Message("the word was kiwi")),
	)
	t.Cleanup(func() {
		// Ends the queue owner (and with it its agent) if the test stopped
		// before `sessions close`.
		if t.Failed() {
			ax.run("sessions", "close")
		}
	})

	sessionID := ax.newSession()

	for i, turn := range []struct{ prompt, answer string }{
		{"remember the word kiwi", "noted: kiwi"},
		{"which word did I ask you to remember?", "the word was kiwi"},
	} {
		code, msgs := ax.rpc("prompt", turn.prompt)
		if code != 0 {
			t.Fatalf("prompt %d: acpx exited %d", i+1, code)
		}
		if got := requestSessions(t, msgs); !slices.Equal(got, []string{"session/load " + sessionID, "session/prompt " + sessionID}) {
			t.Errorf("prompt %d: acpx sent %v, want a load and a prompt of %s", i+1, got, sessionID)
		}
		if load := msgs.result("session/load"); load == nil || load.Error != nil {
			t.Errorf("prompt %d: session/load answered %v", i+1, load)
		}
		if got := stopReason(t, msgs); got != "end_turn" {
			t.Errorf("prompt %d: stopReason = %q, want end_turn", i+1, got)
		}
		if got := agentMessage(msgs); got != turn.answer {
			t.Errorf("prompt %d: agent text = %q, want %q", i+1, got, turn.answer)
		}
	}

	reqs := ax.mock.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the model got %d requests, want 2", len(reqs))
	}
	if first := strings.Join(reqs[0].Texts("user"), "\n"); strings.Contains(first, "which word") {
		t.Errorf("the first turn saw the second prompt: %s", first)
	}
	if second := strings.Join(reqs[1].Texts("user"), "\n"); !strings.Contains(second, "remember the word kiwi") || !strings.Contains(second, "which word") {
		t.Errorf("the second prompt did not continue the first's codex thread; the model saw: %s", second)
	}

	if code, _ := ax.run("sessions", "close"); code != 0 {
		t.Errorf("acpx sessions close exited %d", code)
	}
	ax.checkGone()
}

// TestAcpxUnknownSessionStartsFresh: when the agent no longer has acpx's
// session (its record is gone), session/load answers -32002 Resource not
// found, on which acpx starts a new session and the prompt still succeeds.
func TestAcpxUnknownSessionStartsFresh(t *testing.T) {
	ax := newAcpxEnv(t)
	ax.mock.Enqueue(mockapi.Reply(mockapi.Message("hello again")))
	t.Cleanup(func() {
		if t.Failed() {
			ax.run("sessions", "close")
		}
	})
	if err := os.Remove(ax.sessionRecord(ax.newSession())); err != nil {
		t.Errorf("removing the session's record: %v", err)
	}

	code, msgs := ax.rpc("prompt", "hello")
	if code != 0 {
		t.Fatalf("acpx exited %d", code)
	}
	var methods []string
	for _, r := range requestSessions(t, msgs) {
		methods = append(methods, strings.Fields(r)[0])
	}
	if want := []string{"session/load", "session/new", "session/prompt"}; !slices.Equal(methods, want) {
		t.Errorf("acpx sent %v, want %v", methods, want)
	}
	var rpcErr struct {
		Code int `json:"code"`
	}
	if load := msgs.result("session/load"); load == nil || load.Error == nil {
		t.Errorf("session/load answered %v, want an error", load)
	} else if mustUnmarshal(t, load.Error, &rpcErr); rpcErr.Code != -32002 {
		t.Errorf("session/load error code %d, want -32002: %s", rpcErr.Code, load.Error)
	}
	if got := stopReason(t, msgs); got != "end_turn" {
		t.Errorf("stopReason = %q, want end_turn", got)
	}
	if code, _ := ax.run("sessions", "close"); code != 0 {
		t.Errorf("acpx sessions close exited %d", code)
	}
	ax.checkGone()
}

// sessionRecord is the path of codexacp's stored record of a session (under
// the XDG state directory codextest.Env sets).
func (ax *acpxEnv) sessionRecord(id string) string {
	ax.t.Helper()
	var state string
	for _, kv := range ax.env {
		if v, ok := strings.CutPrefix(kv, "XDG_STATE_HOME="); ok {
			state = v
		}
	}
	matches, _ := filepath.Glob(filepath.Join(state, "codexacp", "*", id+".json"))
	if len(matches) != 1 {
		ax.t.Errorf("records of %s under %s: %q, want one", id, state, matches)
		return filepath.Join(state, "codexacp", "sessions", id+".json")
	}
	return matches[0]
}

// requestSessions lists the session requests acpx sent as "method
// sessionId", leaving out initialize and the agent's own requests.
func requestSessions(t *testing.T, msgs transcript) []string {
	t.Helper()
	var out []string
	for _, m := range msgs {
		if m.fromAgent || m.Method == "" || m.ID == nil || m.Method == "initialize" {
			continue
		}
		var p struct {
			SessionID string `json:"sessionId"`
		}
		mustUnmarshal(t, m.Params, &p)
		out = append(out, m.Method+" "+p.SessionID)
	}
	return out
}

// toolCallSteps lists what codexacp sent about the one tool call of the
// turn: tool_call and tool_call_update as "kind:status" (+diff when they
// carry one), the permission request as "permission" (+diff) with the option
// acpx selected, and the fs requests acpx served. Status-less updates (an
// extra preview) are left out: whether there is one is the fake-editor tests'
// business. Every diff must be the scripted edit of path.
func toolCallSteps(t *testing.T, msgs transcript, path string) []string {
	t.Helper()
	var steps []string
	var toolCallID string
	for i, m := range msgs {
		if !m.fromAgent || m.Method == "" {
			continue
		}
		switch m.Method {
		case "session/update":
			var p struct {
				Update sessionUpdate `json:"update"`
			}
			mustUnmarshal(t, m.Params, &p)
			u := p.Update
			if u.SessionUpdate != "tool_call" && u.SessionUpdate != "tool_call_update" {
				continue
			}
			if toolCallID == "" {
				toolCallID = u.ToolCallID
			} else if u.ToolCallID != toolCallID {
				t.Errorf("update for a second tool call %q", u.ToolCallID)
			}
			step := u.SessionUpdate
			if u.Status != "" {
				step += ":" + u.Status
			}
			if checkDiff(t, step, u.Content, path) {
				step += "+diff"
			}
			if u.SessionUpdate == "tool_call" || u.Status != "" {
				steps = append(steps, step)
			}
		case "session/request_permission":
			var p struct {
				ToolCall sessionUpdate `json:"toolCall"`
			}
			mustUnmarshal(t, m.Params, &p)
			if p.ToolCall.ToolCallID != toolCallID {
				t.Errorf("permission asked for tool call %q, want %q", p.ToolCall.ToolCallID, toolCallID)
			}
			step := "permission"
			if checkDiff(t, step, p.ToolCall.Content, path) {
				step += "+diff"
			}
			var r struct {
				Outcome struct {
					Outcome  string `json:"outcome"`
					OptionID string `json:"optionId"`
				} `json:"outcome"`
			}
			switch answer := msgs.answer(i); {
			case answer == nil || answer.Result == nil:
				step += "→no answer"
			default:
				mustUnmarshal(t, answer.Result, &r)
				step += "→" + r.Outcome.OptionID
				if r.Outcome.Outcome != "selected" {
					step += "(" + r.Outcome.Outcome + ")"
				}
			}
			steps = append(steps, step)
		case "fs/read_text_file", "fs/write_text_file":
			step := strings.TrimPrefix(m.Method, "fs/")
			steps = append(steps, step)
			var p struct {
				Path    string  `json:"path"`
				Content *string `json:"content"`
			}
			mustUnmarshal(t, m.Params, &p)
			if p.Path != path || (step == "write_text_file") != (p.Content != nil) || (p.Content != nil && *p.Content != acpxAfter) {
				t.Errorf("%s params = %s", m.Method, m.Params)
			}
			if answer := msgs.answer(i); answer == nil || answer.Error != nil {
				t.Errorf("acpx's answer to %s: %v", m.Method, answer)
			}
		}
	}
	return steps
}

func agentMessage(msgs transcript) string {
	var text strings.Builder
	for _, u := range msgs.updates() {
		if u.SessionUpdate == "agent_message_chunk" {
			text.WriteString(u.ContentBlock.Text)
		}
	}
	return text.String()
}

func stopReason(t *testing.T, msgs transcript) string {
	t.Helper()
	resp := msgs.result("session/prompt")
	if resp == nil || resp.Result == nil {
		t.Errorf("session/prompt got no result: %v", resp)
		return ""
	}
	var r struct {
		StopReason string `json:"stopReason"`
	}
	mustUnmarshal(t, resp.Result, &r)
	return r.StopReason
}

// checkDiff reports whether content has a diff, checking each one against
// the scripted edit of path.
func checkDiff(t *testing.T, where string, content []toolCallContent, path string) bool {
	t.Helper()
	found := false
	for _, c := range content {
		if c.Type != "diff" {
			continue
		}
		found = true
		if c.Path != path || c.OldText == nil || *c.OldText != acpxBefore || c.NewText != acpxAfter {
			t.Errorf("diff in %s = path %q old %v new %q", where, c.Path, c.OldText, c.NewText)
		}
	}
	return found
}

func mustUnmarshal(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("decoding %s: %v", b, err)
	}
}

// rpcMessage is one line of acpx's --format json output: a JSON-RPC message,
// with the direction acpx does not print worked out by parseTranscript.
type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`

	raw       []byte
	fromAgent bool
	answers   int    // for a response: index of the request it answers, or -1
	reqMethod string // for a response: that request's method
}

func (m *rpcMessage) String() string {
	if m == nil {
		return "<none>"
	}
	return string(m.raw)
}

// validate checks an agent→client message against the ACP schema; a
// response by the method of the request it answers.
func (m *rpcMessage) validate() error {
	if m.Method == "" {
		return acpschema.ValidateResponse(m.reqMethod, m.raw)
	}
	return acpschema.ValidateMessage(m.raw)
}

type transcript []*rpcMessage

// agentHandled reports whether the agent serves method (so the client sent
// it); the client serves session/update, permissions, fs/* and terminal/*.
func agentHandled(method string) bool {
	switch {
	case method == "session/update", method == "session/request_permission",
		strings.HasPrefix(method, "fs/"), strings.HasPrefix(method, "terminal/"):
		return false
	}
	return true
}

// parseTranscript decodes acpx's NDJSON and works out each message's
// direction. Both sides number their own requests, so ids collide: a
// response answers the latest still-open request with its id, which is right
// because the agent's requests are made and answered inside a prompt.
func parseTranscript(t *testing.T, out []byte) transcript {
	t.Helper()
	var msgs transcript
	open := map[string][]int{} // id → indexes of unanswered requests
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		m := &rpcMessage{raw: append([]byte(nil), line...), answers: -1}
		if err := json.Unmarshal(line, m); err != nil {
			t.Fatalf("acpx printed a line that is not JSON: %v\n%s", err, line)
		}
		id := string(m.ID)
		switch {
		case m.Method != "":
			m.fromAgent = !agentHandled(m.Method)
			if id != "" {
				open[id] = append(open[id], len(msgs))
			}
		case id == "null":
			// acpx's own error report (--format json prints its errors as
			// JSON-RPC errors with a null id), not part of the connection.
			t.Errorf("acpx reported an error: %s", line)
			continue
		default:
			reqs := open[id]
			if len(reqs) == 0 {
				t.Fatalf("response to no open request: %s", line)
			}
			req := reqs[len(reqs)-1]
			open[id] = reqs[:len(reqs)-1]
			m.answers, m.reqMethod = req, msgs[req].Method
			m.fromAgent = !msgs[req].fromAgent
		}
		msgs = append(msgs, m)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return msgs
}

// answer returns the response to the request at index i, or nil.
func (ms transcript) answer(i int) *rpcMessage {
	for _, m := range ms[i+1:] {
		if m.answers == i {
			return m
		}
	}
	return nil
}

// result returns the response to the first request of method, or nil.
func (ms transcript) result(method string) *rpcMessage {
	for i, m := range ms {
		if m.Method == method && m.ID != nil {
			return ms.answer(i)
		}
	}
	return nil
}

// sessionUpdate is the part of a session/update's update the test reads.
type sessionUpdate struct {
	SessionUpdate string            `json:"sessionUpdate"`
	ToolCallID    string            `json:"toolCallId"`
	Status        string            `json:"status"`
	Content       []toolCallContent `json:"-"`
	ContentBlock  struct {
		Text string `json:"text"`
	} `json:"-"`
}

// toolCallContent is one item of a tool call's content; the test reads diffs.
type toolCallContent struct {
	Type    string  `json:"type"`
	Path    string  `json:"path"`
	OldText *string `json:"oldText"`
	NewText string  `json:"newText"`
}

// UnmarshalJSON reads content as a list for tool calls and as one block
// for message chunks.
func (u *sessionUpdate) UnmarshalJSON(b []byte) error {
	type plain sessionUpdate
	var aux struct {
		*plain
		Content json.RawMessage `json:"content"`
	}
	aux.plain = (*plain)(u)
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	if len(aux.Content) == 0 {
		return nil
	}
	if aux.Content[0] == '[' {
		return json.Unmarshal(aux.Content, &u.Content)
	}
	return json.Unmarshal(aux.Content, &u.ContentBlock)
}

// updates returns the session updates the agent sent, in order.
func (ms transcript) updates() []sessionUpdate {
	var out []sessionUpdate
	for _, m := range ms {
		if m.Method != "session/update" {
			continue
		}
		var p struct {
			Update sessionUpdate `json:"update"`
		}
		if json.Unmarshal(m.Params, &p) == nil {
			out = append(out, p.Update)
		}
	}
	return out
}

// TestParseTranscriptDirections: both sides number their requests from
// small integers, so a response's id alone does not say whom it answers.
func TestParseTranscriptDirections(t *testing.T) {
	out := strings.Join([]string{
		`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{}}`,
		`{"jsonrpc":"2.0","id":2,"method":"session/request_permission","params":{}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"outcome":{"outcome":"cancelled"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"fs/write_text_file","params":{}}`,
		`{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}`,
	}, "\n")
	msgs := parseTranscript(t, []byte(out))
	type dir struct {
		fromAgent bool
		answers   int
		reqMethod string
	}
	want := []dir{
		{false, -1, ""},
		{true, -1, ""},
		{true, -1, ""},
		{false, 2, "session/request_permission"},
		{true, -1, ""},
		{false, 4, "fs/write_text_file"},
		{true, 0, "session/prompt"},
	}
	if len(msgs) != len(want) {
		t.Fatalf("%d messages, want %d", len(msgs), len(want))
	}
	for i, m := range msgs {
		if got := (dir{m.fromAgent, m.answers, m.reqMethod}); got != want[i] {
			t.Errorf("message %d %s: %+v, want %+v", i, m.raw, got, want[i])
		}
	}
	if got := msgs.answer(2); got != msgs[3] {
		t.Errorf("answer to the permission request = %v", got)
	}
	if got := msgs.result("session/prompt"); got != msgs[6] {
		t.Errorf("prompt result = %v", got)
	}
}
