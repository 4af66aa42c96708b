//go:build unix && !linux

package proc

import "syscall"

// procAttr puts codex in its own process group, so that a cancel can kill
// everything it started. Only Linux has a parent-death signal: elsewhere
// the watchdog sends deathSig to codex when the agent dies (startWatchdog).
func procAttr(deathSig syscall.Signal) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
