package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/codex/execrun"
	"github.com/codexacp/codexacp/events"
	"github.com/codexacp/codexacp/internal/bearer"
	"github.com/codexacp/codexacp/internal/fakeeditor"
	"github.com/codexacp/codexacp/mcp"
)

// undoBackend is a codex that names its turns (codex-turn-1, …) and
// forgets them when asked: each run plays a shell turn whose command runs
// edits[n] (auto mode follows its edits).
type undoBackend struct {
	*fakeBackend
	mu        sync.Mutex
	started   int
	forgot    [][]string
	forgetErr error
}

func newUndoBackend(thread string, edits ...func()) *undoBackend {
	b := &undoBackend{}
	b.fakeBackend = &fakeBackend{script: func(ctx context.Context, n int, inv execrun.Invocation, onLine func([]byte)) error {
		if n >= len(edits) {
			return playLines(`{"type":"thread.started","thread_id":"`+thread+`"}`, `{"type":"turn.started"}`,
				`{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":0,"output_tokens":1,"reasoning_output_tokens":0}}`)(ctx, n, inv, onLine)
		}
		return shellTurn(edits[n])(ctx, n, inv, func(line []byte) {
			onLine([]byte(strings.Replace(string(line), `"thread_id":"t"`, `"thread_id":"`+thread+`"`, 1)))
		})
	}}
	return b
}

func (b *undoBackend) Capabilities() backend.Capabilities { return backend.Undo }

func (b *undoBackend) Run(ctx context.Context, t backend.Turn, out backend.Output) error {
	b.mu.Lock()
	b.started++
	id := fmt.Sprintf("codex-turn-%d", b.started)
	b.mu.Unlock()
	out.Event(events.Event{Type: events.TypeTurnStarted, TurnID: id})
	return b.fakeBackend.Run(ctx, t, out)
}

func (b *undoBackend) ForgetTurns(_ context.Context, _ backend.Turn, ids []string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.forgetErr != nil {
		return b.forgetErr
	}
	b.forgot = append(b.forgot, ids)
	return nil
}

func (b *undoBackend) forgotten() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return fmt.Sprint(b.forgot)
}

// lastMessage is the text of the session's last agent message chunk.
func lastMessage(h *harness) string {
	text := ""
	for _, n := range h.editor.Updates() {
		if c := n.Update.AgentMessageChunk; c != nil && c.Content.Text != nil {
			text = c.Content.Text.Text
		}
	}
	return text
}

func readTestFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "<missing>"
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// undoWorkspace is a workspace whose shell turn modifies a.txt, creates
// b.txt and deletes c.txt.
func undoWorkspace(t *testing.T) (cwd string, a, b, c string, edit func()) {
	t.Helper()
	cwd, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a, b, c = filepath.Join(cwd, "a.txt"), filepath.Join(cwd, "b.txt"), filepath.Join(cwd, "c.txt")
	writeTestFile(t, a, "alpha\nbeta\n")
	writeTestFile(t, c, "gamma\n")
	return cwd, a, b, c, func() {
		writeTestFile(t, a, "ALPHA\nbeta\n")
		writeTestFile(t, b, "new\n")
		os.Remove(c)
	}
}

// /undo takes a shell turn back: the modified file restored through the
// editor, the deleted one recreated, the created one removed once the user
// allowed it; codex forgets the turn first; one edit tool call carries a
// diff per file.
func TestUndoShellTurn(t *testing.T) {
	t.Parallel()
	cwd, a, b, c, edit := undoWorkspace(t)
	be := newUndoBackend("th-undo", edit)
	var asked []string
	h := startAgent(t, be, fakeeditor.Options{FS: true, WriteThrough: true, Permission: func(req acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse {
		asked = append(asked, *req.ToolCall.Title)
		return fakeeditor.Select(optAllowOnce)
	}})
	sid := h.newSession(t, cwd)
	setMode(t, h, sid, backend.ModeAuto)
	if _, err := h.prompt(sid, "edit"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.prompt(sid, "/status"); err != nil || !strings.Contains(lastMessage(h), "Turns /undo can take back: 1") {
		t.Errorf("/status: %v\n%s", err, lastMessage(h))
	}
	if _, err := h.prompt(sid, "/undo"); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{a: "alpha\nbeta\n", b: "<missing>", c: "gamma\n"} {
		if got := readTestFile(t, path); got != want {
			t.Errorf("%s = %q, want %q", filepath.Base(path), got, want)
		}
	}
	if buf, _ := h.editor.Buffer(a); buf != "alpha\nbeta\n" {
		t.Errorf("a.txt's buffer = %q", buf)
	}
	if got := be.forgotten(); got != "[[codex-turn-1]]" {
		t.Errorf("codex forgot %s", got)
	}
	if fmt.Sprint(asked) != "[Undo: b.txt?]" {
		t.Errorf("asked %q: the removal only", asked)
	}
	var done *acpsdk.SessionToolCallUpdate
	for _, n := range h.editor.Updates() {
		if u := n.Update.ToolCallUpdate; u != nil && u.ToolCallId == "undo-1" && u.Status != nil && *u.Status == acpsdk.ToolCallStatusCompleted {
			done = u
		}
	}
	if tc := findToolCall(h, "undo-1"); tc == nil || tc.Kind != acpsdk.ToolKindEdit || tc.Title != "Undo the last turn" || done == nil {
		t.Fatalf("undo tool call %+v, completion %+v", tc, done)
	}
	diffs := map[string]string{}
	for _, ct := range done.Content {
		if d := ct.Diff; d != nil {
			old := "<none>"
			if d.OldText != nil {
				old = *d.OldText
			}
			diffs[filepath.Base(d.Path)] = old + " → " + d.NewText
		}
	}
	want := map[string]string{"a.txt": "ALPHA\nbeta\n → alpha\nbeta\n", "b.txt": "new\n → ", "c.txt": "<none> → gamma\n"}
	if fmt.Sprint(diffs) != fmt.Sprint(want) {
		t.Errorf("diffs %q\nwant  %q", diffs, want)
	}
	msg := lastMessage(h)
	if !strings.Contains(msg, "Undid the last turn.") || !strings.Contains(msg, "removed b.txt") || !strings.Contains(msg, "Codex no longer has these turns") {
		t.Errorf("message:\n%s", msg)
	}
	if _, err := h.prompt(sid, "/undo"); err != nil || !strings.Contains(lastMessage(h), "There is no turn to undo") {
		t.Errorf("a second /undo: %v, %q", err, lastMessage(h))
	}
}

// Binary files a command changed come back byte for byte: written on the
// local disk (fs/write_text_file carries text only), never shown as a
// diff, named in the summary. A binary file with NUL bytes and one that is
// not UTF-8.
func TestUndoBinaryShellEdits(t *testing.T) {
	t.Parallel()
	cwd, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	blob, latin, made, text := filepath.Join(cwd, "blob.bin"), filepath.Join(cwd, "latin.txt"), filepath.Join(cwd, "made.bin"), filepath.Join(cwd, "a.txt")
	writeTestFile(t, blob, "\x00\x01\x02")
	writeTestFile(t, latin, "caf\xe9\n")
	writeTestFile(t, text, "alpha\n")
	be := newUndoBackend("th-undo", func() {
		writeTestFile(t, blob, "\x00\xff")
		os.Remove(latin)
		writeTestFile(t, made, "\x00made")
		writeTestFile(t, text, "ALPHA\n")
	})
	var writes []string
	h := startAgent(t, be, fakeeditor.Options{FS: true, WriteThrough: true,
		BeforeFS: func(_ context.Context, method, path string) {
			if method == "fs/write_text_file" {
				writes = append(writes, filepath.Base(path))
			}
		},
		Permission: func(acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse {
			return fakeeditor.Select(optAllowOnce)
		}})
	sid := h.newSession(t, cwd)
	setMode(t, h, sid, backend.ModeAuto)
	if _, err := h.prompt(sid, "edit"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.prompt(sid, "/undo"); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{blob: "\x00\x01\x02", latin: "caf\xe9\n", made: "<missing>", text: "alpha\n"} {
		if got := readTestFile(t, path); got != want {
			t.Errorf("%s = %q, want %q", filepath.Base(path), got, want)
		}
	}
	if fmt.Sprint(writes) != "[a.txt]" {
		t.Errorf("the editor was sent writes of %v: the text file's only", writes)
	}
	var done *acpsdk.SessionToolCallUpdate
	for _, n := range h.editor.Updates() {
		if u := n.Update.ToolCallUpdate; u != nil && u.ToolCallId == "undo-1" && u.Status != nil && *u.Status == acpsdk.ToolCallStatusCompleted {
			done = u
		}
	}
	if done == nil {
		t.Fatal("no completed undo tool call")
	}
	var diffs, notes []string
	for _, ct := range done.Content {
		switch {
		case ct.Diff != nil:
			diffs = append(diffs, filepath.Base(ct.Diff.Path))
		case ct.Content != nil && ct.Content.Content.Text != nil:
			notes = append(notes, ct.Content.Content.Text.Text)
		}
	}
	if fmt.Sprint(diffs) != "[a.txt]" {
		t.Errorf("diffs of %v: binary files have none", diffs)
	}
	all := strings.Join(notes, "\n")
	for _, want := range []string{"blob.bin: binary file restored on disk (3 bytes)", "latin.txt: binary file recreated on disk (5 bytes)",
		"made.bin: binary file removed"} {
		if !strings.Contains(all, want) {
			t.Errorf("the tool call does not say %q:\n%s", want, all)
		}
	}
	msg := lastMessage(h)
	if !strings.Contains(msg, "restored blob.bin") || !strings.Contains(msg, "recreated latin.txt") ||
		!strings.Contains(msg, "Binary files, written on disk (an editor buffer holds text only): blob.bin, latin.txt.") {
		t.Errorf("message:\n%s", msg)
	}
}

// A binary file is restored on disk only where it is: a link planted in
// its place since the turn (leading out of the workspace, to a file that
// holds what the turn left) is not written through.
func TestUndoBinaryNotThroughLink(t *testing.T) {
	t.Parallel()
	cwd, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "target.bin")
	blob := filepath.Join(cwd, "blob.bin")
	writeTestFile(t, blob, "\x00\x01\x02")
	be := newUndoBackend("th-undo", func() { writeTestFile(t, blob, "\x00\xff") })
	h := startAgent(t, be, fakeeditor.Options{FS: true, WriteThrough: true, Permission: func(acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse {
		return fakeeditor.Select(optAllowOnce)
	}})
	sid := h.newSession(t, cwd)
	setMode(t, h, sid, backend.ModeAuto)
	if _, err := h.prompt(sid, "edit"); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, outside, "\x00\xff")
	if err := os.Remove(blob); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, blob); err != nil {
		t.Fatal(err)
	}
	if _, err := h.prompt(sid, "/undo"); err != nil {
		t.Fatal(err)
	}
	if got := readTestFile(t, outside); got != "\x00\xff" {
		t.Errorf("written through the link: the file outside holds %q", got)
	}
	if fi, err := os.Lstat(blob); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("blob.bin is no longer the link: %v, %v", fi, err)
	}
	if msg := lastMessage(h); !strings.Contains(msg, "Left as they are: blob.bin") {
		t.Errorf("message:\n%s", msg)
	}
}

// A file changed after the turn is asked about; refused, it is left and
// named, the others restored.
func TestUndoStaleFileAsked(t *testing.T) {
	t.Parallel()
	cwd, a, b, c, edit := undoWorkspace(t)
	be := newUndoBackend("th-undo", edit)
	var question string
	h := startAgent(t, be, fakeeditor.Options{FS: true, WriteThrough: true, Permission: func(req acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse {
		for _, ct := range req.ToolCall.Content {
			if ct.Content != nil && ct.Content.Content.Text != nil {
				question = ct.Content.Content.Text.Text
			}
		}
		return fakeeditor.Select(optRejectOnce)
	}})
	sid := h.newSession(t, cwd)
	setMode(t, h, sid, backend.ModeAuto)
	if _, err := h.prompt(sid, "edit"); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, a, "ALPHA\nbeta\nthe user's line\n")
	if _, err := h.prompt(sid, "/undo"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(question, "a.txt changed since the turn") || !strings.Contains(question, "b.txt was created by the turn") {
		t.Errorf("question:\n%s", question)
	}
	for path, want := range map[string]string{a: "ALPHA\nbeta\nthe user's line\n", b: "new\n", c: "gamma\n"} {
		if got := readTestFile(t, path); got != want {
			t.Errorf("%s = %q, want %q", filepath.Base(path), got, want)
		}
	}
	if msg := lastMessage(h); !strings.Contains(msg, "a.txt (changed since, not allowed)") || !strings.Contains(msg, "Recreated c.txt") {
		t.Errorf("message:\n%s", msg)
	}
}

// In ask mode every write of the undo is asked, in one question.
func TestUndoAskMode(t *testing.T) {
	t.Parallel()
	cwd, a, b, c, edit := undoWorkspace(t)
	be := newUndoBackend("th-undo", edit)
	var questions int
	h := startAgent(t, be, fakeeditor.Options{FS: true, WriteThrough: true, Permission: func(req acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse {
		questions++
		return fakeeditor.Select(optRejectOnce)
	}})
	sid := h.newSession(t, cwd)
	setMode(t, h, sid, backend.ModeAuto)
	if _, err := h.prompt(sid, "edit"); err != nil {
		t.Fatal(err)
	}
	setMode(t, h, sid, backend.ModeAsk)
	if _, err := h.prompt(sid, "/undo"); err != nil {
		t.Fatal(err)
	}
	if questions != 1 {
		t.Errorf("%d questions, want one", questions)
	}
	for path, want := range map[string]string{a: "ALPHA\nbeta\n", b: "new\n", c: "<missing>"} {
		if got := readTestFile(t, path); got != want {
			t.Errorf("%s = %q, want %q (refused: left)", filepath.Base(path), got, want)
		}
	}
}

// /undo 2 takes two turns back at once; codex is told both, oldest first.
func TestUndoTwoTurns(t *testing.T) {
	t.Parallel()
	cwd, a, _, _, _ := undoWorkspace(t)
	be := newUndoBackend("th-undo",
		func() { writeTestFile(t, a, "one\n") },
		func() { writeTestFile(t, a, "two\n") })
	h := startAgent(t, be, fakeeditor.Options{FS: true, WriteThrough: true})
	sid := h.newSession(t, cwd)
	setMode(t, h, sid, backend.ModeAuto)
	for _, p := range []string{"first", "second"} {
		if _, err := h.prompt(sid, p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.prompt(sid, "/undo 3"); err != nil || !strings.Contains(lastMessage(h), "only 2 turns can be undone, not 3") {
		t.Errorf("/undo 3: %v %q", err, lastMessage(h))
	}
	if _, err := h.prompt(sid, "/undo two"); err == nil {
		t.Error("/undo two accepted")
	}
	if _, err := h.prompt(sid, "/undo 2"); err != nil {
		t.Fatal(err)
	}
	if got := readTestFile(t, a); got != "alpha\nbeta\n" {
		t.Errorf("a.txt = %q", got)
	}
	if got := be.forgotten(); got != "[[codex-turn-1 codex-turn-2]]" {
		t.Errorf("codex forgot %s", got)
	}
	if !strings.Contains(lastMessage(h), "Undid the last 2 turns.") {
		t.Errorf("message %q", lastMessage(h))
	}
}

// While a turn runs /undo is refused at once: it neither waits nor races
// the turn's writes.
func TestUndoDuringTurn(t *testing.T) {
	t.Parallel()
	cwd, _, _, _, edit := undoWorkspace(t)
	be := newUndoBackend("th-undo", edit)
	h := startAgent(t, be, fakeeditor.Options{FS: true, WriteThrough: true})
	sid := h.newSession(t, cwd)
	setMode(t, h, sid, backend.ModeAuto)
	if _, err := h.prompt(sid, "edit"); err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{}, 1)
	be.script = hangAfter(started)
	running := h.promptInBackground(sid, "hang")
	<-started
	if _, err := h.prompt(sid, "/undo"); err != nil || !strings.Contains(lastMessage(h), "a turn is running") {
		t.Errorf("/undo during a turn: %v %q", err, lastMessage(h))
	}
	raw, err := h.editor.Conn.CallExtension(h.ctx, extSessionUndo, map[string]any{"sessionId": sid})
	if err == nil {
		t.Errorf("%s during a turn answered %s", extSessionUndo, raw)
	}
	if got := be.forgotten(); got != "[]" {
		t.Errorf("codex forgot %s during a turn", got)
	}
	if err := h.editor.Conn.Cancel(h.ctx, acpsdk.CancelNotification{SessionId: sid}); err != nil {
		t.Fatal(err)
	}
	<-running
}

// When codex cannot forget the turn nothing is changed, and the user is
// told.
func TestUndoCodexRemembers(t *testing.T) {
	t.Parallel()
	cwd, a, _, _, edit := undoWorkspace(t)
	be := newUndoBackend("th-undo", edit)
	be.forgetErr = errors.New("thread not found")
	h := startAgent(t, be, fakeeditor.Options{FS: true, WriteThrough: true})
	sid := h.newSession(t, cwd)
	setMode(t, h, sid, backend.ModeAuto)
	if _, err := h.prompt(sid, "edit"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.prompt(sid, "/undo"); err != nil {
		t.Fatal(err)
	}
	if got := readTestFile(t, a); got != "ALPHA\nbeta\n" {
		t.Errorf("a.txt = %q: written although codex remembers the turn", got)
	}
	if msg := lastMessage(h); !strings.Contains(msg, "Nothing was undone") || !strings.Contains(msg, "thread not found") {
		t.Errorf("message %q", msg)
	}
}

// The extension method undoes like /undo and answers what it did; it is
// declared in initialize's _meta.
func TestUndoExtensionMethod(t *testing.T) {
	t.Parallel()
	cwd, a, b, _, edit := undoWorkspace(t)
	be := newUndoBackend("th-undo", edit)
	h := startAgent(t, be, fakeeditor.Options{FS: true, WriteThrough: true})
	init, err := h.editor.Initialize(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if meta, _ := json.Marshal(init.Meta); !strings.Contains(string(meta), extSessionUndo) {
		t.Errorf("initialize _meta = %s", meta)
	}
	sid := h.newSession(t, cwd)
	setMode(t, h, sid, backend.ModeAuto)
	if _, err := h.prompt(sid, "edit"); err != nil {
		t.Fatal(err)
	}
	raw, err := h.editor.Conn.CallExtension(h.ctx, extSessionUndo, map[string]any{"sessionId": sid, "turns": 1})
	if err != nil {
		t.Fatal(err)
	}
	var ans undoAnswer
	if err := json.Unmarshal(raw, &ans); err != nil {
		t.Fatal(err)
	}
	if ans.Turns != 1 || !ans.CodexForgot || len(ans.Restored) != 3 || len(ans.Left) != 0 {
		t.Errorf("answer %s", raw)
	}
	if readTestFile(t, a) != "alpha\nbeta\n" || readTestFile(t, b) != "<missing>" {
		t.Error("files not restored")
	}
	if _, err := h.editor.Conn.CallExtension(h.ctx, extSessionUndo, map[string]any{"sessionId": sid}); err == nil {
		t.Error("a second undo of one turn answered")
	}
	if _, err := h.editor.Conn.CallExtension(h.ctx, extSessionUndo, map[string]any{"sessionId": sid, "turns": 0}); err == nil {
		t.Error("turns 0 accepted")
	}
}

// The change sets are kept with the session: a restarted agent that loads
// it undoes the turn of the agent before.
func TestUndoAfterLoadInRestartedAgent(t *testing.T) {
	codexHomeWithRollout(t)
	state := t.TempDir()
	cwd, a, b, c, edit := undoWorkspace(t)
	be := newUndoBackend(loadThreadID, edit)
	h1 := startAgentWith(t, Options{Backend: be, StateDir: state}, fakeeditor.Options{FS: true, WriteThrough: true})
	sid := h1.newSession(t, cwd)
	setMode(t, h1, sid, backend.ModeAuto)
	if _, err := h1.prompt(sid, "edit"); err != nil {
		t.Fatal(err)
	}
	if _, err := h1.editor.Conn.CloseSession(h1.ctx, acpsdk.CloseSessionRequest{SessionId: sid}); err != nil {
		t.Fatal(err)
	}

	var observed []string
	var observedMu sync.Mutex
	observe := func(p string) {
		observedMu.Lock()
		observed = append(observed, p)
		observedMu.Unlock()
	}
	h2 := startAgentWith(t, Options{Backend: be, StateDir: state, ObserveStored: observe}, fakeeditor.Options{FS: true, WriteThrough: true})
	if _, err := h2.editor.Initialize(h2.ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := h2.editor.Conn.LoadSession(h2.ctx, acpsdk.LoadSessionRequest{SessionId: sid, Cwd: cwd, McpServers: []acpsdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	// A recording keeps the change sets the load read (the index and the
	// contents before: a.txt's and c.txt's).
	observedMu.Lock()
	var undoFiles []string
	for _, p := range observed {
		if strings.Contains(p, ".undo") {
			undoFiles = append(undoFiles, filepath.Base(p))
		}
	}
	observedMu.Unlock()
	if len(undoFiles) != 3 || undoFiles[0] != "index.json" {
		t.Errorf("stored change-set files told: %q", undoFiles)
	}
	if _, err := h2.prompt(sid, "/undo"); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{a: "alpha\nbeta\n", b: "<missing>", c: "gamma\n"} {
		if got := readTestFile(t, path); got != want {
			t.Errorf("%s = %q, want %q", filepath.Base(path), got, want)
		}
	}
	if got := be.forgotten(); got != "[[codex-turn-1]]" {
		t.Errorf("codex forgot %s", got)
	}
	// Forgotten in the stored change sets too.
	h3 := startAgentWith(t, Options{Backend: be, StateDir: state}, fakeeditor.Options{FS: true})
	if _, err := h3.editor.Initialize(h3.ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := h3.editor.Conn.ResumeSession(h3.ctx, acpsdk.ResumeSessionRequest{SessionId: sid, Cwd: cwd, McpServers: []acpsdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	if _, err := h3.prompt(sid, "/undo"); err != nil || !strings.Contains(lastMessage(h3), "There is no turn to undo") {
		t.Errorf("after a restart the undone turn is offered again: %v %q", err, lastMessage(h3))
	}
}

// A file tool's writes are recorded with their turn: /undo restores the
// overwritten file and removes the created one, through the editor's
// buffers (ask mode: the user allows the undo's writes).
func TestUndoFileToolWrites(t *testing.T) {
	t.Parallel()
	host, err := mcp.NewHost(&mcp.HostOptions{Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { host.Close() })
	cwd, a, b, _, _ := undoWorkspace(t)
	var h *harness
	var sid acpsdk.SessionId
	call := func(tool string, args map[string]any) {
		s, err := h.agent.session(sid)
		if err != nil {
			t.Error(err)
			return
		}
		client := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "codex-stand-in", Version: "1"}, nil)
		cs, err := client.Connect(h.ctx, &mcpsdk.StreamableClientTransport{Endpoint: host.URL(), HTTPClient: bearer.Client(s.toolsToken)}, nil)
		if err != nil {
			t.Error(err)
			return
		}
		defer cs.Close()
		if res, err := cs.CallTool(h.ctx, &mcpsdk.CallToolParams{Name: tool, Arguments: args}); err != nil || res.IsError {
			t.Errorf("%s: %v %+v", tool, err, res)
		}
	}
	be := newUndoBackend("th-undo", func() {
		call("write_text_file", map[string]any{"path": a, "content": "by the tool\n"})
		call("write_text_file", map[string]any{"path": b, "content": "made by the tool\n"})
	})
	h = startAgentWith(t, Options{Backend: be, Tools: host}, fakeeditor.Options{FS: true})
	sid = h.newSession(t, cwd)
	setMode(t, h, sid, backend.ModeAsk)
	if _, err := h.prompt(sid, "edit"); err != nil {
		t.Fatal(err)
	}
	if buf, _ := h.editor.Buffer(a); buf != "by the tool\n" {
		t.Fatalf("the tool's write: a.txt's buffer = %q", buf)
	}
	if _, err := h.prompt(sid, "/undo"); err != nil {
		t.Fatal(err)
	}
	if buf, _ := h.editor.Buffer(a); buf != "alpha\nbeta\n" {
		t.Errorf("a.txt's buffer = %q after /undo", buf)
	}
	if msg := lastMessage(h); !strings.Contains(msg, "Restored a.txt") || !strings.Contains(msg, "b.txt: not on disk: only the editor's unsaved buffer") {
		t.Errorf("message:\n%s", msg)
	}
	if got := be.forgotten(); got != "[[codex-turn-1]]" {
		t.Errorf("codex forgot %s", got)
	}
}
