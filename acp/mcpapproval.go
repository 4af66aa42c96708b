package acp

import (
	"context"
	"encoding/json"
	"fmt"

	acpsdk "github.com/coder/acp-go-sdk"
)

// MCPToolApproval is codex asking whether a tool of one of the editor's MCP
// servers may run (app-server: an mcpServer/elicitation/request whose
// _meta.codex_approval_kind is "mcp_tool_call"). Codex asks for every tool
// not annotated readOnlyHint, in modes whose approval policy lets it ask
// (read-only, through readOnlyApproval, ask and auto); in full-access it
// runs.
type MCPToolApproval struct {
	ItemID     string          // codex's mcpToolCall item (its tool call); "" when none was seen
	Server     string          // the server's name as codex knows it
	Tool       string          // the tool's name
	Arguments  json.RawMessage // the call's arguments; may be empty
	Message    string          // codex's question
	ForSession bool            // codex can remember a yes for the rest of the session
}

// mcpToolApprover is a TurnOutput that can put MCP tool calls to the user.
type mcpToolApprover interface {
	ApproveMCPTool(ctx context.Context, req MCPToolApproval) ApprovalDecision
}

var _ mcpToolApprover = (*turnOutput)(nil)

// Permission options of an MCP tool approval.
const (
	optToolOnce   = "allow_once"
	optToolAlways = "allow_session"
	optToolReject = "reject"
)

// ApproveMCPTool asks the editor, attaching the question to the call's tool
// call. It returns ApprovalCancel when the turn ends while the user is
// asked.
func (o *turnOutput) ApproveMCPTool(ctx context.Context, req MCPToolApproval) ApprovalDecision {
	ctx, stop := mergeContext(ctx, o.ctx)
	defer stop()
	if ctx.Err() != nil {
		return ApprovalCancel
	}
	id, ok := o.toolCallOf(req.ItemID)
	if !ok {
		// Asked before codex announced the call: the question gets a tool
		// call of its own, numbered (two calls of one tool may ask at
		// once), and closed once answered — codex announces the call
		// itself, under its own id, if it runs.
		n := o.s.mcpAsks.Add(1)
		id = acpsdk.ToolCallId(fmt.Sprintf("approval-mcp-%s-%d", firstNonEmpty(req.ItemID, req.Server+"-"+req.Tool), n))
	}
	name := req.Server + ": " + req.Tool
	text := firstNonEmpty(req.Message, "Allow the "+req.Server+" MCP server to run tool \""+req.Tool+"\"?")
	update := acpsdk.ToolCallUpdate{
		ToolCallId: id,
		Title:      acpsdk.Ptr(name),
		Kind:       acpsdk.Ptr(acpsdk.ToolKindOther),
		Status:     acpsdk.Ptr(acpsdk.ToolCallStatusPending),
		Content:    []acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(clip(text, 2048)))},
	}
	if raw := req.Arguments; len(raw) > 0 && string(raw) != "null" {
		update.RawInput = raw
	}
	options := []acpsdk.PermissionOption{{OptionId: optToolOnce, Name: "Allow", Kind: acpsdk.PermissionOptionKindAllowOnce}}
	if req.ForSession {
		options = append(options, acpsdk.PermissionOption{OptionId: optToolAlways, Name: "Always allow " + name + " in this session", Kind: acpsdk.PermissionOptionKindAllowAlways})
	}
	options = append(options, acpsdk.PermissionOption{OptionId: optToolReject, Name: "Don't allow", Kind: acpsdk.PermissionOptionKindRejectOnce})
	always := acpsdk.PermissionOptionId("")
	if req.ForSession {
		always = optToolAlways
	}
	d := o.askApproval(ctx, "MCP tool", update, options, optToolOnce, always)
	if !ok {
		status := acpsdk.ToolCallStatusFailed
		if d == ApprovalAccept || d == ApprovalAcceptForSession {
			status = acpsdk.ToolCallStatusCompleted
		}
		o.a.sendUpdate(ctx, o.s.id, acpsdk.UpdateToolCall(id, acpsdk.WithUpdateStatus(status)))
	}
	return d
}
