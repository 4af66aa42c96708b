package acp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/fsops"
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
	s     *session

	mu      sync.Mutex
	changes map[string]*fsops.Change // by call id, between BeforeWrite and CallFinished
}

var _ mcp.Observer = (*toolReporter)(nil)

func newToolReporter(a *Agent, s *session) *toolReporter {
	return &toolReporter{agent: a, s: s, changes: map[string]*fsops.Change{}}
}

// CallStarted implements mcp.Observer: a pending tool call with the input.
func (r *toolReporter) CallStarted(ctx context.Context, c *mcp.Call) {
	if !r.s.callBegin(c.ID) {
		// No turn runs (a codex that outlived its turn): report nothing;
		// BeforeWrite refuses any write.
		r.agent.log.Warn("file-tool call outside a turn", "session", r.s.id, "tool", c.Tool)
		return
	}
	kind := sdk.ToolKindEdit
	if c.Tool == fsops.ToolReadTextFile {
		kind = sdk.ToolKindRead
	}
	var locs []sdk.ToolCallLocation
	if filepath.IsAbs(c.Path) { // ACP paths are absolute; a relative one fails validation anyway
		locs = []sdk.ToolCallLocation{{Path: c.Path}}
	}
	r.agent.sendUpdate(ctx, r.s.id, sdk.SessionUpdate{ToolCall: &sdk.SessionUpdateToolCall{
		SessionUpdate: "tool_call",
		ToolCallId:    sdk.ToolCallId(c.ID),
		Title:         r.title(c.Tool, c.Path),
		Kind:          kind,
		Status:        sdk.ToolCallStatusPending,
		Locations:     locs,
		RawInput:      c.Arguments,
	}})
}

// BeforeWrite implements mcp.Observer: it refuses writes the mode or the
// workspace forbid, shows the diff, and in ask mode waits for the user.
func (r *toolReporter) BeforeWrite(ctx context.Context, c *mcp.Call, ch *fsops.Change) error {
	turn, ok := r.s.callContext(c.ID)
	if !ok || turn.Err() != nil {
		return &fsops.Error{Code: fsops.CodePermission, Message: "Permission denied: " + ch.Path,
			Hint: "No prompt turn is running in this session; nothing was written."}
	}
	mode := r.s.currentMode()
	if mode == ModeReadOnly {
		return &fsops.Error{Code: fsops.CodePermission, Message: "Permission denied: " + ch.Path,
			Hint: "The session is in read-only mode: files cannot be changed. Tell the user what you would change instead."}
	}
	if mode != ModeFullAccess && !r.s.inWorkspace(ch.Path) {
		return &fsops.Error{Code: fsops.CodePermission, Message: "Permission denied: " + ch.Path,
			Hint: fmt.Sprintf("The path is outside the workspace (%s); only files inside it can be changed in %s mode.",
				strings.Join(r.s.roots(), ", "), mode)}
	}

	r.mu.Lock()
	r.changes[c.ID] = ch
	r.mu.Unlock()

	content := diffContent(ch)
	locations := changeLocations(ch)
	// In auto mode a write into .git or .codex still asks: codex's own
	// workspace-write sandbox keeps those read-only (a git hook or config
	// would run commands outside any sandbox), and these tools bypass it.
	protected := mode != ModeFullAccess && isProtectedPath(ch.Path)
	if !protected && (mode != ModeAsk || r.s.alwaysAllowed(sdk.ToolKindEdit)) {
		// No question to ask: show where the edit lands; the diff comes with
		// the completion (sending a large file's texts once, not twice).
		r.agent.sendUpdate(ctx, r.s.id, sdk.SessionUpdate{ToolCallUpdate: &sdk.SessionToolCallUpdate{
			SessionUpdate: "tool_call_update",
			ToolCallId:    sdk.ToolCallId(c.ID),
			Status:        sdk.Ptr(sdk.ToolCallStatusInProgress),
			Locations:     locations,
		}})
		return nil
	}

	// The permission request carries the diff preview: the editor shows it
	// on the pending tool call while the user decides.
	// The question ends with the call or with the turn, whichever ends first.
	askCtx, stopAsk := mergeContext(ctx, turn)
	defer stopAsk()
	resp, err := r.agent.conn.RequestPermission(askCtx, sdk.RequestPermissionRequest{
		SessionId: sdk.SessionId(r.s.id),
		ToolCall: sdk.ToolCallUpdate{
			ToolCallId: sdk.ToolCallId(c.ID),
			Title:      sdk.Ptr(r.title(c.Tool, ch.Path)),
			Kind:       sdk.Ptr(sdk.ToolKindEdit),
			Status:     sdk.Ptr(sdk.ToolCallStatusPending),
			Content:    content,
			Locations:  locations,
			RawInput:   c.Arguments,
		},
		Options: []sdk.PermissionOption{
			{OptionId: optAllowOnce, Name: "Allow", Kind: sdk.PermissionOptionKindAllowOnce},
			{OptionId: optAllowAlways, Name: "Always allow edits in this session", Kind: sdk.PermissionOptionKindAllowAlways},
			{OptionId: optRejectOnce, Name: "Reject", Kind: sdk.PermissionOptionKindRejectOnce},
		},
	})
	if err != nil {
		r.agent.log.Warn("permission request failed", "session", r.s.id, "err", err)
		return &fsops.Error{Code: fsops.CodePermission, Message: "Permission denied: " + ch.Path,
			Hint: "The permission request did not complete (the turn may have been cancelled); nothing was written.", Err: err}
	}
	switch {
	case turn.Err() != nil:
		return &fsops.Error{Code: fsops.CodePermission, Message: "Permission denied: " + ch.Path,
			Hint: "The turn ended while the user was asked; nothing was written."}
	case resp.Outcome.Selected != nil && resp.Outcome.Selected.OptionId == optAllowOnce:
	case resp.Outcome.Selected != nil && resp.Outcome.Selected.OptionId == optAllowAlways:
		r.s.allowAlways(sdk.ToolKindEdit)
	case resp.Outcome.Cancelled != nil:
		return &fsops.Error{Code: fsops.CodePermission, Message: "Permission denied: " + ch.Path,
			Hint: "The user cancelled; nothing was written. Stop and wait for the user."}
	default:
		return &fsops.Error{Code: fsops.CodePermission, Message: "Permission denied: " + ch.Path,
			Hint: "The user rejected this edit; nothing was written. Do not retry it unchanged: ask the user or try a different approach."}
	}
	r.agent.sendUpdate(ctx, r.s.id, sdk.SessionUpdate{ToolCallUpdate: &sdk.SessionToolCallUpdate{
		SessionUpdate: "tool_call_update",
		ToolCallId:    sdk.ToolCallId(c.ID),
		Status:        sdk.Ptr(sdk.ToolCallStatusInProgress),
	}})
	return nil
}

// CallFinished implements mcp.Observer: completed with the diff, or failed
// with the error the model received.
func (r *toolReporter) CallFinished(ctx context.Context, c *mcp.Call, result any, toolErr *fsops.Error) {
	if !r.s.callEnd(c.ID) {
		return // outside a turn, or given up when its turn ended
	}
	r.mu.Lock()
	ch := r.changes[c.ID]
	delete(r.changes, c.ID)
	r.mu.Unlock()

	u := &sdk.SessionToolCallUpdate{SessionUpdate: "tool_call_update", ToolCallId: sdk.ToolCallId(c.ID)}
	switch {
	case toolErr != nil:
		u.Status = sdk.Ptr(sdk.ToolCallStatusFailed)
		text := toolErr.Message
		if toolErr.Hint != "" {
			text += "\n" + toolErr.Hint
		}
		u.Content = []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(text))}
		u.RawOutput = map[string]any{"error": map[string]any{"code": toolErr.Code, "message": toolErr.Message, "hint": toolErr.Hint}}
	default:
		u.Status = sdk.Ptr(sdk.ToolCallStatusCompleted)
		u.RawOutput = rawOutput(result)
		if ch != nil {
			u.Content = diffContent(ch)
			u.Locations = changeLocations(ch)
		}
	}
	r.agent.sendUpdate(ctx, r.s.id, sdk.SessionUpdate{ToolCallUpdate: u})
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
func failedUpdate(id, text string) sdk.SessionUpdate {
	return sdk.SessionUpdate{ToolCallUpdate: &sdk.SessionToolCallUpdate{
		SessionUpdate: "tool_call_update",
		ToolCallId:    sdk.ToolCallId(id),
		Status:        sdk.Ptr(sdk.ToolCallStatusFailed),
		Content:       []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(text))},
	}}
}

// title names the call the way an editor user reads it: "Edit src/x.go".
func (r *toolReporter) title(tool, path string) string {
	verb := "Edit"
	switch tool {
	case fsops.ToolReadTextFile:
		verb = "Read"
	case fsops.ToolWriteTextFile:
		verb = "Write"
	}
	if path == "" {
		return verb
	}
	return verb + " " + r.s.displayPath(path)
}

// wholeFileDiffLimit is the largest old+new size sent as whole-file diff
// content. Past it each hunk (with its context lines) is sent instead: the
// editor still shows a reviewable diff, and a one-line edit of a large file
// does not cost megabytes of JSON per update.
const wholeFileDiffLimit = 256 << 10

func diffContent(ch *fsops.Change) []sdk.ToolCallContent {
	if ch.Created {
		// No old text to compare with, whatever the size.
		return []sdk.ToolCallContent{sdk.ToolDiffContent(ch.Path, string(ch.New))}
	}
	if len(ch.Old)+len(ch.New) > wholeFileDiffLimit && ch.Diff != "" {
		if hunks := hunkContents(ch.Path, ch.Diff); len(hunks) > 0 {
			return hunks
		}
	}
	return []sdk.ToolCallContent{sdk.ToolDiffContent(ch.Path, string(ch.New), string(ch.Old))}
}

// hunkContents turns a unified diff into one diff content per hunk, old and
// new text each made of the hunk's context and changed lines.
func hunkContents(path, diff string) []sdk.ToolCallContent {
	var out []sdk.ToolCallContent
	var old, new strings.Builder
	lastSide := byte(0)
	inHunk := false // the "--- "/"+++ " headers come only before the first hunk
	flush := func() {
		if old.Len() > 0 || new.Len() > 0 {
			out = append(out, sdk.ToolDiffContent(path, new.String(), old.String()))
		}
		old.Reset()
		new.Reset()
	}
	trimLast := func(b *strings.Builder) {
		s := strings.TrimSuffix(b.String(), "\n")
		b.Reset()
		b.WriteString(s)
	}
	for _, line := range strings.SplitAfter(diff, "\n") {
		switch {
		case !inHunk && (strings.HasPrefix(line, "--- ") || strings.HasPrefix(line, "+++ ")):
		case strings.HasPrefix(line, "@@"):
			inHunk = true
			flush()
		case strings.HasPrefix(line, `\`):
			// "\ No newline at end of file" applies to the line before it.
			switch lastSide {
			case ' ':
				trimLast(&old)
				trimLast(&new)
			case '-':
				trimLast(&old)
			case '+':
				trimLast(&new)
			}
		case line == "":
		default:
			lastSide = line[0]
			text := line[1:]
			switch lastSide {
			case ' ':
				old.WriteString(text)
				new.WriteString(text)
			case '-':
				old.WriteString(text)
			case '+':
				new.WriteString(text)
			}
		}
	}
	flush()
	return out
}

func changeLocations(ch *fsops.Change) []sdk.ToolCallLocation {
	if len(ch.ChangedLines) == 0 {
		return []sdk.ToolCallLocation{{Path: ch.Path}}
	}
	locs := make([]sdk.ToolCallLocation, len(ch.ChangedLines))
	for i, line := range ch.ChangedLines {
		locs[i] = sdk.ToolCallLocation{Path: ch.Path, Line: sdk.Ptr(line)}
	}
	return locs
}

// isProtectedPath reports whether a path lies inside a .git or .codex
// directory.
func isProtectedPath(path string) bool {
	for _, part := range strings.Split(filepath.Clean(path), string(filepath.Separator)) {
		if part == ".git" || part == ".codex" {
			return true
		}
	}
	return false
}

// displayPath is path relative to the session's cwd when inside it.
func (s *session) displayPath(path string) string {
	if rel, err := filepath.Rel(s.cwd, path); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}

// roots are the workspace directories: cwd and the additional directories.
func (s *session) roots() []string {
	return append([]string{s.cwd}, s.dirs...)
}

// inWorkspace reports whether path, with symlinks resolved, lies inside a
// workspace root (also with symlinks resolved). A file that does not exist
// yet is judged by its nearest existing ancestor.
func (s *session) inWorkspace(path string) bool {
	real := resolvePath(path)
	for _, root := range s.roots() {
		rel, err := filepath.Rel(resolvePath(root), real)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

func resolvePath(path string) string {
	path = filepath.Clean(path)
	var rest []string
	for {
		if real, err := filepath.EvalSymlinks(path); err == nil {
			return filepath.Join(append([]string{real}, rest...)...)
		} else if !errors.Is(err, os.ErrNotExist) {
			return filepath.Join(append([]string{path}, rest...)...)
		}
		parent := filepath.Dir(path)
		if parent == path {
			return filepath.Join(append([]string{path}, rest...)...)
		}
		rest = append([]string{filepath.Base(path)}, rest...)
		path = parent
	}
}
