package e2e_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/e2e/mockapi"
)

// Files a shell command changed reach the editor as a completed edit tool
// call with a diff per file, right after the command's own tool call
// completes (docs/shell-edits.md): real codex runs `sed -i`, `rm` and a
// redirection in auto mode, in a git workspace and in a plain directory.
func TestShellEditsShowAsDiffs(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		for _, git := range []bool{true, false} {
			name := "plain"
			if git {
				name = "git"
			}
			t.Run(name, func(t *testing.T) {
				e := start(t, setup{backend: backend, fs: true, mode: "auto"})
				a := e.writeFile("config.toml", "[server]\nport = 8080\nname = \"x\"\n")
				b := e.writeFile("old.txt", "going away\n")
				if git {
					gitIn(t, e.cwd, "init", "-q", ".")
					gitIn(t, e.cwd, "add", ".")
					gitIn(t, e.cwd, "commit", "-q", "-m", "init")
				}
				e.mock.Enqueue(
					mockapi.Reply(mockapi.ExecCommand("call_sed", "sed -i 's/8080/3000/' config.toml && rm old.txt && printf 'made\\n' > new.txt")),
					mockapi.Reply(mockapi.Message("done")),
				)
				if r := e.mustPrompt("change the port"); r.StopReason != acpsdk.StopReasonEndTurn {
					t.Fatalf("stopReason = %q", r.StopReason)
				}
				if got := readDisk(t, a); got != "[server]\nport = 3000\nname = \"x\"\n" {
					t.Fatalf("the command did not run: config.toml = %q", got)
				}
				edit := shellEditsAfterCommand(t, e)
				want := map[string]struct {
					old *string
					new string
				}{
					a:                               {ptr("[server]\nport = 8080\nname = \"x\"\n"), "[server]\nport = 3000\nname = \"x\"\n"},
					b:                               {ptr("going away\n"), ""},
					filepath.Join(e.cwd, "new.txt"): {nil, "made\n"},
				}
				if len(edit.Content) != len(want) {
					t.Fatalf("content = %+v", edit.Content)
				}
				for _, c := range edit.Content {
					d := c.Diff
					if d == nil {
						t.Fatalf("content without a diff: %+v", c)
					}
					w, ok := want[d.Path]
					if !ok {
						t.Errorf("diff of %s", d.Path)
						continue
					}
					if (d.OldText == nil) != (w.old == nil) || d.OldText != nil && *d.OldText != *w.old || d.NewText != w.new {
						t.Errorf("%s: old %v new %q, want old %v new %q", d.Path, str(d.OldText), d.NewText, str(w.old), w.new)
					}
				}
				if edit.Title != "Shell edits: config.toml, new.txt, old.txt" {
					t.Errorf("title = %q", edit.Title)
				}
			})
		}
	})
}

// In ask mode a command runs only once the user allowed it, outside the
// read-only sandbox: its edits are shown too.
func TestShellEditsOfAnApprovedCommand(t *testing.T) {
	e := start(t, setup{backend: "app-server", fs: true, permission: func(acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse {
		return acpsdk.RequestPermissionResponse{Outcome: acpsdk.RequestPermissionOutcome{Selected: &acpsdk.RequestPermissionOutcomeSelected{Outcome: "selected", OptionId: "run_once"}}}
	}})
	a := e.writeFile("a.txt", "alpha\n")
	e.mock.Enqueue(
		mockapi.Reply(escalatedCommand(t, "call_sed", "sed -i 's/alpha/ALPHA/' "+a, "edit the file")),
		mockapi.Reply(mockapi.Message("done")),
	)
	e.mustPrompt("edit it")
	if got := readDisk(t, a); got != "ALPHA\n" {
		t.Fatalf("the command did not run: %q", got)
	}
	edit := shellEditsAfterCommand(t, e)
	if len(edit.Content) != 1 || edit.Content[0].Diff == nil || edit.Content[0].Diff.Path != a ||
		str(edit.Content[0].Diff.OldText) != "alpha\n" || edit.Content[0].Diff.NewText != "ALPHA\n" {
		t.Errorf("content = %+v", edit.Content)
	}
}

// shellEditsAfterCommand returns the turn's shell edits tool call, checking
// that it is the only one, an edit, completed, and sent right after the
// completion of the command it belongs to.
func shellEditsAfterCommand(t *testing.T, e *env) *acpsdk.SessionUpdateToolCall {
	t.Helper()
	tools := toolUpdates(e)
	var edit *acpsdk.SessionUpdateToolCall
	for i, u := range tools {
		tc := u.ToolCall
		if tc == nil || !strings.HasPrefix(string(tc.ToolCallId), "shell-edits-") {
			continue
		}
		if edit != nil {
			t.Fatalf("a second shell edits tool call: %+v", tc)
		}
		edit = tc
		if tc.Kind != acpsdk.ToolKindEdit || tc.Status != acpsdk.ToolCallStatusCompleted {
			t.Errorf("kind %q status %q", tc.Kind, tc.Status)
		}
		prev := tools[max(i-1, 0)].ToolCallUpdate
		if i == 0 || prev == nil || prev.Status == nil || *prev.Status != acpsdk.ToolCallStatusCompleted ||
			"shell-edits-"+prev.ToolCallId != tc.ToolCallId {
			t.Errorf("the shell edits do not follow their command's completion: %+v", tools)
		}
	}
	if edit == nil {
		t.Fatalf("no shell edits tool call in %+v", tools)
	}
	return edit
}

func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func ptr(s string) *string { return &s }

func str(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}
