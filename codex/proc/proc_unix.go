//go:build unix

package proc

import (
	"os"
	"runtime"
	"syscall"
)

// Interrupt asks codex to end: SIGINT, as Ctrl-C in a terminal. codex exec
// then ends the turn and the process groups of its commands.
func (p *Process) Interrupt() error { return p.Cmd.Process.Signal(os.Interrupt) }

// KillGroup SIGKILLs codex's process group.
func (p *Process) KillGroup() {
	// The group id is codex's pid (Setpgid); it stays reserved while any
	// member lives, so this cannot hit an unrelated group.
	syscall.Kill(-p.Cmd.Process.Pid, syscall.SIGKILL)
}

// freeze stops pid (SIGSTOP), so that it starts nothing new while its
// descendants are found and killed.
func freeze(pid int) { syscall.Kill(pid, syscall.SIGSTOP) }

// PeakRSSKiB is the peak resident set size of a reaped process, in KiB.
func PeakRSSKiB(state *os.ProcessState) (int64, bool) {
	ru, ok := state.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, false
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss) / 1024, true // bytes there
	}
	return int64(ru.Maxrss), true // KiB on Linux and the BSDs
}
