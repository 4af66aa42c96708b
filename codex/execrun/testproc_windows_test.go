package execrun

import (
	"os"
	"syscall"
)

// killPid terminates pid, a process a test left behind.
func killPid(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
}

// groupAttr starts a process in a process group of its own when own is set.
func groupAttr(own bool) *syscall.SysProcAttr {
	if own {
		return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
	}
	return nil
}
