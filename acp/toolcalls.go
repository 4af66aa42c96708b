package acp

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync/atomic"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/events"
	"github.com/codexacp/codexacp/fsops"
	"github.com/codexacp/codexacp/internal/sessionstore"
	"github.com/codexacp/codexacp/mcp"
)

// Permission option ids offered for an edit in ask mode.
const (
	optAllowOnce   = "allow_once"
	optAllowAlways = "allow_always"
	optRejectOnce  = "reject_once"
)

// toolReporter implements mcp.Observer for one session: it shows every file
// tool call in the editor as a tool call, enforces the session's mode and
// workspace, and asks the editor for permission in ask mode.
type toolReporter struct {
	agent *Agent
	// sess is the session the calls belong to: a session restored in this
	// process takes over its predecessor's tool server (and token, which
	// an app-server thread keeps for as long as it is loaded).
	sess atomic.Pointer[session]
	// editorRoute reports whether writes go through the editor (which
	// writes files in place); nil: they do not.
	editorRoute func() bool
}

var _ mcp.Observer = (*toolReporter)(nil)

func newToolReporter(a *Agent, s *session) *toolReporter {
	r := &toolReporter{agent: a}
	r.sess.Store(s)
	return r
}

// CallStarted implements mcp.Observer: a pending tool call with the input.
// The call runs under a context that ends with its turn, so a turn's end
// also ends the call's editor requests and lock waits.
func (r *toolReporter) CallStarted(ctx context.Context, c *mcp.Call) context.Context {
	s := r.sess.Load()
	ctx = withCallNote(ctx)
	ctx, ok := s.callBegin(ctx, c.ID)
	if !ok {
		// No turn runs (a codex that outlived its turn): report nothing;
		// BeforeWrite refuses any write.
		r.agent.log.Warn("file-tool call outside a turn", "session", s.id, "tool", c.Tool)
		return ctx
	}
	_, kind := events.FileTool(c.Tool)
	var locs []acpsdk.ToolCallLocation
	if filepath.IsAbs(c.Path) { // ACP paths are absolute; a relative one fails validation anyway
		locs = []acpsdk.ToolCallLocation{{Path: c.Path}}
	}
	r.agent.sendUpdate(ctx, s.id, acpsdk.SessionUpdate{ToolCall: &acpsdk.SessionUpdateToolCall{
		SessionUpdate: "tool_call",
		ToolCallId:    acpsdk.ToolCallId(c.ID),
		Title:         r.title(c.Tool, c.Path),
		Kind:          kind,
		Status:        acpsdk.ToolCallStatusPending,
		Locations:     locs,
		RawInput:      trimRawInput(c.Arguments),
	}})
	return ctx
}

// BeforeWrite implements mcp.Observer: it refuses writes the mode or the
// workspace forbid, shows the diff, and in ask mode waits for the user.
// ch.Path is resolved: the checks judge where the write lands.
func (r *toolReporter) BeforeWrite(ctx context.Context, c *mcp.Call, ch *fsops.Change) error {
	s := r.sess.Load()
	turn, ok := s.callContext(c.ID)
	if !ok || turn.Err() != nil {
		return denied(ch.Path, "No prompt turn is running in this session; nothing was written.", nil)
	}
	if err := s.writeAllowed(ch.Path); err != nil {
		return err
	}
	mode := s.toolMode()
	// A file of several names written in place by the editor changes
	// under all of them, wherever they are: auto mode refuses, ask mode
	// asks whatever was allowed before.
	links, linked := 0, fs.FileInfo(nil)
	if mode != backend.ModeFullAccess {
		links, linked = r.editorLinks(ch)
	}
	if links > 1 && mode != backend.ModeAsk {
		return hardLinkError(ch.Path, links)
	}
	s.setChange(c.ID, ch)

	// In auto mode a write into .git, .codex, .agents or .aws (or another
	// git directory, or codex's home) still asks: codex's own
	// workspace-write sandbox keeps those read-only, and these tools
	// bypass it.
	protected := ""
	if mode != backend.ModeFullAccess {
		protected = s.protectedDir(ch.Path)
	}
	update := &acpsdk.SessionToolCallUpdate{
		SessionUpdate: "tool_call_update",
		ToolCallId:    acpsdk.ToolCallId(c.ID),
		Status:        acpsdk.Ptr(acpsdk.ToolCallStatusInProgress),
	}
	if protected == "" && links <= 1 && (mode != backend.ModeAsk || s.alwaysAllowed(acpsdk.ToolKindEdit)) {
		// No question to ask: show where the edit lands; the diff comes with
		// the completion (sending a large file's texts once, not twice).
		update.Locations = changeLocations(ch)
	} else if refusal := r.askPermission(ctx, turn, s, c, ch, protected, links); refusal != nil {
		return refusal
	} else if n := noteOf(ctx); n != nil && links > 1 {
		n.linked = linked // the write checks it is still this file
	}
	r.agent.sendUpdate(ctx, s.id, acpsdk.SessionUpdate{ToolCallUpdate: update})
	return nil
}

// askPermission asks the user about the write: nil when allowed, else the
// refusal for the model. The request carries the diff preview, which the
// editor shows on the pending tool call while the user decides. The
// question ends with the call or with the turn, whichever ends first.
func (r *toolReporter) askPermission(ctx, turn context.Context, s *session, c *mcp.Call, ch *fsops.Change, protected string, links int) error {
	askCtx, stopAsk := mergeContext(ctx, turn)
	defer stopAsk()
	content := diffContent(ch)
	if links > 1 {
		content = append([]acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(hardLinkQuestion(s.displayPath(ch.Path), links)))}, content...)
	}
	resp, err := r.agent.conn.RequestPermission(askCtx, acpsdk.RequestPermissionRequest{
		SessionId: acpsdk.SessionId(s.id),
		ToolCall: acpsdk.ToolCallUpdate{
			ToolCallId: acpsdk.ToolCallId(c.ID),
			Title:      acpsdk.Ptr(r.permissionTitle(s, c, ch, protected, links)),
			Kind:       acpsdk.Ptr(acpsdk.ToolKindEdit),
			Status:     acpsdk.Ptr(acpsdk.ToolCallStatusPending),
			Content:    content,
			Locations:  changeLocations(ch),
			RawInput:   trimRawInput(c.Arguments),
		},
		Options: []acpsdk.PermissionOption{
			{OptionId: optAllowOnce, Name: "Allow", Kind: acpsdk.PermissionOptionKindAllowOnce},
			{OptionId: optAllowAlways, Name: "Always allow edits in this session", Kind: acpsdk.PermissionOptionKindAllowAlways},
			{OptionId: optRejectOnce, Name: "Reject", Kind: acpsdk.PermissionOptionKindRejectOnce},
		},
	})
	var hint string
	switch {
	case err != nil:
		r.agent.log.Warn("permission request failed", "session", s.id, "err", err)
		hint = "The permission request did not complete (the turn may have been cancelled); nothing was written."
	case turn.Err() != nil:
		hint = "The turn ended while the user was asked; nothing was written."
	case resp.Outcome.Selected != nil && resp.Outcome.Selected.OptionId == optAllowOnce:
		return nil
	case resp.Outcome.Selected != nil && resp.Outcome.Selected.OptionId == optAllowAlways:
		s.allowAlways(acpsdk.ToolKindEdit)
		return nil
	case resp.Outcome.Cancelled != nil:
		hint = "The user cancelled; nothing was written. Stop and wait for the user."
	default:
		hint = "The user rejected this edit; nothing was written. Do not retry it unchanged: ask the user or try a different approach."
	}
	return denied(ch.Path, hint, err)
}

// permissionTitle is the question's title: the edit, and what makes it
// notable (a protected directory, other names of the file, directories it
// creates).
func (r *toolReporter) permissionTitle(s *session, c *mcp.Call, ch *fsops.Change, protected string, links int) string {
	title := r.title(c.Tool, ch.Path)
	if protected != "" {
		title += " (in " + s.displayPath(protected) + ")"
	}
	if links > 1 {
		title += fmt.Sprintf(" (hard link: %d names, all changed)", links)
	}
	if len(ch.NewDirs) > 0 {
		title += " (creating " + s.displayPath(ch.NewDirs[0])
		if n := len(ch.NewDirs); n > 1 {
			title += fmt.Sprintf(" and %d more", n-1)
		}
		title += ")"
	}
	return title
}

// CallFinished implements mcp.Observer: completed with the diff, or failed
// with the error the model received. The call counts as done for its turn
// only once this update is written.
func (r *toolReporter) CallFinished(ctx context.Context, c *mcp.Call, result any, toolErr *fsops.Error) {
	s := r.sess.Load()
	ch, ok := s.callReporting(c.ID)
	if !ok {
		return // outside a turn, or given up when its turn ended
	}
	defer s.callDone(c.ID)

	u := &acpsdk.SessionToolCallUpdate{SessionUpdate: "tool_call_update", ToolCallId: acpsdk.ToolCallId(c.ID)}
	switch {
	case toolErr != nil:
		u.Status = acpsdk.Ptr(acpsdk.ToolCallStatusFailed)
		text := toolErr.Message
		if toolErr.Hint != "" {
			text += "\n" + toolErr.Hint
		}
		u.Content = []acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(text))}
		u.RawOutput = map[string]any{"error": map[string]any{"code": toolErr.Code, "message": toolErr.Message, "hint": toolErr.Hint}}
	default:
		u.Status = acpsdk.Ptr(acpsdk.ToolCallStatusCompleted)
		u.RawOutput = rawOutput(result)
		if ch != nil {
			u.Content = diffContent(ch)
			u.Locations = changeLocations(ch)
		}
	}
	r.agent.sendUpdate(ctx, s.id, acpsdk.SessionUpdate{ToolCallUpdate: u})
	if toolErr == nil && ch != nil {
		// After the update: the editor's diff does not wait for the disk.
		r.agent.keepOverwrite(s, c, ch, u.Content)
		r.agent.recordWrite(s, ch)
	}
}

// rawOutput is the result shown to the editor. A read's content is left
// out: the editor has the file, and a read can carry 256 KiB.
func rawOutput(result any) any {
	r, ok := result.(*fsops.ReadResult)
	if !ok {
		return result
	}
	return map[string]any{
		"hash": r.Hash, "total_lines": r.TotalLines, "start_line": r.StartLine, "end_line": r.EndLine,
		"has_more": r.HasMore, "content_bytes": len(r.Content),
	}
}

// failedUpdate marks a tool call failed with a message.
func failedUpdate(id, text string) acpsdk.SessionUpdate {
	return acpsdk.SessionUpdate{ToolCallUpdate: &acpsdk.SessionToolCallUpdate{
		SessionUpdate: "tool_call_update",
		ToolCallId:    acpsdk.ToolCallId(id),
		Status:        acpsdk.Ptr(acpsdk.ToolCallStatusFailed),
		Content:       []acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(text))},
	}}
}

// title names the call the way an editor user reads it: "Edit src/x.go".
func (r *toolReporter) title(tool, path string) string {
	s := r.sess.Load()
	verb, _ := events.FileTool(tool)
	if path == "" {
		return verb
	}
	return verb + " " + s.displayPath(path)
}

// wholeFileDiffLimit is the largest old+new size sent as whole-file diff
// content. Past it each hunk (with its context lines) is sent instead: the
// editor still shows a reviewable diff, and a one-line edit of a large file
// does not cost megabytes of JSON per update.
const wholeFileDiffLimit = 256 << 10

func diffContent(ch *fsops.Change) []acpsdk.ToolCallContent {
	return limitContent(fullDiffContent(ch))
}

func fullDiffContent(ch *fsops.Change) []acpsdk.ToolCallContent {
	if ch.Created {
		// No old text to compare with, whatever the size.
		return []acpsdk.ToolCallContent{acpsdk.ToolDiffContent(ch.Path, string(ch.New))}
	}
	if len(ch.Old)+len(ch.New) > wholeFileDiffLimit && ch.Diff != "" {
		if hunks := events.HunkContents(ch.Path, ch.Diff); len(hunks) > 0 {
			return hunks
		}
	}
	return []acpsdk.ToolCallContent{acpsdk.ToolDiffContent(ch.Path, string(ch.New), string(ch.Old))}
}

func changeLocations(ch *fsops.Change) []acpsdk.ToolCallLocation {
	if len(ch.ChangedLines) == 0 {
		return []acpsdk.ToolCallLocation{{Path: ch.Path}}
	}
	locs := make([]acpsdk.ToolCallLocation, len(ch.ChangedLines))
	for i, line := range ch.ChangedLines {
		locs[i] = acpsdk.ToolCallLocation{Path: ch.Path, Line: acpsdk.Ptr(line)}
	}
	return locs
}

// displayPath is path relative to the session's cwd when inside it (paths
// the tools resolved are compared with the resolved cwd too).
func (s *session) displayPath(path string) string {
	cwd := s.cwd
	if !fsops.Within(cwd, path) {
		cwd = s.realRoots()[0] // resolved only when the cwd's text does not match
	}
	if fsops.Within(cwd, path) && cwd != path {
		rel, _ := filepath.Rel(cwd, path)
		return rel
	}
	return path
}

// keepOverwrite keeps what the completed call ch showed (shown), if it
// overwrote a file with write_text_file. A failure costs only the diff in
// a later replay: it is logged.
func (a *Agent) keepOverwrite(s *session, c *mcp.Call, ch *fsops.Change, shown []acpsdk.ToolCallContent) {
	if a.store == nil || ch.Created || ch.Tool != fsops.ToolWriteTextFile || s.isDeleted() {
		return
	}
	w := events.KnownWrite{Path: c.Path, Hash: fsops.HashOf(ch.New), Content: shown}
	err := a.store.KeepWrite(s.id, w)
	if errors.Is(err, sessionstore.ErrWriteTooLarge) {
		if w.Content = events.HunkContents(ch.Path, ch.Diff); len(w.Content) > 0 {
			err = a.store.KeepWrite(s.id, w)
		}
	}
	if err != nil {
		a.log.Info("overwrite's diff not kept; a loaded session shows the write without it", "session", s.id, "path", ch.Path, "err", err)
	}
}
