package acp

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/internal/fakeeditor"
)

// mcpAnsweringOutput answers MCP tool approvals (and commands) with one
// decision, and records what it was asked.
type mcpAnsweringOutput struct {
	answeringOutput
	tools []MCPToolApproval
}

func (o *mcpAnsweringOutput) ApproveMCPTool(_ context.Context, req MCPToolApproval) ApprovalDecision {
	o.tools = append(o.tools, req)
	return o.decision
}

// The approval question codex 0.169 asks before an MCP tool call, as seen
// from the real binary (an mcpServer/elicitation/request).
const toolApprovalParams = `{"threadId":"th","turnId":"t1","serverName":"fixture","mode":"form",
	"_meta":{"codex_approval_kind":"mcp_tool_call","persist":["session","always"],"tool_name":"note",
	"tool_annotations":{"readOnlyHint":false,"destructiveHint":true},"tool_params":{"text":"hi","n":1}},
	"message":"Allow the fixture MCP server to run tool \"note\"?","requestedSchema":{"type":"object","properties":{}}}`

func TestMCPElicitation(t *testing.T) {
	for _, tc := range []struct {
		name     string
		params   string
		decision ApprovalDecision
		want     string
		asked    bool
	}{
		{"allow once", toolApprovalParams, ApprovalAccept, `{"action":"accept"}`, true},
		{"allow for the session", toolApprovalParams, ApprovalAcceptForSession, `{"_meta":{"persist":"session"},"action":"accept"}`, true},
		{"reject", toolApprovalParams, ApprovalDecline, `{"action":"decline"}`, true},
		{"cancelled turn", toolApprovalParams, ApprovalCancel, `{"action":"cancel"}`, true},
		// An MCP server's own question: not offered.
		{"server elicitation", `{"threadId":"th","serverName":"fixture","mode":"form","message":"Your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}`,
			ApprovalAccept, `{"action":"decline"}`, false},
		{"no tool name", `{"serverName":"fixture","_meta":{"codex_approval_kind":"mcp_tool_call"}}`, ApprovalAccept, `{"action":"decline"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := &mcpAnsweringOutput{answeringOutput: answeringOutput{decision: tc.decision}}
			h := newTurnHandler(out, discardLogger())
			res, err := h.Request(context.Background(), "mcpServer/elicitation/request", json.RawMessage(tc.params))
			if err != nil {
				t.Fatal(err)
			}
			if got := jsonString(res); got != tc.want {
				t.Errorf("answer = %s, want %s", got, tc.want)
			}
			if asked := len(out.tools) == 1; asked != tc.asked {
				t.Fatalf("asked = %v (%+v), want %v", asked, out.tools, tc.asked)
			}
			if tc.asked {
				q := out.tools[0]
				if q.Server != "fixture" || q.Tool != "note" || !q.ForSession || !strings.Contains(q.Message, `run tool "note"`) ||
					!sameJSONArgs(q.Arguments, json.RawMessage(`{"n":1,"text":"hi"}`)) {
					t.Errorf("question = %+v", q)
				}
			}
		})
	}
	// Unreadable params: an error for codex, no question.
	out := &mcpAnsweringOutput{}
	if _, err := newTurnHandler(out, discardLogger()).Request(context.Background(), "mcpServer/elicitation/request", json.RawMessage(`[1]`)); err == nil || len(out.tools) != 0 {
		t.Errorf("unreadable params: err %v, asked %d", err, len(out.tools))
	}
}

// The question is attached to the call codex announced before asking: the
// newest of that server's tool in progress, preferring the same arguments.
func TestMCPElicitationFindsItsCall(t *testing.T) {
	started := func(id, server, tool, args string) (string, json.RawMessage) {
		return "item/started", json.RawMessage(`{"threadId":"th","turnId":"t1","item":{"type":"mcpToolCall","id":"` + id +
			`","server":"` + server + `","tool":"` + tool + `","status":"inProgress","arguments":` + args + `}}`)
	}
	completed := func(id, server, tool string) (string, json.RawMessage) {
		return "item/completed", json.RawMessage(`{"threadId":"th","turnId":"t1","item":{"type":"mcpToolCall","id":"` + id +
			`","server":"` + server + `","tool":"` + tool + `","status":"completed","arguments":{}}}`)
	}
	for _, tc := range []struct {
		name   string
		before [][2]any // notifications delivered before the question
		want   string
	}{
		{"none announced", nil, ""},
		{"the one in progress", [][2]any{pair(started("c1", "fixture", "note", `{"text":"hi","n":1}`))}, "c1"},
		{"same arguments win", [][2]any{
			pair(started("c1", "fixture", "note", `{"n":1,"text":"hi"}`)),
			pair(started("c2", "fixture", "note", `{"text":"other"}`)),
		}, "c1"},
		{"else the newest", [][2]any{
			pair(started("c1", "fixture", "note", `{"text":"a"}`)),
			pair(started("c2", "fixture", "note", `{"text":"b"}`)),
		}, "c2"},
		{"other tools and servers do not count", [][2]any{
			pair(started("c1", "fixture", "lookup", `{"text":"hi","n":1}`)),
			pair(started("c2", "other", "note", `{"text":"hi","n":1}`)),
		}, ""},
		{"completed calls do not count", [][2]any{
			pair(started("c1", "fixture", "note", `{"text":"hi","n":1}`)),
			pair(completed("c1", "fixture", "note")),
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := &mcpAnsweringOutput{answeringOutput: answeringOutput{decision: ApprovalAccept}}
			h := newTurnHandler(out, discardLogger())
			for _, n := range tc.before {
				h.Notify(n[0].(string), n[1].(json.RawMessage))
			}
			if _, err := h.Request(context.Background(), "mcpServer/elicitation/request", json.RawMessage(toolApprovalParams)); err != nil {
				t.Fatal(err)
			}
			if len(out.tools) != 1 || out.tools[0].ItemID != tc.want {
				t.Errorf("asked %+v, want item %q", out.tools, tc.want)
			}
		})
	}
}

func pair(method string, params json.RawMessage) [2]any { return [2]any{method, params} }

func TestPersistOffers(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want bool
	}{
		{`["session","always"]`, true},
		{`"session"`, true},
		{`"always"`, false},
		{`["always"]`, false},
		{``, false},
		{`null`, false},
		{`7`, false},
	} {
		if got := persistOffers(json.RawMessage(tc.raw), "session"); got != tc.want {
			t.Errorf("persistOffers(%s) = %v, want %v", tc.raw, got, tc.want)
		}
	}
}

// On exec the editor's servers run as configured in auto and full-access;
// in read-only and ask mode only their read-only tools run (codex's
// default): codex exec cannot ask, and ask mode must not do less asking
// than its name says. In ask mode the model is told why.
func TestExecConfigApprovalMode(t *testing.T) {
	setup, err := clientMCPConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	setup.config = []string{`mcp_servers.x={command="/bin/x", args=[], env={}}`}
	for _, tc := range []struct {
		mode Mode
		want string
	}{
		{ModeReadOnly, `mcp_servers.x={command="/bin/x", args=[], env={}}`},
		{ModeAsk, `mcp_servers.x={command="/bin/x", args=[], env={}}`},
		{ModeAuto, `mcp_servers.x={command="/bin/x", args=[], env={}, default_tools_approval_mode="approve"}`},
		{ModeFullAccess, `mcp_servers.x={command="/bin/x", args=[], env={}, default_tools_approval_mode="approve"}`},
	} {
		got := setup.execConfig(tc.mode)
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("%s: %q, want %q", tc.mode, got, tc.want)
		}
		inv := execInvocation(Turn{Mode: tc.mode, editorMCP: setup, Tools: &TurnTools{URL: "http://127.0.0.1:1/mcp"}})
		config := strings.Join(inv.Config, "\n")
		if !strings.Contains(config, tc.want) {
			t.Errorf("%s: exec invocation config %q lacks %q", tc.mode, inv.Config, tc.want)
		}
		if told := strings.Contains(config, "codex exec cannot ask"); told != (tc.mode == ModeAsk) {
			t.Errorf("%s: the model is told why the editor's tools are refused: %v", tc.mode, told)
		}
	}
	if setup.config[0] != `mcp_servers.x={command="/bin/x", args=[], env={}}` {
		t.Error("execConfig changed the setup")
	}
}

// askApproval maps the user's answer to codex's decision, for commands and
// MCP tools alike.
func TestAskApprovalAnswers(t *testing.T) {
	cancelled := acpsdk.RequestPermissionResponse{Outcome: acpsdk.RequestPermissionOutcome{Cancelled: &acpsdk.RequestPermissionOutcomeCancelled{Outcome: "cancelled"}}}
	for _, tc := range []struct {
		name    string
		answer  acpsdk.RequestPermissionResponse
		always  acpsdk.PermissionOptionId
		turnEnd bool
		want    ApprovalDecision
	}{
		{"once", fakeeditor.Select("yes"), "always", false, ApprovalAccept},
		{"always", fakeeditor.Select("always"), "always", false, ApprovalAcceptForSession},
		{"always not offered", fakeeditor.Select("always"), "", false, ApprovalDecline},
		{"empty option, always not offered", fakeeditor.Select(""), "", false, ApprovalDecline},
		{"reject", fakeeditor.Select("no"), "always", false, ApprovalDecline},
		{"user cancelled", cancelled, "always", false, ApprovalCancel},
		{"no option", acpsdk.RequestPermissionResponse{}, "always", false, ApprovalDecline},
		{"turn ended", fakeeditor.Select("yes"), "always", true, ApprovalCancel},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := startAgent(t, &fakeBackend{}, fakeeditor.Options{Permission: func(acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse {
				return tc.answer
			}})
			s, err := h.agent.session(h.newSession(t, t.TempDir()))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(h.ctx)
			defer cancel()
			if tc.turnEnd {
				cancel()
			}
			o := &turnOutput{a: h.agent, s: s, ctx: ctx, log: discardLogger()}
			options := []acpsdk.PermissionOption{
				{OptionId: "yes", Name: "Yes", Kind: acpsdk.PermissionOptionKindAllowOnce},
				{OptionId: "no", Name: "No", Kind: acpsdk.PermissionOptionKindRejectOnce},
			}
			call := acpsdk.ToolCallUpdate{ToolCallId: "call-1", Title: acpsdk.Ptr("Run true")}
			if got := o.askApproval(ctx, "test", call, options, "yes", tc.always); got != tc.want {
				t.Errorf("askApproval = %v, want %v", got, tc.want)
			}
		})
	}
}

// An MCP tool question asked before codex announced the call gets a tool
// call of its own, with an id of its own even when another call of the
// same tool asks at once, and that call ends when the user answered.
func TestApproveMCPToolUnannounced(t *testing.T) {
	var mu sync.Mutex
	var asked []acpsdk.ToolCallId
	h := startAgent(t, &fakeBackend{}, fakeeditor.Options{Permission: func(r acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, r.ToolCall.ToolCallId)
		if len(asked) == 1 {
			return fakeeditor.Select(optToolOnce)
		}
		return fakeeditor.Select(optToolReject)
	}})
	s, err := h.agent.session(h.newSession(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	o := &turnOutput{a: h.agent, s: s, ctx: h.ctx, log: discardLogger()}
	req := MCPToolApproval{Server: "fixture", Tool: "note", ForSession: true}
	if d := o.ApproveMCPTool(h.ctx, req); d != ApprovalAccept {
		t.Fatalf("first answer %v", d)
	}
	if d := o.ApproveMCPTool(h.ctx, req); d != ApprovalDecline {
		t.Fatalf("second answer %v", d)
	}
	if len(asked) != 2 || asked[0] == asked[1] {
		t.Fatalf("the questions' tool calls: %v; want two ids", asked)
	}
	want := map[acpsdk.ToolCallId]acpsdk.ToolCallStatus{asked[0]: acpsdk.ToolCallStatusCompleted, asked[1]: acpsdk.ToolCallStatusFailed}
	err = h.editor.WaitForUpdate(h.ctx, func(acpsdk.SessionUpdate) bool {
		got := map[acpsdk.ToolCallId]acpsdk.ToolCallStatus{}
		for _, u := range h.editor.AllUpdates() {
			if c := u.Update.ToolCallUpdate; c != nil && c.Status != nil {
				got[c.ToolCallId] = *c.Status
			}
		}
		return len(got) == 2 && got[asked[0]] == want[asked[0]] && got[asked[1]] == want[asked[1]]
	})
	if err != nil {
		t.Errorf("the questions' tool calls did not end as answered (%v): %v", want, err)
	}
}
