package fsops

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/codexacp/codexacp/internal/regularfile"
)

// LocalFiles is the Files port on the local disk, for editors that do not
// offer file access. Writes are atomic: the content goes to a temporary
// file in the same directory, is synced, and replaces the file by rename,
// so readers see the old or the new content, never a mix.
//
// A write is made relative to the directory it lands in, opened through the
// workspace root that holds it (os.Root), and only after checking that this
// directory is the one the resolved path names: a symlink swapped into the
// path after the engine resolved and checked it cannot send the write
// anywhere else, least of all outside the workspace.
type LocalFiles struct {
	ops   osOps
	roots []string // resolved workspace roots (see Within)
}

var (
	_ Files        = (*LocalFiles)(nil)
	_ DirMaker     = (*LocalFiles)(nil)
	_ StreamOpener = (*LocalFiles)(nil)
)

// NewLocalFiles returns the local disk adapter.
func NewLocalFiles() *LocalFiles { return &LocalFiles{ops: realOS} }

// Within returns a copy of l whose writes inside one of roots open that
// root first (os.Root), so nothing they do can leave it. Writes elsewhere
// (allowed only in full-access mode) open their own directory.
func (l *LocalFiles) Within(roots ...string) *LocalFiles {
	c := &LocalFiles{ops: l.ops}
	for _, r := range roots {
		if real, err := resolveWith(l.ops.lstat, l.ops.evalSymlinks, r); err == nil {
			r = real
		}
		c.roots = append(c.roots, filepath.Clean(r))
	}
	return c
}

// osOps are the OS calls LocalFiles makes, replaceable so tests can
// inject errors that root (which tests run as) would never see.
type osOps struct {
	// open opens a file for its content: without blocking, without
	// following a final symlink, only a regular file (regularfile.Open).
	open         func(name string) (readFile, fs.FileInfo, error)
	stat         func(name string) (fs.FileInfo, error)
	lstat        func(name string) (fs.FileInfo, error)
	evalSymlinks func(name string) (string, error)
	openRoot     func(dir string) (dirHandle, error)
	// writable checks write permission on an existing file: the atomic
	// rename needs only a writable directory, so without it a read-only
	// file would be replaced silently.
	writable func(name string) error
}

// dirHandle is an open directory that names are resolved in (an os.Root).
type dirHandle interface {
	OpenRoot(name string) (dirHandle, error)
	Stat(name string) (fs.FileInfo, error)
	Lstat(name string) (fs.FileInfo, error)
	// OpenFile opens a file in the directory (the temporary file).
	OpenFile(name string, flag int, perm fs.FileMode) (tempFile, error)
	Rename(oldname, newname string) error
	Remove(name string) error
	// Mkdir creates a directory in the directory (create_parents).
	Mkdir(name string, perm fs.FileMode) error
	// Names lists the directory's entries.
	Names() ([]string, error)
	Close() error
}

// tempFile is the part of *os.File a write uses.
type tempFile interface {
	Write(p []byte) (int, error)
	Sync() error
	Chmod(mode fs.FileMode) error
	Close() error
}

// readFile is the part of *os.File a read uses.
type readFile interface {
	io.Reader
	io.Closer
}

var realOS = osOps{
	open: func(name string) (readFile, fs.FileInfo, error) {
		f, fi, err := regularfile.Open(name, regularfile.NoFollowLink)
		if err != nil {
			return nil, nil, err
		}
		return f, fi, nil
	},
	stat:         os.Stat,
	lstat:        os.Lstat,
	evalSymlinks: filepath.EvalSymlinks,
	openRoot: func(dir string) (dirHandle, error) {
		r, err := os.OpenRoot(dir)
		if err != nil {
			return nil, err
		}
		return osRoot{r}, nil
	},
	writable: writable,
}

// osRoot is the real dirHandle.
type osRoot struct{ *os.Root }

func (r osRoot) OpenRoot(name string) (dirHandle, error) {
	sub, err := r.Root.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	return osRoot{sub}, nil
}

func (r osRoot) OpenFile(name string, flag int, perm fs.FileMode) (tempFile, error) {
	f, err := r.Root.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (r osRoot) Names() ([]string, error) {
	f, err := r.Root.Open(".")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// newFileMode is the mode of files the adapter creates, whatever the umask.
const newFileMode fs.FileMode = 0o644

// newDirMode is the mode of directories the adapter creates (create_parents),
// less the umask: never more open than the files it writes in them.
const newDirMode fs.FileMode = 0o755

// ReadFile implements Files: the whole file, which edits need, of at most
// MaxEditBytes (a larger one is refused from its size before it is read,
// and one that grows past it while read is refused too).
func (l *LocalFiles) ReadFile(ctx context.Context, path string) ([]byte, error) {
	f, size, err := l.OpenStream(ctx, path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if size > MaxEditBytes {
		return nil, FileTooLargeError(path, size)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxEditBytes+1))
	if err != nil {
		return nil, mapOSError(path, opRead, 0, err)
	}
	if len(data) > MaxEditBytes {
		return nil, grewError(path)
	}
	return data, nil
}

// OpenStream implements StreamOpener. Only regular files are opened, and
// the open never blocks: a FIFO would block, /dev/zero never ends, and
// /dev/stdin is the editor's ACP stream. The type is checked on the opened
// descriptor, so a FIFO swapped in after any earlier check is refused too.
// path is resolved: a final symlink now is one swapped in since.
func (l *LocalFiles) OpenStream(ctx context.Context, path string) (io.ReadCloser, int64, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	f, fi, err := l.ops.open(path)
	var nre *regularfile.NotRegularError
	switch {
	case errors.As(err, &nre) && nre.Mode.IsDir():
		return nil, 0, IsDirectoryError(path, err)
	case errors.As(err, &nre):
		return nil, 0, NotRegularError(path)
	case errors.Is(err, regularfile.ErrSymlink):
		return nil, 0, ChangedPathError(path, err)
	case err != nil:
		return nil, 0, mapOSError(path, opRead, 0, err)
	}
	return f, fi.Size(), nil
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
	case errors.Is(err, fs.ErrNotExist), isNotDir(err):
		return FileInfo{}, nil
	}
	return FileInfo{}, mapOSError(path, opStat, 0, err)
}

// Resolve implements Files.
func (l *LocalFiles) Resolve(ctx context.Context, path string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return resolveWith(l.ops.lstat, l.ops.evalSymlinks, path)
}

// WriteFile implements Files. path is resolved (the engine writes to a
// symlink's target; the link stays). An existing file keeps its permission
// bits; a new one gets 0644. If the path no longer leads where it did when
// it was resolved, nothing is written.
func (l *LocalFiles) WriteFile(ctx context.Context, path string, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	path = filepath.Clean(path)
	name := filepath.Base(path)
	d, err := l.openDir(path)
	if err != nil {
		return err
	}
	defer d.Close()

	mode := newFileMode
	fi, err := d.Lstat(name)
	switch {
	case err == nil && fi.Mode()&fs.ModeSymlink != 0:
		// Swapped for a link since it was resolved: the rename would
		// replace the link, not write where it points; neither is wanted.
		return ChangedPathError(path, nil)
	case err == nil && fi.IsDir():
		return IsDirectoryError(path, nil)
	case err == nil && !fi.Mode().IsRegular():
		return NotRegularError(path)
	case err == nil:
		if err := l.ops.writable(path); err != nil {
			return mapOSError(path, opWrite, len(data), err)
		}
		mode = fi.Mode().Perm()
	case !errors.Is(err, fs.ErrNotExist):
		return mapOSError(path, opWrite, len(data), err)
	}

	removeDebris(d, name)
	tmp := tempName(name)
	f, err := d.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return mapOSError(path, opCreate, len(data), err)
	}
	if err := writeSynced(f, data, mode); err != nil {
		_ = d.Remove(tmp)
		return mapOSError(path, opWrite, len(data), err)
	}
	if err := d.Rename(tmp, name); err != nil {
		_ = d.Remove(tmp)
		return mapOSError(path, opWrite, len(data), err)
	}
	return nil
}

// MkdirAll implements DirMaker: it creates dir (resolved) and the missing
// directories above it, only inside one of the workspace roots given to
// Within, and through that root (os.Root): each component is created
// relative to the open directory above it, and one that exists must be a
// plain directory, not a symlink. So a link swapped in while the directories
// are made cannot lead the creation anywhere else, and nothing is ever
// created outside the roots. Without roots it creates nothing.
func (l *LocalFiles) MkdirAll(ctx context.Context, dir string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	dir = filepath.Clean(dir)
	root, rel := "", ""
	for _, r := range l.roots {
		if Within(r, dir) {
			root = r
			rel, _ = filepath.Rel(r, dir)
			break
		}
	}
	if root == "" {
		return dirOutsideRootsError(dir, l.roots)
	}
	d, err := l.ops.openRoot(root)
	if err != nil {
		return mapOSError(root, opStat, 0, err)
	}
	if rel == "." {
		return d.Close()
	}
	cur := root
	for name := range strings.SplitSeq(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, name)
		sub, err := l.mkdirIn(d, cur, name)
		d.Close()
		if err != nil {
			return err
		}
		d = sub
	}
	return d.Close()
}

// mkdirIn makes sure the directory name exists in d (at path) as a plain
// directory, and opens it.
func (l *LocalFiles) mkdirIn(d dirHandle, path, name string) (dirHandle, error) {
	fi, err := d.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		err = d.Mkdir(name, newDirMode)
		if err != nil && !errors.Is(err, fs.ErrExist) { // one made by someone else meanwhile is checked below
			return nil, mapOSError(path, opCreate, 0, err)
		}
		fi, err = d.Lstat(name)
	}
	switch {
	case err != nil:
		return nil, mapOSError(path, opStat, 0, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		// The path was resolved without links; one here was swapped in.
		return nil, ChangedPathError(path, fmt.Errorf("%s is now a symbolic link", path))
	case !fi.IsDir():
		pe := ParentNotFoundError(path, nil)
		pe.Hint = path + " is a file, not a directory; choose another path."
		return nil, pe
	}
	sub, err := d.OpenRoot(name) // through d: cannot leave the root
	if err != nil {
		return nil, ChangedPathError(path, err)
	}
	return sub, nil
}

// openDir opens the directory path is written in: relative to the workspace
// root holding it (so no link can lead the open outside that root), else
// directly. The directory opened must be the one at its path now, reached
// without links; otherwise the path changed since it was resolved.
func (l *LocalFiles) openDir(path string) (dirHandle, error) {
	dir := filepath.Dir(path)
	base, rel := dir, "."
	for _, r := range l.roots {
		if Within(r, dir) {
			base, _ = filepath.Rel(r, dir)
			base, rel = r, base
			break
		}
	}
	root, err := l.ops.openRoot(base)
	if err != nil {
		return nil, l.openDirError(path, err)
	}
	d := root
	if rel != "." {
		d, err = root.OpenRoot(rel)
		root.Close()
		if err != nil {
			return nil, l.openDirError(path, err)
		}
	}
	if err := l.sameDir(dir, d); err != nil {
		d.Close()
		return nil, ChangedPathError(path, err)
	}
	return d, nil
}

// sameDir checks that d is the directory at dir, and that dir has no
// symlink in it.
func (l *LocalFiles) sameDir(dir string, d dirHandle) error {
	if real, err := l.ops.evalSymlinks(dir); err != nil {
		return err
	} else if real != dir {
		return fmt.Errorf("%s now leads to %s", dir, real)
	}
	want, err := l.ops.stat(dir)
	if err != nil {
		return err
	}
	got, err := d.Stat(".")
	if err != nil {
		return err
	}
	if !os.SameFile(want, got) {
		return fmt.Errorf("%s was replaced while it was opened", dir)
	}
	return nil
}

// openDirError explains why the directory of path could not be opened: a
// link that appeared in it (os.Root refuses links that leave the root, and
// absolute ones), or an ordinary OS error.
func (l *LocalFiles) openDirError(path string, err error) error {
	dir := filepath.Dir(path)
	if real, rerr := l.ops.evalSymlinks(dir); rerr == nil && real != dir {
		return ChangedPathError(path, err)
	}
	if fi, lerr := l.ops.lstat(dir); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return ChangedPathError(path, err)
	}
	if fi, serr := l.ops.stat(dir); serr == nil && !fi.IsDir() {
		return ParentNotFoundError(dir, err)
	}
	return mapOSError(path, opCreate, 0, err)
}

// Within reports whether path is root or lies inside it, by their text
// (resolve both first to judge where they lead).
func Within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// Temporary files are named after the file and the writing process, so that
// one left behind by a process killed mid-write (megabytes, for a large
// file) is removed by the next write to that file.
const tempMarker = ".codexacp-"

func tempName(name string) string {
	var b [6]byte
	rand.Read(b[:]) // never fails
	return fmt.Sprintf(".%s%s%d-%s", name, tempMarker, os.Getpid(), hex.EncodeToString(b[:]))
}

// removeDebris removes temporary files for name whose writer has died.
func removeDebris(d dirHandle, name string) {
	names, err := d.Names()
	if err != nil {
		return
	}
	prefix := "." + name + tempMarker
	for _, n := range names {
		rest, ok := strings.CutPrefix(n, prefix)
		if !ok {
			continue
		}
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		_ = d.Remove(n)
	}
}

func writeSynced(f tempFile, data []byte, mode fs.FileMode) error {
	_, err := f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = setMode(f, mode)
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
	case isDiskFull(err):
		return DiskFullError(path, size, err)
	case isReadOnlyFS(err):
		return ReadOnlyError(path, err)
	case errors.Is(err, fs.ErrPermission): // EACCES, EPERM; ERROR_ACCESS_DENIED
		return PermissionError(path, err)
	case errors.Is(err, syscall.EISDIR):
		return IsDirectoryError(path, err)
	case errors.Is(err, fs.ErrNotExist), isNotDir(err):
		if op == opRead || op == opStat {
			return NotFoundError(path, err)
		}
		return ParentNotFoundError(filepath.Dir(path), err)
	case isLinkLoop(err):
		return linkLoopError(path, err)
	case isNameTooLong(err):
		return invalidRequest("File name too long: "+path,
			"A component of the path is longer than the file system allows (usually 255 bytes); choose a shorter name.")
	}
	return osError(path, err)
}

// osError names the path once: an *fs.PathError already carries it.
func osError(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s %s: %w", pe.Op, path, pe.Err)
	}
	return fmt.Errorf("%s: %w", path, err)
}
