package e2e_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/e2e/mockapi"
	"github.com/codexacp/codexacp/internal/fakeeditor"
)

// /undo with the real codex (docs/undo.md): the files come back through
// the editor (its buffers, saved to disk as acpx and Zed do) byte for
// byte, the undo's edit tool call carries a diff per file, and codex
// forgets the turn: the next model request lacks it (app-server:
// thread/revert on the live thread; exec: an app-server started on the
// same codex home cuts the thread between exec turns).

// undoCall is the completed update of the session's last undo tool call.
func undoCall(t *testing.T, e *env) *acpsdk.SessionToolCallUpdate {
	t.Helper()
	var done *acpsdk.SessionToolCallUpdate
	for _, u := range toolUpdates(e) {
		if c := u.ToolCallUpdate; c != nil && strings.HasPrefix(string(c.ToolCallId), "undo-") && c.Status != nil {
			done = c
		}
	}
	if done == nil || *done.Status != acpsdk.ToolCallStatusCompleted {
		t.Fatalf("no completed undo tool call: %+v", done)
	}
	return done
}

// undoDiffs are an undo tool call's diffs by file name: "old → new"
// ("<none>" for a file that did not exist).
func undoDiffs(c *acpsdk.SessionToolCallUpdate) map[string]string {
	diffs := map[string]string{}
	for _, ct := range c.Content {
		if d := ct.Diff; d != nil {
			old := "<none>"
			if d.OldText != nil {
				old = *d.OldText
			}
			diffs[filepath.Base(d.Path)] = old + " → " + d.NewText
		}
	}
	return diffs
}

// undoNotes are the texts of an undo tool call (binary files' notes, the
// summary).
func undoNotes(c *acpsdk.SessionToolCallUpdate) string {
	var texts []string
	for _, ct := range c.Content {
		if ct.Content != nil && ct.Content.Content.Text != nil {
			texts = append(texts, ct.Content.Content.Text.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// lastUserTexts is what the last model request carries of the user's
// messages.
func lastUserTexts(e *env) string {
	reqs := e.mock.Requests()
	return strings.Join(reqs[len(reqs)-1].Texts("user"), "\n")
}

// lastMessage is the text of the last agent message chunk (a local
// command's answer comes in one).
func lastMessage(e *env) string {
	text := ""
	for _, n := range e.editor.Updates() {
		if c := n.Update.AgentMessageChunk; c != nil && c.Content.Text != nil {
			text = c.Content.Text.Text
		}
	}
	return text
}

func TestUndoEditAndShellTurns(t *testing.T) { eachBackend(t, testUndoEditAndShellTurns) }

// An edit turn with the file tools, then a shell turn (sed -i, a new file,
// a deleted file, a new binary file, a binary file appended to): /undo
// takes the shell turn back, the binary file's bytes too, and the next
// request lacks it; /undo 2 then takes back that request's turn and the
// edit turn.
func testUndoEditAndShellTurns(t *testing.T, backend string) {
	var asked []string
	e := start(t, setup{backend: backend, fs: true, writeThrough: true, mode: "auto",
		permission: func(req acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse {
			asked = append(asked, *req.ToolCall.Title)
			return fakeeditor.Select("allow_once")
		}})
	code := e.writeFile("main.go", "package main\n\nfunc main() {}\n")
	conf := e.writeFile("config.toml", "[server]\nport = 8080\n")
	gone := e.writeFile("gone.txt", "keep me\r\nplease\n")
	logo := e.writeFile("logo.bin", "\x89PNG\x00\x01\xff")
	made := filepath.Join(e.cwd, "made.txt")
	blob := filepath.Join(e.cwd, "blob.bin")
	notes := filepath.Join(e.cwd, "notes.md")

	e.mock.Enqueue(
		mockapi.Reply(acpCall(t, "call_edit", "edit_text_file", map[string]any{
			"path": code, "old_string": "func main() {}", "new_string": "func main() {\n\tprintln(\"hi\")\n}"})),
		mockapi.Reply(acpCall(t, "call_write", "write_text_file", map[string]any{"path": notes, "content": "# Notes\n"})),
		mockapi.Reply(mockapi.Message("edited")),
	)
	e.mustPrompt("first: edit main.go")
	e.mock.Enqueue(
		mockapi.Reply(mockapi.ExecCommand("call_sh", "sed -i 's/8080/3000/' config.toml && rm gone.txt && printf 'made\\n' > made.txt"+
			" && printf '\\000\\001\\002' > blob.bin && printf '\\376' >> logo.bin")),
		mockapi.Reply(mockapi.Message("ran")),
	)
	e.mustPrompt("second: run the shell")
	if readDisk(t, conf) != "[server]\nport = 3000\n" || readDisk(t, made) != "made\n" ||
		readDisk(t, blob) != "\x00\x01\x02" || readDisk(t, logo) != "\x89PNG\x00\x01\xff\xfe" {
		t.Fatalf("the shell turn did not run")
	}

	if r := e.mustPrompt("/undo"); r.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("stopReason = %q", r.StopReason)
	}
	for path, want := range map[string]string{conf: "[server]\nport = 8080\n", gone: "keep me\r\nplease\n", made: "<missing>",
		code: "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n", blob: "<missing>", logo: "\x89PNG\x00\x01\xff"} {
		if got := diskOrMissing(t, path); got != want {
			t.Errorf("after /undo: %s = %q, want %q", filepath.Base(path), got, want)
		}
	}
	if buf, _ := e.editor.Buffer(conf); buf != "[server]\nport = 8080\n" {
		t.Errorf("config.toml's buffer = %q", buf)
	}
	want := map[string]string{
		"config.toml": "[server]\nport = 3000\n → [server]\nport = 8080\n",
		"gone.txt":    "<none> → keep me\r\nplease\n",
		"made.txt":    "made\n → ",
	}
	call := undoCall(t, e)
	if got := undoDiffs(call); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("undo diffs %q\nwant       %q: none of a binary file", got, want)
	}
	if notes := undoNotes(call); !strings.Contains(notes, "logo.bin: binary file restored on disk (7 bytes).") ||
		!strings.Contains(notes, "blob.bin: binary file removed.") {
		t.Errorf("the undo's tool call says:\n%s", notes)
	}
	if fmt.Sprint(asked) != "[Undo: blob.bin, made.txt?]" {
		t.Errorf("asked %q: the removals only", asked)
	}
	if msg := lastMessage(e); !strings.Contains(msg, "Codex no longer has these turns") ||
		!strings.Contains(msg, "restored logo.bin") || !strings.Contains(msg, "written on disk (an editor buffer holds text only): logo.bin.") {
		t.Errorf("/undo said %q", msg)
	}

	e.mock.Enqueue(mockapi.Reply(mockapi.Message("third")))
	e.mustPrompt("third: what now?")
	if last := lastUserTexts(e); strings.Contains(last, "second: run the shell") || !strings.Contains(last, "first: edit main.go") {
		t.Errorf("the request after /undo still has the undone turn (or lost the first):\n%s", last)
	}

	e.mustPrompt("/undo 2")
	for path, want := range map[string]string{code: "package main\n\nfunc main() {}\n", notes: "<missing>", conf: "[server]\nport = 8080\n"} {
		if got := diskOrMissing(t, path); got != want {
			t.Errorf("after /undo 2: %s = %q, want %q", filepath.Base(path), got, want)
		}
	}
	if buf, _ := e.editor.Buffer(code); buf != "package main\n\nfunc main() {}\n" {
		t.Errorf("main.go's buffer = %q", buf)
	}
	if msg := lastMessage(e); !strings.Contains(msg, "Undid the last 2 turns.") {
		t.Errorf("/undo 2 said %q", msg)
	}
	e.mock.Enqueue(mockapi.Reply(mockapi.Message("fresh")))
	e.mustPrompt("fourth: start again")
	if last := lastUserTexts(e); strings.Contains(last, "first: edit main.go") || strings.Contains(last, "third: what now?") {
		t.Errorf("the request after /undo 2 still has the undone turns:\n%s", last)
	}
}

// diskOrMissing reads a file, "<missing>" when it does not exist.
func diskOrMissing(t *testing.T, p string) string {
	t.Helper()
	if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
		return "<missing>"
	}
	return readDisk(t, p)
}

func TestUndoAsksAboutUserChange(t *testing.T) { eachBackend(t, testUndoAsksAboutUserChange) }

// A file the user changed after the turn is asked about, not overwritten:
// refused, it keeps the user's change and is named. (File tools, and an
// editor that keeps its buffers: the replay corpus has it.)
func testUndoAsksAboutUserChange(t *testing.T, backend string) {
	var question string
	e := start(t, setup{backend: backend, fs: true, mode: "auto",
		permission: func(req acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse {
			for _, ct := range req.ToolCall.Content {
				if ct.Content != nil && ct.Content.Content.Text != nil {
					question += ct.Content.Content.Text.Text
				}
			}
			return fakeeditor.Select("reject_once")
		}})
	conf := e.writeFile("config.toml", "port = 8080\n")
	e.mock.Enqueue(
		mockapi.Reply(acpCall(t, "call_edit", "edit_text_file", map[string]any{"path": conf, "old_string": "8080", "new_string": "3000"})),
		mockapi.Reply(mockapi.Message("changed")),
	)
	e.mustPrompt("change the port")
	// The user edits the file in the editor after the turn.
	e.editor.SetBuffer(conf, "port = 3000\n# mine\n")
	e.mustPrompt("/undo")
	if !strings.Contains(question, "config.toml changed since the turn") {
		t.Errorf("question %q", question)
	}
	if buf, _ := e.editor.Buffer(conf); buf != "port = 3000\n# mine\n" {
		t.Errorf("the user's change was overwritten: %q", buf)
	}
	if msg := lastMessage(e); !strings.Contains(msg, "config.toml (changed since, not allowed)") {
		t.Errorf("/undo said %q", msg)
	}
}

func TestUndoToolTurns(t *testing.T) { eachBackend(t, testUndoToolTurns) }

// Two turns of file-tool edits: /undo restores the last turn's file in the
// editor's buffer (its tool call carries the diff) and the next request
// lacks the turn; /undo 2 takes back that request's turn and the first.
// The replay corpus has it (a replay runs no shell command, and its
// editor keeps its buffers: docs/replay.md).
func testUndoToolTurns(t *testing.T, backend string) {
	e := start(t, setup{backend: backend, fs: true, mode: "auto"})
	code := e.writeFile("main.go", "package main\n\nfunc main() {}\n")
	conf := e.writeFile("config.toml", "[server]\nport = 8080\n")
	e.mock.Enqueue(
		mockapi.Reply(acpCall(t, "call_edit", "edit_text_file", map[string]any{
			"path": code, "old_string": "func main() {}", "new_string": "func main() {\n\tprintln(\"hi\")\n}"})),
		mockapi.Reply(mockapi.Message("edited")),
	)
	e.mustPrompt("first: edit main.go")
	e.mock.Enqueue(
		mockapi.Reply(acpCall(t, "call_conf", "write_text_file", map[string]any{"path": conf, "content": "[server]\nport = 3000\n"})),
		mockapi.Reply(mockapi.Message("written")),
	)
	e.mustPrompt("second: change the port")

	began := time.Now()
	e.mustPrompt("/undo")
	// A figure, not a bound: exec starts an app-server to cut the thread.
	t.Logf("/undo of one turn took %v (%s)", time.Since(began).Round(time.Millisecond), backend)
	if buf, _ := e.editor.Buffer(conf); buf != "[server]\nport = 8080\n" {
		t.Errorf("config.toml's buffer = %q after /undo", buf)
	}
	want := map[string]string{"config.toml": "[server]\nport = 3000\n → [server]\nport = 8080\n"}
	if got := undoDiffs(undoCall(t, e)); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("undo diffs %q\nwant       %q", got, want)
	}
	e.mock.Enqueue(mockapi.Reply(mockapi.Message("third")))
	e.mustPrompt("third: what now?")
	if last := lastUserTexts(e); strings.Contains(last, "second: change the port") || !strings.Contains(last, "first: edit main.go") {
		t.Errorf("the request after /undo still has the undone turn (or lost the first):\n%s", last)
	}
	e.mustPrompt("/undo 2")
	if buf, _ := e.editor.Buffer(code); buf != "package main\n\nfunc main() {}\n" {
		t.Errorf("main.go's buffer = %q after /undo 2", buf)
	}
	if msg := lastMessage(e); !strings.Contains(msg, "Undid the last 2 turns.") || !strings.Contains(msg, "Restored main.go.") {
		t.Errorf("/undo 2 said %q", msg)
	}
	e.mock.Enqueue(mockapi.Reply(mockapi.Message("fresh")))
	e.mustPrompt("fourth: start again")
	if last := lastUserTexts(e); strings.Contains(last, "first: edit main.go") || strings.Contains(last, "third: what now?") {
		t.Errorf("the request after /undo 2 still has the undone turns:\n%s", last)
	}
}

func TestUndoAfterLoadInRestartedAgent(t *testing.T) {
	eachBackend(t, testUndoAfterLoadInRestartedAgent)
}

// /undo after session/load in a restarted agent: the change sets were kept
// with the session; codex forgets the turn of the agent before.
func testUndoAfterLoadInRestartedAgent(t *testing.T, backend string) {
	e := start(t, setup{backend: backend, fs: true, writeThrough: true, mode: "auto"})
	conf := e.writeFile("config.toml", "port = 8080\n")
	e.mock.Enqueue(mockapi.Reply(mockapi.Message("noted")))
	e.mustPrompt("first: remember the port")
	e.mock.Enqueue(
		mockapi.Reply(mockapi.ExecCommand("call_sh", "sed -i 's/8080/3000/' config.toml")),
		mockapi.Reply(mockapi.Message("ran")),
	)
	e.mustPrompt("second: change the port")
	e.stop() // an app-server holds its threads until it exits

	e2 := e.restart(setup{backend: backend, fs: true, writeThrough: true})
	if _, err := e2.editor.Conn.LoadSession(e2.ctx, acpsdk.LoadSessionRequest{SessionId: e.session, Cwd: e.cwd, McpServers: []acpsdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	e2.session = e.session
	if _, err := e2.editor.Conn.SetSessionMode(e2.ctx, acpsdk.SetSessionModeRequest{SessionId: e2.session, ModeId: "auto"}); err != nil {
		t.Fatal(err)
	}
	e2.mustPrompt("/undo")
	if got := readDisk(t, conf); got != "port = 8080\n" {
		t.Errorf("config.toml = %q after /undo", got)
	}
	if msg := lastMessage(e2); !strings.Contains(msg, "Restored config.toml") || !strings.Contains(msg, "Codex no longer has these turns") {
		t.Errorf("/undo said %q", msg)
	}
	e.mock.Enqueue(mockapi.Reply(mockapi.Message("8080")))
	e2.mustPrompt("third: which port?")
	if last := lastUserTexts(e2); strings.Contains(last, "second: change the port") || !strings.Contains(last, "first: remember the port") {
		t.Errorf("the request after /undo still has the undone turn (or lost the first):\n%s", last)
	}
}

func TestUndoDuringTurn(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		// A turn held at the model ends as a user ends one: it goes on
		// (released), or the user cancels it.
		for _, end := range []string{"released", "cancelled"} {
			t.Run(end, func(t *testing.T) { testUndoDuringTurn(t, backend, end) })
		}
	})
}

// /undo while a turn runs is refused and changes nothing: the files on
// disk and in the editor's buffers stay as they are, codex forgets
// nothing, and _codexacp/session/undo is refused too. Once the turn ended
// (released or cancelled), /undo takes back that turn — the last one —
// and the next request has the first turn but not it.
func testUndoDuringTurn(t *testing.T, backend, end string) {
	e := start(t, setup{backend: backend, fs: true, writeThrough: true, mode: "auto"})
	first := e.writeFile("first.txt", "zero\n")
	second := e.writeFile("second.txt", "two\n")
	e.mock.Enqueue(
		mockapi.Reply(acpCall(t, "call_first", "write_text_file", map[string]any{"path": first, "content": "one\n"})),
		mockapi.Reply(mockapi.Message("written")),
	)
	e.mustPrompt("first: write first.txt")

	// The second turn writes second.txt, then is held at the model.
	held, hold := mockapi.Hang(mockapi.Reasoning("thinking it over"))
	defer hold.Release()
	e.mock.Enqueue(
		mockapi.Reply(acpCall(t, "call_second", "write_text_file", map[string]any{"path": second, "content": "TWO\n"})),
		held,
	)
	done := e.promptAsync("second: write second.txt")
	select {
	case <-hold.Reached():
	case <-time.After(60 * time.Second):
		t.Fatal("the second turn never reached the model")
	}
	files := map[string]string{first: "one\n", second: "TWO\n"}
	checkFiles := func(when string, want map[string]string) {
		t.Helper()
		for path, content := range want {
			if got := diskOrMissing(t, path); got != content {
				t.Errorf("%s: %s on disk = %q, want %q", when, filepath.Base(path), got, content)
			}
			if buf, _ := e.editor.Buffer(path); buf != content {
				t.Errorf("%s: %s's buffer = %q, want %q", when, filepath.Base(path), buf, content)
			}
		}
	}
	checkFiles("before /undo", files)
	requests := len(e.mock.Requests())

	r := e.mustPrompt("/undo")
	if r.StopReason != acpsdk.StopReasonEndTurn {
		t.Errorf("/undo during a turn: stopReason %q", r.StopReason)
	}
	if msg := lastMessage(e); !strings.Contains(msg, "Nothing was undone: a turn is running") || !strings.Contains(msg, "wait for it to end (or cancel it)") {
		t.Errorf("/undo during a turn said %q", msg)
	}
	raw, err := e.editor.Conn.CallExtension(e.ctx, "_codexacp/session/undo", map[string]any{"sessionId": e.session})
	var re *acpsdk.RequestError
	if !errors.As(err, &re) || !strings.Contains(re.Message, "a turn is running") {
		t.Errorf("_codexacp/session/undo during a turn = %s, %v; want refused", raw, err)
	}
	checkFiles("after the refused undos", files)
	if n := len(e.mock.Requests()); n != requests {
		t.Errorf("the refused undos made %d model requests", n-requests)
	}

	switch end {
	case "released":
		hold.Release()
		if r := e.awaitAnswer(done, "the held turn"); r.StopReason != acpsdk.StopReasonEndTurn {
			t.Errorf("the held turn's stopReason = %q", r.StopReason)
		}
	case "cancelled":
		e.cancelAndExpectCancelled(done)
	}
	checkFiles("after the turn", files)

	e.mustPrompt("/undo")
	if msg := lastMessage(e); !strings.Contains(msg, "Undid the last turn.") || !strings.Contains(msg, "Restored second.txt.") {
		t.Errorf("/undo after the turn said %q", msg)
	}
	checkFiles("after /undo", map[string]string{first: "one\n", second: "two\n"})
	e.mock.Enqueue(mockapi.Reply(mockapi.Message("third")))
	e.mustPrompt("third: what now?")
	if last := lastUserTexts(e); strings.Contains(last, "second: write second.txt") || !strings.Contains(last, "first: write first.txt") {
		t.Errorf("the request after /undo still has the undone turn (or lost the first):\n%s", last)
	}
}

// /undo in a forked session (session/fork: app-server only) takes back a
// turn the source made before the fork: its files, and codex's memory of
// it in the fork's thread; the source keeps the turn (its next request
// carries it, /status still counts it).
func TestUndoInFork(t *testing.T) {
	e := start(t, setup{backend: "app-server", fs: true, writeThrough: true, mode: "auto"})
	file := e.writeFile("a.txt", "zero\n")
	e.mock.Enqueue(
		mockapi.Reply(mockapi.Message("noted")),
	)
	e.mustPrompt("first: remember zero")
	e.mock.Enqueue(
		mockapi.Reply(acpCall(t, "call_a", "write_text_file", map[string]any{"path": file, "content": "one\n"})),
		mockapi.Reply(mockapi.Message("written")),
	)
	e.mustPrompt("second: write a.txt")
	source := e.session
	fork, err := e.editor.Conn.UnstableForkSession(e.ctx, acpsdk.UnstableForkSessionRequest{SessionId: source, Cwd: e.cwd})
	if err != nil {
		t.Fatal(err)
	}
	e.session = fork.SessionId
	if _, err := e.editor.Conn.SetSessionMode(e.ctx, acpsdk.SetSessionModeRequest{SessionId: e.session, ModeId: "auto"}); err != nil {
		t.Fatal(err)
	}
	e.mustPrompt("/undo")
	if msg := lastMessage(e); !strings.Contains(msg, "Restored a.txt.") || !strings.Contains(msg, "Codex no longer has these turns") {
		t.Fatalf("/undo in the fork said %q", msg)
	}
	if got := readDisk(t, file); got != "zero\n" {
		t.Errorf("a.txt = %q after /undo in the fork", got)
	}
	if buf, _ := e.editor.Buffer(file); buf != "zero\n" {
		t.Errorf("a.txt's buffer = %q after /undo in the fork", buf)
	}
	e.mock.Enqueue(mockapi.Reply(mockapi.Message("fork goes on")))
	e.mustPrompt("third: in the fork")
	if last := lastUserTexts(e); strings.Contains(last, "second: write a.txt") || !strings.Contains(last, "first: remember zero") {
		t.Errorf("the fork's request after /undo still has the undone turn (or lost the first):\n%s", last)
	}

	// The source still has its turn: in codex's memory and in its change sets.
	e.session = source
	e.mustPrompt("/status")
	if msg := lastMessage(e); !strings.Contains(msg, "Turns /undo can take back: 2") {
		t.Errorf("the source's /status:\n%s", msg)
	}
	e.mock.Enqueue(mockapi.Reply(mockapi.Message("source goes on")))
	e.mustPrompt("third: in the source")
	if last := lastUserTexts(e); !strings.Contains(last, "second: write a.txt") || strings.Contains(last, "third: in the fork") {
		t.Errorf("the source's next request lost its turn (or has the fork's):\n%s", last)
	}
}
