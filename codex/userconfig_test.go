package codex

import (
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
		{"nothing set", `{"config":{"approval_policy":null,"sandbox_mode":null,"sandbox_workspace_write":null,"model":"x"}}`, UserConfig{}, ""},
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
			if got.Configured() != (tc.name != "nothing set") {
				t.Errorf("Configured() = %v", got.Configured())
			}
		})
	}
}
