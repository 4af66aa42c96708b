package acp

import (
	"context"
	"log/slog"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/events"
)

// turnOutput is where a backend delivers one turn of a session: events are
// translated and sent as session updates, command approvals become
// permission requests.
type turnOutput struct {
	a   *Agent
	s   *session
	ctx context.Context // the turn's
	log *slog.Logger

	edits shellEdits // files the turn's shell commands change (shelledits.go)
}

var _ backend.Output = (*turnOutput)(nil)

// Event implements TurnOutput.
func (o *turnOutput) Event(ev events.Event) {
	defer o.recoverTurn("codex event " + ev.Type)
	if !ev.Known() {
		o.log.Debug("codex event not translated", "type", ev.Type)
	}
	o.s.recordCodexTurn(ev) // for /undo (undo.go)
	// Held while sending, so that updates leave in translation order.
	func() {
		o.s.trMu.Lock()
		defer o.s.trMu.Unlock() // even on a panic: the session goes on
		for _, u := range o.s.translator.Translate(ev) {
			o.a.sendUpdate(o.ctx, o.s.id, o.a.withRateLimits(u))
		}
	}()
	// After the event's own updates: a command's edits follow its
	// completion. Events come one at a time, so nothing of a later event
	// comes between.
	o.shellEvent(ev)
}

// endTurn closes the translator's turn; the backend has returned.
func (o *turnOutput) endTurn() events.Outcome {
	o.shellTracker()   // an approval's baseline still being taken ends first
	o.keepShellEdits() // for the session's next turn
	o.s.trMu.Lock()
	defer o.s.trMu.Unlock()
	return o.s.translator.EndTurn()
}

// Permission options of a command approval.
const (
	optRunOnce   = "run_once"
	optRunAlways = "run_always"
	optDontRun   = "reject"
)

// ApproveCommand implements TurnOutput: it asks the editor, attaching the
// question to the command's tool call. A command allowed to run may write
// outside the sandbox: its edits are followed from a baseline taken before
// the answer lets codex run it.
func (o *turnOutput) ApproveCommand(ctx context.Context, req backend.CommandApproval) backend.ApprovalDecision {
	defer o.recoverTurn("command approval") // declined, and the turn ends
	d := o.askCommand(ctx, req)
	switch d {
	case backend.ApprovalAcceptForSession:
		o.s.runAlways.Store(true)
		fallthrough
	case backend.ApprovalAccept:
		o.beginShellEdits(true)
	}
	return d
}

// toolCallOf is the tool call the editor was shown for codex's item itemID;
// ok is false when there is none (yet).
func (o *turnOutput) toolCallOf(itemID string) (id acpsdk.ToolCallId, ok bool) {
	if itemID == "" {
		return "", false
	}
	o.s.trMu.Lock()
	defer o.s.trMu.Unlock()
	return o.s.translator.ToolCallID(itemID)
}

// askCommand puts a command approval to the user.
func (o *turnOutput) askCommand(ctx context.Context, req backend.CommandApproval) backend.ApprovalDecision {
	ctx, stop := mergeContext(ctx, o.ctx)
	defer stop()
	if ctx.Err() != nil {
		return backend.ApprovalCancel
	}
	id, ok := o.toolCallOf(req.ItemID)
	if !ok {
		// Asked before codex announced the command: the question gets a
		// tool call of its own.
		id = acpsdk.ToolCallId("approval-" + req.ItemID)
	}
	command := events.UnwrapShellCommand(req.Command)
	text := "Codex wants to run `" + command + "`"
	if req.Cwd != "" {
		text += " in " + o.s.displayPath(req.Cwd)
	}
	if r := strings.TrimSpace(req.Reason); r != "" {
		text += ".\nReason: " + clip(r, 2048)
	}
	call := acpsdk.ToolCallUpdate{
		ToolCallId: id,
		Title:      acpsdk.Ptr("Run " + clip(command, 200)),
		Kind:       acpsdk.Ptr(acpsdk.ToolKindExecute),
		Status:     acpsdk.Ptr(acpsdk.ToolCallStatusPending),
		Content:    []acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(text))},
		RawInput:   map[string]any{"command": clip(command, 4096), "cwd": req.Cwd, "reason": clip(req.Reason, 4096)},
	}
	options := []acpsdk.PermissionOption{
		{OptionId: optRunOnce, Name: "Run", Kind: acpsdk.PermissionOptionKindAllowOnce},
		{OptionId: optRunAlways, Name: "Always run commands like this in this session", Kind: acpsdk.PermissionOptionKindAllowAlways},
		{OptionId: optDontRun, Name: "Don't run", Kind: acpsdk.PermissionOptionKindRejectOnce},
	}
	return o.askApproval(ctx, "command", call, options, optRunOnce, optRunAlways)
}

// askApproval puts codex's question about running something (what: for
// the log) to the user and reads the answer: the option once accepts,
// always ("" when not offered) accepts for the session. A question that
// ended with the turn, or that the user cancelled, cancels; a failed
// request or any other answer declines.
func (o *turnOutput) askApproval(ctx context.Context, what string, call acpsdk.ToolCallUpdate, options []acpsdk.PermissionOption, once, always acpsdk.PermissionOptionId) backend.ApprovalDecision {
	resp, err := o.a.conn.RequestPermission(ctx, acpsdk.RequestPermissionRequest{
		SessionId: acpsdk.SessionId(o.s.id),
		ToolCall:  call,
		Options:   options,
	})
	switch {
	case err != nil:
		if ctx.Err() == nil {
			o.log.Warn(what+" permission request failed", "err", err)
			return backend.ApprovalDecline
		}
		return backend.ApprovalCancel
	case ctx.Err() != nil, resp.Outcome.Cancelled != nil:
		return backend.ApprovalCancel
	case resp.Outcome.Selected == nil:
		return backend.ApprovalDecline
	}
	switch resp.Outcome.Selected.OptionId {
	case once:
		return backend.ApprovalAccept
	case always:
		if always != "" {
			return backend.ApprovalAcceptForSession
		}
	}
	return backend.ApprovalDecline
}
