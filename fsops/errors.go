package fsops

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// CodeInternal is the JSON-RPC "internal error" code, used for failures
// that are none of the tool codes (an adapter's unexpected error, a
// cancelled call).
const CodeInternal = -32603

// AsError returns err as a tool *Error: an *Error (also when wrapped) as it
// is, a cancelled or timed-out context and unknown errors as CodeInternal
// with a message the model can read. It returns nil for nil.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var te *Error
	switch {
	case errors.As(err, &te):
		return te
	case errors.Is(err, context.Canceled):
		return &Error{Code: CodeInternal, Message: "Operation cancelled",
			Hint: "The call was cancelled before it finished; nothing was written.", Err: err}
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Code: CodeInternal, Message: "Operation timed out",
			Hint: "The call ran out of time; check the file with read_text_file before retrying.", Err: err}
	case errors.Is(err, fs.ErrNotExist):
		return &Error{Code: CodeNotFound, Message: "File not found: " + err.Error(), Err: err}
	case errors.Is(err, fs.ErrPermission):
		return &Error{Code: CodePermission, Message: "Permission denied: " + err.Error(), Err: err}
	}
	return &Error{Code: CodeInternal, Message: "Internal error: " + err.Error(),
		Hint: "This is not a problem with the arguments; check the file with read_text_file before retrying.", Err: err}
}

// NotFoundError is the -32001 "File not found: {path}" error.
func NotFoundError(path string, cause error) *Error {
	return &Error{Code: CodeNotFound, Message: "File not found: " + path,
		Hint: "Check the path (list the directory with the shell), or create the file with write_text_file.", Err: cause}
}

// ParentNotFoundError is the -32001 "Parent directory not found: {parent}" error.
func ParentNotFoundError(parent string, cause error) *Error {
	return &Error{Code: CodeNotFound, Message: "Parent directory not found: " + parent,
		Hint: parent + " does not exist. To create it with the file, call write_text_file again with create_parents: true " +
			"(directories are created inside the workspace only); otherwise fix the path.", Err: cause}
}

// CannotCreateDirsError is the -32001 error of write_text_file with
// create_parents through a port that cannot create directories (no
// DirMaker): nothing was asked or written.
func CannotCreateDirsError(parent string) *Error {
	return &Error{Code: CodeNotFound, Message: "Parent directory not found: " + parent,
		Hint: "This session cannot create directories (its file access offers no way to); nothing was written. " +
			"Ask the user to create " + parent + ", or write to an existing directory."}
}

// dirOutsideRootsError is the -32002 error for a directory create_parents
// would have to create outside every workspace root.
func dirOutsideRootsError(dir string, roots []string) *Error {
	where := "no workspace directory is known"
	if len(roots) > 0 {
		where = "the workspace is " + strings.Join(roots, ", ")
	}
	return &Error{Code: CodePermission, Message: "Permission denied: " + dir,
		Hint: "create_parents creates directories only inside the workspace, and " + where + "; nothing was written. " +
			"Write to a path inside the workspace, or ask the user to create the directory."}
}

// PermissionError is the -32002 "Permission denied: {path}" error.
func PermissionError(path string, cause error) *Error {
	return &Error{Code: CodePermission, Message: "Permission denied: " + path,
		Hint: "The file cannot be changed here; do not retry the same write. Ask the user or choose another path.", Err: cause}
}

// ReadOnlyError is the -32002 "Read-only filesystem: {path}" error.
func ReadOnlyError(path string, cause error) *Error {
	return &Error{Code: CodePermission, Message: "Read-only filesystem: " + path,
		Hint: "The file system holding this path is mounted read-only; writes there cannot succeed.", Err: cause}
}

// IsDirectoryError is the -32003 "{path} is a directory" error.
func IsDirectoryError(path string, cause error) *Error {
	return &Error{Code: CodeIsDirectory, Message: path + " is a directory",
		Hint: "Give the path of a file inside it.", Err: cause}
}

// NotRegularError is the -32006 "{path} is not a regular file" error, for
// devices, FIFOs and sockets, which the tools never open.
func NotRegularError(path string) *Error {
	return &Error{Code: CodeNotRegular, Message: path + " is not a regular file",
		Hint: "It is a device, FIFO or socket; the file tools only read and write regular text files."}
}

// BinaryError is the -32004 "Cannot edit binary file: {path}" error.
func BinaryError(path string) *Error {
	return &Error{Code: CodeBinary, Message: "Cannot edit binary file: " + path,
		Hint: "The file holds NUL bytes or is not valid UTF-8; these tools only handle UTF-8 text. Inspect it with the shell instead."}
}

// DiskFullError is the -32005 "Disk full: cannot write {bytes} bytes to {path}" error.
func DiskFullError(path string, size int, cause error) *Error {
	return &Error{Code: CodeDiskFull, Message: fmt.Sprintf("Disk full: cannot write %d bytes to %s", size, path),
		Hint: "The device has no space left; nothing was changed. Tell the user.", Err: cause}
}

// invalidRequest is a CodeInvalidRequest error: arguments the tool rejects.
func invalidRequest(msg, hint string) *Error {
	return &Error{Code: CodeInvalidRequest, Message: msg, Hint: hint}
}

func relativePathError(path string) *Error {
	return invalidRequest("Path must be absolute: "+path,
		"Pass an absolute path: join "+path+" with the session's working directory.")
}

// staleError is the -32013 error for an expected hash that does not match.
func staleError(path, expected string, current []byte, exists bool) *Error {
	if !exists {
		return &Error{Code: CodeStale,
			Message: fmt.Sprintf("Stale content: %s does not exist, but expected hash %s was given", path, expected),
			Hint:    "The file was deleted or never existed. Check the path; to create it, call write_text_file without expected_hash."}
	}
	return &Error{Code: CodeStale,
		Message: fmt.Sprintf("Stale content: %s changed since it was read (expected hash %s, current hash %s, now %d lines)",
			path, expected, HashOf(current), CountLines(current)),
		Hint: "Re-read the file with read_text_file to get its current content and hash, check that your change still fits it, then retry with the new hash."}
}

// MaxPathBytes is the longest path the tools accept (Linux's PATH_MAX).
const MaxPathBytes = 4096

// checkPath validates a tool's path argument and returns it cleaned.
func checkPath(path string) (string, error) {
	switch {
	case path == "":
		return "", invalidRequest("Path must be absolute: (empty)", "Pass the absolute path of the file.")
	case strings.IndexByte(path, 0) >= 0:
		return "", invalidRequest(fmt.Sprintf("Path contains a NUL character: %q", path),
			"File names cannot contain NUL; pass the path as plain text.")
	case len(path) > MaxPathBytes:
		return "", invalidRequest(fmt.Sprintf("Path too long: %d bytes (at most %d)", len(path), MaxPathBytes),
			"Pass the absolute path of an existing file or of one to create; no file system accepts a path this long.")
	case !filepath.IsAbs(path):
		return "", relativePathError(path)
	case namesDirectory(path):
		return "", invalidRequest("Path names a directory: "+path,
			`A path that ends in "/" (or "/.", "/..") names a directory (POSIX), and these tools read and write files. `+
				"Pass the file's path without the trailing slash.")
	}
	return filepath.Clean(path), nil
}

// namesDirectory reports whether path's last component is empty (a
// trailing separator), "." or "..": such a path can only name a directory,
// whatever its text would clean to ("new.txt/" is not new.txt).
func namesDirectory(path string) bool {
	i := len(path)
	for i > 0 && !os.IsPathSeparator(path[i-1]) {
		i--
	}
	last := path[i:]
	return last == "" || last == "." || last == ".."
}
