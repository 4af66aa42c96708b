package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/codexacp/codexacp/internal/backtrace"
	"github.com/codexacp/codexacp/internal/recovery"
	"github.com/codexacp/codexacp/internal/secrets"
)

// DefaultGrace is how long a cancelled codex gets to exit after SIGINT (or
// an app-server after the end of its stdin) before its process group is
// killed, when the caller names no grace period. Codex exits within ~40 ms
// of SIGINT, so the grace period only matters for a wedged process.
const DefaultGrace = 2 * time.Second

// DrainTimeout bounds how long codex's stdout and stderr are read after
// codex exited while nothing arrives: a process codex left behind can hold
// the write end open, and what it prints is not codex's output.
const DrainTimeout = 500 * time.Millisecond

// Timing is how long Start's process is given at its end. Zero fields take
// the defaults; tests shorten them to reach the kill and drain paths without
// waiting them out.
type Timing struct {
	// Grace is how long codex may outlive the agent before the watchdog
	// kills its group (0: DefaultGrace).
	Grace time.Duration
	// Drain bounds each read of codex's stdout and stderr once codex has
	// exited (0: DrainTimeout).
	Drain time.Duration
}

func (t Timing) orDefaults() Timing {
	if t.Grace <= 0 {
		t.Grace = DefaultGrace
	}
	if t.Drain <= 0 {
		t.Drain = DrainTimeout
	}
	return t
}

// StderrTailSize is how much of codex's stderr is kept for error reports.
const StderrTailSize = 16 << 10

// ErrNotFound reports that no codex executable could be found or started.
var ErrNotFound = errors.New("codex executable not found (install the Codex CLI: npm i -g @openai/codex)")

// Process is a codex process Start started: the state its user shares with
// the goroutines Start and SuperviseCancel run.
type Process struct {
	Cmd *exec.Cmd
	// Stdin, Stdout and Stderr are our ends of the process's pipes; the
	// caller closes them (Close) once it is done with the process.
	Stdin, Stdout, Stderr *os.File

	deathSig syscall.Signal // what codex gets when the agent dies (procAttr, watchdog)
	timing   Timing         // with the defaults filled in
	watchdog *watchdog      // set before Start returns; nil when none started

	exited    chan struct{} // closed once cmd.Wait returned
	hasExited atomic.Bool
	waitErr   error // set before exited is closed
	cancelled atomic.Bool
}

// Start starts cmd in its own process group with parent-death signal
// deathSig (procAttr), a watchdog that kills the group when codex outlives
// the agent by timing.Grace, and three pipes, whose other ends it returns in the
// Process, from a goroutine (added to wg, which has no other members yet)
// that reaps cmd. On error nothing is left open or running; an executable
// that cannot be found is ErrNotFound.
//
// The caller owns all three pipes (no copying goroutines inside exec.Cmd), so
// that cmd.Wait returns as soon as codex is reaped even when something it
// started still holds a pipe, and the cancel path can act on that.
func Start(cmd *exec.Cmd, deathSig syscall.Signal, timing Timing, wg *sync.WaitGroup, log *slog.Logger) (*Process, error) {
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
	p := &Process{Cmd: cmd, deathSig: deathSig, timing: timing.orDefaults(), Stdin: pipes[0].w, Stdout: pipes[1].r, Stderr: pipes[2].r, exited: make(chan struct{})}
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
	p.Close()
	name := cmd.Args[0]
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, exec.ErrNotFound) {
		return nil, fmt.Errorf("%w: %s: %v", ErrNotFound, name, err)
	}
	return nil, fmt.Errorf("codex: start %s: %w", name, err)
}

// LogArgs is args as they may be logged: secret values in -c overrides
// (API keys, MCP server headers and env) are blanked.
func LogArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if i > 0 && args[i-1] == "-c" {
			a = secrets.RedactConfigArg(a)
		}
		out[i] = a
	}
	return out
}

// startAndWait starts codex, reports the outcome on started and, once codex
// runs, reaps it. Its goroutine keeps its OS thread to itself until then:
// codex's parent-death signal (procAttr) fires when the thread that started
// it exits, and Go ends threads, e.g. one whose goroutine exits locked.
func (p *Process) startAndWait(started chan<- error, log *slog.Logger) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := p.Cmd.Start(); err != nil {
		started <- err
		return
	}
	// Before codex can be reaped: the watchdog joins its process group
	// (Unix) or puts it in a job object (Windows).
	p.watchdog = startWatchdog(p.Cmd.Process.Pid, p.deathSig, p.timing.Grace, log)
	started <- nil
	p.wait()
	p.watchdog.stop()
}

// wait reaps codex and starts the drain countdown of its pipes.
func (p *Process) wait() {
	p.waitErr = p.Cmd.Wait()
	p.hasExited.Store(true)
	// Wake reads blocked on pipes that an heir of codex keeps open, and a
	// prompt write nobody will read any more.
	p.Stdout.SetReadDeadline(time.Now().Add(p.timing.Drain))
	p.Stderr.SetReadDeadline(time.Now().Add(p.timing.Drain))
	p.Stdin.SetWriteDeadline(time.Now())
	close(p.exited)
}

// Pid is the process's id, also its process group's.
func (p *Process) Pid() int { return p.Cmd.Process.Pid }

// Exited is closed once the process has been reaped.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// HasExited reports whether the process has been reaped.
func (p *Process) HasExited() bool { return p.hasExited.Load() }

// WaitErr is what cmd.Wait returned; valid once Exited is closed.
func (p *Process) WaitErr() error { return p.waitErr }

// Cancelled reports whether SuperviseCancel interrupted the process.
func (p *Process) Cancelled() bool { return p.cancelled.Load() }

// Close closes our ends of the process's pipes.
func (p *Process) Close() {
	p.Stdin.Close()
	p.Stdout.Close()
	p.Stderr.Close()
}

// StdoutReader reads the process's stdout as DrainReader describes.
func (p *Process) StdoutReader() io.Reader {
	return &drainReader{f: p.Stdout, exited: &p.hasExited, drain: p.timing.Drain}
}

// StderrReader reads the process's stderr as DrainReader describes.
func (p *Process) StderrReader() io.Reader {
	return &drainReader{f: p.Stderr, exited: &p.hasExited, drain: p.timing.Drain}
}

// SuperviseCancel interrupts codex when ctx ends, and kills its process group
// when it has not exited within grace. Once codex has exited after a cancel,
// the group is killed too, so that nothing it started outlives the turn.
func (p *Process) SuperviseCancel(ctx context.Context, grace time.Duration, log *slog.Logger) {
	select {
	case <-p.exited:
		return
	case <-ctx.Done():
	}
	if err := p.Interrupt(); err != nil {
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
		p.KillGroup()
	case <-timer.C:
		log.Debug("codex ignored SIGINT; killing its process group", "pid", p.Cmd.Process.Pid, "grace", grace)
		p.KillGroup()
		<-p.exited
	}
}

// KillTree kills the process and everything below it: the commands of an
// app-server run in process groups of their own, which its group's SIGKILL
// would not reach.
func (p *Process) KillTree() {
	if p.hasExited.Load() {
		return
	}
	// Stopped, it starts nothing new while its descendants are found.
	freeze(p.Pid())
	killBelow(p.Pid(), nil)
	p.KillGroup()
}

// drainReader reads one of codex's output pipes. Once codex has exited, each
// read gets a fresh deadline, so buffered output is always delivered, however
// slowly the caller consumes it, but an idle pipe held open by another process
// is not waited on forever.
type drainReader struct {
	f      *os.File
	exited *atomic.Bool
	drain  time.Duration
}

func (d *drainReader) Read(b []byte) (int, error) {
	if d.exited.Load() {
		d.f.SetReadDeadline(time.Now().Add(d.drain))
	}
	return d.f.Read(b)
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

// ExitErrorOf describes a process that ended with a non-zero status, with
// the tail of its stderr.
func ExitErrorOf(state *os.ProcessState, stderr *StderrLog) *ExitError {
	e := &ExitError{Code: state.ExitCode(), Stderr: backtrace.Strip(stderr.Tail())}
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		e.Signal = ws.Signal()
		e.Code = 128 + int(e.Signal)
	}
	return e
}
