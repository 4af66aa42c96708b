package e2e_test

import (
	"os"
	"path/filepath"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/e2e/mockapi"
)

// Issue 22's first row: Emacs keeps a lock link, `.#name` -> user@host.pid:ts
// (dangling), beside every buffer with unsaved changes. In auto mode, in a
// git workspace holding one untracked, the first prompt used to end the
// agent (a nil entry in the shell-edits baseline; exit status 2). Real codex
// runs a command that edits a file: the turn completes, the edit shows as a
// diff, and the agent answers a second prompt.
func TestShellEditsBesideAnEmacsLockLink(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		e := start(t, setup{backend: backend, fs: true, mode: "auto"})
		notes := e.writeFile("notes.txt", "draft\n")
		gitIn(t, e.cwd, "init", "-q", ".")
		gitIn(t, e.cwd, "add", ".")
		gitIn(t, e.cwd, "commit", "-q", "-m", "init")
		if err := os.Symlink("user@host.4242:1700000000", filepath.Join(e.cwd, ".#notes.txt")); err != nil {
			t.Fatal(err)
		}
		e.mock.Enqueue(
			mockapi.Reply(mockapi.ExecCommand("call_sed", "sed -i 's/draft/final/' notes.txt")),
			mockapi.Reply(mockapi.Message("done")),
		)
		if r := e.mustPrompt("finish the notes"); r.StopReason != acpsdk.StopReasonEndTurn {
			t.Fatalf("stopReason = %q", r.StopReason)
		}
		if got := readDisk(t, notes); got != "final\n" {
			t.Fatalf("the command did not run: notes.txt = %q", got)
		}
		edit := shellEditsAfterCommand(t, e)
		if len(edit.Content) != 1 || edit.Content[0].Diff == nil || edit.Content[0].Diff.Path != notes ||
			str(edit.Content[0].Diff.OldText) != "draft\n" || edit.Content[0].Diff.NewText != "final\n" {
			t.Fatalf("content = %+v", edit.Content)
		}
		e.mock.Enqueue(mockapi.Reply(mockapi.Message("still here")))
		if r := e.mustPrompt("are you there?"); r.StopReason != acpsdk.StopReasonEndTurn {
			t.Fatalf("second prompt: stopReason = %q", r.StopReason)
		}
	})
}
