package acp

// /undo (docs/undo.md): the session's change sets (internal/changeset)
// record what each turn did to files — the file tools' writes
// (toolcalls.go), the shell's edits (shelledits.go) — with codex's id of
// the turn (turnoutput.go). /undo [N] and _codexacp/session/undo take the
// last turns back: codex forgets them first (Backend.ForgetTurns), then the
// files are written back through the editor like any edit, shown as one
// edit tool call with a diff per file; a file changed since the turn, and
// a file the turn created (removed), are asked about. Both hold the
// session's turn queue: no turn runs, or starts, during an undo.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/events"
	"github.com/codexacp/codexacp/fsops"
	"github.com/codexacp/codexacp/internal/changeset"
	"github.com/codexacp/codexacp/internal/recovery"
	"github.com/codexacp/codexacp/internal/regularfile"
	"github.com/codexacp/codexacp/internal/shelledits"
)

// extSessionUndo is the extension method an editor can bind a button to:
// {sessionId, turns?} → undoAnswer. Declared in initialize's _meta.
const extSessionUndo = "_codexacp/session/undo"

// memUndoLimits bound the change sets of a session without a state
// directory: they are the process's memory, for every session it serves.
func memUndoLimits() changeset.Limits {
	l := changeset.DefaultLimits()
	l.MaxTurnBytes, l.MaxBytes = 8<<20, 8<<20
	return l
}

// newMemUndo is a session's change sets in memory.
func newMemUndo() *changeset.Log {
	l, _ := changeset.Open(changeset.NewMemStorage(), memUndoLimits()) // an empty store has nothing to decode
	return l
}

// openUndo gives the session its stored change sets (new, load, resume,
// fork): kept next to its record, so that /undo works after a load in a
// restarted agent. Without a store the session keeps its in memory. A
// restored session's stored files are told to Options.ObserveStored.
func (a *Agent) openUndo(s *session, restored bool) {
	if a.store == nil {
		return
	}
	dir, err := a.store.Undo(s.id)
	if err != nil {
		a.log.Warn("the session's change sets cannot be kept; /undo works for this process's turns only", "session", s.id, "err", err)
		return
	}
	l, err := changeset.Open(dir, changeset.Limits{})
	if err != nil {
		// l is empty and usable: the turns before are lost, not the session.
		a.log.Warn("the session's stored change sets cannot be read; its earlier turns cannot be undone", "session", s.id, "err", err)
	}
	s.undo = l
	if restored && l.Len() > 0 { // none: the replay's load finds none either
		for _, p := range dir.StoredFiles(l.Turns()) {
			a.observeStored(p, nil)
		}
	}
}

// beginUndoTurn starts recording the turn's changes, once the previous
// turn's change set is stored (its end runs after its answer).
func (a *Agent) beginUndoTurn(s *session) {
	s.undoSettled()
	if err := s.undo.BeginTurn(newTurnID()); err != nil {
		a.log.Info("the previous turn's change set was not stored", "session", s.id, "err", err)
	}
}

// endUndoTurn ends the turn's change set after the prompt's answer: storing
// it (tens of milliseconds on a busy disk, BenchmarkEndTurn) runs on a
// goroutine of its own, which the session's next turn, an undo, a delete
// and the end of Serve wait for.
func (a *Agent) endUndoTurn(s *session) {
	done := make(chan struct{})
	s.mu.Lock()
	s.undoSaving = done
	s.mu.Unlock()
	a.inBackground("storing the turn's change set", func() {
		defer close(done)
		if _, err := s.undo.EndCodexTurn(); err != nil {
			a.log.Info("the turn's change set was not stored; it can be undone until the agent exits", "session", s.id, "err", err)
		}
	})
}

// undoSettled waits until the last turn's change set is stored.
func (s *session) undoSettled() {
	s.mu.Lock()
	ch := s.undoSaving
	s.mu.Unlock()
	if ch != nil {
		<-ch
	}
}

// inBackground runs f on a goroutine that flushSaves waits for (as
// persistSoon's saves); once Serve is ending, at once.
func (a *Agent) inBackground(what string, f func()) {
	a.saves.mu.Lock()
	if a.saves.stopped {
		a.saves.mu.Unlock()
		f()
		return
	}
	a.saves.running++
	a.saves.mu.Unlock()
	go func() {
		defer a.saves.done()
		defer recovery.Recover(a.log, what, nil)
		f()
	}()
}

// newTurnID names a turn in the change sets.
func newTurnID() string {
	return "turn_" + strings.TrimPrefix(newSessionID(), "sess_")
}

// recordCodexTurn notes codex's id of the running turn (turn.started).
func (s *session) recordCodexTurn(ev events.Event) {
	if ev.Type == events.TypeTurnStarted && ev.TurnID != "" {
		_ = s.undo.SetCodexTurn(ev.TurnID) // outside a turn: nothing to name
	}
}

// recordWrite notes a file tool's write in the running turn's change set.
func (a *Agent) recordWrite(s *session, ch *fsops.Change) {
	if err := s.undo.RecordWrite(ch); err != nil && !errors.Is(err, changeset.ErrNoTurn) {
		a.log.Info("a write's content before is not kept; /undo cannot restore it", "session", s.id, "path", ch.Path, "err", err)
	}
}

// recordShellEdits notes what a command changed in the running turn's
// change set.
func (a *Agent) recordShellEdits(s *session, rep shelledits.Report) {
	for _, c := range rep.Changes {
		if err := s.undo.RecordShellEdit(c); err != nil && !errors.Is(err, changeset.ErrNoTurn) {
			a.log.Info("a shell edit's content before is not kept; /undo cannot restore it", "session", s.id, "path", c.Path, "err", err)
		}
	}
	for _, p := range rep.More {
		_ = s.undo.RecordUnseen(p) // recorded without content: never an error but outside a turn
	}
}

// Why an undo did nothing.
var (
	errUndoTurnRunning = errors.New("a turn is running: /undo takes turns back between turns; wait for it to end (or cancel it) and try again")
	errUndoReadOnly    = errors.New("the session is in read-only mode (or planning): an undo writes files; switch to ask or auto mode first")
	errUndoCancelled   = errors.New("the question was cancelled; nothing was undone")
)

// undoAnswer is _codexacp/session/undo's answer.
type undoAnswer struct {
	Summary     string       `json:"summary"` // what /undo shows
	Turns       int          `json:"turns"`   // turns taken back
	Restored    []string     `json:"restored"`
	Left        []undoLeftAs `json:"left"`
	CodexForgot bool         `json:"codexForgot"`
}

// undoLeftAs is a file the undo left as it is, and why.
type undoLeftAs struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// undoCommand is /undo [N].
func (a *Agent) undoCommand(ctx context.Context, s *session, args string) (string, error) {
	n, err := undoCount(args)
	if err != nil {
		return "", invalidParams(err.Error())
	}
	_, summary, err := a.undo(ctx, s, n)
	if err != nil {
		return undoRefusal(err), nil
	}
	return summary, nil
}

// undoCount reads /undo's argument: a number of turns, 1 when empty.
func undoCount(args string) (int, error) {
	if args == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(args)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("/undo takes the number of turns to take back (e.g. /undo 2), not %q", clip(args, 64))
	}
	return n, nil
}

// undoRefusal says why nothing was undone.
func undoRefusal(err error) string {
	var few *changeset.NotEnoughTurnsError
	switch {
	case errors.As(err, &few) && few.Have == 0:
		return "There is no turn to undo: /undo takes back turns of this session that changed or could change files (the last 50)."
	case errors.As(err, &few):
		return fmt.Sprintf("Nothing was undone: only %d turns can be undone, not %d.", few.Have, few.Want)
	case errors.Is(err, changeset.ErrCodexRemembers):
		return "Nothing was undone: " + err.Error() + ". The files are as they were."
	}
	return "Nothing was undone: " + err.Error() + "."
}

// handleUndoMethod is _codexacp/session/undo.
func (a *Agent) handleUndoMethod(ctx context.Context, params json.RawMessage) (any, error) {
	var req struct {
		SessionID acpsdk.SessionId `json:"sessionId"`
		Turns     *int             `json:"turns"`
	}
	if err := json.Unmarshal(params, &req); err != nil || req.SessionID == "" {
		return nil, invalidParams(extSessionUndo + " needs a sessionId (and optionally turns, a number ≥ 1)")
	}
	n := 1
	if req.Turns != nil {
		if n = *req.Turns; n < 1 {
			return nil, invalidParams(fmt.Sprintf("turns must be at least 1, not %d", n))
		}
	}
	s, err := a.session(req.SessionID)
	if err != nil {
		return nil, err
	}
	res, summary, err := a.undo(ctx, s, n)
	var few *changeset.NotEnoughTurnsError
	switch {
	case errors.As(err, &few):
		return nil, invalidParams(undoRefusal(err))
	case err != nil:
		return nil, internalError(undoRefusal(err))
	}
	ans := undoAnswer{Summary: summary, Turns: len(res.Plan.Turns), CodexForgot: res.CodexForgot,
		Restored: []string{}, Left: []undoLeftAs{}}
	for _, o := range res.Outcomes {
		switch {
		case o.Done:
			ans.Restored = append(ans.Restored, o.Step.Path)
		case o.Step.State == changeset.Done:
		case o.Err != nil:
			ans.Left = append(ans.Left, undoLeftAs{Path: o.Step.Path, Reason: o.Err.Error()})
		default:
			ans.Left = append(ans.Left, undoLeftAs{Path: o.Step.Path, Reason: firstNonEmpty(o.Skipped, o.Step.State.String())})
		}
	}
	return ans, nil
}

// undo takes the session's last n turns back, holding its turn queue: a
// turn running refuses it (it never waits, nor races the turn's writes).
// summary is what the user is told.
func (a *Agent) undo(ctx context.Context, s *session, n int) (res changeset.Result, summary string, err error) {
	if !a.can(backend.Undo) {
		return changeset.Result{}, "", errors.New("this backend cannot make codex forget turns")
	}
	if !s.turns.tryAcquire() {
		return changeset.Result{}, "", errUndoTurnRunning
	}
	defer s.turns.release()
	s.undoSettled()
	if have := s.undo.Len(); n > have {
		return changeset.Result{}, "", &changeset.NotEnoughTurnsError{Want: n, Have: have}
	}
	if s.toolMode() == backend.ModeReadOnly {
		return changeset.Result{}, "", errUndoReadOnly
	}
	log := a.log.With("session", s.id)
	files := a.undoFiles(s)
	call := &undoCall{a: a, s: s, files: files}
	call.begin(ctx, n)
	res, err = s.undo.Undo(ctx, n, changeset.Undo{
		Files:  changeset.FsopsFiles{Files: files},
		Writer: call,
		Ask:    call.ask,
		AskAll: s.toolMode() == backend.ModeAsk && !s.alwaysAllowed(acpsdk.ToolKindEdit),
		Forget: func(ctx context.Context, plan changeset.Plan) error {
			t, _ := a.turn(ctx, s, "")
			ids := make([]string, len(plan.Turns))
			for i, tr := range plan.Turns {
				ids[i] = tr.CodexTurn
			}
			for _, st := range plan.Steps {
				log.Debug("undo step", "path", st.Path, "op", st.Op, "state", st.State, "current", st.Current, "err", st.Err)
			}
			log.Info("codex forgets turns", "thread", t.ThreadID, "turns", ids)
			return a.opts.Backend.ForgetTurns(ctx, t, ids)
		},
	})
	// The exec backend ended the session's waiting codex to cut its
	// thread: the next turn's starts again.
	a.prepareNext(context.WithoutCancel(ctx), s, false)
	if err != nil {
		log.Info("undo refused", "turns", n, "err", err)
		call.failed(ctx, undoRefusal(err))
		return res, "", err
	}
	if res.ForgetErr != nil {
		log.Warn("the undone turns were not forgotten in the stored change sets; after a restart /undo offers them again", "err", res.ForgetErr)
	}
	log.Info("undo", "turns", n, "files", len(res.Outcomes), "codex_forgot", res.CodexForgot)
	call.completed(ctx, res)
	return res, call.summary(res), nil
}

// undoFiles is the session's files as the file tools see them: the
// editor's buffers, written through fs/write_text_file (the local disk
// when the editor lacks it), with the session's last check at the write;
// binary files on the local disk (undoFS).
func (a *Agent) undoFiles(s *session) undoFS {
	a.mu.Lock()
	caps := a.clientCaps.Fs
	a.mu.Unlock()
	local := a.opts.LocalFiles
	if local == nil {
		local = fsops.NewLocalFiles().Within(s.roots()...)
	}
	f := newEditorFiles(a.conn, s.id, caps, local)
	f.checkWrite = s.checkWrite
	f.hardLinks = s.hardLinkAllowed
	if a.opts.EditorTimeout > 0 {
		f.timeout = a.opts.EditorTimeout
	}
	return undoFS{f}
}

// undoFS is the files an undo reads and writes: the editor's, but for a
// binary file (a NUL byte, or not UTF-8: internal/shelledits' binary),
// which an editor's text buffer cannot hold and fs/write_text_file cannot
// carry (its JSON string would replace the bytes that are not UTF-8): a
// file binary on disk is read there, and binary content is written there,
// through the same local port as the editor's fallback (a final link or a
// directory swapped for a link is refused, the file replaced by a rename)
// after the session's last check.
type undoFS struct{ *editorFiles }

// ReadFile implements fsops.Files.
func (f undoFS) ReadFile(ctx context.Context, path string) ([]byte, error) {
	if data, err := f.local.ReadFile(ctx, path); err == nil && fsops.IsBinary(data) {
		return data, nil
	}
	return f.editorFiles.ReadFile(ctx, path)
}

// WriteFile implements fsops.Files.
func (f undoFS) WriteFile(ctx context.Context, path string, data []byte) error {
	if !fsops.IsBinary(data) {
		return f.editorFiles.WriteFile(ctx, path, data)
	}
	if err := f.lastCheck(path); err != nil {
		return err
	}
	return f.local.WriteFile(ctx, path, data)
}

// undoCall is one undo's edit tool call and its writes: the
// changeset.Writer whose every write is judged where it lands.
type undoCall struct {
	a     *Agent
	s     *session
	files undoFS
	id    acpsdk.ToolCallId

	mu     sync.Mutex
	diffs  []acpsdk.ToolCallContent // of the files written, in order
	onDisk []string                 // binary files written on disk
}

// begin shows the undo as a pending edit tool call.
func (c *undoCall) begin(ctx context.Context, n int) {
	c.s.mu.Lock()
	c.s.undoCalls++
	c.id = acpsdk.ToolCallId(fmt.Sprintf("undo-%d", c.s.undoCalls))
	c.s.mu.Unlock()
	c.a.sendUpdate(ctx, c.s.id, acpsdk.SessionUpdate{ToolCall: &acpsdk.SessionUpdateToolCall{
		SessionUpdate: "tool_call",
		ToolCallId:    c.id,
		Title:         undoTitle(n),
		Kind:          acpsdk.ToolKindEdit,
		Status:        acpsdk.ToolCallStatusPending,
		RawInput:      map[string]any{"turns": n},
	}})
}

func undoTitle(n int) string {
	if n == 1 {
		return "Undo the last turn"
	}
	return fmt.Sprintf("Undo the last %d turns", n)
}

// ask puts the steps that need it to the user, in one question with a
// diff per file: allowed, all of them; rejected, none (they are named as
// left); cancelled, the undo ends with nothing done.
func (c *undoCall) ask(ctx context.Context, steps []changeset.Step) (map[string]bool, error) {
	var lines []string
	var diffs []acpsdk.ToolCallContent
	var locs []acpsdk.ToolCallLocation
	for _, st := range steps {
		p := c.s.displayPath(st.Path)
		switch {
		case st.State == changeset.Stale && st.Err != nil:
			lines = append(lines, fmt.Sprintf("%s cannot be read (%v): it is overwritten with its content before the turn.", p, st.Err))
		case st.State == changeset.Stale && st.Op == changeset.OpRemove:
			lines = append(lines, fmt.Sprintf("%s was created by the turn and changed since: it is removed, with those changes.", p))
		case st.State == changeset.Stale:
			lines = append(lines, fmt.Sprintf("%s changed since the turn: restoring it loses those changes.", p))
		case st.Op == changeset.OpRemove:
			lines = append(lines, fmt.Sprintf("%s was created by the turn: it is removed.", p))
		default:
			lines = append(lines, fmt.Sprintf("%s is %s.", p, stepVerb(st.Op)))
		}
		if d, ok, binary := c.preview(ctx, st); binary {
			lines = append(lines, fmt.Sprintf("%s is a binary file: no diff.", p))
		} else if ok {
			diffs = append(diffs, d)
		}
		locs = append(locs, acpsdk.ToolCallLocation{Path: st.Path})
	}
	content := append([]acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(strings.Join(lines, "\n")))}, limitContent(diffs)...)
	resp, err := c.a.conn.RequestPermission(ctx, acpsdk.RequestPermissionRequest{
		SessionId: acpsdk.SessionId(c.s.id),
		ToolCall: acpsdk.ToolCallUpdate{
			ToolCallId: c.id,
			Title:      acpsdk.Ptr(undoQuestionTitle(steps, c.s.displayPath)),
			Kind:       acpsdk.Ptr(acpsdk.ToolKindEdit),
			Status:     acpsdk.Ptr(acpsdk.ToolCallStatusPending),
			Content:    content,
			Locations:  locs,
		},
		Options: []acpsdk.PermissionOption{
			{OptionId: optAllowOnce, Name: "Undo them", Kind: acpsdk.PermissionOptionKindAllowOnce},
			{OptionId: optRejectOnce, Name: "Leave them as they are", Kind: acpsdk.PermissionOptionKindRejectOnce},
		},
	})
	switch {
	case err != nil:
		return nil, fmt.Errorf("the question did not complete (%w); nothing was undone", err)
	case resp.Outcome.Cancelled != nil:
		return nil, errUndoCancelled
	case resp.Outcome.Selected != nil && resp.Outcome.Selected.OptionId == optAllowOnce:
		allowed := map[string]bool{}
		for _, st := range steps {
			allowed[st.Path] = true
		}
		return allowed, nil
	}
	return map[string]bool{}, nil
}

// undoQuestionTitle names the files asked about.
func undoQuestionTitle(steps []changeset.Step, display func(string) string) string {
	names := make([]string, 0, 3)
	for _, st := range steps[:min(len(steps), 3)] {
		names = append(names, display(st.Path))
	}
	t := "Undo: " + strings.Join(names, ", ")
	if len(steps) > 3 {
		t += fmt.Sprintf(" and %d more", len(steps)-3)
	}
	return t + "?"
}

func stepVerb(op changeset.Op) string {
	switch op {
	case changeset.OpRecreate:
		return "recreated"
	case changeset.OpRemove:
		return "removed"
	}
	return "restored"
}

// preview is the diff a step would make: from the file as it is to its
// content before the turns (a removal: to nothing). binary: one side is
// binary, which no diff shows.
func (c *undoCall) preview(ctx context.Context, st changeset.Step) (d acpsdk.ToolCallContent, ok, binary bool) {
	var old []byte
	if st.Current.Exists {
		b, err := c.files.ReadFile(ctx, st.Path)
		if err != nil {
			return acpsdk.ToolCallContent{}, false, false
		}
		old = b
	}
	var new []byte
	if st.Op != changeset.OpRemove {
		b, err := c.s.undo.Content(st.Before)
		if err != nil {
			return acpsdk.ToolCallContent{}, false, false
		}
		new = b
	}
	if fsops.IsBinary(old) || fsops.IsBinary(new) {
		return acpsdk.ToolCallContent{}, false, true
	}
	return undoDiff(st.Path, old, new, st.Current.Exists), true, false
}

// undoDiff is the diff content of one file: old is absent for a file that
// does not exist (a recreation shows as a creation).
func undoDiff(path string, old, new []byte, exists bool) acpsdk.ToolCallContent {
	if !exists {
		return acpsdk.ToolDiffContent(path, string(new))
	}
	return acpsdk.ToolDiffContent(path, string(new), string(old))
}

// WriteFile implements changeset.Writer: the file goes back to content,
// if it still is expect, inside the session's roots, through the editor.
func (c *undoCall) WriteFile(ctx context.Context, path string, content []byte, expect changeset.Version) error {
	old, err := c.judge(ctx, path, expect)
	if err != nil {
		return err
	}
	if !expect.Exists {
		dir := filepath.Dir(path)
		if info, err := c.files.Stat(ctx, dir); err == nil && !info.Exists {
			if err := c.files.MkdirAll(ctx, dir); err != nil {
				return err
			}
		}
	}
	if err := c.files.WriteFile(ctx, path, content); err != nil {
		return err
	}
	op := changeset.OpRestore
	if !expect.Exists {
		op = changeset.OpRecreate
	}
	c.shown(path, op, old, content, expect.Exists)
	return nil
}

// RemoveFile implements changeset.Writer: editors have no ACP method to
// remove a file, so it is removed on the local disk, inside the session's
// roots, if it still is expect.
func (c *undoCall) RemoveFile(ctx context.Context, path string, expect changeset.Version) error {
	old, err := c.judge(ctx, path, expect)
	if err != nil {
		return err
	}
	if !expect.Exists {
		return nil
	}
	if err := c.s.checkWrite(path); err != nil {
		return err
	}
	remove := removeRegular
	if c.a.opts.removeFile != nil {
		remove = c.a.opts.removeFile
	}
	if err := remove(path); errors.Is(err, fs.ErrNotExist) {
		return errors.New("not on disk: only the editor's unsaved buffer holds it (close it there)")
	} else if err != nil {
		return fmt.Errorf("cannot remove it: %w", err)
	}
	c.shown(path, changeset.OpRemove, old, nil, true)
	return nil
}

// judge is the check at the write: the path leads to itself (no link
// swapped in), lies inside the session's roots whatever the mode, and the
// file is still what the plan saw (else it changed after the question).
// It returns the file's content now, for the diff.
func (c *undoCall) judge(ctx context.Context, path string, expect changeset.Version) ([]byte, error) {
	real, err := c.files.Resolve(ctx, path)
	if err != nil {
		return nil, err
	}
	if real != path {
		return nil, fsops.ChangedPathError(path, fmt.Errorf("%s now leads to %s", path, real))
	}
	if !c.s.inWorkspace(path) {
		return nil, denied(path, "An undo writes only inside the session's workspace.", nil)
	}
	info, err := c.files.Stat(ctx, path)
	if err != nil {
		return nil, err
	}
	var old []byte
	now := changeset.Missing
	if info.Exists {
		if old, err = c.files.ReadFile(ctx, path); err != nil {
			return nil, err
		}
		now = changeset.VersionOf(old)
	}
	if !now.Same(expect) {
		return nil, errors.New("changed after the undo was planned; left as it is")
	}
	return old, nil
}

// shown keeps what the tool call shows of a file written or removed: its
// diff, or for a binary file a note (no binary in a diff).
func (c *undoCall) shown(path string, op changeset.Op, old, new []byte, exists bool) {
	d := undoDiff(path, old, new, exists)
	binary := fsops.IsBinary(old) || fsops.IsBinary(new)
	if binary {
		note := fmt.Sprintf("%s: binary file %s", c.s.displayPath(path), stepVerb(op))
		if op != changeset.OpRemove {
			note += fmt.Sprintf(" on disk (%d bytes)", len(new))
		}
		d = acpsdk.ToolContent(acpsdk.TextBlock(note + "."))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.diffs = append(c.diffs, d)
	if binary && op != changeset.OpRemove {
		c.onDisk = append(c.onDisk, c.s.displayPath(path))
	}
}

// summary is what the user is told: the result's summary, and the binary
// files written on disk rather than through the editor.
func (c *undoCall) summary(res changeset.Result) string {
	text := res.Summary(c.s.displayPath)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.onDisk) > 0 {
		text += "\nBinary files, written on disk (an editor buffer holds text only): " + strings.Join(c.onDisk, ", ") + "."
	}
	return text
}

// completed ends the tool call with the diffs of what was written and the
// summary.
func (c *undoCall) completed(ctx context.Context, res changeset.Result) {
	c.mu.Lock()
	content := limitContent(c.diffs)
	c.mu.Unlock()
	var locs []acpsdk.ToolCallLocation
	files := []map[string]any{}
	for _, o := range res.Outcomes {
		if o.Step.Op == changeset.OpNone && o.Step.State == changeset.Done {
			continue
		}
		locs = append(locs, acpsdk.ToolCallLocation{Path: o.Step.Path})
		f := map[string]any{"path": o.Step.Path, "op": o.Step.Op.String(), "done": o.Done}
		if !o.Done {
			f["left"] = firstNonEmpty(errString(o.Err), o.Skipped)
		}
		files = append(files, f)
	}
	content = append(content, acpsdk.ToolContent(acpsdk.TextBlock(c.summary(res))))
	c.a.sendUpdate(ctx, c.s.id, acpsdk.SessionUpdate{ToolCallUpdate: &acpsdk.SessionToolCallUpdate{
		SessionUpdate: "tool_call_update",
		ToolCallId:    c.id,
		Status:        acpsdk.Ptr(acpsdk.ToolCallStatusCompleted),
		Content:       content,
		Locations:     locs,
		RawOutput:     map[string]any{"files": files, "codexForgot": res.CodexForgot},
	}})
}

// failed ends the tool call: nothing was undone.
func (c *undoCall) failed(ctx context.Context, why string) {
	c.a.sendUpdate(ctx, c.s.id, failedUpdate(string(c.id), why))
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	var fe *fsops.Error
	if errors.As(err, &fe) {
		return strings.TrimSpace(fe.Message + " " + fe.Hint)
	}
	return err.Error()
}

// removeRegular removes the regular file at path, never what a link
// swapped in points to.
func removeRegular(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%w: not a regular file (%s)", fs.ErrInvalid, regularfile.Kind(fi.Mode().Type()))
	}
	return os.Remove(path)
}

var _ changeset.Writer = (*undoCall)(nil)
