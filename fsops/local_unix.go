//go:build unix

package fsops

import (
	"errors"
	"io/fs"
	"syscall"
)

// writable checks write permission on an existing file (access(2)).
func writable(name string) error { return syscall.Access(name, 2 /* W_OK */) }

// processAlive reports whether a process with this pid exists.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// setMode gives the temporary file the permission bits of the file it
// replaces.
func setMode(f tempFile, mode fs.FileMode) error { return f.Chmod(mode) }

// The OS errors mapOSError names.

func isDiskFull(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

func isReadOnlyFS(err error) bool  { return errors.Is(err, syscall.EROFS) }
func isNotDir(err error) bool      { return errors.Is(err, syscall.ENOTDIR) }
func isNameTooLong(err error) bool { return errors.Is(err, syscall.ENAMETOOLONG) }
func isOSLinkLoop(err error) bool  { return errors.Is(err, syscall.ELOOP) }
