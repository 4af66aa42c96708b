//go:build unix

package fsops

import (
	"errors"
	"syscall"
)

// writable checks write permission on an existing file (access(2)).
func writable(name string) error { return syscall.Access(name, 2 /* W_OK */) }

// processAlive reports whether a process with this pid exists.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
