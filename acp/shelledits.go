package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/events"
	"github.com/codexacp/codexacp/fsops"
	"github.com/codexacp/codexacp/internal/recovery"
	"github.com/codexacp/codexacp/internal/shelledits"
)

// Shell-made edits (docs/shell-edits.md): when a turn's shell commands may
// write (auto and full-access modes, a command the user approved), the files
// a command changed in the workspace are shown right after the command's
// own tool call completes, as a completed edit tool call with a diff per
// file. Display only: nothing is written through the editor.
//
// The baseline is taken ahead of the session's first turn where the roots
// can be watched (warmShellEdits), and moved on at each turn's first event
// (codex has only started: no command runs before the model answered), in
// the background, so that
// the turn's events do not wait for it (a command's start does), or, in ask
// mode, when the user approves a command (before the answer lets codex run
// it); every command's completion
// compares the workspace with it and moves it on. A file tool's edit moves
// it too (the tool showed its own diff). So each command is shown what
// changed since the previous quiet point: commands running at the same
// time (the app-server may run several) share out their changes, each
// shown once, with the first command to complete.

// shellEdits follows one turn's shell-made edits. Its zero value follows
// nothing.
type shellEdits struct {
	// mu is held while the baseline is taken, so that a scan or a touch
	// waits for it.
	mu      sync.Mutex
	begun   bool                // the first event was seen, or a command approved
	tracker *shelledits.Tracker // nil: the turn's edits are not followed
	// stopClose stops the tracker's Close at the end of the turn's
	// context; true when it was stopped in time (the turn ended without
	// being cancelled), so that the session may keep the tracker.
	stopClose func() bool
}

// shellKeepIdle is how long a session keeps its tracker, and so its
// watches, after a turn: the next turn within it moves the baseline on by
// what the watches saw instead of reading the workspace again.
const shellKeepIdle = 5 * time.Minute

// maxIdleShellBytes bounds the contents that the sessions' kept trackers
// hold together between turns (each baseline keeps up to
// Limits.MaxKeepBytes per root): past it the least recently kept are
// closed.
const maxIdleShellBytes = 32 << 20

// keptTracker is a session's shell-edits tracker between its turns: its
// roots' watches go on collecting what changes (the user's saves, a build),
// so that the next turn's baseline reads only the directories that
// changed. It is closed after shellKeepIdle without a turn, with the
// session, when the session's roots are not the tracker's, when a turn of
// another session needs its share of the watch budget, or when the kept
// trackers of all sessions hold too much (idleShells).
type keptTracker struct {
	mu    sync.Mutex
	tr    *shelledits.Tracker // nil: none kept
	roots []string
	idle  *time.Timer // closes tr
	done  bool        // the session closed: nothing is kept any more
	idles *idleShells // where tr is listed while kept
}

// take returns the kept tracker of the given roots, or nil (closing a
// tracker of other roots). The caller owns it until it keeps it again.
func (k *keptTracker) take(roots []string) *shelledits.Tracker {
	k.mu.Lock()
	defer k.mu.Unlock()
	tr := k.tr
	if tr == nil {
		return nil
	}
	k.forget()
	if !slices.Equal(k.roots, roots) {
		tr.Close()
		return nil
	}
	return tr
}

// warm keeps a tracker of the given roots made by newTracker, its
// baseline started (in the background), unless one is kept already or the
// session closed; it returns the tracker, nil when none was made. Listed
// in idles without bytes until its baseline is there (settled).
func (k *keptTracker) warm(newTracker func() *shelledits.Tracker, roots []string, idle time.Duration, idles *idleShells) *shelledits.Tracker {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.done || k.tr != nil {
		return nil
	}
	tr := newTracker()
	tr.Start(context.Background()) // Close (the session's end, idle time) cancels it
	k.hold(tr, roots, idle, idles)
	idles.add(k, 0)
	return tr
}

// settled counts the bytes that tr, warmed, keeps now that its baseline is
// there, or closes it when it watches nothing (its next baseline would read
// everything anyway), unless a turn took it meanwhile.
func (k *keptTracker) settled(tr *shelledits.Tracker, maxBytes int64) {
	k.mu.Lock()
	if k.tr != tr {
		k.mu.Unlock()
		return
	}
	if !tr.Watching() {
		k.forget()
		k.mu.Unlock()
		tr.Close()
		return
	}
	idles := k.idles
	idles.add(k, tr.KeptBytes())
	k.mu.Unlock()
	idles.trim(maxBytes)
}

// hold makes tr the kept tracker of roots, closed after idle unless taken
// first (k.mu held; the caller lists it in idles).
func (k *keptTracker) hold(tr *shelledits.Tracker, roots []string, idle time.Duration, idles *idleShells) {
	k.tr, k.roots, k.idles = tr, roots, idles
	k.idle = time.AfterFunc(idle, func() {
		k.mu.Lock()
		defer k.mu.Unlock()
		if k.tr == tr {
			k.forget()
			tr.Close()
		}
	})
}

// forget stops the idle timer and unlists the kept tracker (k.mu held).
func (k *keptTracker) forget() {
	k.idle.Stop()
	k.tr, k.idle = nil, nil
	k.idles.remove(k)
}

// keep keeps tr, which keeps bytes of contents, for the next turn, for
// idle at most; it lists it in idles, which then closes the least recently
// kept trackers past maxBytes.
func (k *keptTracker) keep(tr *shelledits.Tracker, roots []string, idle time.Duration, idles *idleShells, bytes, maxBytes int64) {
	k.mu.Lock()
	if k.done {
		k.mu.Unlock()
		tr.Close()
		return
	}
	if k.tr != nil { // not expected: turns of a session run one at a time
		old := k.tr
		k.forget()
		old.Close()
	}
	k.hold(tr, roots, idle, idles)
	idles.add(k, bytes)
	k.mu.Unlock()
	idles.trim(maxBytes)
}

// closeIdle closes the kept tracker if it is there and idle, without
// waiting (a tracker's reclaim calls it in the middle of a baseline or a
// scan), and reports whether it did.
func (k *keptTracker) closeIdle() bool {
	if !k.mu.TryLock() {
		return false
	}
	defer k.mu.Unlock()
	tr := k.tr
	if tr == nil || !tr.CloseIdle() {
		return false
	}
	k.forget()
	return true
}

// drop closes the kept tracker, for good (the session closed).
func (k *keptTracker) drop() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.done = true
	if tr := k.tr; tr != nil {
		k.forget()
		tr.Close()
	}
}

// idleShells are an agent's kept trackers, least recently kept first.
// Each holds an inotify instance and watches from the process's budget,
// and its baseline's kept contents: a turn that the budget refuses closes
// the least recently kept (reclaim), and together they keep at most
// maxBytes of contents (trim). Lock order: a keptTracker's mu, then mu.
type idleShells struct {
	mu   sync.Mutex
	kept []idleShell
}

// idleShell is a kept tracker and the bytes its baseline keeps.
type idleShell struct {
	k     *keptTracker
	bytes int64
}

// add lists k as the most recently kept.
func (r *idleShells) add(k *keptTracker, bytes int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.kept = slices.DeleteFunc(r.kept, func(e idleShell) bool { return e.k == k })
	r.kept = append(r.kept, idleShell{k, bytes})
}

// remove unlists k (nil r: never listed).
func (r *idleShells) remove(k *keptTracker) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.kept = slices.DeleteFunc(r.kept, func(e idleShell) bool { return e.k == k })
}

// listed returns the kept trackers, least recently kept first.
func (r *idleShells) listed() []idleShell {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.kept)
}

// reclaim closes the least recently kept tracker that is idle, and
// reports whether there was one: a turn's tracker calls it when the watch
// budget refuses it (shelledits.Tracker.SetReclaim). It never waits.
func (r *idleShells) reclaim() bool {
	for _, e := range r.listed() {
		if e.k.closeIdle() {
			return true
		}
	}
	return false
}

// trim closes the least recently kept trackers until the others keep at
// most maxBytes (one busy meanwhile, being taken by its turn, is left).
func (r *idleShells) trim(maxBytes int64) {
	kept := r.listed()
	var total int64
	for _, e := range kept {
		total += e.bytes
	}
	for _, e := range kept {
		if total <= maxBytes {
			return
		}
		e.k.closeIdle()
		total -= e.bytes
	}
}

// warmShellEdits takes a session's shell-edits baseline ahead of its
// first turn (at session/new, load, resume, fork, and when its mode lets
// the shell write), while the user types: the turn then moves it on by
// what the watches saw instead of reading the workspace beside codex's
// start of the turn (on a 10k-file repository a whole `git status` and
// a watch per directory, ~115 ms of CPU; issue 24). It is the session's
// kept tracker, under the same bounds as one a turn left (idle time, the
// watch budget, the kept bytes, the session's end). Only where the roots
// can be watched (otherwise the turn's baseline reads everything anyway),
// in modes where a command may be followed, when no turn runs and nothing
// is kept. One such baseline is taken at a time: a burst of session/new
// (a client opening many sessions, or a hostile one) must not start a
// `git status` and a walk of the workspace per session at once; a session
// passed over takes its baseline at its first turn, as without a head
// start.
func (a *Agent) warmShellEdits(s *session) {
	if a.opts.noShellWarm || !shelledits.Watches() || s.toolMode() == backend.ModeReadOnly {
		return
	}
	select {
	case a.warming <- struct{}{}:
	default:
		return // another session's is being taken
	}
	warmed := false
	defer func() {
		if !warmed {
			<-a.warming
		}
	}()
	// A bug here costs the head start, not the session/new that asked.
	defer recovery.Recover(a.log, "shell-edits baseline ahead of the turn", nil)
	s.mu.Lock()
	busy := s.closed || s.cancel != nil
	s.mu.Unlock()
	if busy {
		return
	}
	roots := s.roots()
	tr := s.shell.warm(func() *shelledits.Tracker {
		tr := a.newShellTracker(roots)
		tr.SetReclaim(a.idleShells.reclaim)
		return tr
	}, roots, a.shellIdle(), &a.idleShells)
	if tr == nil {
		return
	}
	warmed = true
	go func() {
		defer func() { <-a.warming }()
		defer recovery.Recover(a.log, "shell-edits baseline ahead of the turn", nil)
		tr.Wait() // bounded by Limits.Timeout; Close cancels it
		s.shell.settled(tr, a.shellIdleBytes())
	}()
}

// newShellTracker makes a tracker of the roots (Options.newShellTracker
// in tests).
func (a *Agent) newShellTracker(roots []string) *shelledits.Tracker {
	if a.opts.newShellTracker != nil {
		return a.opts.newShellTracker(roots, shelledits.Limits{})
	}
	return shelledits.New(roots, shelledits.Limits{})
}

// shellIdle is how long a session keeps its tracker without a turn.
func (a *Agent) shellIdle() time.Duration {
	if a.opts.shellIdle > 0 {
		return a.opts.shellIdle
	}
	return shellKeepIdle
}

// shellIdleBytes bounds the contents of all sessions' kept trackers.
func (a *Agent) shellIdleBytes() int64 {
	if a.opts.shellIdleBytes > 0 {
		return a.opts.shellIdleBytes
	}
	return maxIdleShellBytes
}

// anonShellEdits numbers the edit calls of commands without an item id.
var anonShellEdits atomic.Uint64

// shellMayWrite reports whether the session's shell commands may change
// files without being approved one by one.
func shellMayWrite(s *session) bool {
	switch s.toolMode() {
	case backend.ModeAuto, backend.ModeFullAccess:
		return true
	case backend.ModeAsk:
		return s.runAlways.Load()
	}
	return false
}

// beginShellEdits takes the turn's baseline, once: at the first event when
// the shell may write (in the background), or whatever the mode when always
// is set (an approved command is about to run: it returns once the baseline
// is there).
func (o *turnOutput) beginShellEdits(always bool) {
	e := &o.edits
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.tracker != nil {
		if always {
			e.tracker.Wait()
		}
		return
	}
	if e.begun && !always {
		return
	}
	e.begun = true
	if !always && !shellMayWrite(o.s) {
		return
	}
	roots := o.s.roots()
	tr := o.s.shell.take(roots) // its baseline moved on, where watched
	if tr == nil {
		tr = o.a.newShellTracker(roots)
	}
	// Past the watch budget, an idle session's kept tracker gives way.
	tr.SetReclaim(o.a.idleShells.reclaim)
	// Its watches end with a cancelled turn; a scan after it (a cancelled
	// command's completion) compares whole roots and watches nothing. A
	// turn that ends otherwise leaves the tracker to the session
	// (keepShellEdits).
	e.stopClose = context.AfterFunc(o.ctx, tr.Close)
	if !always {
		// Not cancelled with the turn: a turn may end before its baseline
		// is there (no command), and the session keeps it for the next
		// (Limits.Timeout bounds it). A failure shows at the first scan.
		tr.Start(context.WithoutCancel(o.ctx))
		e.tracker = tr
		return
	}
	if err := tr.Baseline(o.ctx); err != nil {
		o.log.Warn("shell edits: no baseline of the workspace; this turn's shell edits are not shown", "err", err)
		return
	}
	e.tracker = tr
}

// keepShellEdits leaves the turn's tracker to the session for its next
// turn, unless the turn was cancelled (its tracker is closed) or its edits
// were not followed. The backend has returned: no event of the turn
// comes after.
func (o *turnOutput) keepShellEdits() {
	e := &o.edits
	e.mu.Lock()
	defer e.mu.Unlock()
	tr := e.tracker
	e.tracker = nil
	if tr == nil || e.stopClose == nil || !e.stopClose() {
		return
	}
	if !tr.Watching() { // its next baseline reads everything anyway
		tr.Close()
		return
	}
	o.s.shell.keep(tr, o.s.roots(), o.a.shellIdle(), &o.a.idleShells, tr.KeptBytes(), o.a.shellIdleBytes())
}

// shellTracker returns the turn's tracker (once its baseline is there), or
// nil when the turn's edits are not followed.
func (o *turnOutput) shellTracker() *shelledits.Tracker {
	o.edits.mu.Lock()
	defer o.edits.mu.Unlock()
	return o.edits.tracker
}

// shellEvent follows an event for shell-made edits, after the event's own
// updates were sent.
func (o *turnOutput) shellEvent(ev events.Event) {
	o.beginShellEdits(false)
	switch ev.Type {
	case events.TypeItemStarted:
		if it := ev.Item; it != nil && it.Type == events.ItemCommandExecution {
			// The baseline precedes what the command does.
			if tr := o.shellTracker(); tr != nil {
				tr.Wait()
			}
		}
	case events.TypeItemCompleted:
		it := ev.Item
		if it == nil {
			return
		}
		switch it.Type {
		case events.ItemCommandExecution:
			if it.Status != "declined" { // not run
				o.reportShellEdits(it)
			}
		case events.ItemMCPToolCall:
			if it.Server == backend.OwnServerName {
				var args struct {
					Path string `json:"path"`
				}
				if json.Unmarshal(it.Arguments, &args) == nil && filepath.IsAbs(args.Path) {
					o.touchShellEdits(args.Path)
				}
			}
		case events.ItemFileChange:
			// codex's own patch tool, when it is offered: shown by its item.
			var paths []string
			for _, ch := range it.Changes {
				p := ch.Path
				if !filepath.IsAbs(p) {
					p = filepath.Join(o.s.cwd, p)
				}
				paths = append(paths, p)
			}
			o.touchShellEdits(paths...)
		}
	}
}

// touchShellEdits moves the baseline of files a tool changed (and showed).
func (o *turnOutput) touchShellEdits(paths ...string) {
	if tr := o.shellTracker(); tr != nil {
		tr.Touch(paths...)
	}
}

// reportShellEdits sends the edit tool call of what a completed command
// changed, if anything.
func (o *turnOutput) reportShellEdits(it *events.Item) {
	tr := o.shellTracker()
	if tr == nil {
		return
	}
	// Not cancelled with the turn: what a cancelled command changed is
	// shown all the same (Limits.Timeout bounds the scan).
	rep, err := tr.Scan(context.WithoutCancel(o.ctx))
	if err != nil {
		o.log.Warn("shell edits: the workspace could not be compared; this turn's shell edits are not shown", "err", err)
		o.edits.mu.Lock()
		o.edits.tracker = nil
		o.edits.mu.Unlock()
		return
	}
	for _, n := range rep.Notes {
		o.log.Info("shell edits: " + n)
	}
	if rep.Empty() {
		return
	}
	o.a.recordShellEdits(o.s, rep)
	o.s.trMu.Lock()
	defer o.s.trMu.Unlock()
	id := acpsdk.ToolCallId(fmt.Sprintf("shell-edits-anon%d", anonShellEdits.Add(1)))
	if it.ID != "" {
		if cmd, ok := o.s.translator.ToolCallID(it.ID); ok {
			id = "shell-edits-" + cmd
		}
	}
	o.a.sendUpdate(o.ctx, o.s.id, shellEditsUpdate(id, events.UnwrapShellCommand(it.Command), rep, o.s.displayPath))
}

// maxShellMoreNames is how many further changed files the summary line names.
const maxShellMoreNames = 10

// shellEditsUpdate is the completed edit tool call that shows a command's
// changes: a diff per file (a created file without old text, a deleted one
// with empty new text), and a line for each file shown without one (binary,
// too large, old text not kept), for the files past the limits and for the
// report's notes.
func shellEditsUpdate(id acpsdk.ToolCallId, command string, rep shelledits.Report, display func(string) string) acpsdk.SessionUpdate {
	var diffs []acpsdk.ToolCallContent
	var lines, names []string
	var locs []acpsdk.ToolCallLocation
	var files []map[string]string
	for _, ch := range rep.Changes {
		rel := display(ch.Path)
		names = append(names, rel)
		files = append(files, map[string]string{"path": ch.Path, "change": ch.Op.String()})
		loc := acpsdk.ToolCallLocation{Path: ch.Path}
		if ch.Omitted != shelledits.OmitNone {
			locs = append(locs, loc)
			lines = append(lines, fmt.Sprintf("%s %s: %s%s", ch.Op, rel, ch.Omitted, shellEditSizes(ch)))
			continue
		}
		if ch.Op != shelledits.Deleted {
			line := shellEditLine(ch.Old, ch.New)
			loc.Line = &line
		}
		locs = append(locs, loc)
		fc := &fsops.Change{Path: ch.Path, Old: ch.Old, New: ch.New, Created: ch.Op == shelledits.Created}
		if !fc.Created && len(ch.Old)+len(ch.New) > wholeFileDiffLimit {
			fc.Diff = fsops.UnifiedDiff(ch.Path, ch.Old, ch.New)
		}
		diffs = append(diffs, fullDiffContent(fc)...)
	}
	content := limitContent(diffs)
	if n := len(rep.More); n > 0 {
		shown := make([]string, 0, maxShellMoreNames)
		for _, p := range rep.More[:min(n, maxShellMoreNames)] {
			shown = append(shown, display(p))
		}
		more := ""
		if n > maxShellMoreNames {
			more = ", …"
		}
		lines = append(lines, fmt.Sprintf("%d more %s changed, not shown: %s%s", n, shellPlural(n, "file", "files"), strings.Join(shown, ", "), more))
	}
	lines = append(lines, rep.Notes...) // where the comparison stopped at a limit
	if len(lines) > 0 {
		content = append(content, acpsdk.ToolContent(acpsdk.TextBlock(strings.Join(lines, "\n"))))
	}
	title := "Shell edits: " + strings.Join(names[:min(len(names), 3)], ", ")
	if rest := max(0, len(names)-3) + len(rep.More); rest > 0 {
		if len(names) == 0 {
			title = fmt.Sprintf("Shell edits: %d %s", rest, shellPlural(rest, "file", "files"))
		} else {
			title += fmt.Sprintf(" and %d more", rest)
		}
	}
	return acpsdk.SessionUpdate{ToolCall: &acpsdk.SessionUpdateToolCall{
		ToolCallId: id,
		Title:      title,
		Kind:       acpsdk.ToolKindEdit,
		Status:     acpsdk.ToolCallStatusCompleted,
		Locations:  locs,
		Content:    content,
		RawInput:   map[string]any{"command": clip(command, maxRawStringBytes)},
		RawOutput:  map[string]any{"files": files, "more": len(rep.More)},
	}}
}

// shellEditLine is the 1-based line of new where it first differs from
// old.
func shellEditLine(old, new []byte) int {
	i := 0
	for i < len(old) && i < len(new) && old[i] == new[i] {
		i++
	}
	return 1 + bytes.Count(new[:i], []byte{'\n'})
}

// sizes says how large the file was and is, for a change shown without its
// texts.
func shellEditSizes(ch shelledits.Change) string {
	switch {
	case ch.OldSize >= 0 && ch.NewSize >= 0:
		return fmt.Sprintf(" (%s → %s)", shellByteSize(ch.OldSize), shellByteSize(ch.NewSize))
	case ch.NewSize >= 0:
		return " (" + shellByteSize(ch.NewSize) + ")"
	case ch.OldSize >= 0:
		return " (was " + shellByteSize(ch.OldSize) + ")"
	}
	return ""
}

func shellByteSize(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

func shellPlural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
