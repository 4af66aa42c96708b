package e2e_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/e2e/mockapi"
)

// outsideDir is a directory outside the workspace and outside /tmp (codex's
// workspace-write sandbox lets commands write under /tmp). The test's
// corpus transcript names it as a directory under corpusRoot
// (noteOutsideDir).
func outsideDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "codexacp-outside-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	noteOutsideDir(t, dir)
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

// A trusted project's .codex/config.toml is the user's configuration too:
// codex reads it for that workspace (config/read with the session's cwd),
// so the session starts in "Your settings" with the project's sandbox, and
// a command may write in the project's writable root but nowhere else. In
// a project codex does not trust, codex ignores the file, and so do the
// modes.
func TestProjectSandboxSettingsKept(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		for _, trusted := range []bool{true, false} {
			t.Run(map[bool]string{true: "trusted", false: "untrusted"}[trusted], func(t *testing.T) {
				testProjectSettings(t, backend, trusted)
			})
		}
	})
}

func testProjectSettings(t *testing.T, backend string, trusted bool) {
	first := start(t, setup{backend: backend, fs: true})
	projectRoot, elsewhere := outsideDir(t), outsideDir(t)
	project := fmt.Sprintf("approval_policy = \"never\"\nsandbox_mode = \"workspace-write\"\n\n"+
		"[sandbox_workspace_write]\nwritable_roots = [%q]\n", projectRoot)
	first.writeFile(filepath.Join(".codex", "config.toml"), project)
	if trusted {
		user := fmt.Sprintf("[projects.%q]\ntrust_level = \"trusted\"\n", first.cwd)
		if err := os.WriteFile(filepath.Join(first.codexHome, "config.toml"), []byte(user), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	e, resp := restartWithSession(t, first)
	wantMode := map[bool]acpsdk.SessionModeId{true: "custom", false: "ask"}[trusted]
	if resp.Modes.CurrentModeId != wantMode {
		t.Fatalf("current mode %s, want %s", resp.Modes.CurrentModeId, wantMode)
	}
	// On app-server the project's settings come from the turns' own
	// codex, which the session's thread then uses: one start, not two
	// (the user's config.toml names no setting: nothing is read at launch).
	if backend == "app-server" {
		if n := strings.Count(e.stderr.String(), `msg="codex app-server started"`); n != 1 {
			t.Errorf("%d codex app-servers started, want 1", n)
		}
	}
	if !trusted {
		return
	}
	e.mock.Enqueue(
		mockapi.Reply(mockapi.ExecCommand("call_touch", "touch "+filepath.Join(projectRoot, "a.txt")+"; touch "+filepath.Join(elsewhere, "a.txt")+"; true")),
		mockapi.Reply(mockapi.Message("done")),
	)
	if r := e.mustPrompt("touch"); r.StopReason != acpsdk.StopReasonEndTurn {
		t.Errorf("stopReason = %q", r.StopReason)
	}
	if _, err := os.Stat(filepath.Join(projectRoot, "a.txt")); err != nil {
		t.Errorf("not written in the project's writable root: %v", err)
	}
	if _, err := os.Stat(filepath.Join(elsewhere, "a.txt")); err == nil {
		t.Error("written outside the sandbox")
	}
	if n := len(permissionRequests(e)); n != 0 {
		t.Errorf("%d permission requests; the project's policy never asks", n)
	}
}

// Codex 0.169 refuses the legacy profile selector (`profile = "…"` in
// config.toml, its [profiles.…] tables with it): config/read fails with its
// reason, which codexacp logs at start, and the modes are the presets
// alone. (Its replacement, `codex --profile NAME`, has no app-server
// equivalent; docs/modes.md.)
func TestLegacyProfileRefusedByCodex(t *testing.T) {
	first := start(t, setup{fs: true})
	config := "profile = \"strict\"\n\n[profiles.strict]\napproval_policy = \"never\"\nsandbox_mode = \"workspace-write\"\n"
	if err := os.WriteFile(filepath.Join(first.codexHome, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	e, resp := restartWithSession(t, first)
	if resp.Modes.CurrentModeId != "ask" {
		t.Errorf("current mode %s, want the presets' default", resp.Modes.CurrentModeId)
	}
	// session/new answers before codex's config/read does: the reason is
	// logged when that answer comes.
	logged := func() bool {
		log := e.stderr.String()
		return strings.Contains(log, "cannot read your codex sandbox and approval settings") && strings.Contains(log, "legacy `profile = \\\"strict\\\"`")
	}
	if !eventually(30*time.Second, logged) {
		t.Errorf("codex's reason is not in the log:\n%s", e.stderr.String())
	}
}

// restartWithSession restarts the agent (it reads the user's settings at
// start) and opens a session in the workspace, returning session/new's
// answer.
func restartWithSession(t *testing.T, first *env) (*env, acpsdk.NewSessionResponse) {
	t.Helper()
	e := first.restart(setup{fs: true})
	resp, err := e.editor.Conn.NewSession(e.ctx, acpsdk.NewSessionRequest{Cwd: e.cwd, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	e.session = resp.SessionId
	return e, resp
}
