package record

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"unicode/utf8"

	"github.com/codexacp/codexacp/fsops"
	"github.com/codexacp/codexacp/internal/regularfile"
	"github.com/codexacp/codexacp/mcp"
)

// maxFileBytes bounds the content of one recorded file; larger files are
// recorded with their size only.
const maxFileBytes = 1 << 20

// ToolObserver wraps a session's tool observer so that each file tool call is
// recorded: on its first touch of a path, the file's state on disk (a file
// entry, so that replay can recreate the workspace), then the call
// (mcp_call) and, once the inner observer has reported it, the result
// (mcp_result). Its signature fits acp.Options.ObserveTools. Contents are
// recorded only for files inside the session's workspace roots, judged
// where the path leads (symlinks resolved, as the tools judge it): a call
// naming any other path (refused or not), or a link to one, records whether
// it exists, never what it holds.
func (r *Recorder) ToolObserver(sessionID string, roots []string, inner mcp.Observer) mcp.Observer {
	realRoots := make([]string, len(roots))
	for i, root := range roots {
		realRoots[i] = root
		if real, err := fsops.ResolvePath(root); err == nil {
			realRoots[i] = real
		}
	}
	return &toolObserver{rec: r, session: sessionID, realRoots: realRoots, inner: inner}
}

type toolObserver struct {
	rec       *Recorder
	session   string
	realRoots []string // the workspace roots, symlinks resolved
	inner     mcp.Observer
}

func (o *toolObserver) CallStarted(ctx context.Context, c *mcp.Call) context.Context {
	o.rec.toolCall(o.session, c, o.realRoots)
	if o.inner != nil {
		return o.inner.CallStarted(ctx, c)
	}
	return ctx
}

func (o *toolObserver) BeforeWrite(ctx context.Context, c *mcp.Call, ch *fsops.Change) error {
	if o.inner == nil {
		return nil
	}
	return o.inner.BeforeWrite(ctx, c, ch)
}

func (o *toolObserver) CallFinished(ctx context.Context, c *mcp.Call, result any, err *fsops.Error) {
	if o.inner != nil {
		o.inner.CallFinished(ctx, c, result, err)
	}
	o.rec.toolResult(o.session, c, result, err)
}

// inRoots reports whether path lies inside one of roots.
func inRoots(path string, roots []string) bool {
	return slices.ContainsFunc(roots, func(root string) bool { return fsops.Within(root, path) })
}

func (r *Recorder) toolCall(session string, c *mcp.Call, realRoots []string) {
	var snapshot *Entry
	if filepath.IsAbs(c.Path) {
		r.mu.Lock()
		first := !r.touched[c.Path]
		r.touched[c.Path] = true
		r.mu.Unlock()
		if first {
			snapshot = toolFileState(c.Path, realRoots)
		}
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	run := r.currentRun()
	if snapshot != nil {
		snapshot.Run = run
		r.writeLocked(snapshot)
	}
	r.writeLocked(&Entry{Kind: KindMCPCall, Run: run, Session: session, Call: c.ID, Tool: c.Tool, Arguments: validJSON(c.Arguments)})
}

func (r *Recorder) toolResult(session string, c *mcp.Call, result any, terr *fsops.Error) {
	e := &Entry{Kind: KindMCPResult, Session: session, Call: c.ID, Tool: c.Tool}
	if terr != nil {
		e.ToolError = &ToolError{Code: terr.Code, Message: terr.Message, Hint: terr.Hint}
	} else if b, err := json.Marshal(result); err == nil {
		e.Result = b
	} else {
		e.Error = "result not recordable: " + err.Error()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	e.Run = r.currentRun()
	r.writeLocked(e)
}

// validJSON returns raw when it is JSON, else the JSON string of its text
// (the observer also hears of calls with malformed arguments).
func validJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	if json.Valid(raw) {
		return raw
	}
	b, _ := json.Marshal(string(raw))
	return b
}

// toolFileState describes the file a tool call names (fileState), with its
// content only when the path leads inside one of realRoots. The path is
// resolved (every link; a missing file through its nearest existing
// directory), judged there, and read there without following a link, so
// that a link put in its place since is refused rather than followed out.
// A path that cannot be resolved (a dangling link, a loop) is recorded by
// existence only.
func toolFileState(path string, realRoots []string) *Entry {
	real, err := fsops.ResolvePath(path)
	if err != nil || !inRoots(real, realRoots) {
		return fileState(KindFile, path, path, 0, regularfile.FollowLink) // existence and mode only
	}
	return fileState(KindFile, path, real, maxFileBytes, regularfile.NoFollowLink)
}

// fileState describes the file at on disk as an entry of kind for path
// (the name the agent used, which a replay recreates): missing (and
// whether its directory exists), a directory, or a file with its mode and
// content (at most limit bytes). follow says whether a final link at at is
// followed.
func fileState(kind, path, at string, limit int64, follow regularfile.Follow) *Entry {
	e := &Entry{Kind: kind, Path: path}
	stat := os.Stat
	if follow == regularfile.NoFollowLink {
		stat = os.Lstat
	}
	fi, err := stat(at)
	if err != nil {
		if pfi, perr := os.Stat(filepath.Dir(at)); perr == nil && pfi.IsDir() {
			e.ParentExists = true
		}
		if !errors.Is(err, fs.ErrNotExist) {
			e.Error = err.Error()
		}
		return e
	}
	e.Exists = true
	e.ParentExists = true
	e.Mode = uint32(fi.Mode().Perm())
	if fi.IsDir() {
		e.IsDir = true
		return e
	}
	if !fi.Mode().IsRegular() || fi.Size() > limit {
		// Never opened: a FIFO would block; a device may never end.
		e.Omitted, e.Size = true, fi.Size()
		return e
	}
	// Swapped for a FIFO or device since the stat: refused, not waited on.
	f, _, err := regularfile.Open(at, follow)
	if err != nil {
		e.Error = err.Error()
		return e
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	switch {
	case err != nil:
		e.Error = err.Error()
	case int64(len(data)) > limit:
		e.Omitted, e.Size = true, int64(len(data))
	case utf8.Valid(data):
		s := string(data)
		e.Content = &s
	default:
		e.Base64 = base64.StdEncoding.EncodeToString(data)
	}
	return e
}
