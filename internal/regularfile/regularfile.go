// Package regularfile opens files for their content in a way that can
// neither block nor be sent somewhere else: the open does not wait (a FIFO
// with no writer would hold it forever), what is opened is checked on the
// descriptor itself (fstat), so a path swapped between the check and the
// open cannot slip a FIFO or a device past it, and the final symlink is not
// followed unless the caller says so.
//
// Every file codexacp reads for its content (tool paths on the local disk,
// image file:// URIs, session records and write logs, settings) or creates
// for its own output (--record) goes through here.
package regularfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrNotRegular is wrapped by the errors of a path that names a FIFO,
// device, socket or directory.
var ErrNotRegular = errors.New("not a regular file")

// ErrSymlink is wrapped by the errors of a path whose final component is a
// symbolic link when the open was asked not to follow it.
var ErrSymlink = errors.New("is a symbolic link")

// ErrNotDir is wrapped by OpenDir's error for a path that names anything
// but a directory (a FIFO, a file, …).
var ErrNotDir = errors.New("not a directory")

// ErrTooLarge is wrapped by ReadFile's error when the file is larger than
// the bound it was given.
var ErrTooLarge = errors.New("file too large")

// Follow says whether the final component of a path may be a symbolic link
// (it is followed) or must not be (ErrSymlink). Links in the directories
// above are followed either way.
type Follow bool

const (
	FollowLink   Follow = true
	NoFollowLink Follow = false
)

// NotRegularError is the error of a path that is not a regular file.
type NotRegularError struct {
	Path string
	Mode fs.FileMode // type bits of what was found
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is not a regular file (%s)", e.Path, Kind(e.Mode))
}

func (e *NotRegularError) Unwrap() error { return ErrNotRegular }

// NotDirError is OpenDir's error for a path that is not a directory. It
// wraps ErrNotDir and syscall.ENOTDIR (what callers check for "a path
// through a non-directory").
type NotDirError struct {
	Path string
	Mode fs.FileMode // type bits of what was found; fs.ModeIrregular when unknown
}

func (e *NotDirError) Error() string {
	if e.Mode == fs.ModeIrregular {
		return e.Path + " is not a directory"
	}
	return fmt.Sprintf("%s is not a directory (%s)", e.Path, Kind(e.Mode))
}

func (e *NotDirError) Unwrap() []error { return []error{ErrNotDir, syscall.ENOTDIR} }

// Kind names a file type for a message: "a FIFO", "a device", …
func Kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsRegular():
		return "a regular file"
	}
	return "not a regular file"
}

// Open opens path for reading without blocking and returns the file and
// its fstat. Anything but a regular file is closed again and refused with
// a *NotRegularError; a final symlink with follow == NoFollowLink is refused
// with an error wrapping ErrSymlink. Other errors are those of os.OpenFile
// (fs.ErrNotExist, fs.ErrPermission, …) as *fs.PathError.
func Open(path string, follow Follow) (*os.File, fs.FileInfo, error) {
	return OpenFile(path, os.O_RDONLY, 0, follow)
}

// ReadFile reads a whole regular file of at most max bytes (Open's rules).
// A larger file is refused with an error wrapping ErrTooLarge before any of
// it is read; a file that grows past max while it is read is refused too,
// so memory never exceeds max whatever the file does.
func ReadFile(path string, max int64, follow Follow) ([]byte, error) {
	f, fi, err := Open(path, follow)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > max {
		return nil, fmt.Errorf("%s: %w (%d bytes, limit %d)", path, ErrTooLarge, fi.Size(), max)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s: %w (grew past the limit of %d bytes while read)", path, ErrTooLarge, max)
	}
	return data, nil
}

// OpenFile opens path with flag (os.O_RDWR|os.O_CREATE, …) and perm as
// os.OpenFile does, but without blocking and with Open's check of what was
// opened: anything but a regular file is closed again and refused, and a
// final symlink with follow == NoFollowLink is refused (also when flag
// holds os.O_CREATE: the link is never followed to create its target). It
// returns the file and its fstat; unlike Create it never truncates, so a
// caller can look at what it opened first.
func OpenFile(path string, flag int, perm fs.FileMode, follow Follow) (*os.File, fs.FileInfo, error) {
	f, err := openNonBlocking(path, flag, perm, follow)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, &NotRegularError{Path: path, Mode: fi.Mode().Type()}
	}
	return f, fi, nil
}

// OpenDir opens the directory at path for listing (f.ReadDir) or for
// *at calls on its descriptor, without blocking: a FIFO, device or file
// put in its place (by a process racing a walk) is refused at once with a
// *NotDirError instead of holding the open until a writer comes. A final
// symlink with follow == NoFollowLink is refused with an error wrapping
// ErrSymlink. Other errors are those of os.OpenFile (fs.ErrNotExist, …).
func OpenDir(path string, follow Follow) (*os.File, error) {
	return openDir(path, follow)
}

// Create creates path for writing with mode perm. It never follows a
// final symlink and never opens a FIFO or device: with exclusive it
// refuses an existing path (fs.ErrExist); without, an existing regular
// file is truncated and anything else is refused (*NotRegularError, or
// ErrSymlink for a link).
func Create(path string, perm fs.FileMode, exclusive bool) (*os.File, error) {
	flag := os.O_WRONLY | os.O_CREATE
	if exclusive {
		flag |= os.O_EXCL
	}
	f, err := openNonBlocking(path, flag, perm, NoFollowLink)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &NotRegularError{Path: path, Mode: fi.Mode().Type()}
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
