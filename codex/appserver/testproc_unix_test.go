//go:build unix

package appserver

import "syscall"

// groupAttr starts a process in a process group of its own when own is set.
func groupAttr(own bool) *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: own} }
