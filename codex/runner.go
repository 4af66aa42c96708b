package codex

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/codexacp/codexacp/internal/backtrace"
	"github.com/codexacp/codexacp/internal/recovery"
	"github.com/codexacp/codexacp/internal/secrets"
)

// DefaultGrace is how long Run waits after SIGINT before it kills codex's
// process group, when Runner.Grace is zero. Codex exits within ~40 ms of
// SIGINT, so the grace period only matters for a wedged process.
const DefaultGrace = 2 * time.Second

// drainTimeout bounds how long Run keeps reading stdout and stderr after
// codex exited while nothing arrives: a process codex left behind can hold the write end
// open, and what it prints is not codex's output.
const drainTimeout = 500 * time.Millisecond

// stderrTailSize is how much of codex's stderr is kept for error reports.
const stderrTailSize = 16 << 10

// Sandbox modes accepted by `codex exec -s`.
const (
	SandboxReadOnly         = "read-only"
	SandboxWorkspaceWrite   = "workspace-write"
	SandboxDangerFullAccess = "danger-full-access"
)

// ErrNotFound reports that no codex executable could be found or started.
var ErrNotFound = errors.New("codex executable not found (install the Codex CLI: npm i -g @openai/codex)")

// Runner runs one codex process per turn. Its exported fields are read-only
// once Run is in use; a Runner is safe for concurrent runs and must not be
// copied.
type Runner struct {
	Path   string        // codex executable
	Config []string      // user's -c key=value, passed to every run exactly like codex's own -c
	Env    []string      // base environment (nil: os.Environ()); RUST_BACKTRACE is always removed
	Grace  time.Duration // SIGINT → SIGKILL grace; 0 means DefaultGrace
	Logger *slog.Logger  // debug logs of runs and codex's stderr; nil means slog.Default()

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

// ExitError reports a codex process that ended with a non-zero status.
type ExitError struct {
	Code   int            // exit status, or 128+signal when killed by a signal
	Signal syscall.Signal // the signal that killed codex; 0 when it exited
	Stderr string         // the tail of stderr, Rust backtraces trimmed
}

func (e *ExitError) Error() string {
	msg := fmt.Sprintf("codex exited with status %d", e.Code)
	if e.Signal != 0 {
		msg += " (killed by signal " + signalName(e.Signal) + ")"
		if !crashSignals[e.Signal] {
			// Killed from outside (the OOM killer, a user): whatever codex
			// last printed, typically an unrelated warning, is not why.
			return msg
		}
	}
	if e.Stderr == "" {
		return msg
	}
	return msg + ": " + e.Stderr
}

// signalName is the conventional name of sig (SIGKILL), else its number.
func signalName(sig syscall.Signal) string {
	if name, ok := signalNames[sig]; ok {
		return name
	}
	return fmt.Sprintf("%d (%v)", int(sig), sig)
}

// exitError describes a process that ended with a non-zero status.
func exitError(state *os.ProcessState, stderr *stderrLog) *ExitError {
	e := &ExitError{Code: state.ExitCode(), Stderr: backtrace.Strip(stderr.tail())}
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		e.Signal = ws.Signal()
		e.Code = 128 + int(e.Signal)
	}
	return e
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
			return append(args, "--base", inv.Review.Branch), childEnv(r.Env, inv.Env)
		case inv.Review.Commit != "":
			return append(args, "--commit", inv.Review.Commit), childEnv(r.Env, inv.Env)
		case inv.Prompt == "":
			return append(args, "--uncommitted"), childEnv(r.Env, inv.Env)
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
	return args, childEnv(r.Env, inv.Env)
}

// removedEnv are variables never passed to codex: with them set codex appends
// Rust backtraces to its error messages, even inside JSONL events.
var removedEnv = map[string]bool{"RUST_BACKTRACE": true, "RUST_LIB_BACKTRACE": true}

// childEnv merges base (nil: os.Environ()) and extra, later values replacing
// earlier ones in place, without the removed variables.
func childEnv(base, extra []string) []string {
	if base == nil {
		base = os.Environ()
	}
	env := make([]string, 0, len(base)+len(extra))
	index := make(map[string]int, len(base)+len(extra))
	for _, list := range [][]string{base, extra} {
		for _, kv := range list {
			key, _, _ := strings.Cut(kv, "=")
			if removedEnv[key] {
				continue
			}
			if i, ok := index[key]; ok {
				env[i] = kv
				continue
			}
			index[key] = len(env)
			env = append(env, kv)
		}
	}
	return env
}

func (inv Invocation) validate() error {
	if !filepath.IsAbs(inv.Cwd) {
		return fmt.Errorf("codex: working directory %q is not absolute", inv.Cwd)
	}
	switch inv.Sandbox {
	case "", SandboxReadOnly, SandboxWorkspaceWrite, SandboxDangerFullAccess:
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
	return DefaultGrace
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
	p      *process
	wg     *sync.WaitGroup // the reaper and the stderr reader; finish adds its own
	stderr *stderrLog
	at     time.Time
	log    *slog.Logger
}

// start starts codex for inv, its stdin left open.
func (r *Runner) start(inv Invocation) (*started, error) {
	if r.Path == "" {
		return nil, ErrNotFound
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
	p, err := spawn(cmd, syscall.SIGINT, wg, log)
	if err != nil {
		return nil, err
	}
	log.Debug("codex started", "pid", cmd.Process.Pid, "args", logArgs(args), "cwd", inv.Cwd)
	st := &started{p: p, wg: wg, stderr: newStderrLog(log, stderrTailSize), at: at, log: log}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer recovery.Recover(log, "codex stderr", nil)
		io.Copy(st.stderr, &drainReader{f: p.stderr, exited: &p.hasExited})
		st.stderr.flush()
	}()
	return st, nil
}

// finish gives st its prompt and runs it to the end, as Run describes.
func (r *Runner) finish(ctx context.Context, st *started, prompt string, onLine func(line []byte)) error {
	log := r.logger()
	p, wg := st.p, st.wg
	defer p.stdin.Close()
	defer p.stdout.Close()
	defer p.stderr.Close()
	pid := p.cmd.Process.Pid

	wg.Add(2)
	go func() {
		defer wg.Done()
		defer recovery.Recover(log, "codex cancel supervisor", nil)
		p.superviseCancel(ctx, r.grace(), log)
	}()
	go func() {
		defer wg.Done()
		defer recovery.Recover(log, "codex prompt writer", nil)
		// Codex reads the whole prompt before it starts; a write error means
		// it is gone, which Wait reports better.
		io.Copy(p.stdin, strings.NewReader(prompt))
		p.stdin.Close()
	}()
	defer func() {
		// Also reached when onLine panics: never leave codex or the goroutines behind.
		if !p.done.Load() {
			p.killGroup()
		}
		wg.Wait()
	}()

	readLines(&drainReader{f: p.stdout, exited: &p.hasExited}, onLine)
	wg.Wait()
	p.done.Store(true)

	elapsed := time.Since(st.at)
	if p.cancelled.Load() {
		log.Debug("codex cancelled", "pid", pid, "elapsed", elapsed)
		return cancelError(ctx)
	}
	state := p.cmd.ProcessState
	if state == nil {
		return fmt.Errorf("codex: wait: %w", p.waitErr)
	}
	attrs := []any{"pid", pid, "status", state.String(), "elapsed", elapsed}
	if kib, ok := peakRSSKiB(state); ok {
		attrs = append(attrs, "maxrss_kib", kib)
	}
	log.Debug("codex exited", attrs...)
	if state.Success() {
		return nil
	}
	return exitError(state, st.stderr)
}

// discard ends a started process that never got its prompt: its group is
// killed and every goroutine of it waited for.
func (st *started) discard() {
	st.log.Debug("waiting codex ended", "pid", st.p.cmd.Process.Pid)
	// Once codex is reaped its group id may be reused: only a live one is
	// killed (its leader keeps the id reserved).
	if !st.p.hasExited.Load() {
		st.p.killGroup()
	}
	st.wg.Wait()
	st.p.stdin.Close()
	st.p.stdout.Close()
	st.p.stderr.Close()
}

// spawn starts cmd in its own process group with parent-death signal
// deathSig (procAttr) and three pipes, whose other ends it returns in the
// process, from a goroutine (added to wg, which has no other members yet)
// that reaps cmd. On error nothing is left open or running.
//
// The caller owns all three pipes (no copying goroutines inside exec.Cmd), so
// that cmd.Wait returns as soon as codex is reaped even when something it
// started still holds a pipe, and the cancel path can act on that.
func spawn(cmd *exec.Cmd, deathSig syscall.Signal, wg *sync.WaitGroup, log *slog.Logger) (*process, error) {
	var pipes [3]struct{ r, w *os.File }
	for i := range pipes {
		r, w, err := os.Pipe()
		if err != nil {
			for _, p := range pipes[:i] {
				p.r.Close()
				p.w.Close()
			}
			return nil, fmt.Errorf("codex: pipe: %w", err)
		}
		pipes[i].r, pipes[i].w = r, w
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pipes[0].r, pipes[1].w, pipes[2].w
	cmd.SysProcAttr = procAttr(deathSig)
	p := &process{cmd: cmd, deathSig: deathSig, stdin: pipes[0].w, stdout: pipes[1].r, stderr: pipes[2].r, exited: make(chan struct{})}
	started := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer recovery.Recover(log, "codex process", nil)
		p.startAndWait(started, log)
	}()
	err := <-started
	// The child has its copies; EOF comes when codex (and its heirs) close theirs.
	pipes[0].r.Close()
	pipes[1].w.Close()
	pipes[2].w.Close()
	if err == nil {
		return p, nil
	}
	wg.Wait()
	p.stdin.Close()
	p.stdout.Close()
	p.stderr.Close()
	name := cmd.Args[0]
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, exec.ErrNotFound) {
		return nil, fmt.Errorf("%w: %s: %v", ErrNotFound, name, err)
	}
	return nil, fmt.Errorf("codex: start %s: %w", name, err)
}

// logArgs is args as they may be logged: secret values in -c overrides
// (API keys, MCP server headers and env) are blanked.
func logArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if i > 0 && args[i-1] == "-c" {
			a = secrets.RedactConfigArg(a)
		}
		out[i] = a
	}
	return out
}

// process is the state one Run shares with the goroutines it starts.
type process struct {
	cmd                   *exec.Cmd
	deathSig              syscall.Signal // what codex gets when the agent dies (procAttr, watchdog)
	watchdog              *watchdog      // set before spawn returns; nil when none started
	stdin, stdout, stderr *os.File       // our ends of the pipes

	exited    chan struct{} // closed once cmd.Wait returned
	hasExited atomic.Bool
	waitErr   error // set before exited is closed
	cancelled atomic.Bool
	done      atomic.Bool
}

// startAndWait starts codex, reports the outcome on started and, once codex
// runs, reaps it. Its goroutine keeps its OS thread to itself until then:
// codex's parent-death signal (procAttr) fires when the thread that started
// it exits, and Go ends threads, e.g. one whose goroutine exits locked.
func (p *process) startAndWait(started chan<- error, log *slog.Logger) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := p.cmd.Start(); err != nil {
		started <- err
		return
	}
	// Before codex can be reaped: the watchdog joins its process group
	// (Unix) or puts it in a job object (Windows).
	p.watchdog = startWatchdog(p.cmd.Process.Pid, p.deathSig, log)
	started <- nil
	p.wait()
	p.watchdog.stop()
}

// wait reaps codex and starts the drain countdown of its pipes.
func (p *process) wait() {
	p.waitErr = p.cmd.Wait()
	p.hasExited.Store(true)
	// Wake reads blocked on pipes that an heir of codex keeps open, and a
	// prompt write nobody will read any more.
	p.stdout.SetReadDeadline(time.Now().Add(drainTimeout))
	p.stderr.SetReadDeadline(time.Now().Add(drainTimeout))
	p.stdin.SetWriteDeadline(time.Now())
	close(p.exited)
}

// superviseCancel interrupts codex when ctx ends, and kills its process group
// when it has not exited within grace. Once codex has exited after a cancel,
// the group is killed too, so that nothing it started outlives the turn.
func (p *process) superviseCancel(ctx context.Context, grace time.Duration, log *slog.Logger) {
	select {
	case <-p.exited:
		return
	case <-ctx.Done():
	}
	if err := p.interrupt(); err != nil {
		if errors.Is(err, os.ErrProcessDone) {
			return // it finished on its own; report that
		}
		log.Debug("codex: interrupt failed", "err", err)
	}
	p.cancelled.Store(true)
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-p.exited:
		p.killGroup()
	case <-timer.C:
		log.Debug("codex ignored SIGINT; killing its process group", "pid", p.cmd.Process.Pid, "grace", grace)
		p.killGroup()
		<-p.exited
	}
}

// drainReader reads one of codex's output pipes. Once codex has exited, each
// read gets a fresh deadline, so buffered output is always delivered, however
// slowly the caller consumes it, but an idle pipe held open by another process
// is not waited on forever.
type drainReader struct {
	f      *os.File
	exited *atomic.Bool
}

func (d *drainReader) Read(b []byte) (int, error) {
	if d.exited.Load() {
		d.f.SetReadDeadline(time.Now().Add(drainTimeout))
	}
	return d.f.Read(b)
}

func cancelError(ctx context.Context) error {
	cause := context.Cause(ctx)
	if cause == nil || cause == ctx.Err() {
		return fmt.Errorf("codex run cancelled: %w", ctx.Err())
	}
	return fmt.Errorf("codex run cancelled: %w (%w)", ctx.Err(), cause)
}

// readLines calls onLine for every non-empty line in r until EOF or a read
// error, including an unterminated last line.
func readLines(r io.Reader, onLine func([]byte)) {
	br := newLineReader(r)
	for {
		line, err := br.next()
		if len(line) > 0 {
			onLine(line)
		}
		if err != nil {
			return
		}
	}
}
