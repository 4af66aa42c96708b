package fsops

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// writable refuses a file with the read-only attribute, the only write
// permission Go reports on Windows (as missing write bits): the rename
// would replace it. Access control lists are not consulted; a file they
// protect fails at the rename instead (access denied).
func writable(name string) error {
	fi, err := os.Stat(name)
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&0o200 == 0 {
		return &fs.PathError{Op: "access", Path: name, Err: syscall.ERROR_ACCESS_DENIED}
	}
	return nil
}

// stillActive is the exit code GetExitCodeProcess reports for a running
// process (STILL_ACTIVE).
const stillActive = 259

// processAlive reports whether a process with this pid exists. One that
// cannot be opened for lack of rights exists.
func processAlive(pid int) bool {
	h, err := syscall.OpenProcess(syscall.PROCESS_QUERY_INFORMATION, false, uint32(pid))
	if err != nil {
		return errors.Is(err, syscall.ERROR_ACCESS_DENIED)
	}
	defer syscall.CloseHandle(h)
	var code uint32
	if err := syscall.GetExitCodeProcess(h, &code); err != nil {
		return true
	}
	return code == stillActive
}

// setMode does nothing: Windows has no permission bits to copy, only the
// read-only attribute, and the temporary file is created writable, as the
// file it replaces is (writable refuses a read-only one). Go's File.Chmod
// is not implemented there.
func setMode(f tempFile, mode fs.FileMode) error { return nil }

// Windows error codes mapOSError names, besides the Errno values the
// syscall package gives the Unix names.
const (
	errorWriteProtect       syscall.Errno = 19   // ERROR_WRITE_PROTECT: read-only media
	errorHandleDiskFull     syscall.Errno = 39   // ERROR_HANDLE_DISK_FULL
	errorDiskFull           syscall.Errno = 112  // ERROR_DISK_FULL
	errorFilenameExcedRange syscall.Errno = 206  // ERROR_FILENAME_EXCED_RANGE
	errorDirectory          syscall.Errno = 267  // ERROR_DIRECTORY: a file where a directory should be
	errorDiskQuotaExceeded  syscall.Errno = 1295 // ERROR_DISK_QUOTA_EXCEEDED
	errorCantResolveFile    syscall.Errno = 1921 // ERROR_CANT_RESOLVE_FILENAME: a loop of reparse points
)

func isDiskFull(err error) bool {
	return errors.Is(err, errorDiskFull) || errors.Is(err, errorHandleDiskFull) ||
		errors.Is(err, errorDiskQuotaExceeded) || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

func isReadOnlyFS(err error) bool {
	return errors.Is(err, errorWriteProtect) || errors.Is(err, syscall.EROFS)
}

func isNotDir(err error) bool {
	return errors.Is(err, errorDirectory) || errors.Is(err, syscall.ENOTDIR)
}

func isNameTooLong(err error) bool {
	return errors.Is(err, errorFilenameExcedRange) || errors.Is(err, syscall.ENAMETOOLONG)
}

func isOSLinkLoop(err error) bool {
	return errors.Is(err, errorCantResolveFile) || errors.Is(err, syscall.ELOOP)
}
