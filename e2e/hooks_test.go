package e2e_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
)

// TestHooksTrust: a project's codex hook (.codex/hooks.json, in a project
// the user's config trusts) is listed by /hooks as not trusted; /hooks
// trust asks the user with the command shown; a no leaves the user's
// config.toml as it was and the hook untrusted; a yes makes codex record
// the hook's hash (hooks.state."<key>".trusted_hash, written by codex's
// config/batchWrite) and list it as trusted. docs/commands.md, /hooks.
func TestHooksTrust(t *testing.T) {
	const command = "echo hook-ran >> hooks.log"
	for _, tc := range []struct {
		name    string
		answer  string
		trusted bool
	}{
		{"declined", "reject", false},
		{"trusted", "trust", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked []acpsdk.RequestPermissionRequest
			e := start(t, setup{backend: "app-server", fs: true,
				permission: func(req acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse {
					asked = append(asked, req)
					return acpsdk.RequestPermissionResponse{Outcome: acpsdk.NewRequestPermissionOutcomeSelected(acpsdk.PermissionOptionId(tc.answer))}
				}})
			// A project codex trusts, with a hook; codex reads both when
			// asked for the hooks.
			if err := os.MkdirAll(filepath.Join(e.cwd, ".git"), 0o755); err != nil {
				t.Fatal(err)
			}
			e.writeFile(".codex/hooks.json", `{"hooks":{"PreToolUse":[{"matcher":"shell","hooks":[{"type":"command","command":"`+command+`"}]}]}}`)
			config := filepath.Join(e.codexHome, "config.toml")
			before := `[projects."` + e.cwd + `"]` + "\ntrust_level = \"trusted\"\n"
			if err := os.WriteFile(config, []byte(before), 0o600); err != nil {
				t.Fatal(err)
			}

			e.mustPrompt("/hooks")
			if got := agentText(e); !strings.Contains(got, "1. on preToolUse (matching `shell`), project") ||
				!strings.Contains(got, "runs `"+command+"` — **not trusted: not run**") {
				t.Fatalf("/hooks:\n%s", got)
			}
			n := len(e.editor.Updates())
			e.mustPrompt("/hooks trust")
			if len(asked) != 1 {
				t.Fatalf("%d questions, want 1", len(asked))
			}
			shown := asked[0].ToolCall.Content[0].Content.Content.Text.Text
			if !strings.Contains(shown, "```\n"+command+"\n```") {
				t.Errorf("the question does not show the command:\n%s", shown)
			}
			got := agentTextSince(e, n)
			after, err := os.ReadFile(config)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.trusted {
				if string(after) != before {
					t.Errorf("declined, yet config.toml changed:\n%s", after)
				}
				if !strings.Contains(got, "Hook 1 not trusted") || !strings.Contains(got, "**not trusted: not run**") {
					t.Errorf("/hooks trust said:\n%s", got)
				}
				return
			}
			if !strings.Contains(string(after), `[hooks.state."`+filepath.Join(e.cwd, ".codex", "hooks.json")+`:pre_tool_use:0:0"]`) ||
				!strings.Contains(string(after), `trusted_hash = "sha256:`) || !strings.HasPrefix(string(after), before) {
				t.Errorf("config.toml after the trust:\n%s", after)
			}
			if !strings.Contains(got, "Hook 1 trusted") || !strings.Contains(got, "runs `"+command+"` — trusted") {
				t.Errorf("/hooks trust said:\n%s", got)
			}
		})
	}
}
