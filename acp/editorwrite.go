package acp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"syscall"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/fsops"
	"github.com/codexacp/codexacp/internal/regularfile"
)

// An editor's fs/write_text_file is out of our hands once it is sent: the
// editor may write in place (through every hard link of the file) and may
// follow a symbolic link swapped in after our last check. So the write
// through the editor is judged on the file as it is right before the
// request (writeTarget: no link, how many names), and checked again after
// the editor's answer (landed): a path that no longer leads to that file,
// or to one holding what was written, is reported in the tool call.

// writeTarget is the file at a path right before an editor write: opened
// without following a final link and, but on Windows, kept open until the
// write is checked, so that its identity cannot pass to another file
// meanwhile; info is nil when nothing was there.
type writeTarget struct {
	path  string
	file  *os.File
	info  fs.FileInfo
	links int // names of the file (hard links); 0 when unknown or new
}

// openWriteTarget takes the file at path (resolved) as it is now. A final
// symlink is a path changed since it was resolved; a FIFO or device is not
// written.
func openWriteTarget(path string) (*writeTarget, error) {
	t := &writeTarget{path: path}
	f, fi, err := regularfile.Open(path, regularfile.NoFollowLink)
	switch {
	case err == nil:
		t.file, t.info, t.links = f, fi, linkCount(f, fi)
		if runtime.GOOS == "windows" {
			// An open handle would make an editor's save by rename fail.
			f.Close()
			t.file = nil
		}
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
	case errors.Is(err, regularfile.ErrSymlink):
		return nil, fsops.ChangedPathError(path, err)
	case errors.Is(err, regularfile.ErrNotRegular):
		if fi, lerr := os.Lstat(path); lerr == nil && fi.IsDir() {
			return nil, fsops.IsDirectoryError(path, err)
		}
		return nil, fsops.NotRegularError(path)
	case errors.Is(err, fs.ErrPermission):
		// Not readable (a write-only file) is not unwritable: known by
		// its lstat only.
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode().IsRegular() {
			t.info, t.links = fi, linkCount(nil, fi)
		}
	default:
		return nil, err
	}
	return t, nil
}

func (t *writeTarget) close() {
	if t.file != nil {
		t.file.Close()
	}
}

// landed checks, after the editor answered that it wrote data to t.path,
// that the write can only have landed there: the path still leads to
// itself (no link in it) and names either the very file that was there
// (held open, so its identity cannot have passed to another: whatever the
// editor did to it, in place or in its buffer only, happened inside), or a
// new file of one name holding data (an editor that saves by rename, or
// creates the file), as editors save text: line endings, BOM and trailing
// blanks aside (sameText). Anything else may be an editor that followed a
// link swapped in for a moment, and a file put back in its place: the
// error says so, naming the path and where it led.
func (t *writeTarget) landed(data []byte) error {
	if real, err := fsops.ResolvePath(t.path); err != nil || real != t.path {
		return writtenElsewhereError(t.path, leadsTo(t.path, real, err))
	}
	f, fi, err := regularfile.Open(t.path, regularfile.NoFollowLink)
	switch {
	case errors.Is(err, fs.ErrNotExist) && t.info == nil:
		return nil // a new file the editor keeps in its buffer
	case errors.Is(err, fs.ErrNotExist):
		return replacedError(t.path, "no longer exists")
	case errors.Is(err, regularfile.ErrSymlink):
		return writtenElsewhereError(t.path, leadsTo(t.path, "", nil))
	case errors.Is(err, fs.ErrPermission):
		return nil // cannot be looked at; the checks before the write stand
	case err != nil:
		return replacedError(t.path, "is no longer a regular file")
	}
	defer f.Close()
	if t.info != nil && os.SameFile(t.info, fi) {
		return nil
	}
	if !holdsText(f, data) {
		return differsError(t.path)
	}
	if n := linkCount(f, fi); n > 1 {
		// Written in place, but in another file, of other names.
		return replacedError(t.path, fmt.Sprintf("is now another file, of %d names (hard links)", n))
	}
	return nil
}

// holdsText reports whether r's content is data as an editor may have
// saved it (sameText). Normalising at most doubles data's size (LF to
// CRLF), plus a BOM and a final newline: anything longer is other content.
func holdsText(r io.Reader, data []byte) bool {
	limit := 2*int64(len(data)) + 8
	got, err := io.ReadAll(io.LimitReader(r, limit+1))
	return err == nil && int64(len(got)) <= limit && sameText(got, data)
}

// sameText reports whether a and b are the same text but for what editors
// change on save (Zed's and Emacs's settings can): line endings (CRLF or
// LF), a UTF-8 BOM, blanks at the end of lines, and newlines at the end.
// This is not a security check on its own (a file put back with data's
// very bytes passes any check of content): it keeps an editor's own
// normalising from being reported as a write that went elsewhere, while
// a file put back with other content still is.
func sameText(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	a, b = textBody(a), textBody(b)
	for len(a) > 0 || len(b) > 0 {
		la, ra, _ := bytes.Cut(a, []byte("\n"))
		lb, rb, _ := bytes.Cut(b, []byte("\n"))
		if !bytes.Equal(bytes.TrimRight(la, " \t\r"), bytes.TrimRight(lb, " \t\r")) {
			return false
		}
		a, b = ra, rb
	}
	return true
}

// textBody is text without its BOM and what ends its last line.
func textBody(text []byte) []byte {
	return bytes.TrimRight(bytes.TrimPrefix(text, []byte("\ufeff")), " \t\r\n")
}

// leadsTo is where path leads now: real when resolved, else the target of
// the link it is.
func leadsTo(path, real string, err error) string {
	if err == nil && real != "" {
		return real
	}
	if target, lerr := os.Readlink(path); lerr == nil {
		return target
	}
	return ""
}

// writtenElsewhereError is the tool error of an editor write whose path led
// elsewhere right after it.
func writtenElsewhereError(path, where string) *fsops.Error {
	if where == "" {
		return replacedError(path, "was replaced by a symbolic link")
	}
	return &fsops.Error{Code: fsops.CodePermission,
		Message: fmt.Sprintf("Path changed during the write: %s now leads to %s", path, where),
		Hint: fmt.Sprintf("A symbolic link replaced the file while the editor wrote it, and editors follow links: "+
			"the content may have been written to %s instead. Tell the user which file to check; do not retry.", where)}
}

// replacedError is the tool error of an editor write whose file was
// replaced during it, by what now stands there.
func replacedError(path, now string) *fsops.Error {
	return &fsops.Error{Code: fsops.CodePermission,
		Message: fmt.Sprintf("Path changed during the write: %s %s", path, now),
		Hint: "The file was replaced while the editor wrote it: the editor may have written through a symbolic link " +
			"that was there for a moment, to a file outside the workspace. Tell the user; read the file again before retrying."}
}

// differsError is the tool error of an editor write after which the path
// names a new file holding other content than was written. Either the file
// was replaced during the write (an editor following a link there for a
// moment wrote elsewhere), or the editor saved more than the write: an
// editor that writes into its open buffer and saves it (Neovim with
// codecompanion.nvim, docs/interop.md) saves the buffer's unsaved text with
// it, which the edit's diff does not show. Which one cannot be told from
// here; both need the user's eye.
func differsError(path string) *fsops.Error {
	return &fsops.Error{Code: fsops.CodePermission,
		Message: fmt.Sprintf("Path changed during the write: %s does not hold what was written, or the editor saved more than the write", path),
		Hint: "The file on disk now differs from what was written. Either the editor saved text of its own with it " +
			"(unsaved changes in its buffer, which the edit's diff does not show), or the file was replaced while the editor " +
			"wrote it (through a symbolic link there for a moment, the write may have gone to a file outside the workspace). " +
			"Tell the user to review the file; read it again before retrying."}
}

// Hard links: a file with more than one name changes under every name when
// an editor writes it in place, and the other names may lie anywhere. The
// local route replaces the file by rename instead (the other names keep
// the old content), so only the editor route asks.

// hardLinkError refuses a write through the editor to a file of links names.
func hardLinkError(path string, links int) *fsops.Error {
	return &fsops.Error{Code: fsops.CodePermission, Message: "Permission denied: " + path,
		Hint: fmt.Sprintf("The file has %d names (hard links), and the editor writes files in place: the change would "+
			"also appear under the other names, which may lie outside the workspace. Nothing was written. To change this "+
			"name only, replace it by a copy first with the shell (cp FILE FILE.tmp && mv FILE.tmp FILE), or ask the user "+
			"(ask mode asks about such files).", links)}
}

// hardLinkQuestion is what the permission question says about such a file.
func hardLinkQuestion(display string, links int) string {
	return fmt.Sprintf("%s has %d names (hard links). The editor writes files in place, so this change also appears "+
		"under the other names, which may lie outside the workspace.", display, links)
}

// callNote is what a file-tool call's permission question settled that its
// write checks again. It lives in the call's context (CallStarted) and is
// used by the one goroutine serving the call.
type callNote struct {
	// linked is the hard-linked file the user allowed writing in place.
	linked fs.FileInfo
}

type callNoteKey struct{}

func withCallNote(ctx context.Context) context.Context {
	return context.WithValue(ctx, callNoteKey{}, &callNote{})
}

func noteOf(ctx context.Context) *callNote {
	n, _ := ctx.Value(callNoteKey{}).(*callNote)
	return n
}

// editorLinks is the number of names of ch's file when the write goes
// through the editor, else 0 (a new file, or the local route).
func (r *toolReporter) editorLinks(ch *fsops.Change) (int, fs.FileInfo) {
	if ch.Created || r.editorRoute == nil || !r.editorRoute() {
		return 0, nil
	}
	t, err := openWriteTarget(ch.Path)
	if err != nil {
		return 0, nil // the write's own checks will say why
	}
	defer t.close()
	return t.links, t.info
}

// hardLinkAllowed is the check right before an editor write to a file of
// several names: full access writes anywhere anyway; ask mode only the
// file the user was asked about; other modes never.
func (s *session) hardLinkAllowed(ctx context.Context, t *writeTarget) error {
	if t.links <= 1 {
		return nil
	}
	switch s.toolMode() {
	case backend.ModeFullAccess:
		return nil
	case backend.ModeAsk:
		if n := noteOf(ctx); n != nil && n.linked != nil && os.SameFile(n.linked, t.info) {
			return nil
		}
		return denied(t.path, fmt.Sprintf("The file gained another name (it has %d hard links now) after the user was asked; "+
			"nothing was written. Read it again and retry: the user will be asked about the other names.", t.links), nil)
	}
	return hardLinkError(t.path, t.links)
}
