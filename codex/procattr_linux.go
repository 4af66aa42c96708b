package codex

import "syscall"

// procAttr puts codex in its own process group, so that a cancel can kill
// everything it started, and has the kernel SIGKILL it when the agent dies
// without cleaning up (SIGKILL, a crash, the OOM killer). The parent-death
// signal fires when the thread that started codex exits, so Run starts codex
// from a goroutine locked to its thread until codex has been reaped.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
