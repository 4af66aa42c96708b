package backendtest

import (
	"encoding/json"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/codex"
)

// User settings of the mode cases: UserRoots is what config/read reports for
//
//	approval_policy = "never"
//	[sandbox_workspace_write]
//	writable_roots = ["/cache"]
//	network_access = true
var (
	UserRoots = codex.UserConfig{WorkspaceWrite: &codex.WorkspaceWrite{WritableRoots: []string{"/cache"}, NetworkAccess: true}}
	UserAll   = codex.UserConfig{ApprovalPolicy: codex.ApprovalNever, SandboxMode: codex.SandboxWorkspaceWrite,
		WorkspaceWrite: &codex.WorkspaceWrite{WritableRoots: []string{"/cache"}, ExcludeSlashTmp: true}}
	UserGranular = codex.UserConfig{ApprovalPolicy: codex.ApprovalGranular,
		GranularApproval: json.RawMessage(`{"granular":{"mcp_elicitations":false,"rules":true,"sandbox_approval":true}}`)}
)

// WritableModes are the modes that may write, each on top of user settings
// it keeps something of: the cases of the tests that plan mode (plan turns,
// the file tools while planning) turns every one of them read-only.
var WritableModes = []struct {
	Mode backend.Mode
	User codex.UserConfig
}{
	{backend.ModeAsk, codex.UserConfig{}},
	{backend.ModeAuto, UserRoots},
	{backend.ModeFullAccess, codex.UserConfig{}},
	{backend.ModeCustom, UserAll},
}

// ModeCase is one mode on top of the user's settings, as each backend
// renders it: one table, so that the backends' renderings of a mode are
// read side by side; each backend's tests check their own column.
type ModeCase struct {
	Name     string
	Mode     backend.Mode
	User     codex.UserConfig
	Dirs     []string
	Sandbox  string // app-server turn/start sandboxPolicy (JSON)
	Approval string // app-server approvalPolicy (JSON)
	ExecArgs string // the exec command's sandbox arguments
	Tools    backend.Mode
}

// ModeCases are the modes of every backend's policy tests.
var ModeCases = []ModeCase{
	{"read-only: asks only for MCP tools", backend.ModeReadOnly, codex.UserConfig{}, []string{"/extra"}, `{"type":"readOnly"}`,
		`{"granular":{"mcp_elicitations":true,"rules":false,"sandbox_approval":false,"request_permissions":false,"skill_approval":false}}`, "-s read-only", backend.ModeReadOnly},
	{"ask", backend.ModeAsk, codex.UserConfig{}, nil, `{"type":"readOnly"}`, `"on-request"`, "-s read-only", backend.ModeAsk},
	{"auto", backend.ModeAuto, codex.UserConfig{}, []string{"/extra"},
		`{"type":"workspaceWrite","writableRoots":["/extra"]}`, `"on-request"`,
		`-s workspace-write -c sandbox_workspace_write.writable_roots=["/extra"]`, backend.ModeAuto},
	{"auto without dirs leaves exec's writable roots to codex", backend.ModeAuto, UserRoots, nil,
		`{"networkAccess":true,"type":"workspaceWrite","writableRoots":["/cache"]}`, `"on-request"`,
		"-s workspace-write", backend.ModeAuto},
	{"auto keeps the user's roots and network access", backend.ModeAuto, UserRoots, []string{"/extra"},
		`{"networkAccess":true,"type":"workspaceWrite","writableRoots":["/cache","/extra"]}`, `"on-request"`,
		`-s workspace-write -c sandbox_workspace_write.writable_roots=["/cache", "/extra"]`, backend.ModeAuto},
	{"auto keeps network access off", backend.ModeAuto, UserAll, nil,
		`{"excludeSlashTmp":true,"type":"workspaceWrite","writableRoots":["/cache"]}`, `"on-request"`,
		"-s workspace-write", backend.ModeAuto},
	{"full-access", backend.ModeFullAccess, UserAll, nil, `{"type":"dangerFullAccess"}`, `"never"`, "-s danger-full-access", backend.ModeFullAccess},
	{"custom: the user's settings", backend.ModeCustom, UserAll, []string{"/extra"},
		`{"excludeSlashTmp":true,"type":"workspaceWrite","writableRoots":["/cache","/extra"]}`, `"never"`,
		`-s workspace-write -c sandbox_workspace_write.writable_roots=["/cache", "/extra"]`, backend.ModeAuto},
	{"custom: unset settings take ask's", backend.ModeCustom, UserRoots, nil, `{"type":"readOnly"}`, `"on-request"`, "-s read-only", backend.ModeAsk},
	{"custom: a granular policy passes as codex reported it", backend.ModeCustom, UserGranular, nil, `{"type":"readOnly"}`,
		`{"granular":{"mcp_elicitations":false,"rules":true,"sandbox_approval":true}}`, "-s read-only", backend.ModeAsk},
	{"custom: read-only that never asks refuses edits", backend.ModeCustom, codex.UserConfig{ApprovalPolicy: codex.ApprovalNever}, nil,
		`{"type":"readOnly"}`, `"never"`, "-s read-only", backend.ModeReadOnly},
	{"custom: untrusted asks before edits", backend.ModeCustom, codex.UserConfig{SandboxMode: codex.SandboxWorkspaceWrite, ApprovalPolicy: codex.ApprovalUntrusted}, nil,
		`{"type":"workspaceWrite","writableRoots":[]}`, `"untrusted"`,
		"-s workspace-write", backend.ModeAsk},
	{"custom: full access", backend.ModeCustom, codex.UserConfig{SandboxMode: codex.SandboxDangerFullAccess}, nil,
		`{"type":"dangerFullAccess"}`, `"on-request"`, "-s danger-full-access", backend.ModeFullAccess},
}
