package changeset

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Files is the port through which a plan looks at the files as they are
// now: for an editor, its buffers (unsaved changes included), as the file
// tools read them.
type Files interface {
	// Current returns the file's Version (Missing when it does not exist).
	Current(ctx context.Context, path string) (Version, error)
}

// Writer is the port through which Apply writes. Each call must check, at
// the write, that the file still is expect (the file tools' stale-hash
// rule, fsops's expected_hash) and refuse otherwise: a plan is made before
// the user is asked, and the file may change in between.
type Writer interface {
	// WriteFile gives path the content (creating it when missing).
	WriteFile(ctx context.Context, path string, content []byte, expect Version) error
	// RemoveFile removes the file at path.
	RemoveFile(ctx context.Context, path string, expect Version) error
}

// Op is what an undo does to a file.
type Op int

const (
	OpNone     Op = iota // nothing: already as before, or not restorable
	OpRestore            // write the content before the turns over the file
	OpRecreate           // write it back: the turns (or someone since) deleted it
	OpRemove             // remove it (the turns created it)
)

func (o Op) String() string {
	switch o {
	case OpNone:
		return "none"
	case OpRestore:
		return "restore"
	case OpRecreate:
		return "recreate"
	case OpRemove:
		return "remove"
	}
	return fmt.Sprintf("Op(%d)", int(o))
}

// State is how a file stands against what the turns left.
type State int

const (
	// Clean: the file is as the turns left it; the undo applies.
	Clean State = iota + 1
	// Stale: it changed since (the user, the editor, a later command), or
	// what the turns left is not known: the user is asked, or it is
	// skipped and named.
	Stale
	// Done: it already is as it was before the turns.
	Done
	// Lost: its content before the turns was not kept (too large, past
	// the limits, a binary shell edit): it cannot be restored and is named.
	Lost
)

func (s State) String() string {
	switch s {
	case Clean:
		return "clean"
	case Stale:
		return "changed since"
	case Done:
		return "already restored"
	case Lost:
		return "content before not kept"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// Step is what an undo does to one file.
type Step struct {
	Path    string
	Op      Op
	State   State
	Before  Version // what the file goes back to
	After   Version // what the turns left
	Current Version // what it is now
	// Err is why Current could not be read (State Stale).
	Err error
}

// Ask reports whether the user is asked before the step is applied: the
// file changed since the turns, or the step removes a file.
func (s Step) Ask() bool {
	return s.Op != OpNone && (s.State == Stale || s.Op == OpRemove)
}

// Plan is an undo of the last len(Turns) turns.
type Plan struct {
	// Turns are the turns undone, oldest first: the first's CodexTurn is
	// where codex's history is cut (thread/revert's beforeTurnId).
	Turns []Turn
	// Steps are the files, by path.
	Steps []Step
	// Unrecorded counts files the turns changed that were not recorded
	// (past MaxTurnFiles): they are not restored.
	Unrecorded int
}

// NotEnoughTurnsError is Plan's error for n past the turns kept.
type NotEnoughTurnsError struct{ Want, Have int }

func (e *NotEnoughTurnsError) Error() string {
	if e.Have == 0 {
		return "no turn to undo"
	}
	return fmt.Sprintf("only %d turns can be undone, not %d", e.Have, e.Want)
}

func (e *NotEnoughTurnsError) Unwrap() error { return ErrNothingToUndo }

// Plan plans the undo of the last n turns against the files as files has
// them now. A file changed by several of the turns goes back to what it
// was before the first of them; it is Clean when it is what the last of
// them left. Refused while a turn runs (it would race the turn's writes).
func (l *Log) Plan(ctx context.Context, n int, files Files) (Plan, error) {
	l.mu.Lock()
	if l.cur != nil {
		l.mu.Unlock()
		return Plan{}, ErrTurnRunning
	}
	if n < 1 || n > len(l.turns) {
		have := len(l.turns)
		l.mu.Unlock()
		return Plan{}, &NotEnoughTurnsError{Want: n, Have: have}
	}
	turns := slices.Clone(l.turns[len(l.turns)-n:])
	l.mu.Unlock()

	plan := Plan{Turns: turns}
	merged := map[string]int{}
	for _, t := range turns {
		plan.Unrecorded += t.Unrecorded
		for _, c := range t.Files {
			if i, ok := merged[c.Path]; ok {
				plan.Steps[i].After = c.After
				continue
			}
			merged[c.Path] = len(plan.Steps)
			plan.Steps = append(plan.Steps, Step{Path: c.Path, Before: c.Before, After: c.After})
		}
	}
	for i := range plan.Steps {
		s := &plan.Steps[i]
		s.Current, s.Err = files.Current(ctx, s.Path)
		if err := ctx.Err(); err != nil {
			return Plan{}, err
		}
		decide(s)
	}
	slices.SortFunc(plan.Steps, func(a, b Step) int { return strings.Compare(a.Path, b.Path) })
	return plan, nil
}

// decide sets a step's Op and State from its versions.
func decide(s *Step) {
	exists := s.Current.Exists // where the content goes: over a file, or anew
	if s.Err != nil {
		exists = s.After.Exists
	}
	switch {
	case !s.Before.Exists:
		s.Op = OpRemove
	case exists:
		s.Op = OpRestore
	default:
		s.Op = OpRecreate
	}
	switch {
	case s.Err == nil && s.Current.Same(s.Before):
		s.Op, s.State = OpNone, Done
	case s.Before.Exists && !s.Before.Kept:
		s.Op, s.State = OpNone, Lost
	case s.Err != nil:
		s.State = Stale
	case s.Current.Same(s.After):
		s.State = Clean
	default:
		s.State = Stale
	}
}

// Outcome is what Apply did to one file.
type Outcome struct {
	Step Step
	// Done: the step was applied. Otherwise Skipped says why it was not
	// (not allowed, nothing to do, not restorable) or Err why it failed.
	Done    bool
	Skipped string
	Err     error
}

// Apply carries out the plan's steps through w, taking each file's
// content before from the log's storage. A step that Ask()s is applied
// only when allow says so (nil: none is). It writes nothing for the
// others and goes on after a failure: each file is its own. The turns are
// not forgotten: Forget does that, once codex forgot them too.
func (l *Log) Apply(ctx context.Context, plan Plan, w Writer, allow func(Step) bool) []Outcome {
	return l.apply(ctx, plan, w, Step.Ask, allow)
}

// apply is Apply where asks says which steps allow must allow.
func (l *Log) apply(ctx context.Context, plan Plan, w Writer, asks func(Step) bool, allow func(Step) bool) []Outcome {
	out := make([]Outcome, 0, len(plan.Steps))
	for _, s := range plan.Steps {
		o := Outcome{Step: s}
		switch {
		case ctx.Err() != nil:
			o.Err = ctx.Err()
		case s.Op == OpNone:
			o.Skipped = s.State.String()
		case asks(s) && (allow == nil || !allow(s)):
			o.Skipped = "not allowed"
		case s.Op == OpRemove:
			o.Err = w.RemoveFile(ctx, s.Path, s.Current)
		default:
			var content []byte
			content, o.Err = l.content(s.Before)
			if o.Err == nil {
				o.Err = w.WriteFile(ctx, s.Path, content, s.Current)
			}
		}
		o.Done = o.Err == nil && o.Skipped == ""
		out = append(out, o)
	}
	return out
}

// Content returns the content of a kept Version (a Step's Before), checked
// against its hash: what an undo shows the user before writing it.
func (l *Log) Content(v Version) ([]byte, error) { return l.content(v) }

// content returns the content of a kept Version, checked against its hash
// (the storage is data, not trust).
func (l *Log) content(v Version) ([]byte, error) {
	if !v.Kept {
		return nil, errors.New("changeset: the content was not kept")
	}
	b, err := l.store.Blob(v.Hash)
	if err != nil {
		return nil, fmt.Errorf("changeset: %w", err)
	}
	if HashOf(b) != v.Hash {
		return nil, fmt.Errorf("changeset: the content kept for hash %s does not match it", v.Hash)
	}
	return b, nil
}

// Forget forgets the plan's turns after their undo and stores the log.
// They must still be the last turns: a turn ended since the plan was made
// is refused, as is a turn running.
func (l *Log) Forget(plan Plan) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cur != nil {
		return ErrTurnRunning
	}
	n := len(plan.Turns)
	if n == 0 || n > len(l.turns) {
		return fmt.Errorf("changeset: the plan's %d turns are not the last of %d", n, len(l.turns))
	}
	for i, t := range l.turns[len(l.turns)-n:] {
		if t.ID != plan.Turns[i].ID {
			return fmt.Errorf("changeset: turn %s ended since the undo was planned", l.turns[len(l.turns)-1].ID)
		}
	}
	l.turns = l.turns[:len(l.turns)-n]
	return l.saveLocked()
}
