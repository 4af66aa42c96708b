package acp

import (
	"context"
	"fmt"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/backend"
)

// Permission options of an MCP tool approval.
const (
	optToolOnce   = "allow_once"
	optToolAlways = "allow_session"
	optToolReject = "reject"
)

// ApproveMCPTool asks the editor, attaching the question to the call's tool
// call. It returns ApprovalCancel when the turn ends while the user is
// asked.
func (o *turnOutput) ApproveMCPTool(ctx context.Context, req backend.MCPToolApproval) backend.ApprovalDecision {
	ctx, stop := mergeContext(ctx, o.ctx)
	defer stop()
	if ctx.Err() != nil {
		return backend.ApprovalCancel
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
		if d == backend.ApprovalAccept || d == backend.ApprovalAcceptForSession {
			status = acpsdk.ToolCallStatusCompleted
		}
		o.a.sendUpdate(ctx, o.s.id, acpsdk.UpdateToolCall(id, acpsdk.WithUpdateStatus(status)))
	}
	return d
}
