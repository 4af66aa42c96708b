package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/fsops"
	"github.com/codexacp/codexacp/internal/regularfile"
)

// clientFS is the part of the ACP connection the editor adapter uses.
type clientFS interface {
	ReadTextFile(ctx context.Context, req acpsdk.ReadTextFileRequest) (acpsdk.ReadTextFileResponse, error)
	WriteTextFile(ctx context.Context, req acpsdk.WriteTextFileRequest) (acpsdk.WriteTextFileResponse, error)
}

// editorFiles is the fsops.Files adapter that reads and writes through the
// editor (fs/read_text_file, fs/write_text_file), so codex sees unsaved
// buffers and edits land in the editor. A method the editor did not
// advertise, or answers with "method not found", goes to the local disk
// instead; any other editor failure is returned, never retried on disk.
type editorFiles struct {
	client    clientFS
	sessionID acpsdk.SessionId
	local     fsops.Files
	// checkWrite is asked immediately before every write, on either route,
	// with the resolved path (session.checkWrite): the last word on where a
	// write may land. Nil: no check (tests of the adapter alone).
	checkWrite func(path string) error
	// hardLinks decides an editor write to the file about to be written
	// (session.hardLinkAllowed): one of several names is written in place
	// under all of them. Nil: no check.
	hardLinks func(ctx context.Context, t *writeTarget) error
	// timeout bounds one editor fs request: an editor that never answers
	// must not hold a file (and its lock) forever.
	timeout time.Duration

	readLocal  atomic.Bool // the editor cannot read: use the local disk
	writeLocal atomic.Bool // the editor cannot write: use the local disk
}

// editorFSTimeout is how long an editor fs request may take. Reads and
// writes of buffers are instant in a live editor; a minute is generous.
const editorFSTimeout = time.Minute

// maxEditorFileBytes is the largest file read or written whole through the
// editor. ACP messages are single lines and clients (and the SDK) refuse
// lines over 10 MiB; JSON escaping can double text (newlines, tabs), so 4 MiB
// of file stays under it. Larger files are read by line ranges.
const maxEditorFileBytes = 4 << 20

// maxEditorMessageBytes is the largest fs/write_text_file message sent (the
// line limit, less room for the envelope).
const maxEditorMessageBytes = 10<<20 - 64<<10

func newEditorFiles(client clientFS, sessionID string, caps acpsdk.FileSystemCapabilities, local fsops.Files) *editorFiles {
	f := &editorFiles{client: client, sessionID: acpsdk.SessionId(sessionID), local: local, timeout: editorFSTimeout}
	f.readLocal.Store(!caps.ReadTextFile)
	f.writeLocal.Store(!caps.WriteTextFile)
	return f
}

// call bounds one editor request.
func (f *editorFiles) call(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, f.timeout, errEditorTimeout)
}

var errEditorTimeout = errors.New("the editor did not answer in time")

// ReadFile implements fsops.Files.
func (f *editorFiles) ReadFile(ctx context.Context, path string) ([]byte, error) {
	if f.readLocal.Load() {
		return f.local.ReadFile(ctx, path)
	}
	// The editor has no notion of directories or binary files; the disk does.
	if err := checkReadableOnDisk(path); err != nil {
		return nil, err
	}
	callCtx, cancel := f.call(ctx)
	defer cancel()
	resp, err := f.client.ReadTextFile(callCtx, acpsdk.ReadTextFileRequest{SessionId: f.sessionID, Path: path})
	if isMethodNotFound(err) {
		f.readLocal.Store(true)
		return f.local.ReadFile(ctx, path)
	}
	if err != nil {
		return nil, editorError("read", path, callErr(callCtx, err))
	}
	return []byte(resp.Content), nil
}

// WriteFile implements fsops.Files. Through the editor, the last checks
// come last, right before the request (an editor that follows links is
// only as safe as the time between them is short), and the path is checked
// again once the editor answers (writeTarget.landed).
func (f *editorFiles) WriteFile(ctx context.Context, path string, data []byte) error {
	if f.writeLocal.Load() {
		if err := f.lastCheck(path); err != nil {
			return err
		}
		return f.local.WriteFile(ctx, path, data)
	}
	if err := checkEditorWriteSize(path, data); err != nil {
		return err
	}
	target, err := openWriteTarget(path)
	if err != nil {
		return err
	}
	defer target.close()
	if f.hardLinks != nil {
		if err := f.hardLinks(ctx, target); err != nil {
			return err
		}
	}
	if err := f.lastCheck(path); err != nil {
		return err
	}
	callCtx, cancel := f.call(ctx)
	defer cancel()
	_, err = f.client.WriteTextFile(callCtx, acpsdk.WriteTextFileRequest{SessionId: f.sessionID, Path: path, Content: string(data)})
	if isMethodNotFound(err) {
		// Method not found means nothing was written: the disk is the
		// right place, not a fallback after a failure.
		f.writeLocal.Store(true)
		return f.local.WriteFile(ctx, path, data)
	}
	if err != nil {
		return editorError("write", path, callErr(callCtx, err))
	}
	return target.landed(data)
}

// lastCheck is checkWrite, when there is one.
func (f *editorFiles) lastCheck(path string) error {
	if f.checkWrite == nil {
		return nil
	}
	return f.checkWrite(path)
}

// MkdirAll implements fsops.DirMaker (write_text_file's create_parents):
// editors have no ACP method for directories, so the local port makes them,
// only inside the workspace roots, after the same last check as a write.
func (f *editorFiles) MkdirAll(ctx context.Context, dir string) error {
	if err := f.lastCheck(dir); err != nil {
		return err
	}
	dm, ok := f.local.(fsops.DirMaker)
	if !ok {
		return fsops.CannotCreateDirsError(dir)
	}
	return dm.MkdirAll(ctx, dir)
}

// OpenStream implements fsops.StreamOpener: a file read through the editor
// is read whole (its buffer may hold unsaved changes); one read from the
// disk (the editor cannot read files) is streamed.
func (f *editorFiles) OpenStream(ctx context.Context, path string) (io.ReadCloser, int64, error) {
	if f.readLocal.Load() {
		return f.OpenStored(ctx, path)
	}
	return nil, 0, fmt.Errorf("%s: %w", path, fsops.ErrNotStreamed)
}

// OpenStored implements fsops.PartReader: the file on disk, streamed, so a
// file too large for the editor is never read whole.
func (f *editorFiles) OpenStored(ctx context.Context, path string) (io.ReadCloser, int64, error) {
	if so, ok := f.local.(fsops.StreamOpener); ok {
		return so.OpenStream(ctx, path)
	}
	data, err := f.local.ReadFile(ctx, path) // a port that reads only whole files bounds them itself
	if err != nil {
		return nil, 0, err
	}
	return io.NopCloser(bytes.NewReader(data)), int64(len(data)), nil
}

// ReadLines implements fsops.PartReader: the lines from the editor
// (fs/read_text_file with line and limit).
func (f *editorFiles) ReadLines(ctx context.Context, path string, start, count int) ([]byte, error) {
	callCtx, cancel := f.call(ctx)
	defer cancel()
	resp, err := f.client.ReadTextFile(callCtx, acpsdk.ReadTextFileRequest{SessionId: f.sessionID, Path: path,
		Line: acpsdk.Ptr(start), Limit: acpsdk.Ptr(count)})
	if err != nil {
		return nil, editorError("read", path, callErr(callCtx, err))
	}
	return []byte(resp.Content), nil
}

// callErr names a timed-out editor request as such.
func callErr(ctx context.Context, err error) error {
	if context.Cause(ctx) == errEditorTimeout {
		return fmt.Errorf("%w: %w", errEditorTimeout, err)
	}
	return err
}

// checkEditorWriteSize refuses content whose fs/write_text_file message
// would be too long a line for the editor (encoded as the SDK encodes it).
func checkEditorWriteSize(path string, data []byte) error {
	if len(data) <= maxEditorMessageBytes/6 { // no text escapes to more than 6 bytes a byte
		return nil
	}
	enc, err := json.Marshal(string(data))
	if err != nil || len(enc) > maxEditorMessageBytes {
		return tooLargeError(path, len(data))
	}
	return nil
}

func tooLargeError(path string, size int) *fsops.Error {
	return &fsops.Error{Code: fsops.CodeTooLarge,
		Message: fmt.Sprintf("File too large to edit through the editor: %s (%d bytes)", path, size),
		Hint: fmt.Sprintf("Files over %d MiB cannot be changed through the editor. Read it in parts with read_text_file "+
			"(line and limit); change it with the shell if the user agrees.", maxEditorFileBytes>>20)}
}

// Resolve implements fsops.Files: paths are resolved on disk, where the
// editor's files live (a buffer not saved yet is judged by its directory).
func (f *editorFiles) Resolve(ctx context.Context, path string) (string, error) {
	return f.local.Resolve(ctx, path)
}

// Stat implements fsops.Files. The disk answers first; a path missing on
// disk may still be an unsaved editor buffer.
func (f *editorFiles) Stat(ctx context.Context, path string) (fsops.FileInfo, error) {
	info, err := f.local.Stat(ctx, path)
	if err != nil || info.Exists || f.readLocal.Load() {
		return info, err
	}
	callCtx, cancel := f.call(ctx)
	defer cancel()
	if _, err := f.client.ReadTextFile(callCtx, acpsdk.ReadTextFileRequest{SessionId: f.sessionID, Path: path, Limit: acpsdk.Ptr(1)}); err == nil {
		return fsops.FileInfo{Exists: true}, nil
	}
	return info, nil
}

// checkReadableOnDisk catches what an editor cannot say precisely: a
// directory, a device, FIFO or socket (refused from the fstat of a
// non-blocking open: a FIFO never blocks it, even one swapped in for the
// file, and /dev/stdin, our own ACP input, is never read), a file too large
// for the editor's messages, or a binary file (which editors answer with
// lossy text). A path missing on disk may still be an editor buffer. path
// is resolved: a final symlink now is one swapped in since.
func checkReadableOnDisk(path string) error {
	fh, fi, err := regularfile.Open(path, regularfile.NoFollowLink)
	var nre *regularfile.NotRegularError
	switch {
	case errors.As(err, &nre) && nre.Mode.IsDir():
		return fsops.IsDirectoryError(path, nil)
	case errors.As(err, &nre):
		return fsops.NotRegularError(path)
	case errors.Is(err, regularfile.ErrSymlink):
		return fsops.ChangedPathError(path, err)
	case err != nil:
		return nil // missing on disk (an unsaved buffer?), or unreadable: the editor answers
	}
	defer fh.Close()
	if fi.Size() > maxEditorFileBytes {
		return tooLargeError(path, int(fi.Size()))
	}
	head := make([]byte, 8192)
	n, _ := io.ReadFull(fh, head)
	if bytes.IndexByte(head[:n], 0) >= 0 {
		return fsops.BinaryError(path)
	}
	return nil
}

func isMethodNotFound(err error) bool {
	var re *acpsdk.RequestError
	return errors.As(err, &re) && re.Code == codeMethodNotFound
}

// maxEditorWords bounds the editor's own words passed on to the model.
const maxEditorWords = 2 << 10

// editorWords is an editor error as text: its message and its data (as
// JSON), cut to maxEditorWords.
func editorWords(err error) string {
	words := err.Error()
	var re *acpsdk.RequestError
	if errors.As(err, &re) {
		words = re.Message
		if re.Data != nil {
			data, jerr := json.Marshal(re.Data)
			if jerr != nil {
				data = []byte(fmt.Sprint(re.Data))
			}
			words += ": " + string(data)
		}
		if errors.Is(err, errEditorTimeout) {
			words = errEditorTimeout.Error() + ": " + words
		}
	}
	return clip(words, maxEditorWords)
}

// editorFault is what an editor's fs error means to the model.
type editorFault int

const (
	faultOther editorFault = iota
	faultNotFound
	faultDenied
	faultReadOnly
	faultIsDirectory
	faultDiskFull
)

// errnoFaults maps POSIX error names, as Node sets them in an error's code
// (and writes them at the head of its message), to their meaning.
var errnoFaults = map[string]editorFault{
	"ENOENT": faultNotFound, "ENOTDIR": faultNotFound,
	"EACCES": faultDenied, "EPERM": faultDenied,
	"EROFS":  faultReadOnly,
	"EISDIR": faultIsDirectory,
	"ENOSPC": faultDiskFull, "EDQUOT": faultDiskFull,
}

// strerrorFaults are the C library's fixed texts for those errors, which an
// io error's message carries (Rust's "No such file or directory (os error
// 2)", Go's "open x: permission denied"), lower-cased; also acpx's own
// refusal, "Permission denied for fs/write_text_file".
var strerrorFaults = []struct {
	text  string
	fault editorFault
}{
	{"no such file or directory", faultNotFound},
	{"not a directory", faultNotFound},
	{"permission denied", faultDenied},
	{"operation not permitted", faultDenied},
	{"read-only file system", faultReadOnly},
	{"is a directory", faultIsDirectory},
	{"no space left on device", faultDiskFull},
	{"disk quota exceeded", faultDiskFull},
}

// classifyEditorError tells what an editor's fs error means: by its code
// first (ACP's -32002 Resource not found is how clients answer a missing
// file), then by structured data (an errno name in data's "code", as a Node
// error serialised whole has it), and only as a last resort by its text,
// for clients that send nothing else: the Node SDK that acpx uses wraps any
// thrown error as -32603 with data {"details": message}, so an errno name or
// a strerror text in the words is all there is.
func classifyEditorError(err error, words string) editorFault {
	var re *acpsdk.RequestError
	if errors.As(err, &re) {
		if re.Code == codeResourceNotFound {
			return faultNotFound
		}
		if data, ok := re.Data.(map[string]any); ok {
			if name, ok := data["code"].(string); ok {
				if f, ok := errnoFaults[name]; ok {
					return f
				}
			}
		}
	}
	for _, field := range strings.FieldsFunc(words, func(r rune) bool { return r < 'A' || r > 'Z' }) {
		if f, ok := errnoFaults[field]; ok {
			return f
		}
	}
	lower := strings.ToLower(words)
	for _, s := range strerrorFaults {
		if strings.Contains(lower, s.text) {
			return s.fault
		}
	}
	return faultOther
}

// editorError maps an editor's fs error to a tool error by meaning
// (classifyEditorError), keeping the editor's words. ACP's -32002 for a
// missing file collides with our -32002 Permission denied, so a missing
// file becomes -32001. Only an error that says access was refused is
// presented as a refusal; others may pass, and say so.
func editorError(op, path string, err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	if errors.Is(err, errEditorTimeout) || errors.Is(err, context.DeadlineExceeded) {
		return &fsops.Error{Code: fsops.CodeInternal, Message: fmt.Sprintf("Editor did not answer: %s %s", op, path),
			Hint: "The editor did not answer in time; nothing was changed by this call. Retry once; tell the user if it happens again.", Err: err}
	}
	words := editorWords(err)
	editor := fmt.Sprintf(" (editor: %s)", words)
	switch classifyEditorError(err, words) {
	case faultNotFound:
		if op == "write" {
			return &fsops.Error{Code: fsops.CodeNotFound, Message: "Parent directory not found: " + filepath.Dir(path) + editor,
				Hint: "Call write_text_file again with create_parents: true to create the missing directories (inside the workspace), or write to an existing directory.", Err: err}
		}
		return &fsops.Error{Code: fsops.CodeNotFound, Message: "File not found: " + path + editor,
			Hint: "Check the path (absolute, existing file); create new files with write_text_file.", Err: err}
	case faultDenied:
		return &fsops.Error{Code: fsops.CodePermission, Message: "Permission denied: " + path + editor,
			Hint: "The editor refused access to this file; do not retry the same path.", Err: err}
	case faultReadOnly:
		return &fsops.Error{Code: fsops.CodePermission, Message: "Read-only filesystem: " + path + editor,
			Hint: "This file cannot be written.", Err: err}
	case faultIsDirectory:
		return &fsops.Error{Code: fsops.CodeIsDirectory, Message: path + " is a directory" + editor,
			Hint: "Pass the path of a file.", Err: err}
	case faultDiskFull:
		return &fsops.Error{Code: fsops.CodeDiskFull, Message: "Disk full: cannot write to " + path + editor,
			Hint: "Free space first; nothing was written.", Err: err}
	}
	return &fsops.Error{Code: fsops.CodeInternal, Message: fmt.Sprintf("Editor failed to %s %s: %s", op, path, words),
		Hint: "The editor reported an error; nothing was changed by this call. It may pass: retry once, " +
			"and tell the user if it persists.", Err: err}
}
