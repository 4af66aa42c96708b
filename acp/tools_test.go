package acp

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/events"
	"github.com/codexacp/codexacp/fsops"
	"github.com/codexacp/codexacp/internal/bearer"
	"github.com/codexacp/codexacp/internal/fakeeditor"
	"github.com/codexacp/codexacp/mcp"
)

// toolsHarness is an in-process agent with the tool host, a fake editor, and
// an MCP client standing in for codex.
type toolsHarness struct {
	*harness
	host    *mcp.Host
	session acpsdk.SessionId
	cwd     string
	client  *mcpsdk.ClientSession
	// turnDone delivers the running turn's prompt error once it ends.
	turnDone <-chan error
	// turnStarted receives once each time a turn starts.
	turnStarted <-chan struct{}
}

func startTools(tb testing.TB, eopts fakeeditor.Options, mode backend.Mode) *toolsHarness {
	tb.Helper()
	return startToolsWith(tb, Options{}, eopts, mode)
}

// startToolsWith is startTools with agent options (Backend and Tools are set
// here).
func startToolsWith(tb testing.TB, opts Options, eopts fakeeditor.Options, mode backend.Mode) *toolsHarness {
	tb.Helper()
	host, err := mcp.NewHost(&mcp.HostOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { host.Close() })

	// The session runs one long turn (codex waiting on the model) so that
	// tool calls belong to a turn, as they do with real codex.
	turnStarted := make(chan struct{}, 1)
	opts.Backend, opts.Tools = &fakeBackend{script: hangAfter(turnStarted)}, host
	h := startAgentWith(tb, opts, eopts)
	ctx, ed, agent := h.ctx, h.editor, h.agent

	cwd, err := filepath.EvalSymlinks(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := ed.Initialize(ctx); err != nil {
		tb.Fatal(err)
	}
	resp, err := ed.Conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: cwd, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := ed.Conn.SetSessionMode(ctx, acpsdk.SetSessionModeRequest{SessionId: resp.SessionId, ModeId: acpsdk.SessionModeId(mode)}); err != nil {
		tb.Fatal(err)
	}
	s, err := agent.session(resp.SessionId)
	if err != nil {
		tb.Fatal(err)
	}
	turnDone := make(chan error, 1)
	go func() {
		_, err := h.prompt(resp.SessionId, "use the tools")
		turnDone <- err
	}()
	<-turnStarted
	th := &toolsHarness{harness: h, host: host, session: resp.SessionId, cwd: cwd, turnDone: turnDone, turnStarted: turnStarted}
	th.client = th.connect(tb, s.toolsToken)
	return th
}

// connect is an MCP client standing in for codex with a session's token.
func (th *toolsHarness) connect(tb testing.TB, token string) *mcpsdk.ClientSession {
	tb.Helper()
	client := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "codex-stand-in", Version: "1"}, nil)
	cs, err := client.Connect(th.ctx, &mcpsdk.StreamableClientTransport{
		Endpoint:   th.host.URL(),
		HTTPClient: bearer.Client(token),
	}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cs.Close() })
	return cs
}

func (th *toolsHarness) call(tb testing.TB, tool string, args map[string]any) *mcpsdk.CallToolResult {
	tb.Helper()
	res, err := th.client.CallTool(th.ctx, &mcpsdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		tb.Fatalf("%s: %v", tool, err)
	}
	return res
}

func errorCode(res *mcpsdk.CallToolResult) (int, string) {
	m, _ := res.StructuredContent.(map[string]any)
	e, _ := m["error"].(map[string]any)
	code, _ := e["code"].(float64)
	msg, _ := e["message"].(string)
	return int(code), msg
}

func TestEditorFSErrorsMapByMeaning(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		err      error
		wantCode int
		wantMsg  string
	}{
		{"zed resource not found", &acpsdk.RequestError{Code: -32002, Message: "Resource not found"}, fsops.CodeNotFound, "File not found: "},
		{"acpx ENOENT", &acpsdk.RequestError{Code: -32603, Message: "Internal error", Data: map[string]any{"details": "ENOENT: no such file or directory"}}, fsops.CodeNotFound, "File not found: "},
		{"permission", &acpsdk.RequestError{Code: -32603, Message: "EACCES: permission denied"}, fsops.CodePermission, "Permission denied: "},
		{"read-only", &acpsdk.RequestError{Code: -32603, Message: "EROFS: read-only file system"}, fsops.CodePermission, "Read-only filesystem: "},
		{"other", &acpsdk.RequestError{Code: -32603, Message: "buffer is locked"}, -32603, "buffer is locked"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			th := startTools(t, fakeeditor.Options{FS: true}, backend.ModeFullAccess)
			path := filepath.Join(th.cwd, "a.txt")
			th.editor.SetBuffer(path, "one\n")
			th.editor.FailFS(path, tc.err)
			res := th.call(t, "read_text_file", map[string]any{"path": path})
			code, msg := errorCode(res)
			if !res.IsError || code != tc.wantCode || !strings.Contains(msg, tc.wantMsg) {
				t.Errorf("got isError=%v code=%d msg=%q; want code %d containing %q", res.IsError, code, msg, tc.wantCode, tc.wantMsg)
			}
		})
	}
}

func TestEditorWriteFailureNeverFallsBackToDisk(t *testing.T) {
	t.Parallel()
	th := startTools(t, fakeeditor.Options{FS: true}, backend.ModeFullAccess)
	path := filepath.Join(th.cwd, "a.txt")
	if err := os.WriteFile(path, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	th.editor.FailFS(path, &acpsdk.RequestError{Code: -32603, Message: "editor refused the write"})
	res := th.call(t, "write_text_file", map[string]any{"path": path, "content": "two\n"})
	if !res.IsError {
		t.Fatalf("write succeeded: %+v", res.StructuredContent)
	}
	if b, _ := os.ReadFile(path); string(b) != "one\n" {
		t.Errorf("disk = %q: fell back to disk after the editor failed", b)
	}
}

func TestEditorWithoutFSUsesDisk(t *testing.T) {
	t.Parallel()
	th := startTools(t, fakeeditor.Options{FS: false}, backend.ModeFullAccess)
	path := filepath.Join(th.cwd, "a.txt")
	if err := os.WriteFile(path, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := th.call(t, "edit_text_file", map[string]any{"path": path, "old_string": "one", "new_string": "two"})
	if res.IsError {
		t.Fatalf("edit failed: %+v", res.StructuredContent)
	}
	if b, _ := os.ReadFile(path); string(b) != "two\n" {
		t.Errorf("disk = %q", b)
	}
	if calls := th.editor.Calls(); len(calls) != 0 {
		t.Errorf("editor fs called without the capability: %+v", calls)
	}
}

func TestBinaryAndDirectoryOnDiskRefusedBeforeEditor(t *testing.T) {
	t.Parallel()
	th := startTools(t, fakeeditor.Options{FS: true}, backend.ModeFullAccess)
	bin := filepath.Join(th.cwd, "blob.bin")
	if err := os.WriteFile(bin, []byte("ab\x00cd"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		code int
	}{{bin, fsops.CodeBinary}, {th.cwd, fsops.CodeIsDirectory}} {
		res := th.call(t, "read_text_file", map[string]any{"path": tc.path})
		if code, msg := errorCode(res); code != tc.code {
			t.Errorf("%s: code %d (%s), want %d", tc.path, code, msg, tc.code)
		}
	}
}

func TestPermissionCancelledWritesNothing(t *testing.T) {
	t.Parallel()
	th := startTools(t, fakeeditor.Options{FS: true, Permission: func(acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse {
		return acpsdk.RequestPermissionResponse{Outcome: acpsdk.RequestPermissionOutcome{Cancelled: &acpsdk.RequestPermissionOutcomeCancelled{Outcome: "cancelled"}}}
	}}, backend.ModeAsk)
	path := filepath.Join(th.cwd, "a.txt")
	th.editor.SetBuffer(path, "one\n")
	res := th.call(t, "edit_text_file", map[string]any{"path": path, "old_string": "one", "new_string": "two"})
	if code, msg := errorCode(res); code != fsops.CodePermission || !strings.Contains(msg, "Permission denied") {
		t.Errorf("code %d %q", code, msg)
	}
	if got, _ := th.editor.Buffer(path); got != "one\n" {
		t.Errorf("buffer = %q", got)
	}
}

func TestInWorkspaceResolvesSymlinks(t *testing.T) {
	t.Parallel()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	outside, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	extra := t.TempDir()
	s := newSession("s", root, []string{extra}, nil, events.Options{})
	for _, tc := range []struct {
		path string
		want bool
	}{
		{filepath.Join(root, "a.txt"), true},
		{filepath.Join(root, "sub", "new", "deep.txt"), true},
		{filepath.Join(root, "..", filepath.Base(outside), "x"), false},
		{filepath.Join(root, "escape", "x.txt"), false},
		{filepath.Join(outside, "x.txt"), false},
		{filepath.Join(extra, "y.txt"), true},
		{root + "-sibling/x", false},
	} {
		real, err := fsops.ResolvePath(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.inWorkspace(real); got != tc.want {
			t.Errorf("inWorkspace(%s) = %v, want %v", tc.path, got, tc.want)
		}
	}
}

// BenchmarkEditToolCallEndToEnd is the added latency of one edit as codex
// sees it: MCP over HTTP to the embedded server, the editor's read and write
// round trips over ACP, and the tool_call updates. Full-access mode, so no
// permission prompt.
func BenchmarkEditToolCallEndToEnd(b *testing.B) {
	for _, size := range []struct {
		name  string
		lines int
	}{{"small", 10}, {"1MB", 20000}} {
		b.Run(size.name, func(b *testing.B) {
			th := startTools(b, fakeeditor.Options{FS: true}, backend.ModeFullAccess)
			path := filepath.Join(th.cwd, "big.txt")
			var content strings.Builder
			for i := 0; content.Len() < size.lines*50 || i < size.lines; i++ {
				fmt.Fprintf(&content, "line %06d %s\n", i, strings.Repeat("x", 38))
				if i+1 >= size.lines {
					break
				}
			}
			text := content.String()
			target := fmt.Sprintf("line %06d", size.lines/2)
			th.editor.SetBuffer(path, text)
			b.SetBytes(int64(len(text)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				from, to := target, target+"!"
				if i%2 == 1 {
					from, to = to, from
				}
				res := th.call(b, "edit_text_file", map[string]any{"path": path, "old_string": from + " ", "new_string": to + " "})
				if res.IsError {
					b.Fatalf("edit failed: %+v", res.StructuredContent)
				}
			}
		})
	}
}

func TestDiffContentLargeFileSendsHunks(t *testing.T) {
	t.Parallel()
	var old strings.Builder
	for i := 0; i < 20000; i++ {
		fmt.Fprintf(&old, "line %d\n", i)
	}
	oldText := old.String() + "tail"
	newText := strings.Replace(strings.Replace(oldText, "line 100\n", "line one hundred\n", 1), "tail", "TAIL", 1)
	ch := &fsops.Change{Path: "/w/big.txt", Old: []byte(oldText), New: []byte(newText),
		Diff: fsops.UnifiedDiff("/w/big.txt", []byte(oldText), []byte(newText))}
	got := diffContent(ch)
	if len(got) != 2 {
		t.Fatalf("contents = %d, want one per hunk (2)", len(got))
	}
	first := got[0].Diff
	if first.OldText == nil || *first.OldText != "line 97\nline 98\nline 99\nline 100\nline 101\nline 102\nline 103\n" ||
		first.NewText != "line 97\nline 98\nline 99\nline one hundred\nline 101\nline 102\nline 103\n" {
		t.Errorf("first hunk = %q → %q", *first.OldText, first.NewText)
	}
	last := got[1].Diff
	if *last.OldText != "line 19997\nline 19998\nline 19999\ntail" || last.NewText != "line 19997\nline 19998\nline 19999\nTAIL" {
		t.Errorf("last hunk = %q → %q", *last.OldText, last.NewText)
	}

	small := &fsops.Change{Path: "/w/a.txt", Old: []byte("a\n"), New: []byte("b\n"), Diff: "x"}
	if c := diffContent(small); len(c) != 1 || *c[0].Diff.OldText != "a\n" || c[0].Diff.NewText != "b\n" {
		t.Errorf("small file content = %+v", c)
	}
	created := &fsops.Change{Path: "/w/n.txt", New: []byte("n\n"), Created: true}
	if c := diffContent(created); len(c) != 1 || c[0].Diff.OldText != nil {
		t.Errorf("created file content = %+v", c)
	}
}

// A client that advertises fs but answers "method not found" wrote nothing:
// the disk is used, once per method, and later calls go straight to disk.
func TestEditorMethodNotFoundFallsBackToDisk(t *testing.T) {
	t.Parallel()
	th := startTools(t, fakeeditor.Options{FS: true, FSNotImplemented: true}, backend.ModeFullAccess)
	path := filepath.Join(th.cwd, "a.txt")
	if err := os.WriteFile(path, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, edit := range [][2]string{{"one", "two"}, {"two", "three"}} {
		res := th.call(t, "edit_text_file", map[string]any{"path": path, "old_string": edit[0], "new_string": edit[1]})
		if res.IsError {
			t.Fatalf("edit failed: %+v", res.StructuredContent)
		}
	}
	if b, _ := os.ReadFile(path); string(b) != "three\n" {
		t.Errorf("disk = %q", b)
	}
	var methods []string
	for _, c := range th.editor.Calls() {
		methods = append(methods, c.Method)
	}
	if strings.Join(methods, ",") != "fs/read_text_file,fs/write_text_file" {
		t.Errorf("editor calls = %v, want one read and one write before falling back", methods)
	}
}

func TestReadToolCallUpdates(t *testing.T) {
	t.Parallel()
	th := startTools(t, fakeeditor.Options{FS: true}, backend.ModeAsk)
	path := filepath.Join(th.cwd, "src", "a.go")
	th.editor.SetBuffer(path, "package a\n")
	res := th.call(t, "read_text_file", map[string]any{"path": path})
	if res.IsError {
		t.Fatalf("read failed: %+v", res.StructuredContent)
	}
	// The editor handles notifications on its own goroutine: wait for the last.
	if err := th.editor.WaitForUpdate(th.ctx, func(u acpsdk.SessionUpdate) bool {
		return u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil && *u.ToolCallUpdate.Status == acpsdk.ToolCallStatusCompleted
	}); err != nil {
		t.Fatal(err)
	}
	var call *acpsdk.SessionUpdateToolCall
	var done *acpsdk.SessionToolCallUpdate
	for _, n := range th.editor.Updates() {
		if n.Update.ToolCall != nil {
			call = n.Update.ToolCall
		}
		if n.Update.ToolCallUpdate != nil {
			done = n.Update.ToolCallUpdate
		}
	}
	if call == nil || call.Kind != acpsdk.ToolKindRead || call.Title != "Read src/a.go" || call.Status != acpsdk.ToolCallStatusPending {
		t.Fatalf("tool_call = %+v", call)
	}
	if done == nil || done.Status == nil || *done.Status != acpsdk.ToolCallStatusCompleted {
		t.Fatalf("completion = %+v", done)
	}
	out, _ := done.RawOutput.(map[string]any)
	if _, has := out["content"]; has || out["content_bytes"] != float64(10) || out["total_lines"] != float64(1) {
		t.Errorf("rawOutput = %+v, want the read's facts without its content", done.RawOutput)
	}
	if n := len(th.editor.Calls()); n != 1 {
		t.Errorf("editor calls = %d; a read in ask mode needs no permission", n)
	}
}

// A deleted line that itself starts with "-- " (an SQL comment) prints as
// "--- …" inside a hunk: it is a body line, not a header.
func TestHunkContentsKeepsHeaderLikeLines(t *testing.T) {
	t.Parallel()
	var old strings.Builder
	for i := 0; i < 20000; i++ {
		fmt.Fprintf(&old, "select %d;\n", i)
	}
	oldText := strings.Replace(old.String(), "select 500;\n", "select 500;\n-- drop everything below\n", 1)
	newText := old.String()
	ch := &fsops.Change{Path: "/w/q.sql", Old: []byte(oldText), New: []byte(newText),
		Diff: fsops.UnifiedDiff("/w/q.sql", []byte(oldText), []byte(newText))}
	got := diffContent(ch)
	if len(got) != 1 || !strings.Contains(*got[0].Diff.OldText, "-- drop everything below") || strings.Contains(got[0].Diff.NewText, "drop") {
		t.Fatalf("hunk = %+v", got[0].Diff)
	}
	created := &fsops.Change{Path: "/w/big.txt", New: []byte(strings.Repeat("x\n", 200000)), Created: true}
	created.Diff = fsops.UnifiedDiff(created.Path, nil, created.New)
	if c := diffContent(created); len(c) != 1 || c[0].Diff.OldText != nil {
		t.Errorf("large created file: %d contents, oldText %v; want one whole-file diff without oldText", len(c), c[0].Diff.OldText)
	}
}

// Auto mode applies workspace edits without asking, except inside .git and
// .codex, which codex's own sandbox keeps read-only.
func TestAutoModeAsksForGitAndCodexDirs(t *testing.T) {
	t.Parallel()
	th := startTools(t, fakeeditor.Options{FS: true, Permission: func(acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse {
		return fakeeditor.Select("allow_always")
	}}, backend.ModeAuto)
	for _, tc := range []struct {
		rel  string
		asks bool
	}{
		{"a.txt", false},
		{".git/hooks/pre-commit", true},
		{".git/config", true}, // allow_always does not cover protected paths
		{".codex/config.toml", true},
		{".gitignore", false},
	} {
		before := len(th.editor.Calls())
		path := filepath.Join(th.cwd, tc.rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		res := th.call(t, "write_text_file", map[string]any{"path": path, "content": "x\n"})
		if res.IsError {
			t.Fatalf("%s: %+v", tc.rel, res.StructuredContent)
		}
		asked := false
		for _, c := range th.editor.Calls()[before:] {
			asked = asked || c.Method == "session/request_permission"
		}
		if asked != tc.asks {
			t.Errorf("%s: asked = %v, want %v", tc.rel, asked, tc.asks)
		}
	}
}

// Cancelling the turn while the user is being asked withdraws the question:
// nothing is written, the tool call fails, and its last update comes before
// the prompt's answer.
func TestCancelWhilePermissionPending(t *testing.T) {
	t.Parallel()
	asked := make(chan struct{})
	answer := make(chan struct{})
	th := startTools(t, fakeeditor.Options{FS: true, Permission: func(acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse {
		close(asked)
		<-answer // the user takes their time
		return fakeeditor.Select("allow_once")
	}}, backend.ModeAsk)
	defer close(answer)
	path := filepath.Join(th.cwd, "a.txt")
	th.editor.SetBuffer(path, "one\n")

	result := make(chan *mcpsdk.CallToolResult, 1)
	go func() {
		res, _ := th.client.CallTool(th.ctx, &mcpsdk.CallToolParams{Name: "edit_text_file",
			Arguments: map[string]any{"path": path, "old_string": "one", "new_string": "two"}})
		result <- res
	}()
	<-asked
	if err := th.editor.Conn.Cancel(th.ctx, acpsdk.CancelNotification{SessionId: th.session}); err != nil {
		t.Fatal(err)
	}
	if err := <-th.turnDone; err != nil {
		t.Fatalf("prompt: %v", err)
	}
	// Everything the turn reported has arrived by the time the prompt answered.
	var last *acpsdk.SessionToolCallUpdate
	for _, n := range th.editor.Updates() {
		if n.Update.ToolCallUpdate != nil {
			last = n.Update.ToolCallUpdate
		}
	}
	if last == nil || last.Status == nil || *last.Status != acpsdk.ToolCallStatusFailed {
		t.Errorf("last tool update before the prompt's answer = %+v, want failed", last)
	}
	res := <-result
	if res == nil || !res.IsError {
		t.Errorf("the model was told the edit succeeded: %+v", res)
	}
	if got, _ := th.editor.Buffer(path); got != "one\n" {
		t.Errorf("buffer = %q: written after the turn was cancelled", got)
	}
}

// A write arriving while no turn runs (a codex that outlived its turn) is
// refused and reported nowhere.
func TestWriteOutsideTurnRefused(t *testing.T) {
	t.Parallel()
	th := startTools(t, fakeeditor.Options{FS: true}, backend.ModeFullAccess)
	if err := th.editor.Conn.Cancel(th.ctx, acpsdk.CancelNotification{SessionId: th.session}); err != nil {
		t.Fatal(err)
	}
	<-th.turnDone
	before := len(th.editor.Updates())
	path := filepath.Join(th.cwd, "late.txt")
	res := th.call(t, "write_text_file", map[string]any{"path": path, "content": "late\n"})
	if code, msg := errorCode(res); code != fsops.CodePermission {
		t.Errorf("code %d %q, want Permission denied", code, msg)
	}
	if _, open := th.editor.Buffer(path); open {
		t.Error("written outside a turn")
	}
	if err := th.editor.Sync(th.ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(th.editor.Updates()); n != before {
		t.Errorf("%d updates sent outside a turn", n-before)
	}
}

// write_text_file's create_parents makes the missing directories inside the
// workspace once the user allows the write (the question names them), and
// nothing when the user refuses.
func TestWriteCreateParentsAsksAndCreates(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		option string
		want   bool
	}{{"allow_once", true}, {"reject_once", false}} {
		t.Run(tc.option, func(t *testing.T) {
			var title string
			th := startTools(t, fakeeditor.Options{FS: true, Permission: func(req acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse {
				if req.ToolCall.Title != nil {
					title = *req.ToolCall.Title
				}
				return fakeeditor.Select(tc.option)
			}}, backend.ModeAsk)
			path := filepath.Join(th.cwd, "new", "deeper", "a.txt")
			res := th.call(t, "write_text_file", map[string]any{"path": path, "content": "x\n", "create_parents": true})
			if res.IsError == tc.want {
				t.Fatalf("IsError = %v: %+v", res.IsError, res.StructuredContent)
			}
			if !strings.Contains(title, "(creating new and 1 more)") {
				t.Errorf("permission title %q does not name the directories", title)
			}
			_, err := os.Stat(filepath.Join(th.cwd, "new"))
			if created := err == nil; created != tc.want {
				t.Errorf("directory created = %v, want %v", created, tc.want)
			}
		})
	}
}

// stuckWrites is a disk whose writes ignore their context: each blocks
// until release is closed, as a hung file system would.
type stuckWrites struct {
	fsops.Files
	entered chan struct{}
	release chan struct{}
}

func (f *stuckWrites) WriteFile(ctx context.Context, path string, data []byte) error {
	close(f.entered)
	<-f.release
	return f.Files.WriteFile(context.WithoutCancel(ctx), path, data)
}

// A tool call still running when its turn ends is given up: it is marked
// failed before the prompt's answer, its own later completion reports
// nothing, and the session keeps nothing of it.
func TestToolCallGivenUpAtTurnEnd(t *testing.T) {
	t.Parallel()
	disk := &stuckWrites{Files: fsops.NewLocalFiles(), entered: make(chan struct{}), release: make(chan struct{})}
	released := false
	release := func() {
		if !released {
			released = true
			close(disk.release)
		}
	}
	defer release()
	th := startToolsWith(t, Options{LocalFiles: disk, toolCallGrace: time.Millisecond}, fakeeditor.Options{FS: false}, backend.ModeFullAccess)
	path := filepath.Join(th.cwd, "a.txt")
	if err := os.WriteFile(path, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	result := make(chan *mcpsdk.CallToolResult, 1)
	go func() {
		res, _ := th.client.CallTool(th.ctx, &mcpsdk.CallToolParams{Name: "edit_text_file",
			Arguments: map[string]any{"path": path, "old_string": "one", "new_string": "two"}})
		result <- res
	}()
	<-disk.entered
	if err := th.editor.Conn.Cancel(th.ctx, acpsdk.CancelNotification{SessionId: th.session}); err != nil {
		t.Fatal(err)
	}
	if err := <-th.turnDone; err != nil {
		t.Fatalf("prompt: %v", err)
	}
	// The failed update arrived before the prompt's answer.
	updates := th.editor.Updates()
	var last *acpsdk.SessionToolCallUpdate
	for _, n := range updates {
		if n.Update.ToolCallUpdate != nil {
			last = n.Update.ToolCallUpdate
		}
	}
	if last == nil || last.Status == nil || *last.Status != acpsdk.ToolCallStatusFailed ||
		len(last.Content) != 1 || last.Content[0].Content == nil || last.Content[0].Content.Content.Text == nil ||
		!strings.Contains(last.Content[0].Content.Content.Text.Text, "The turn ended before this tool call finished") {
		t.Fatalf("last tool update before the prompt's answer = %+v, want failed: the turn ended before …", last)
	}
	s, err := th.agent.session(th.session)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	left := len(s.calls.calls)
	s.mu.Unlock()
	if left != 0 {
		t.Errorf("%d tool calls (and their contents) kept after the turn ended", left)
	}

	// The write now completes; its completion is not reported.
	release()
	if res := <-result; res == nil {
		t.Fatal("the tool call did not answer")
	}
	if err := th.editor.Sync(th.ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(th.editor.Updates()); n != len(updates) {
		t.Errorf("%d updates sent after the call was given up: %+v", n-len(updates), th.editor.Updates()[len(updates):])
	}
	s.mu.Lock()
	left = len(s.calls.calls)
	s.mu.Unlock()
	if left != 0 {
		t.Errorf("%d tool calls kept after the given-up call finished", left)
	}
}

// The editor shows the file tools by events.FileTool, which names them
// without importing fsops: it must know fsops's names.
func TestFileToolVerbs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		tool, verb string
		kind       acpsdk.ToolKind
	}{
		{fsops.ToolReadTextFile, "Read", acpsdk.ToolKindRead},
		{fsops.ToolWriteTextFile, "Write", acpsdk.ToolKindEdit},
		{fsops.ToolEditTextFile, "Edit", acpsdk.ToolKindEdit},
	} {
		if verb, kind := events.FileTool(tc.tool); verb != tc.verb || kind != tc.kind {
			t.Errorf("FileTool(%q) = %q, %q; want %q, %q", tc.tool, verb, kind, tc.verb, tc.kind)
		}
	}
}
