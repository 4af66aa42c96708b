package appserver

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/backend/backendtest"
	"github.com/codexacp/codexacp/internal/testkit"
)

// mcpAnsweringOutput answers MCP tool approvals (and commands) with one
// decision, and records what it was asked.
type mcpAnsweringOutput struct {
	answeringOutput
	tools []backend.MCPToolApproval
}

func (o *mcpAnsweringOutput) ApproveMCPTool(_ context.Context, req backend.MCPToolApproval) backend.ApprovalDecision {
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
		decision backend.ApprovalDecision
		want     string
		asked    bool
	}{
		{"allow once", toolApprovalParams, backend.ApprovalAccept, `{"action":"accept"}`, true},
		{"allow for the session", toolApprovalParams, backend.ApprovalAcceptForSession, `{"_meta":{"persist":"session"},"action":"accept"}`, true},
		{"reject", toolApprovalParams, backend.ApprovalDecline, `{"action":"decline"}`, true},
		{"cancelled turn", toolApprovalParams, backend.ApprovalCancel, `{"action":"cancel"}`, true},
		// An MCP server's own question: not offered.
		{"server elicitation", `{"threadId":"th","serverName":"fixture","mode":"form","message":"Your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}`,
			backend.ApprovalAccept, `{"action":"decline"}`, false},
		{"no tool name", `{"serverName":"fixture","_meta":{"codex_approval_kind":"mcp_tool_call"}}`, backend.ApprovalAccept, `{"action":"decline"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := &mcpAnsweringOutput{answeringOutput: answeringOutput{decision: tc.decision}}
			h := NewTurnHandler(out, testkit.DiscardLogger())
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
	if _, err := NewTurnHandler(out, testkit.DiscardLogger()).Request(context.Background(), "mcpServer/elicitation/request", json.RawMessage(`[1]`)); err == nil || len(out.tools) != 0 {
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
			out := &mcpAnsweringOutput{answeringOutput: answeringOutput{decision: backend.ApprovalAccept}}
			h := NewTurnHandler(out, testkit.DiscardLogger())
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

// formOutput answers an MCP server's question with one answer.
type formOutput struct {
	backendtest.NopOutput
	answer backend.MCPElicitationAnswer
}

func (o formOutput) ElicitMCP(context.Context, backend.MCPElicitation) backend.MCPElicitationAnswer {
	return o.answer
}

// The user's answer to an MCP server's form goes to codex as it was sent
// when the answer was a map: the action, and the content only when there
// is some, its fields in order.
func TestMCPServerFormAnswer(t *testing.T) {
	const form = `{"threadId":"th","serverName":"fixture","mode":"form","message":"Your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}`
	for _, tc := range []struct {
		answer backend.MCPElicitationAnswer
		want   string
	}{
		{backend.MCPElicitationAnswer{Action: "accept", Content: map[string]json.RawMessage{"name": json.RawMessage(`"Ada"`), "age": json.RawMessage(`36`)}},
			`{"action":"accept","content":{"age":36,"name":"Ada"}}`},
		{backend.MCPElicitationAnswer{Action: "accept", Content: map[string]json.RawMessage{}}, `{"action":"accept"}`},
		{backend.MCPDecline, `{"action":"decline"}`},
		{backend.MCPCancel, `{"action":"cancel"}`},
	} {
		res, err := NewTurnHandler(formOutput{answer: tc.answer}, testkit.DiscardLogger()).Request(context.Background(), "mcpServer/elicitation/request", json.RawMessage(form))
		if err != nil {
			t.Fatal(err)
		}
		if got := jsonString(res); got != tc.want {
			t.Errorf("answer to %+v = %s, want %s", tc.answer, got, tc.want)
		}
	}
}
