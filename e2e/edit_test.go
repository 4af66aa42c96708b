package e2e_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/e2e/mockapi"
	"github.com/codexacp/codexacp/internal/fakeeditor"
)

// acpCall is the model calling one of our tools.
func acpCall(t *testing.T, callID, tool string, args map[string]any) mockapi.Item {
	t.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return mockapi.NamespacedCall(callID, "mcp__acp", tool, string(b))
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// toolOutput is what the model received for callID (the request after the call).
func toolOutput(t *testing.T, e *env, callID string) string {
	t.Helper()
	for _, r := range e.mock.Requests() {
		if out, ok := r.FunctionCallOutput(callID); ok {
			return out
		}
	}
	t.Fatalf("the model never received the output of %s", callID)
	return ""
}

func permissionRequests(e *env) []acpsdk.RequestPermissionRequest {
	var out []acpsdk.RequestPermissionRequest
	for _, c := range e.editor.Calls() {
		if req, ok := c.Params.(acpsdk.RequestPermissionRequest); ok {
			out = append(out, req)
		}
	}
	return out
}

func status(u acpsdk.SessionUpdate) string {
	switch {
	case u.ToolCall != nil:
		return "tool_call:" + string(u.ToolCall.Status)
	case u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil:
		return "tool_call_update:" + string(*u.ToolCallUpdate.Status)
	case u.ToolCallUpdate != nil:
		return "tool_call_update"
	}
	return "other"
}

func TestEditGoesThroughEditorBuffer(t *testing.T) { eachBackend(t, testEditGoesThroughEditorBuffer) }

func testEditGoesThroughEditorBuffer(t *testing.T, backend string) {
	e := start(t, setup{backend: backend, fs: true})
	path := e.writeFile("config.toml", "[server]\nport = 8080\n")
	// The buffer has unsaved changes the disk does not.
	e.editor.SetBuffer(path, "[server]\nhost = \"localhost\"\nport = 8080\n")

	e.mock.Enqueue(
		mockapi.Reply(acpCall(t, "call_edit", "edit_text_file", map[string]any{
			"path": path, "old_string": "port = 8080", "new_string": "port = 3000"})),
		mockapi.Reply(mockapi.Message("changed the port")),
	)
	if r := e.mustPrompt("change the port to 3000"); r.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("stopReason = %q", r.StopReason)
	}

	if got, _ := e.editor.Buffer(path); got != "[server]\nhost = \"localhost\"\nport = 3000\n" {
		t.Errorf("buffer = %q", got)
	}
	if got := readDisk(t, path); got != "[server]\nport = 8080\n" {
		t.Errorf("disk changed while the editor handles writes: %q", got)
	}

	// The exact order: pending call, permission (carrying the diff preview),
	// running, completed.
	var seq []string
	for _, u := range toolUpdates(e) {
		seq = append(seq, status(u))
	}
	want := "tool_call:pending,tool_call_update:in_progress,tool_call_update:completed"
	if strings.Join(seq, ",") != want {
		t.Errorf("tool updates = %v, want %s", seq, want)
	}
	tools := toolUpdates(e)
	first := tools[0].ToolCall
	if first.Kind != acpsdk.ToolKindEdit || first.Title != "Edit config.toml" || len(first.Locations) != 1 || first.Locations[0].Path != path {
		t.Errorf("tool_call = %+v", first)
	}
	done := tools[len(tools)-1].ToolCallUpdate
	if len(done.Content) != 1 || done.Content[0].Diff == nil {
		t.Fatalf("completed update has no diff: %+v", done.Content)
	}
	d := done.Content[0].Diff
	if d.Path != path || d.OldText == nil || *d.OldText != "[server]\nhost = \"localhost\"\nport = 8080\n" || d.NewText != "[server]\nhost = \"localhost\"\nport = 3000\n" {
		t.Errorf("diff content = %+v", d)
	}
	if len(done.Locations) != 1 || done.Locations[0].Line == nil || *done.Locations[0].Line != 3 {
		t.Errorf("locations = %+v, want line 3", done.Locations)
	}

	perms := permissionRequests(e)
	if len(perms) != 1 || perms[0].ToolCall.ToolCallId != first.ToolCallId {
		t.Fatalf("permission requests = %+v", perms)
	}
	var kinds []string
	for _, o := range perms[0].Options {
		kinds = append(kinds, string(o.Kind))
	}
	if strings.Join(kinds, ",") != "allow_once,allow_always,reject_once" {
		t.Errorf("permission options = %v", kinds)
	}

	out := toolOutput(t, e, "call_edit")
	for _, s := range []string{`"success":true`, "-port = 8080", "+port = 3000", `"hash":"` + sha("[server]\nhost = \"localhost\"\nport = 3000\n")} {
		if !strings.Contains(out, s) {
			t.Errorf("model output lacks %q: %s", s, out)
		}
	}
	// codex's own mcp_tool_call item for our server is not reported again.
	if n := len(tools); n != 3 {
		t.Errorf("tool updates = %d, want 3 (no duplicate from codex's item)", n)
	}
	if c := perms[0].ToolCall.Content; len(c) != 1 || c[0].Diff == nil || c[0].Diff.NewText != "[server]\nhost = \"localhost\"\nport = 3000\n" {
		t.Errorf("permission request lacks the diff preview: %+v", c)
	}
}

func TestAllSevenToolsInAutoMode(t *testing.T) { eachBackend(t, testAllSevenToolsInAutoMode) }

func testAllSevenToolsInAutoMode(t *testing.T, backend string) {
	e := start(t, setup{backend: backend, fs: true, mode: "auto"})
	path := e.writeFile("notes.txt", "alpha\nbeta\ngamma\n")
	created := filepath.Join(e.cwd, "new.txt")

	v1 := "alpha\nbeta\ngamma\n"
	v2 := "alpha\nBETA\ngamma\n"                  // edit
	v3 := "ALPHA\nBETA\nGamma\n"                  // multi-edit
	v4 := "ALPHA\nBETA\nGAMMA\n"                  // replace_text_lines [-1,0]
	v5 := "ALPHA\ninserted\nBETA\nGAMMA\n"        // insert before line 2
	v6 := "ALPHA\ninserted\nBETA\nGAMMA\ndelta\n" // append
	e.mock.Enqueue(
		mockapi.Reply(acpCall(t, "c_read", "read_text_file", map[string]any{"path": path})),
		mockapi.Reply(acpCall(t, "c_write", "write_text_file", map[string]any{"path": created, "content": "fresh\n"})),
		mockapi.Reply(acpCall(t, "c_edit", "edit_text_file", map[string]any{"path": path, "old_string": "beta", "new_string": "BETA", "expected_hash": sha(v1)})),
		mockapi.Reply(acpCall(t, "c_multi", "multi_edit_text_file", map[string]any{"path": path, "expected_hash": sha(v2), "edits": []map[string]any{
			{"old_string": "alpha", "new_string": "ALPHA"}, {"old_string": "gamma", "new_string": "Gamma"}}})),
		mockapi.Reply(acpCall(t, "c_replace", "replace_text_lines", map[string]any{"path": path, "hash": sha(v3), "lines": []int{-1, 0}, "old": "Gamma", "new": "GAMMA"})),
		mockapi.Reply(acpCall(t, "c_insert", "insert_text_lines", map[string]any{"path": path, "hash": sha(v4), "line": 2, "anchor": "BETA", "content": "inserted"})),
		mockapi.Reply(acpCall(t, "c_append", "append_text_file", map[string]any{"path": path, "hash": sha(v5), "content": "delta\n"})),
		mockapi.Reply(mockapi.Message("all done")),
	)
	e.mustPrompt("exercise every tool")

	if out := toolOutput(t, e, "c_read"); !strings.Contains(out, `"hash":"`+sha(v1)+`"`) || !strings.Contains(out, `"total_lines":3`) {
		t.Errorf("read output = %s", out)
	}
	for _, id := range []string{"c_write", "c_edit", "c_multi", "c_replace", "c_insert", "c_append"} {
		if out := toolOutput(t, e, id); strings.Contains(out, `"error"`) {
			t.Errorf("%s failed: %s", id, out)
		}
	}
	if out := toolOutput(t, e, "c_append"); !strings.Contains(out, `"hash":"`+sha(v6)+`"`) {
		t.Errorf("append output lacks the new hash: %s", out)
	}
	if got, _ := e.editor.Buffer(created); got != "fresh\n" {
		t.Errorf("created buffer = %q", got)
	}
	if _, err := os.Stat(created); err == nil {
		t.Errorf("write went to disk, not to the editor")
	}
	if got, _ := e.editor.Buffer(path); got != v6 {
		t.Errorf("final buffer = %q, want %q", got, v6)
	}
	if len(permissionRequests(e)) != 0 {
		t.Errorf("auto mode asked for permission")
	}
	// The read is reported as kind read; the rest as edits.
	var readCalls, editCalls int
	for _, u := range toolUpdates(e) {
		if u.ToolCall != nil {
			switch u.ToolCall.Kind {
			case acpsdk.ToolKindRead:
				readCalls++
			case acpsdk.ToolKindEdit:
				editCalls++
			}
		}
	}
	if readCalls != 1 || editCalls != 6 {
		t.Errorf("tool calls: %d read, %d edit; want 1 and 6", readCalls, editCalls)
	}
}

func TestPermissionRejectWritesNothing(t *testing.T) {
	eachBackend(t, testPermissionRejectWritesNothing)
}

func testPermissionRejectWritesNothing(t *testing.T, backend string) {
	e := start(t, setup{backend: backend, fs: true, permission: func(acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse {
		return fakeeditor.Select("reject_once")
	}})
	path := e.writeFile("a.txt", "one\n")
	e.mock.Enqueue(
		mockapi.Reply(acpCall(t, "c1", "edit_text_file", map[string]any{"path": path, "old_string": "one", "new_string": "two"})),
		mockapi.Reply(mockapi.Message("ok, not changing it")),
	)
	e.mustPrompt("edit")

	if _, open := e.editor.Buffer(path); open {
		t.Errorf("a rejected edit was written to the editor")
	}
	if got := readDisk(t, path); got != "one\n" {
		t.Errorf("disk = %q", got)
	}
	tools := toolUpdates(e)
	last := tools[len(tools)-1].ToolCallUpdate
	if last == nil || last.Status == nil || *last.Status != acpsdk.ToolCallStatusFailed {
		t.Errorf("last update = %+v, want failed", tools[len(tools)-1])
	}
	out := toolOutput(t, e, "c1")
	if !strings.Contains(out, "Permission denied: "+path) || !strings.Contains(out, "-32002") || !strings.Contains(out, "hint") {
		t.Errorf("model output = %s", out)
	}
}

func TestPermissionAllowAlwaysAsksOnce(t *testing.T) {
	eachBackend(t, testPermissionAllowAlwaysAsksOnce)
}

func testPermissionAllowAlwaysAsksOnce(t *testing.T, backend string) {
	e := start(t, setup{backend: backend, fs: true, permission: func(acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse {
		return fakeeditor.Select("allow_always")
	}})
	path := e.writeFile("a.txt", "one\ntwo\n")
	e.mock.Enqueue(
		mockapi.Reply(acpCall(t, "c1", "edit_text_file", map[string]any{"path": path, "old_string": "one", "new_string": "ONE"})),
		mockapi.Reply(acpCall(t, "c2", "edit_text_file", map[string]any{"path": path, "old_string": "two", "new_string": "TWO"})),
		mockapi.Reply(mockapi.Message("done")),
	)
	e.mustPrompt("edit twice")
	if n := len(permissionRequests(e)); n != 1 {
		t.Errorf("permission requests = %d, want 1", n)
	}
	if got, _ := e.editor.Buffer(path); got != "ONE\nTWO\n" {
		t.Errorf("buffer = %q", got)
	}
}

func TestReadOnlyModeRefusesWrites(t *testing.T) { eachBackend(t, testReadOnlyModeRefusesWrites) }

func testReadOnlyModeRefusesWrites(t *testing.T, backend string) {
	e := start(t, setup{backend: backend, fs: true, mode: "read-only"})
	path := e.writeFile("a.txt", "one\n")
	e.mock.Enqueue(
		mockapi.Reply(acpCall(t, "c1", "write_text_file", map[string]any{"path": path, "content": "two\n"})),
		mockapi.Reply(mockapi.Message("cannot")),
	)
	e.mustPrompt("overwrite")
	if _, open := e.editor.Buffer(path); open {
		t.Errorf("read-only mode wrote to the editor")
	}
	if n := len(permissionRequests(e)); n != 0 {
		t.Errorf("read-only mode asked for permission %d times", n)
	}
	if out := toolOutput(t, e, "c1"); !strings.Contains(out, "Permission denied") || !strings.Contains(out, "read-only") {
		t.Errorf("model output = %s", out)
	}
}

func TestClientWithoutFSWritesDiskAtomically(t *testing.T) {
	eachBackend(t, testClientWithoutFSWritesDiskAtomically)
}

func testClientWithoutFSWritesDiskAtomically(t *testing.T, backend string) {
	e := start(t, setup{backend: backend, fs: false, mode: "auto"})
	path := e.writeFile("a.txt", "one\n")
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	e.mock.Enqueue(
		mockapi.Reply(acpCall(t, "c1", "edit_text_file", map[string]any{"path": path, "old_string": "one", "new_string": "two"})),
		mockapi.Reply(mockapi.Message("done")),
	)
	e.mustPrompt("edit")
	if got := readDisk(t, path); got != "two\n" {
		t.Errorf("disk = %q", got)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode not preserved: %v %v", fi.Mode(), err)
	}
	if calls := e.editor.Calls(); len(calls) != 0 {
		t.Errorf("agent called editor fs methods the client did not advertise: %+v", calls)
	}
	// No temp files left next to the file.
	entries, _ := os.ReadDir(e.cwd)
	if len(entries) != 1 {
		var names []string
		for _, en := range entries {
			names = append(names, en.Name())
		}
		t.Errorf("workspace has %v, want only a.txt", names)
	}
}

func TestClientFSErrorReachesModel(t *testing.T) { eachBackend(t, testClientFSErrorReachesModel) }

func testClientFSErrorReachesModel(t *testing.T, backend string) {
	e := start(t, setup{backend: backend, fs: true, mode: "auto"})
	path := e.writeFile("a.txt", "one\n")
	e.editor.FailFS(path, &acpsdk.RequestError{Code: -32603, Message: "Internal error", Data: map[string]any{"details": "buffer is locked by another plugin"}})
	e.mock.Enqueue(
		mockapi.Reply(acpCall(t, "c1", "edit_text_file", map[string]any{"path": path, "old_string": "one", "new_string": "two"})),
		mockapi.Reply(mockapi.Message("could not")),
	)
	e.mustPrompt("edit")
	out := toolOutput(t, e, "c1")
	if !strings.Contains(out, "buffer is locked by another plugin") || !strings.Contains(out, `"error"`) {
		t.Errorf("model output = %s", out)
	}
	if got := readDisk(t, path); got != "one\n" {
		t.Errorf("fell back to disk after the editor failed: %q", got)
	}
	tools := toolUpdates(e)
	if last := tools[len(tools)-1].ToolCallUpdate; last == nil || last.Status == nil || *last.Status != acpsdk.ToolCallStatusFailed {
		t.Errorf("last update = %+v", tools[len(tools)-1])
	}
}

func TestWriteOutsideWorkspaceRefused(t *testing.T) { eachBackend(t, testWriteOutsideWorkspaceRefused) }

func testWriteOutsideWorkspaceRefused(t *testing.T, backend string) {
	e := start(t, setup{backend: backend, fs: true, mode: "auto"})
	outside := filepath.Join(t.TempDir(), "elsewhere.txt")
	e.mock.Enqueue(
		mockapi.Reply(acpCall(t, "c1", "write_text_file", map[string]any{"path": outside, "content": "x\n"})),
		mockapi.Reply(mockapi.Message("refused")),
	)
	e.mustPrompt("write outside")
	if _, open := e.editor.Buffer(outside); open {
		t.Errorf("a write outside the workspace reached the editor")
	}
	if out := toolOutput(t, e, "c1"); !strings.Contains(out, "Permission denied") || !strings.Contains(out, "outside the workspace") {
		t.Errorf("model output = %s", out)
	}
}

func TestCreatedFileDiffHasNoOldText(t *testing.T) { eachBackend(t, testCreatedFileDiffHasNoOldText) }

func testCreatedFileDiffHasNoOldText(t *testing.T, backend string) {
	e := start(t, setup{backend: backend, fs: true, mode: "full-access"})
	path := filepath.Join(e.cwd, "sub", "new.go")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	e.mock.Enqueue(
		mockapi.Reply(acpCall(t, "c1", "write_text_file", map[string]any{"path": path, "content": "package sub\n"})),
		mockapi.Reply(mockapi.Message("created")),
	)
	e.mustPrompt("create")
	tools := toolUpdates(e)
	done := tools[len(tools)-1].ToolCallUpdate
	if done == nil || len(done.Content) != 1 || done.Content[0].Diff == nil {
		t.Fatalf("completed update = %+v", tools[len(tools)-1])
	}
	if d := done.Content[0].Diff; d.OldText != nil || d.NewText != "package sub\n" {
		t.Errorf("diff = %+v, want no oldText for a created file", d)
	}
	if first := tools[0].ToolCall; first == nil || first.Title != "Write sub/new.go" {
		t.Errorf("title = %+v", tools[0])
	}
	if out := toolOutput(t, e, "c1"); !strings.Contains(out, `"created":true`) {
		t.Errorf("model output = %s", out)
	}
}

// A session closed and loaded again in the same agent (an editor reopening
// a thread from its history) still edits: it keeps its tool server, whose
// token an app-server thread keeps while loaded.
func TestEditAfterCloseAndLoad(t *testing.T) { eachBackend(t, testEditAfterCloseAndLoad) }

func testEditAfterCloseAndLoad(t *testing.T, backend string) {
	e := start(t, setup{backend: backend, fs: true, mode: "auto"})
	path := e.writeFile("a.txt", "one\n")
	for i, text := range []string{"two\n", "three\n"} {
		e.mock.Enqueue(
			mockapi.Reply(acpCall(t, "call_w", "write_text_file", map[string]any{"path": path, "content": text})),
			mockapi.Reply(mockapi.Message("written")),
		)
		e.mustPrompt("write")
		if got, _ := e.editor.Buffer(path); got != text {
			t.Fatalf("turn %d: buffer = %q, want %q", i, got, text)
		}
		if i == 0 {
			if _, err := e.editor.Conn.CloseSession(e.ctx, acpsdk.CloseSessionRequest{SessionId: e.session}); err != nil {
				t.Fatal(err)
			}
			if _, err := e.editor.Conn.LoadSession(e.ctx, acpsdk.LoadSessionRequest{SessionId: e.session, Cwd: e.cwd, McpServers: []acpsdk.McpServer{}}); err != nil {
				t.Fatal(err)
			}
			if _, err := e.editor.Conn.SetSessionMode(e.ctx, acpsdk.SetSessionModeRequest{SessionId: e.session, ModeId: "auto"}); err != nil {
				t.Fatal(err)
			}
		}
	}
}
