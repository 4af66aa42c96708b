package proc

import (
	"os"
	"syscall"
)

// procAttr starts codex in a new process group, so that a Ctrl+C typed in a
// console the agent shares reaches the agent (which cancels the turn) and
// not codex directly, as Setpgid does on Unix. Windows has no parent-death
// signal and no SIGINT: the job object codex is put in (startWatchdog) stands
// in for both, and deathSig is unused.
func procAttr(deathSig syscall.Signal) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// Interrupt ends codex at once: Windows has no SIGINT to send it (see
// docs/platforms.md), so a cancel terminates its job object, codex and
// everything it started.
func (p *Process) Interrupt() error {
	select {
	case <-p.exited:
		return os.ErrProcessDone // it finished on its own
	default:
	}
	p.KillGroup()
	return nil
}

// KillGroup terminates codex's job object: codex and every process it
// started. Without a job object (it could not be created) only codex is
// terminated.
func (p *Process) KillGroup() {
	if p.watchdog.kill() {
		return
	}
	p.Cmd.Process.Kill()
}

// freeze does nothing on Windows: KillGroup ends the whole job at once.
func freeze(pid int) {}

// PeakRSSKiB is not known on Windows (its Rusage has times only).
func PeakRSSKiB(state *os.ProcessState) (int64, bool) { return 0, false }
