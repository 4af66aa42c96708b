package appserver

import (
	"syscall"
)

// groupAttr starts a process in a process group of its own when own is set.
func groupAttr(own bool) *syscall.SysProcAttr {
	if own {
		return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
	}
	return nil
}
