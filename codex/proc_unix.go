//go:build unix

package codex

import (
	"os"
	"runtime"
	"syscall"
)

// interrupt asks codex to end: SIGINT, as Ctrl-C in a terminal. codex exec
// then ends the turn and the process groups of its commands.
func (p *process) interrupt() error { return p.cmd.Process.Signal(os.Interrupt) }

// killGroup SIGKILLs codex's process group.
func (p *process) killGroup() {
	// The group id is codex's pid (Setpgid); it stays reserved while any
	// member lives, so this cannot hit an unrelated group.
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
}

// freeze stops pid (SIGSTOP), so that it starts nothing new while its
// descendants are found and killed.
func freeze(pid int) { syscall.Kill(pid, syscall.SIGSTOP) }

// peakRSSKiB is the peak resident set size of a reaped process, in KiB.
func peakRSSKiB(state *os.ProcessState) (int64, bool) {
	ru, ok := state.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, false
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss) / 1024, true // bytes there
	}
	return int64(ru.Maxrss), true // KiB on Linux and the BSDs
}
