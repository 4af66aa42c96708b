//go:build !linux

package codex

import "syscall"

// procAttr puts codex in its own process group, so that a cancel can kill
// everything it started. Only Linux has a parent-death signal: elsewhere
// codex outlives an agent that dies without cleaning up.
func procAttr(deathSig syscall.Signal) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
