package fsops

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// The tools act on the file a path leads to, not on its text: the engine
// resolves every path (ResolvePath on disk) before it takes the path's lock,
// reads, asks and writes. So two spellings of one file share one lock, the
// permission question names the real file, and the workspace and protected
// directory checks judge where the write will land. Writes then re-check
// that the resolved path still leads to itself (see LocalFiles.WriteFile),
// because a link can be swapped in between the check and the write.

// ResolvePath returns the location path leads to on disk: symlinks resolved
// in every component. A path that does not exist yet is resolved through its
// nearest existing ancestor (its parent may not exist either; the write then
// fails as usual). A final component that is a symlink to nowhere is refused:
// writing through it would create a file at a place nobody checked, and
// replacing it would lose the link.
func ResolvePath(path string) (string, error) {
	return resolveWith(os.Lstat, filepath.EvalSymlinks, path)
}

func resolveWith(lstat func(string) (fs.FileInfo, error), eval func(string) (string, error), path string) (string, error) {
	path = filepath.Clean(path)
	fi, err := lstat(path)
	switch {
	case err == nil:
		real, err := eval(path)
		if err == nil {
			return real, nil
		}
		if fi.Mode()&fs.ModeSymlink != 0 && errors.Is(err, fs.ErrNotExist) {
			return "", DanglingLinkError(path, err)
		}
		return "", resolveError(path, err)
	case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
		return "", resolveError(path, err)
	}
	// Missing: resolve the nearest existing ancestor and keep the rest.
	rest := filepath.Base(path)
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		real, err := eval(dir)
		switch {
		case err == nil:
			return filepath.Join(real, rest), nil
		case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
			return "", resolveError(dir, err)
		}
		if fi, err := lstat(dir); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return "", DanglingLinkError(dir, nil)
		}
		if filepath.Dir(dir) == dir {
			return path, nil
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}

// DanglingLinkError is the -32002 error for a symlink whose target does not
// exist.
func DanglingLinkError(path string, cause error) *Error {
	return &Error{Code: CodePermission, Message: "Permission denied: " + path,
		Hint: "The path is a symbolic link to a file that does not exist; write to the link's target path instead " +
			"(inside the workspace), or remove the link with the shell first.", Err: cause}
}

// ChangedPathError is the -32002 error for a path that no longer leads where
// it was checked: a symlink appeared in it between the check and the write.
func ChangedPathError(path string, cause error) *Error {
	return &Error{Code: CodePermission, Message: "Permission denied: " + path,
		Hint: "The path changed while the edit was prepared (a directory or the file was replaced by a symbolic " +
			"link); nothing was written. Do not swap files for links during an edit; read the file again and retry.",
		Err: cause}
}

func resolveError(path string, err error) error {
	return mapOSError(path, opStat, 0, err)
}

// linkLoopError is the -32600 error of a path that runs into a loop of
// symbolic links: the model's path leads to no file (ELOOP), which is its
// mistake to fix, not an internal error.
func linkLoopError(path string, cause error) *Error {
	return invalidRequest("Too many levels of symbolic links: "+path,
		"The path runs into a loop of symbolic links (or a chain of too many); it leads to no file. "+
			"Fix or remove the links with the shell, or use another path.")
}

// evalSymlinksLoop is the text of filepath.EvalSymlinks's own error when it
// follows more than 255 links: it counts them itself and returns a plain
// error, never ELOOP.
const evalSymlinksLoop = "EvalSymlinks: too many links"

// isLinkLoop reports whether err says a path runs into a loop of links.
func isLinkLoop(err error) bool {
	return isOSLinkLoop(err) || strings.HasSuffix(err.Error(), evalSymlinksLoop)
}
