package changeset

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Undo is what an undo needs besides the log: the ports of the session it
// runs in. Log.Undo runs the steps in an order that never pretends: codex
// forgets the turns before any file is written, so a failure there leaves
// everything as it was.
type Undo struct {
	// Files looks at the files as they are now (Plan).
	Files Files
	// Writer writes the files back (Apply).
	Writer Writer
	// Ask puts the steps that need it (Step.Ask: changed since the turns,
	// or a removal) to the user, all in one question, and returns the
	// paths allowed. An error (the user cancelled, the question failed)
	// ends the undo before anything is done. nil: nothing is allowed.
	Ask func(ctx context.Context, steps []Step) (map[string]bool, error)
	// AskAll puts every step that writes to Ask, not only those that need
	// it: a session whose every edit is asked (ask mode).
	AskAll bool
	// Forget makes codex forget the plan's turns (thread/revert before
	// the first of them). An error ends the undo before any file is
	// written. nil: codex cannot forget (the result says so).
	Forget func(ctx context.Context, plan Plan) error
}

// Result is what an undo did.
type Result struct {
	Plan     Plan
	Outcomes []Outcome
	// CodexForgot: codex no longer has the turns (Undo.Forget ran).
	CodexForgot bool
	// ForgetErr is why the log could not store that the turns are gone
	// (they are, in memory): the next undo after a restart would offer
	// them again.
	ForgetErr error
}

// ErrCodexRemembers wraps Undo.Forget's error: nothing was undone.
var ErrCodexRemembers = errors.New("codex could not forget the turns; nothing was undone")

// Undo takes the last n turns back: it plans against the files as they
// are, asks about the steps that need it, has codex forget the turns,
// writes the files back and forgets the turns. Files not allowed, changed
// at the write, or not restorable are left as they are and named in the
// result; the turns are forgotten all the same (codex no longer has them).
func (l *Log) Undo(ctx context.Context, n int, u Undo) (Result, error) {
	plan, err := l.Plan(ctx, n, u.Files)
	if err != nil {
		return Result{}, err
	}
	asks := func(s Step) bool { return s.Ask() || (u.AskAll && s.Op != OpNone) }
	var asked []Step
	for _, s := range plan.Steps {
		if asks(s) {
			asked = append(asked, s)
		}
	}
	allowed := map[string]bool{}
	if len(asked) > 0 && u.Ask != nil {
		if allowed, err = u.Ask(ctx, asked); err != nil {
			return Result{Plan: plan}, err
		}
	}
	res := Result{Plan: plan}
	if u.Forget != nil {
		if err := u.Forget(ctx, plan); err != nil {
			return res, fmt.Errorf("%w: %w", ErrCodexRemembers, err)
		}
		res.CodexForgot = true
	}
	res.Outcomes = l.apply(ctx, plan, u.Writer, asks, func(s Step) bool { return allowed[s.Path] })
	res.ForgetErr = l.Forget(plan)
	return res, nil
}

// Summary says what the undo did in a few lines for the user: the files
// restored, removed and recreated, those left as they were and why, and
// whether codex forgot the turns. display shortens a path (relative to the
// workspace); nil keeps it.
func (r Result) Summary(display func(string) string) string {
	if display == nil {
		display = func(p string) string { return p }
	}
	var b strings.Builder
	turns := "the last turn"
	if n := len(r.Plan.Turns); n > 1 {
		turns = fmt.Sprintf("the last %d turns", n)
	}
	fmt.Fprintf(&b, "Undid %s.", turns)
	var done, left []string
	for _, o := range r.Outcomes {
		p := display(o.Step.Path)
		switch {
		case o.Done:
			done = append(done, fmt.Sprintf("%s %s", doneVerb(o.Step.Op), p))
		case o.Step.State == Done:
			// already as before: nothing to say
		case o.Err != nil:
			left = append(left, fmt.Sprintf("%s: %v", p, o.Err))
		default:
			left = append(left, fmt.Sprintf("%s (%s)", p, leftWhy(o)))
		}
	}
	if len(done) > 0 {
		fmt.Fprintf(&b, "\n%s.", capitalize(strings.Join(done, ", ")))
	} else if len(left) == 0 {
		b.WriteString("\nNo file needed to change.")
	} else {
		b.WriteString("\nNo file was changed.")
	}
	if len(left) > 0 {
		fmt.Fprintf(&b, "\nLeft as they are: %s.", strings.Join(left, "; "))
	}
	if r.Plan.Unrecorded > 0 {
		fmt.Fprintf(&b, "\n%d more files the turns changed were not recorded and are left as they are.", r.Plan.Unrecorded)
	}
	if r.CodexForgot {
		b.WriteString("\nCodex no longer has these turns in its conversation.")
	} else {
		b.WriteString("\nCodex still has these turns in its conversation: only the files were restored.")
	}
	return b.String()
}

func doneVerb(op Op) string {
	switch op {
	case OpRemove:
		return "removed"
	case OpRecreate:
		return "recreated"
	}
	return "restored"
}

func leftWhy(o Outcome) string {
	switch {
	case o.Step.State == Lost:
		return "its content before was not kept"
	case o.Step.State == Stale:
		return "changed since, not allowed"
	case o.Step.Op == OpRemove:
		return "created by the turns, removal not allowed"
	}
	return o.Skipped
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
