package execrun

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/codexacp/codexacp/codex"
	"github.com/codexacp/codexacp/codex/proc"
	"github.com/codexacp/codexacp/internal/recovery"
)

// Runner runs one codex process per turn. Its exported fields are read-only
// once Run is in use; a Runner is safe for concurrent runs and must not be
// copied.
type Runner struct {
	Path   string        // codex executable
	Config []string      // user's -c key=value, passed to every run exactly like codex's own -c
	Env    []string      // base environment (nil: os.Environ()); RUST_BACKTRACE is always removed
	Grace  time.Duration // SIGINT (a cancel, the agent's death) → SIGKILL grace; 0 means proc.DefaultGrace
	Logger *slog.Logger  // debug logs of runs and codex's stderr; nil means slog.Default()
	Drain  time.Duration // each read of codex's output after it exited; 0 means proc.DrainTimeout

	mu      sync.Mutex
	waiting map[string]*started // by key: processes Prestart started
	closed  bool
}

// Invocation is one turn: a new thread, or a resumed one when ThreadID is set.
type Invocation struct {
	Cwd      string   // absolute; the workspace root and the process working directory
	ThreadID string   // non-empty → `resume <ThreadID>`
	Prompt   string   // written to stdin, then stdin closed (never argv)
	Sandbox  string   // read-only | workspace-write | danger-full-access; empty: codex's default
	Model    string   // optional -m
	Config   []string // extra -c for this run (our MCP server, model catalog, developer_instructions, ...)
	Env      []string // extra KEY=VALUE (e.g. CODEXACP_MCP_TOKEN=...); later values win
	// Images are image files attached to the prompt (--image=PATH each),
	// read by codex when the turn starts; absolute, without ',' (codex
	// splits the option's value on commas).
	Images []string
	// Review, when set, runs `codex exec review` instead of a prompt: a
	// new thread of its own (ThreadID is ignored); a non-empty Prompt is
	// the review's instructions.
	Review *Review
}

// Review is what `codex exec review` reviews: the working tree (the zero
// Review), the changes against a base branch, or a commit's.
type Review struct {
	Branch string
	Commit string
}

// Command returns the arguments (after the executable) and the environment of
// the codex process for inv. Every -c is repeated on each call because codex
// does not store them with the thread. For a resumed thread the exec-level
// options (-C, -s, -c) go before `resume`, which does not accept -s or -C.
func (r *Runner) Command(inv Invocation) (args []string, env []string) {
	args = []string{"exec"}
	if inv.Review != nil {
		inv.ThreadID = "" // a review is a thread of its own
	}
	if inv.ThreadID == "" && inv.Review == nil {
		args = append(args, "--json", "--skip-git-repo-check")
	}
	if inv.Cwd != "" {
		args = append(args, "-C", inv.Cwd)
	}
	if inv.Sandbox != "" {
		args = append(args, "-s", inv.Sandbox)
	}
	if inv.ThreadID == "" && inv.Review == nil && inv.Model != "" {
		args = append(args, "-m", inv.Model)
	}
	for _, kv := range r.Config {
		args = append(args, "-c", kv)
	}
	for _, kv := range inv.Config {
		args = append(args, "-c", kv)
	}
	if inv.Review != nil {
		// review takes neither -C nor -s: they go before it, as for resume.
		args = append(args, "review", "--json", "--skip-git-repo-check")
		if inv.Model != "" {
			args = append(args, "-m", inv.Model)
		}
		switch {
		case inv.Review.Branch != "":
			return append(args, "--base", inv.Review.Branch), proc.Env(r.Env, inv.Env)
		case inv.Review.Commit != "":
			return append(args, "--commit", inv.Review.Commit), proc.Env(r.Env, inv.Env)
		case inv.Prompt == "":
			return append(args, "--uncommitted"), proc.Env(r.Env, inv.Env)
		}
		// Custom instructions come on stdin.
	}
	if inv.ThreadID != "" {
		args = append(args, "resume", "--json", "--skip-git-repo-check")
		if inv.Model != "" {
			args = append(args, "-m", inv.Model)
		}
	}
	// `resume` has its own --image. The `=` form matters: `-i PATH`
	// takes every following value, the prompt's `-` included.
	for _, path := range inv.Images {
		args = append(args, "--image="+path)
	}
	if inv.ThreadID != "" {
		args = append(args, inv.ThreadID)
	}
	args = append(args, "-") // the prompt comes on stdin
	return args, proc.Env(r.Env, inv.Env)
}

func (inv Invocation) validate() error {
	if !filepath.IsAbs(inv.Cwd) {
		return fmt.Errorf("codex: working directory %q is not absolute", inv.Cwd)
	}
	switch inv.Sandbox {
	case "", codex.SandboxReadOnly, codex.SandboxWorkspaceWrite, codex.SandboxDangerFullAccess:
	default:
		return fmt.Errorf("codex: unknown sandbox mode %q", inv.Sandbox)
	}
	if strings.HasPrefix(inv.ThreadID, "-") {
		return fmt.Errorf("codex: invalid thread id %q", inv.ThreadID)
	}
	for _, path := range inv.Images {
		if !filepath.IsAbs(path) || strings.Contains(path, ",") {
			return fmt.Errorf("codex: image path %q is not absolute or contains a comma", path)
		}
	}
	if r := inv.Review; r != nil && (strings.HasPrefix(r.Branch, "-") || strings.HasPrefix(r.Commit, "-")) {
		return fmt.Errorf("codex: invalid review target %+v", *r)
	}
	return nil
}

func (r *Runner) grace() time.Duration {
	if r.Grace > 0 {
		return r.Grace
	}
	return proc.DefaultGrace
}

func (r *Runner) logger() *slog.Logger {
	if r.Logger != nil {
		return r.Logger
	}
	return slog.Default()
}

// Run runs codex for one turn and calls onLine with each line of its stdout
// (without the newline; empty lines skipped), synchronously, in order, on the
// calling goroutine. The slice is only valid during the call. Lines have no
// size limit.
//
// When a process for the same invocation was started by Prestart and still
// waits, Run writes the prompt to it instead of starting codex.
//
// Run returns nil when codex exits with status 0 and an *ExitError for any
// other status. When ctx ends first, codex gets SIGINT and, if it has not
// exited after the grace period, its process group gets SIGKILL (on Windows,
// which has no SIGINT, codex's job object is terminated at once); whatever
// codex printed is still passed to onLine, and the error satisfies
// errors.Is(err, context.Canceled) (or DeadlineExceeded) and wraps
// context.Cause(ctx). Run returns only after the process has been waited for
// and every goroutine it started has ended.
func (r *Runner) Run(ctx context.Context, inv Invocation, onLine func(line []byte)) error {
	if err := inv.validate(); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return cancelError(ctx)
	}
	st := r.takeWaiting(inv)
	if st == nil {
		var err error
		if st, err = r.start(inv); err != nil {
			return err
		}
	}
	return r.finish(ctx, st, inv.Prompt, onLine)
}

// started is a codex process that has not been given its prompt yet. Its
// stderr is read from the start; stdout waits for the prompt.
type started struct {
	p      *proc.Process
	wg     *sync.WaitGroup // the reaper and the stderr reader; finish adds its own
	stderr *proc.StderrLog
	at     time.Time
	log    *slog.Logger
}

// start starts codex for inv, its stdin left open.
func (r *Runner) start(inv Invocation) (*started, error) {
	if r.Path == "" {
		return nil, proc.ErrNotFound
	}
	// A missing working directory fails Start with the same ENOENT as a
	// missing executable: tell them apart first.
	if fi, err := os.Stat(inv.Cwd); err != nil {
		return nil, fmt.Errorf("codex: working directory: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("codex: working directory %s is not a directory", inv.Cwd)
	}
	log := r.logger()
	args, env := r.Command(inv)

	cmd := exec.Command(r.Path, args...)
	cmd.Dir = inv.Cwd
	cmd.Env = env
	wg := new(sync.WaitGroup)
	at := time.Now()
	p, err := proc.Start(cmd, syscall.SIGINT, proc.Timing{Grace: r.grace(), Drain: r.Drain}, wg, log)
	if err != nil {
		return nil, err
	}
	log.Debug("codex started", "pid", cmd.Process.Pid, "args", proc.LogArgs(args), "cwd", inv.Cwd)
	st := &started{p: p, wg: wg, stderr: proc.NewStderrLog(log, proc.StderrTailSize), at: at, log: log}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer recovery.Recover(log, "codex stderr", nil)
		io.Copy(st.stderr, p.StderrReader())
		st.stderr.Flush()
	}()
	return st, nil
}

// finish gives st its prompt and runs it to the end, as Run describes.
func (r *Runner) finish(ctx context.Context, st *started, prompt string, onLine func(line []byte)) error {
	log := r.logger()
	p, wg := st.p, st.wg
	defer p.Close()
	pid := p.Pid()
	reaped := false // set once every goroutine of the run has ended

	wg.Add(2)
	go func() {
		defer wg.Done()
		defer recovery.Recover(log, "codex cancel supervisor", nil)
		p.SuperviseCancel(ctx, r.grace(), log)
	}()
	go func() {
		defer wg.Done()
		defer recovery.Recover(log, "codex prompt writer", nil)
		// Codex reads the whole prompt before it starts; a write error means
		// it is gone, which Wait reports better.
		io.Copy(p.Stdin, strings.NewReader(prompt))
		p.Stdin.Close()
	}()
	defer func() {
		// Also reached when onLine panics: never leave codex or the goroutines behind.
		if !reaped {
			p.KillGroup()
		}
		wg.Wait()
	}()

	proc.ReadLines(p.StdoutReader(), onLine)
	wg.Wait()
	reaped = true

	elapsed := time.Since(st.at)
	if p.Cancelled() {
		log.Debug("codex cancelled", "pid", pid, "elapsed", elapsed)
		return cancelError(ctx)
	}
	state := p.Cmd.ProcessState
	if state == nil {
		return fmt.Errorf("codex: wait: %w", p.WaitErr())
	}
	attrs := []any{"pid", pid, "status", state.String(), "elapsed", elapsed}
	if kib, ok := proc.PeakRSSKiB(state); ok {
		attrs = append(attrs, "maxrss_kib", kib)
	}
	log.Debug("codex exited", attrs...)
	if state.Success() {
		return nil
	}
	return proc.ExitErrorOf(state, st.stderr)
}

// discard ends a started process that never got its prompt: its group is
// killed and every goroutine of it waited for.
func (st *started) discard() {
	st.log.Debug("waiting codex ended", "pid", st.p.Pid())
	// Once codex is reaped its group id may be reused: only a live one is
	// killed (its leader keeps the id reserved).
	if !st.p.HasExited() {
		st.p.KillGroup()
	}
	st.wg.Wait()
	st.p.Close()
}

func cancelError(ctx context.Context) error {
	cause := context.Cause(ctx)
	if cause == nil || cause == ctx.Err() {
		return fmt.Errorf("codex run cancelled: %w", ctx.Err())
	}
	return fmt.Errorf("codex run cancelled: %w (%w)", ctx.Err(), cause)
}
