package proc

import "syscall"

// procAttr puts codex in its own process group, so that a cancel can kill
// what it started there, and has the kernel send it deathSig when the agent
// dies without cleaning up (SIGKILL, a crash, the OOM killer).
//
// For `codex exec` that is SIGINT rather than SIGKILL: codex then ends as a
// cancelled turn ends, killing the process groups of its shell commands
// (each runs in a session of its own) and everything in them. A SIGKILLed
// codex leaves those to the SIGTERM it set as their own parent-death
// signal, which reaches only the shell, not what the shell started
// (docs/codex.md#pinned-codex-facts). `codex app-server` dies
// at once on SIGINT, leaving its commands the same way, but ends them on
// SIGTERM (and on the end of its stdin): it gets SIGTERM. The watchdog
// (startWatchdog) kills codex if it ignores the signal.
//
// The parent-death signal fires when the thread that started codex exits,
// so codex is started from a goroutine locked to its thread until codex has
// been reaped.
func procAttr(deathSig syscall.Signal) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: deathSig}
}
