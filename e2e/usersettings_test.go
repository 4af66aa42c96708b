package e2e_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/e2e/mockapi"
)

// outsideDir is a directory outside the workspace and outside /tmp (codex's
// workspace-write sandbox lets commands write under /tmp).
func outsideDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "codexacp-outside-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// A user who configured codex's sandbox in config.toml keeps it: the new
// session starts in "Your settings", where a shell command may write in the
// user's writable root and the session's additional directory but nowhere
// else, and (app-server) approval_policy = "never" means codex asks
// nothing; the auto preset keeps the user's writable root beside the
// additional directory.
func TestUserSandboxSettingsKept(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		first := start(t, setup{backend: backend, fs: true})
		userRoot, addDir, elsewhere := outsideDir(t), outsideDir(t), outsideDir(t)
		config := fmt.Sprintf("approval_policy = \"never\"\nsandbox_mode = \"workspace-write\"\n\n"+
			"[sandbox_workspace_write]\nwritable_roots = [%q]\nnetwork_access = false\n", userRoot)
		if err := os.WriteFile(filepath.Join(first.codexHome, "config.toml"), []byte(config), 0o600); err != nil {
			t.Fatal(err)
		}
		// codexacp reads the user's settings when it starts.
		e := first.restart(setup{fs: true})
		resp, err := e.editor.Conn.NewSession(e.ctx, acpsdk.NewSessionRequest{Cwd: e.cwd, AdditionalDirectories: []string{addDir}, McpServers: []acpsdk.McpServer{}})
		if err != nil {
			t.Fatal(err)
		}
		e.session = resp.SessionId
		var ids []string
		for _, m := range resp.Modes.AvailableModes {
			ids = append(ids, string(m.Id))
		}
		if resp.Modes.CurrentModeId != "custom" || !slices.Equal(ids, []string{"custom", "read-only", "ask", "auto", "full-access"}) {
			t.Fatalf("modes %v, current %s; want the user's settings first and chosen", ids, resp.Modes.CurrentModeId)
		}

		touch := func(name string) {
			t.Helper()
			cmd := ""
			for _, d := range []string{userRoot, addDir, elsewhere} {
				cmd += "touch " + filepath.Join(d, name) + "; "
			}
			e.mock.Enqueue(
				mockapi.Reply(mockapi.ExecCommand("call_"+name, cmd+"true")),
				mockapi.Reply(mockapi.Message("done")),
			)
			if r := e.mustPrompt("touch " + name); r.StopReason != acpsdk.StopReasonEndTurn {
				t.Errorf("stopReason = %q", r.StopReason)
			}
			for _, c := range []struct {
				dir  string
				want bool
			}{{userRoot, true}, {addDir, true}, {elsewhere, false}} {
				if _, err := os.Stat(filepath.Join(c.dir, name)); (err == nil) != c.want {
					t.Errorf("%s: written in %s = %v, want %v", name, c.dir, err == nil, c.want)
				}
			}
		}
		touch("custom.txt")
		if backend == "app-server" {
			// approval_policy = "never": a command that needs more than the
			// sandbox fails without a question.
			target := filepath.Join(elsewhere, "escalated.txt")
			e.mock.Enqueue(
				mockapi.Reply(escalatedCommand(t, "call_esc", "touch "+target, "needs to write outside")),
				mockapi.Reply(mockapi.Message("done")),
			)
			e.mustPrompt("escalate")
			if _, err := os.Stat(target); err == nil {
				t.Error("an escalated command ran although the user's policy never asks")
			}
		}
		if n := len(permissionRequests(e)); n != 0 {
			t.Errorf("%d permission requests; the user's policy never asks", n)
		}

		if _, err := e.editor.Conn.SetSessionMode(e.ctx, acpsdk.SetSessionModeRequest{SessionId: e.session, ModeId: "auto"}); err != nil {
			t.Fatal(err)
		}
		touch("auto.txt")
	})
}
