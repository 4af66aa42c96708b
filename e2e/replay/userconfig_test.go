package replay

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/codexacp/codexacp/codex"
	"github.com/codexacp/codexacp/record"
)

// The recorded settings become a config.toml that names them (so the
// replayed agent asks codex, as the recorded one did); no settings, no file.
func TestWriteUserConfig(t *testing.T) {
	granular := codex.UserConfig{ApprovalPolicy: codex.ApprovalGranular, GranularApproval: []byte(`{"granular":{"rules":true,"sandbox_approval":false}}`)}
	user := codex.UserConfig{ApprovalPolicy: codex.ApprovalNever, SandboxMode: codex.SandboxWorkspaceWrite, Model: "gpt-5.5",
		WorkspaceWrite: &codex.WorkspaceWrite{WritableRoots: []string{"/w/a \"b\"", "/w/c"}}}
	tests := []struct {
		name    string
		entries []record.Entry
		want    string // "": no file
	}{
		{"none", []record.Entry{{Kind: record.KindStart}}, ""},
		{"settings", []record.Entry{{Kind: record.KindStart}, {Kind: record.KindUserConfig, Result: user.ConfigRead()}},
			"approval_policy = \"never\"\nmodel = \"gpt-5.5\"\nsandbox_mode = \"workspace-write\"\n" +
				`sandbox_workspace_write = { "exclude_slash_tmp" = false, "exclude_tmpdir_env_var" = false, "network_access" = false, "writable_roots" = ["/w/a \"b\"", "/w/c"] }` + "\n"},
		{"granular approval", []record.Entry{{Kind: record.KindUserConfig, Result: granular.ConfigRead()}},
			`approval_policy = { "granular" = { "rules" = true, "sandbox_approval" = false } }` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			if err := writeUserConfig(tt.entries, home); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join(home, "config.toml"))
			if tt.want == "" {
				if err == nil {
					t.Errorf("config.toml written: %s", got)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Errorf("config.toml = %q (%v), want %q", got, err, tt.want)
			}
		})
	}
}
