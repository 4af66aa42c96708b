package record

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/codexacp/codexacp/codex/execrun"
	"github.com/codexacp/codexacp/codex/proc"
	"github.com/codexacp/codexacp/internal/secrets"
)

// Runner runs one codex turn; codexexec.LineRunner has the same method, and
// execrun.Runner implements both.
type Runner interface {
	Run(ctx context.Context, inv execrun.Invocation, onLine func(line []byte)) error
}

// CommandFunc returns the arguments and environment a run of inv gets
// (execrun.Runner.Command); nil records no arguments.
type CommandFunc func(inv execrun.Invocation) (args, env []string)

// Backend wraps a codex backend so that each run is recorded: a codex_start
// entry (arguments with secrets redacted, environment names only), a
// codex_line per line codex prints (before the agent handles it), and a
// codex_exit entry.
func (r *Recorder) Backend(inner Runner, command CommandFunc) Runner {
	return &backend{rec: r, inner: inner, command: command}
}

type backend struct {
	rec     *Recorder
	inner   Runner
	command CommandFunc
}

func (b *backend) Run(ctx context.Context, inv execrun.Invocation, onLine func(line []byte)) error {
	run := b.rec.beginRun(inv, b.command)
	err := b.inner.Run(ctx, inv, func(line []byte) {
		b.rec.codexLine(run, line)
		onLine(line)
	})
	b.rec.endRun(run, ctx, err)
	return err
}

func (r *Recorder) beginRun(inv execrun.Invocation, command CommandFunc) int {
	var args, env []string
	if command != nil {
		args, env = command(inv)
	}
	env = append(env, inv.Env...)

	r.mu.Lock()
	defer r.mu.Unlock()
	r.secrets.addEnv(env)
	r.runs++
	run := r.runs
	r.active = append(r.active, run)
	if inv.Review == nil {
		r.noteThreadLocked(run, inv.ThreadID)
	}
	e := &Entry{Kind: KindCodexStart, Run: run, Cwd: inv.Cwd, Prompt: inv.Prompt, Env: envNames(env)}
	e.Args = r.redactArgsLocked(args)
	r.writeLocked(e)
	return run
}

func (r *Recorder) codexLine(run int, line []byte) {
	e := &Entry{Kind: KindCodexLine, Run: run}
	if json.Valid(line) {
		e.Line = append(json.RawMessage(nil), line...)
	} else {
		e.Text = string(line)
	}
	thread := startedThread(line)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.noteThreadLocked(run, thread)
	r.writeLocked(e)
}

func (r *Recorder) endRun(run int, ctx context.Context, err error) {
	e := &Entry{Kind: KindCodexExit, Run: run}
	var exit *proc.ExitError
	switch {
	case err == nil:
		e.Code = new(int)
	case errors.As(err, &exit):
		e.Code = &exit.Code
		e.Stderr = exit.Stderr
	case ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		e.Cancelled = true
	default:
		e.Error = err.Error()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if i := slices.Index(r.active, run); i >= 0 {
		r.active = slices.Delete(r.active, i, i+1)
	}
	r.writeLocked(e)
}

// currentRun is the run a tool call belongs to: the newest run in progress
// (codex waits for its tool calls, so the run is still going), 0 if none.
func (r *Recorder) currentRun() int {
	if len(r.active) == 0 {
		return 0
	}
	return r.active[len(r.active)-1]
}

// envNames returns the sorted, distinct names of a KEY=VALUE list that
// are codex's own (ownEnvName): the user's other variables are left out.
func envNames(env []string) []string {
	names := make([]string, 0, len(env))
	for _, kv := range env {
		if name, _, _ := strings.Cut(kv, "="); ownEnvName(name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// redactArgsLocked redacts a codex command line: secret-looking -c keys
// (secrets.RedactConfigArg), the MCP servers' secret arguments and env
// values (redactMCPConfigArg), which become known secrets, and long
// instructions, summarised (summariseConfigArg). r.mu is held.
func (r *Recorder) redactArgsLocked(args []string) []string {
	out := make([]string, 0, len(args))
	for _, a := range args {
		a = redactMCPConfigArg(a, r.secrets.add)
		out = append(out, summariseConfigArg(secrets.RedactConfigArg(a)))
	}
	return out
}
