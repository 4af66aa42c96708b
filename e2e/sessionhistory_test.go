package e2e_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/e2e/mockapi"
)

// additionalDirectories are workspace roots like cwd: in auto mode an edit
// there is applied, one outside every root is refused.
func TestAdditionalDirectoryEdits(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		e := start(t, setup{backend: backend, fs: true})
		addDir, elsewhere := outsideDir(t), outsideDir(t)
		resp, err := e.editor.Conn.NewSession(e.ctx, acpsdk.NewSessionRequest{Cwd: e.cwd, AdditionalDirectories: []string{addDir}, McpServers: []acpsdk.McpServer{}})
		if err != nil {
			t.Fatal(err)
		}
		e.session = resp.SessionId
		if _, err := e.editor.Conn.SetSessionMode(e.ctx, acpsdk.SetSessionModeRequest{SessionId: e.session, ModeId: "auto"}); err != nil {
			t.Fatal(err)
		}
		inside, outside := filepath.Join(addDir, "a.txt"), filepath.Join(elsewhere, "b.txt")
		e.mock.Enqueue(
			mockapi.Reply(acpCall(t, "c1", "write_text_file", map[string]any{"path": inside, "content": "in\n"})),
			mockapi.Reply(acpCall(t, "c2", "write_text_file", map[string]any{"path": outside, "content": "out\n"})),
			mockapi.Reply(mockapi.Message("done")),
		)
		e.mustPrompt("write both")
		if got, _ := e.editor.Buffer(inside); got != "in\n" {
			t.Errorf("edit in the additional directory: buffer %q", got)
		}
		if _, open := e.editor.Buffer(outside); open {
			t.Error("a write outside every root reached the editor")
		}
		if out := toolOutput(t, e, "c2"); !strings.Contains(out, "outside the workspace") || !strings.Contains(out, addDir) {
			t.Errorf("refusal = %s", out)
		}
		if !strings.Contains(e.initializeResult(), `"additionalDirectories":{}`) {
			t.Error("additionalDirectories not advertised")
		}
	})
}

// session/load replays the tool calls of the conversation, not only its
// messages: a shell command with its command and output, an edit with its
// diff, a created file as a diff from nothing, an overwritten one with the
// diff from its old text (which the session kept: the rollout has not it).
func TestLoadReplaysToolCalls(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		e := start(t, setup{backend: backend, mode: "auto"})
		path := e.writeFile("notes.txt", "old line\n")
		overwritten := e.writeFile("config.txt", "before\n")
		created := filepath.Join(e.cwd, "created.txt")
		e.mock.Enqueue(
			mockapi.Reply(mockapi.ExecCommand("call_sh", "echo shell-said-this")),
			mockapi.Reply(acpCall(t, "call_ed", "edit_text_file", map[string]any{"path": path, "old_string": "old line", "new_string": "new line"})),
			mockapi.Reply(acpCall(t, "call_new", "write_text_file", map[string]any{"path": created, "content": "fresh\n"})),
			mockapi.Reply(acpCall(t, "call_over", "write_text_file", map[string]any{"path": overwritten, "content": "after\n"})),
			mockapi.Reply(mockapi.Message("both done")),
		)
		e.mustPrompt("run and edit")
		if backend == "app-server" {
			e.stop() // the app-server holds the thread until it exits
		}
		e2 := e.restart(setup{backend: backend})
		if _, err := e2.editor.Conn.LoadSession(e2.ctx, acpsdk.LoadSessionRequest{SessionId: e.session, Cwd: e.cwd, McpServers: []acpsdk.McpServer{}}); err != nil {
			t.Fatal(err)
		}
		// The loaded session offers its commands (the app-server's come
		// after its skills/list); waiting for them also makes the session
		// end at the same point in every run (the corpus records it).
		if cmds, err := e2.editor.WaitForCommands(e2.ctx, e.session); err != nil || len(cmds) == 0 {
			t.Errorf("the loaded session's commands: %+v (%v)", cmds, err)
		}
		var shell, edit, write, over *acpsdk.SessionUpdateToolCall
		for _, n := range e2.editor.Updates() {
			tc := n.Update.ToolCall
			switch {
			case tc == nil:
			case tc.Kind == acpsdk.ToolKindExecute:
				shell = tc
			case tc.Kind == acpsdk.ToolKindEdit && tc.Locations[0].Path == path:
				edit = tc
			case tc.Kind == acpsdk.ToolKindEdit && tc.Locations[0].Path == overwritten:
				over = tc
			case tc.Kind == acpsdk.ToolKindEdit:
				write = tc
			}
		}
		if write == nil || len(write.Content) != 1 || write.Content[0].Diff == nil || write.Content[0].Diff.NewText != "fresh\n" || write.Content[0].Diff.OldText != nil {
			t.Errorf("created file replayed as %+v", write)
		}
		if over == nil || len(over.Content) != 1 || over.Content[0].Diff == nil || over.Content[0].Diff.NewText != "after\n" ||
			over.Content[0].Diff.OldText == nil || *over.Content[0].Diff.OldText != "before\n" {
			b, _ := json.Marshal(over)
			t.Errorf("overwritten file replayed as %s, want the diff before → after", b)
		}
		if shell == nil || !strings.Contains(shell.Title, "echo shell-said-this") || shell.Status != acpsdk.ToolCallStatusCompleted {
			t.Fatalf("shell call replayed as %+v", shell)
		}
		if b, _ := json.Marshal(shell.Content); !strings.Contains(string(b), "shell-said-this") {
			t.Errorf("shell output not replayed: %s", b)
		}
		if edit == nil || edit.Status != acpsdk.ToolCallStatusCompleted || len(edit.Locations) != 1 || edit.Locations[0].Path != path {
			t.Fatalf("edit replayed as %+v", edit)
		}
		// As the live turn showed it: diff content (the changed region).
		if len(edit.Content) != 1 || edit.Content[0].Diff == nil || edit.Content[0].Diff.NewText != "new line\n" ||
			edit.Content[0].Diff.OldText == nil || *edit.Content[0].Diff.OldText != "old line\n" {
			b, _ := json.Marshal(edit.Content)
			t.Errorf("edit replayed as %s, want the diff old line → new line", b)
		}
	})
}
