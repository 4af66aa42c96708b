//go:build unix

package regularfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// openNonBlocking opens with O_NONBLOCK, so that a FIFO is opened at once
// (and then refused by the caller's fstat) instead of waiting for a peer.
// A write-only open of a FIFO without a reader fails ENXIO: refused too.
// O_NONBLOCK means nothing to a regular file's reads and writes.
func openNonBlocking(path string, flag int, perm fs.FileMode, follow Follow) (*os.File, error) {
	flag |= syscall.O_NONBLOCK
	if follow == NoFollowLink {
		flag |= syscall.O_NOFOLLOW
	}
	f, err := os.OpenFile(path, flag, perm)
	if err == nil {
		return f, nil
	}
	switch {
	case follow == NoFollowLink && errors.Is(err, syscall.ELOOP) && isSymlink(path):
		return nil, fmt.Errorf("%s: %w", path, ErrSymlink)
	case errors.Is(err, syscall.ENXIO):
		// A FIFO without a reader, or a device with nothing behind it.
		return nil, &NotRegularError{Path: path, Mode: modeOf(path)}
	}
	return nil, err
}

func isSymlink(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode()&fs.ModeSymlink != 0
}

func modeOf(path string) fs.FileMode {
	if fi, err := os.Stat(path); err == nil {
		return fi.Mode().Type()
	}
	return fs.ModeIrregular
}

// OpenDir opens a directory to read its entries, without blocking on what
// is not one (a FIFO put in its place): that fails at once (ENOTDIR).
func OpenDir(dir string) (*os.File, error) {
	return os.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK, 0)
}
