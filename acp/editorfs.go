package acp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/fsops"
)

// clientFS is the part of the ACP connection the editor adapter uses.
type clientFS interface {
	ReadTextFile(ctx context.Context, req sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error)
	WriteTextFile(ctx context.Context, req sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error)
}

// editorFiles is the fsops.Files adapter that reads and writes through the
// editor (fs/read_text_file, fs/write_text_file), so codex sees unsaved
// buffers and edits land in the editor. A method the editor did not
// advertise, or answers with "method not found", goes to the local disk
// instead; any other editor failure is returned, never retried on disk.
type editorFiles struct {
	client    clientFS
	sessionID sdk.SessionId
	local     fsops.Files

	readLocal  atomic.Bool // the editor cannot read: use the local disk
	writeLocal atomic.Bool // the editor cannot write: use the local disk
}

func newEditorFiles(client clientFS, sessionID string, caps sdk.FileSystemCapabilities, local fsops.Files) *editorFiles {
	f := &editorFiles{client: client, sessionID: sdk.SessionId(sessionID), local: local}
	f.readLocal.Store(!caps.ReadTextFile)
	f.writeLocal.Store(!caps.WriteTextFile)
	return f
}

// ReadFile implements fsops.Files.
func (f *editorFiles) ReadFile(ctx context.Context, path string) ([]byte, error) {
	if f.readLocal.Load() {
		return f.local.ReadFile(ctx, path)
	}
	// The editor has no notion of directories or binary files; the disk does.
	if err := checkReadableOnDisk(path); err != nil {
		return nil, err
	}
	resp, err := f.client.ReadTextFile(ctx, sdk.ReadTextFileRequest{SessionId: f.sessionID, Path: path})
	if isMethodNotFound(err) {
		f.readLocal.Store(true)
		return f.local.ReadFile(ctx, path)
	}
	if err != nil {
		return nil, editorError("read", path, err)
	}
	return []byte(resp.Content), nil
}

// WriteFile implements fsops.Files.
func (f *editorFiles) WriteFile(ctx context.Context, path string, data []byte) error {
	if f.writeLocal.Load() {
		return f.local.WriteFile(ctx, path, data)
	}
	_, err := f.client.WriteTextFile(ctx, sdk.WriteTextFileRequest{SessionId: f.sessionID, Path: path, Content: string(data)})
	if isMethodNotFound(err) {
		// Method not found means nothing was written: the disk is the
		// right place, not a fallback after a failure.
		f.writeLocal.Store(true)
		return f.local.WriteFile(ctx, path, data)
	}
	if err != nil {
		return editorError("write", path, err)
	}
	return nil
}

// Stat implements fsops.Files. The disk answers first; a path missing on
// disk may still be an unsaved editor buffer.
func (f *editorFiles) Stat(ctx context.Context, path string) (fsops.FileInfo, error) {
	info, err := f.local.Stat(ctx, path)
	if err != nil || info.Exists || f.readLocal.Load() {
		return info, err
	}
	if _, err := f.client.ReadTextFile(ctx, sdk.ReadTextFileRequest{SessionId: f.sessionID, Path: path, Limit: sdk.Ptr(1)}); err == nil {
		return fsops.FileInfo{Exists: true}, nil
	}
	return info, nil
}

// Resolve implements fsops.Files: paths are resolved on disk, where the
// editor's files live (a buffer not saved yet is judged by its directory).
func (f *editorFiles) Resolve(ctx context.Context, path string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return fsops.ResolvePath(path)
}

// checkReadableOnDisk catches what an editor cannot say precisely: a
// directory, a device, FIFO or socket (never opened: a FIFO blocks, and
// /dev/stdin is our own ACP input), or a binary file (which editors answer
// with lossy text). A path missing on disk may still be an editor buffer.
func checkReadableOnDisk(path string) error {
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return nil
	case fi.IsDir():
		return fsops.IsDirectoryError(path, nil)
	case !fi.Mode().IsRegular():
		return fsops.NotRegularError(path)
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer fh.Close()
	head := make([]byte, 8192)
	n, _ := io.ReadFull(fh, head)
	if bytes.IndexByte(head[:n], 0) >= 0 {
		return fsops.BinaryError(path)
	}
	return nil
}

func isMethodNotFound(err error) bool {
	var re *sdk.RequestError
	return errors.As(err, &re) && re.Code == -32601
}

// editorError maps an editor's fs error to a tool error by meaning, keeping
// the editor's words. ACP clients answer a missing file with -32002 "Resource
// not found" (which collides with our -32002 Permission denied); some answer
// -32603 with an ENOENT detail.
func editorError(op, path string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	words := err.Error()
	var re *sdk.RequestError
	code := 0
	if errors.As(err, &re) {
		code = re.Code
		words = re.Message
		if re.Data != nil {
			words = fmt.Sprintf("%s: %v", re.Message, re.Data)
		}
	}
	lower := strings.ToLower(words)
	has := func(subs ...string) bool {
		for _, s := range subs {
			if strings.Contains(lower, s) {
				return true
			}
		}
		return false
	}
	editor := fmt.Sprintf(" (editor: %s)", words)
	switch {
	case code == -32002 || has("not found", "enoent", "no such file", "does not exist"):
		if op == "write" {
			return &fsops.Error{Code: fsops.CodeNotFound, Message: "Parent directory not found: " + filepath.Dir(path) + editor,
				Hint: "Create the directory first, or write to an existing directory.", Err: err}
		}
		return &fsops.Error{Code: fsops.CodeNotFound, Message: "File not found: " + path + editor,
			Hint: "Check the path (absolute, existing file); create new files with write_text_file.", Err: err}
	case has("permission denied", "eacces", "eperm", "not permitted"):
		return &fsops.Error{Code: fsops.CodePermission, Message: "Permission denied: " + path + editor,
			Hint: "The editor refused access to this file; do not retry the same path.", Err: err}
	case has("read-only", "erofs"):
		return &fsops.Error{Code: fsops.CodePermission, Message: "Read-only filesystem: " + path + editor,
			Hint: "This file cannot be written.", Err: err}
	case has("is a directory", "eisdir"):
		return &fsops.Error{Code: fsops.CodeIsDirectory, Message: path + " is a directory" + editor,
			Hint: "Pass the path of a file.", Err: err}
	case has("no space", "enospc", "disk full"):
		return &fsops.Error{Code: fsops.CodeDiskFull, Message: "Disk full: cannot write to " + path + editor,
			Hint: "Free space first; nothing was written.", Err: err}
	}
	return &fsops.Error{Code: -32603, Message: fmt.Sprintf("Editor failed to %s %s: %s", op, path, words),
		Hint: "The editor reported an error; nothing was changed by this call. Tell the user if it persists.", Err: err}
}
