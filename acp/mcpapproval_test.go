package acp

import (
	"context"
	"sync"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/internal/fakeeditor"
)

// askApproval maps the user's answer to codex's decision, for commands and
// MCP tools alike.
func TestAskApprovalAnswers(t *testing.T) {
	t.Parallel()
	cancelled := acpsdk.RequestPermissionResponse{Outcome: acpsdk.RequestPermissionOutcome{Cancelled: &acpsdk.RequestPermissionOutcomeCancelled{Outcome: "cancelled"}}}
	for _, tc := range []struct {
		name    string
		answer  acpsdk.RequestPermissionResponse
		always  acpsdk.PermissionOptionId
		turnEnd bool
		want    backend.ApprovalDecision
	}{
		{"once", fakeeditor.Select("yes"), "always", false, backend.ApprovalAccept},
		{"always", fakeeditor.Select("always"), "always", false, backend.ApprovalAcceptForSession},
		{"always not offered", fakeeditor.Select("always"), "", false, backend.ApprovalDecline},
		{"empty option, always not offered", fakeeditor.Select(""), "", false, backend.ApprovalDecline},
		{"reject", fakeeditor.Select("no"), "always", false, backend.ApprovalDecline},
		{"user cancelled", cancelled, "always", false, backend.ApprovalCancel},
		{"no option", acpsdk.RequestPermissionResponse{}, "always", false, backend.ApprovalDecline},
		{"turn ended", fakeeditor.Select("yes"), "always", true, backend.ApprovalCancel},
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
	t.Parallel()
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
	req := backend.MCPToolApproval{Server: "fixture", Tool: "note", ForSession: true}
	if d := o.ApproveMCPTool(h.ctx, req); d != backend.ApprovalAccept {
		t.Fatalf("first answer %v", d)
	}
	if d := o.ApproveMCPTool(h.ctx, req); d != backend.ApprovalDecline {
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
