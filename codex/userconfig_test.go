package codex

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseConfigRead(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     UserConfig
		err      string
	}{
		{"nothing set", `{"config":{"approval_policy":null,"sandbox_mode":null,"sandbox_workspace_write":null,"model":null,"model_reasoning_effort":null}}`, UserConfig{}, ""},
		{"model and effort", `{"config":{"approval_policy":null,"model":"gpt-5.4","model_reasoning_effort":"high"}}`,
			UserConfig{Model: "gpt-5.4", ReasoningEffort: "high"}, ""},
		{"all set",
			`{"config":{"approval_policy":"never","sandbox_mode":"workspace-write","sandbox_workspace_write":{"writable_roots":["/c"],"network_access":true,"exclude_tmpdir_env_var":false,"exclude_slash_tmp":true}}}`,
			UserConfig{ApprovalPolicy: ApprovalNever, SandboxMode: SandboxWorkspaceWrite,
				WorkspaceWrite: &WorkspaceWrite{WritableRoots: []string{"/c"}, NetworkAccess: true, ExcludeSlashTmp: true}}, ""},
		{"granular", `{"config":{"approval_policy":{"granular":{"rules":true}}}}`,
			UserConfig{ApprovalPolicy: ApprovalGranular, GranularApproval: []byte(`{"granular":{"rules":true}}`)}, ""},
		{"unknown sandbox", `{"config":{"sandbox_mode":"open"}}`, UserConfig{}, `unknown sandbox_mode "open"`},
		{"unknown approval", `{"config":{"approval_policy":"sometimes"}}`, UserConfig{}, `unknown approval_policy "sometimes"`},
		{"not JSON", `nope`, UserConfig{}, "config/read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseConfigRead([]byte(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
			if again, err := ParseConfigRead(got.ConfigRead()); err != nil || !reflect.DeepEqual(again, got) {
				t.Errorf("ParseConfigRead(ConfigRead()) = %+v, %v; want %+v", again, err, got)
			}
			if got.Configured() != (tc.name != "nothing set" && tc.name != "model and effort") {
				t.Errorf("Configured() = %v", got.Configured())
			}
		})
	}
}

func TestUserConfigUnset(t *testing.T) {
	mention := "[sandbox_workspace_write]\nwritable_roots = [\"/x\"]\n"
	for _, tc := range []struct {
		name      string
		home, sys map[string]string // file name → content; "/" makes a directory
		noSys     bool
		overrides []string
		want      bool
	}{
		{name: "nothing anywhere", noSys: true, want: true},
		{name: "empty system dir", sys: map[string]string{}, want: true},
		{name: "other settings", home: map[string]string{"config.toml": "model_provider = \"mock\"\n[model_providers.mock]\nname = \"m\"\n[features]\nplugins = false\n"},
			sys: map[string]string{"config.toml": "analytics.enabled = false\n"}, overrides: []string{"model=\"x\"", `model_providers.mock={name="mock"}`}, want: true},
		{name: "home model", home: map[string]string{"config.toml": "model = \"gpt-5.4\"\n"}, noSys: true},
		{name: "home effort in a profile", home: map[string]string{"config.toml": "[profiles.deep]\n  model_reasoning_effort = \"high\"\n"}, noSys: true},
		{name: "home dotted profile model", home: map[string]string{"config.toml": "profiles.p.\"model\" = \"x\"\n"}, noSys: true},
		{name: "system model", sys: map[string]string{"managed_config.toml": "model=\"x\"\n"}},
		{name: "home table", home: map[string]string{"config.toml": mention}, noSys: true},
		{name: "home dotted key", home: map[string]string{"config.toml": "sandbox_workspace_write.network_access = true\n"}, noSys: true},
		{name: "home approval", home: map[string]string{"config.toml": "approval_policy = \"never\"\n"}, noSys: true},
		{name: "home quoted key", home: map[string]string{"config.toml": "\"sandbox_mode\" = \"read-only\"\n"}, noSys: true},
		{name: "managed config", sys: map[string]string{"managed_config.toml": "sandbox_mode = \"read-only\"\n"}},
		{name: "requirements naming a mode", sys: map[string]string{"requirements.toml": "allowed_sandbox_modes = [\"read-only\"]\n"}},
		{name: "override", noSys: true, overrides: []string{"approval_policy=\"never\""}},
		{name: "override of a table entry", noSys: true, overrides: []string{"sandbox_workspace_write.writable_roots=[\"/x\"]"}},
		{name: "override value only mentions it", noSys: true, overrides: []string{"notify=[\"sandbox_mode\"]"}, want: true},
		{name: "unreadable home config", home: map[string]string{"config.toml": "/"}, noSys: true},
		{name: "unreadable system file", sys: map[string]string{"config.toml": "/"}},
		{name: "legacy profile selected", home: map[string]string{"config.toml": "profile = \"deep\"\n"}, noSys: true},
		{name: "profile override", noSys: true, overrides: []string{"profile=\"deep\""}},
		{name: "a key ending in profile", home: map[string]string{"config.toml": "default_permission_profile = \"x\"\n"}, noSys: true, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home, sys := t.TempDir(), filepath.Join(t.TempDir(), "codex")
			write := func(dir string, files map[string]string) {
				for name, content := range files {
					p := filepath.Join(dir, name)
					var err error
					if content == "/" {
						err = os.MkdirAll(p, 0o755)
					} else {
						err = os.WriteFile(p, []byte(content), 0o644)
					}
					if err != nil {
						t.Fatal(err)
					}
				}
			}
			write(home, tc.home)
			if !tc.noSys {
				if err := os.Mkdir(sys, 0o755); err != nil {
					t.Fatal(err)
				}
				write(sys, tc.sys)
			}
			if got := userConfigUnset(home, sys, tc.overrides); got != tc.want {
				t.Errorf("userConfigUnset = %v, want %v", got, tc.want)
			}
		})
	}
	if userConfigUnset("", t.TempDir(), nil) {
		t.Error("an unknown CODEX_HOME counts as unset")
	}
}

func TestCodexHome(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{[]string{"HOME=/u", "CODEX_HOME=/c"}, "/c"},
		{[]string{"CODEX_HOME=/c", "HOME=/u"}, "/c"},
		{[]string{"CODEX_HOME=/c", "CODEX_HOME=/d"}, "/d"},
		{[]string{"HOME=/u"}, filepath.Join("/u", ".codex")},
		{[]string{"CODEX_HOME=", "HOME=/u"}, filepath.Join("/u", ".codex")},
		{[]string{"PATH=/bin"}, ""},
	} {
		if got := codexHome(tc.env); got != tc.want {
			t.Errorf("codexHome(%q) = %q, want %q", tc.env, got, tc.want)
		}
	}
}

// A project's .codex/config.toml, in the cwd or a directory above it, makes
// codex be asked when it mentions a setting; the user's own (CODEX_HOME)
// does not count, it is read at start.
func TestProjectConfigMayApply(t *testing.T) {
	// Above the top, nothing is read.
	root := t.TempDir()
	top := filepath.Join(root, "top")
	if err := os.MkdirAll(filepath.Join(root, ".codex"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".codex", "config.toml"), []byte("sandbox_mode = \"read-only\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(top, "repo"), 0o755); err != nil {
		t.Fatal(err)
	}
	if projectConfigMayApply(filepath.Join(top, "repo"), filepath.Join(root, "home", ".codex"), top) {
		t.Error("a file above the top was read")
	}
	if !projectConfigMayApply(filepath.Join(top, "repo"), filepath.Join(root, "home", ".codex"), "") {
		t.Error("without a top, the file above was not read")
	}

	for _, tc := range []struct {
		name  string
		files map[string]string // relative to the root
		cwd   string
		want  bool
	}{
		{name: "none", cwd: "repo/sub"},
		{name: "cwd's", files: map[string]string{"repo/sub/.codex/config.toml": "sandbox_mode = \"read-only\"\n"}, cwd: "repo/sub", want: true},
		{name: "above", files: map[string]string{"repo/.codex/config.toml": "[sandbox_workspace_write]\nwritable_roots = [\"/x\"]\n"}, cwd: "repo/sub", want: true},
		{name: "model", files: map[string]string{"repo/.codex/config.toml": "model = \"x\"\n"}, cwd: "repo/sub", want: true},
		{name: "other settings", files: map[string]string{"repo/.codex/config.toml": "[features]\nplugins = false\n"}, cwd: "repo/sub"},
		{name: "below the cwd", files: map[string]string{"repo/sub/deeper/.codex/config.toml": "approval_policy = \"never\"\n"}, cwd: "repo/sub"},
		{name: "the user's home", files: map[string]string{"home/.codex/config.toml": "approval_policy = \"never\"\n"}, cwd: "home/repo"},
		{name: ".codex a file", files: map[string]string{"repo/.codex": "x"}, cwd: "repo/sub"},
		{name: "unreadable", files: map[string]string{"repo/.codex/config.toml/": ""}, cwd: "repo/sub", want: true},
		{name: "the top", files: map[string]string{".codex/config.toml": "approval_policy = \"never\"\n"}, cwd: "repo/sub", want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for name, content := range tc.files {
				p := filepath.Join(root, name)
				var err error
				if strings.HasSuffix(name, "/") {
					err = os.MkdirAll(p, 0o755) // a directory where the file would be
				} else if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
					err = os.WriteFile(p, []byte(content), 0o644)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			cwd := filepath.Join(root, tc.cwd)
			if err := os.MkdirAll(cwd, 0o755); err != nil {
				t.Fatal(err)
			}
			// Up to root, so that a .codex/config.toml above the test's
			// directory (/tmp's, /'s) is not what it sees.
			if got := projectConfigMayApply(cwd, filepath.Join(root, "home", ".codex"), root); got != tc.want {
				t.Errorf("projectConfigMayApply = %v, want %v", got, tc.want)
			}
		})
	}
}
