package fsops

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// LocalFiles is the Files port on the local disk, for editors that do not
// offer file access. Writes are atomic: the content goes to a temporary
// file in the same directory, is synced, and replaces the file by rename,
// so readers see the old or the new content, never a mix.
type LocalFiles struct {
	ops osOps
}

var _ Files = (*LocalFiles)(nil)

// NewLocalFiles returns the local disk adapter.
func NewLocalFiles() *LocalFiles { return &LocalFiles{ops: realOS} }

// osOps are the OS calls LocalFiles makes, replaceable so tests can
// inject errors that root (which tests run as) would never see.
type osOps struct {
	readFile     func(name string) ([]byte, error)
	stat         func(name string) (fs.FileInfo, error)
	lstat        func(name string) (fs.FileInfo, error)
	evalSymlinks func(name string) (string, error)
	createTemp   func(dir, pattern string) (tempFile, error)
	rename       func(from, to string) error
	remove       func(name string) error
	// writable checks write permission on an existing file: the atomic
	// rename needs only a writable directory, so without it a read-only
	// file would be replaced silently.
	writable func(name string) error
}

// tempFile is the part of *os.File a write uses.
type tempFile interface {
	Name() string
	Write(p []byte) (int, error)
	Sync() error
	Chmod(mode fs.FileMode) error
	Close() error
}

var realOS = osOps{
	readFile:     os.ReadFile,
	stat:         os.Stat,
	lstat:        os.Lstat,
	evalSymlinks: filepath.EvalSymlinks,
	createTemp:   func(dir, pattern string) (tempFile, error) { return os.CreateTemp(dir, pattern) },
	rename:       os.Rename,
	remove:       os.Remove,
	writable:     func(name string) error { return syscall.Access(name, 2 /* W_OK */) },
}

// newFileMode is the mode of files the adapter creates, whatever the umask.
const newFileMode fs.FileMode = 0o644

// ReadFile implements Files.
func (l *LocalFiles) ReadFile(ctx context.Context, path string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Only regular files are read: a FIFO would block, /dev/zero never ends,
	// and /dev/stdin is the editor's ACP stream.
	if fi, err := l.ops.stat(path); err == nil && !fi.IsDir() && !fi.Mode().IsRegular() {
		return nil, NotRegularError(path)
	}
	data, err := l.ops.readFile(path)
	if err != nil {
		return nil, mapOSError(path, opRead, 0, err)
	}
	return data, nil
}

// Stat implements Files. A path that does not exist (or has a file where a
// directory should be) is reported as missing, not as an error.
func (l *LocalFiles) Stat(ctx context.Context, path string) (FileInfo, error) {
	if err := ctx.Err(); err != nil {
		return FileInfo{}, err
	}
	fi, err := l.ops.stat(path)
	switch {
	case err == nil:
		return FileInfo{Exists: true, IsDir: fi.IsDir()}, nil
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return FileInfo{}, nil
	}
	return FileInfo{}, mapOSError(path, opStat, 0, err)
}

// WriteFile implements Files. A symlink is written through (the link
// stays); an existing file keeps its permission bits; a new one gets 0644.
func (l *LocalFiles) WriteFile(ctx context.Context, path string, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	target := path
	if fi, err := l.ops.lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		resolved, err := l.ops.evalSymlinks(path)
		if err != nil {
			// A dangling link: writing through it would create a file the
			// workspace check never saw; replacing it would lose the link.
			return &Error{Code: CodePermission, Message: "Permission denied: " + path,
				Hint: "The path is a symbolic link to a file that does not exist; write to the link's target path instead.", Err: err}
		}
		target = resolved
	}
	mode := newFileMode
	if fi, err := l.ops.stat(target); err == nil {
		if fi.IsDir() {
			return IsDirectoryError(path, nil)
		}
		if err := l.ops.writable(target); err != nil {
			return mapOSError(path, opWrite, len(data), err)
		}
		mode = fi.Mode().Perm()
	}

	dir := filepath.Dir(target)
	f, err := l.ops.createTemp(dir, "."+filepath.Base(target)+".codexacp-*")
	if err != nil {
		return mapOSError(path, opCreate, len(data), err)
	}
	if err := writeSynced(f, data, mode); err != nil {
		_ = l.ops.remove(f.Name())
		return mapOSError(path, opWrite, len(data), err)
	}
	if err := l.ops.rename(f.Name(), target); err != nil {
		_ = l.ops.remove(f.Name())
		return mapOSError(path, opWrite, len(data), err)
	}
	return nil
}

func writeSynced(f tempFile, data []byte, mode fs.FileMode) error {
	_, err := f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = f.Chmod(mode)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// osOp says what a failing OS call was doing, which decides what a missing
// path means.
type osOp int

const (
	opRead osOp = iota
	opStat
	opCreate // creating the temporary file in the target's directory
	opWrite
)

// mapOSError gives an OS error its tool code and the seed's message.
func mapOSError(path string, op osOp, size int, err error) error {
	switch {
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return DiskFullError(path, size, err)
	case errors.Is(err, syscall.EROFS):
		return ReadOnlyError(path, err)
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return PermissionError(path, err)
	case errors.Is(err, syscall.EISDIR):
		return IsDirectoryError(path, err)
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		if op == opRead || op == opStat {
			return NotFoundError(path, err)
		}
		return ParentNotFoundError(filepath.Dir(path), err)
	}
	return fmt.Errorf("%s: %w", path, err)
}
