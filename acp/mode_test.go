package acp

import (
	"encoding/json"
	"errors"
	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/codex"
	"github.com/codexacp/codexacp/events"
	"github.com/codexacp/codexacp/fsops"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The user's settings used below: what config/read reports for
//
//	approval_policy = "never"
//	[sandbox_workspace_write]
//	writable_roots = ["/cache"]
//	network_access = true
var (
	userRoots = codex.UserConfig{WorkspaceWrite: &codex.WorkspaceWrite{WritableRoots: []string{"/cache"}, NetworkAccess: true}}
	userAll   = codex.UserConfig{ApprovalPolicy: codex.ApprovalNever, SandboxMode: codex.SandboxWorkspaceWrite,
		WorkspaceWrite: &codex.WorkspaceWrite{WritableRoots: []string{"/cache"}, ExcludeSlashTmp: true}}
	userGranular = codex.UserConfig{ApprovalPolicy: codex.ApprovalGranular,
		GranularApproval: json.RawMessage(`{"granular":{"mcp_elicitations":false,"rules":true,"sandbox_approval":true}}`)}
)

// Each mode as both backends render it, on top of the user's settings.
func TestModePolicy(t *testing.T) {
	for _, tc := range []struct {
		name     string
		mode     backend.Mode
		user     codex.UserConfig
		dirs     []string
		sandbox  string // app-server turn/start sandboxPolicy
		approval string // app-server approvalPolicy (JSON)
		execArgs string // the exec command's sandbox arguments
		tools    backend.Mode
	}{
		{"read-only: asks only for MCP tools", backend.ModeReadOnly, codex.UserConfig{}, []string{"/extra"}, `{"type":"readOnly"}`,
			`{"granular":{"mcp_elicitations":true,"rules":false,"sandbox_approval":false,"request_permissions":false,"skill_approval":false}}`, "-s read-only", backend.ModeReadOnly},
		{"ask", backend.ModeAsk, codex.UserConfig{}, nil, `{"type":"readOnly"}`, `"on-request"`, "-s read-only", backend.ModeAsk},
		{"auto", backend.ModeAuto, codex.UserConfig{}, []string{"/extra"},
			`{"type":"workspaceWrite","writableRoots":["/extra"]}`, `"on-request"`,
			`-s workspace-write -c sandbox_workspace_write.writable_roots=["/extra"]`, backend.ModeAuto},
		{"auto without dirs leaves exec's writable roots to codex", backend.ModeAuto, userRoots, nil,
			`{"networkAccess":true,"type":"workspaceWrite","writableRoots":["/cache"]}`, `"on-request"`,
			"-s workspace-write", backend.ModeAuto},
		{"auto keeps the user's roots and network access", backend.ModeAuto, userRoots, []string{"/extra"},
			`{"networkAccess":true,"type":"workspaceWrite","writableRoots":["/cache","/extra"]}`, `"on-request"`,
			`-s workspace-write -c sandbox_workspace_write.writable_roots=["/cache", "/extra"]`, backend.ModeAuto},
		{"auto keeps network access off", backend.ModeAuto, userAll, nil,
			`{"excludeSlashTmp":true,"type":"workspaceWrite","writableRoots":["/cache"]}`, `"on-request"`,
			"-s workspace-write", backend.ModeAuto},
		{"full-access", backend.ModeFullAccess, userAll, nil, `{"type":"dangerFullAccess"}`, `"never"`, "-s danger-full-access", backend.ModeFullAccess},
		{"custom: the user's settings", backend.ModeCustom, userAll, []string{"/extra"},
			`{"excludeSlashTmp":true,"type":"workspaceWrite","writableRoots":["/cache","/extra"]}`, `"never"`,
			`-s workspace-write -c sandbox_workspace_write.writable_roots=["/cache", "/extra"]`, backend.ModeAuto},
		{"custom: unset settings take ask's", backend.ModeCustom, userRoots, nil, `{"type":"readOnly"}`, `"on-request"`, "-s read-only", backend.ModeAsk},
		{"custom: a granular policy passes as codex reported it", backend.ModeCustom, userGranular, nil, `{"type":"readOnly"}`,
			`{"granular":{"mcp_elicitations":false,"rules":true,"sandbox_approval":true}}`, "-s read-only", backend.ModeAsk},
		{"custom: read-only that never asks refuses edits", backend.ModeCustom, codex.UserConfig{ApprovalPolicy: codex.ApprovalNever}, nil,
			`{"type":"readOnly"}`, `"never"`, "-s read-only", backend.ModeReadOnly},
		{"custom: untrusted asks before edits", backend.ModeCustom, codex.UserConfig{SandboxMode: codex.SandboxWorkspaceWrite, ApprovalPolicy: codex.ApprovalUntrusted}, nil,
			`{"type":"workspaceWrite","writableRoots":[]}`, `"untrusted"`,
			"-s workspace-write", backend.ModeAsk},
		{"custom: full access", backend.ModeCustom, codex.UserConfig{SandboxMode: codex.SandboxDangerFullAccess}, nil,
			`{"type":"dangerFullAccess"}`, `"on-request"`, "-s danger-full-access", backend.ModeFullAccess},
	} {
		t.Run(tc.name, func(t *testing.T) {
			turn := backend.Turn{Mode: tc.mode, User: tc.user, Dirs: tc.dirs, Cwd: "/ws"}
			sandbox, approval := appServerPolicy(turn)
			b, _ := json.Marshal(sandbox)
			a, _ := json.Marshal(approval)
			if string(b) != tc.sandbox || string(a) != tc.approval {
				t.Errorf("app-server: sandbox %s approval %s, want %s %s", b, a, tc.sandbox, tc.approval)
			}
			if got := threadParams(turn, "")["sandbox"]; got != backend.ModePolicy(tc.mode, tc.user, tc.dirs).Sandbox {
				t.Errorf("thread/start sandbox = %v", got)
			}
			inv := execInvocation(turn)
			args := []string{"-s", inv.Sandbox}
			for _, c := range inv.Config {
				if strings.HasPrefix(c, "sandbox") || strings.HasPrefix(c, "approval") {
					args = append(args, "-c", c)
				}
			}
			if got := strings.Join(args, " "); got != tc.execArgs {
				t.Errorf("exec: %s, want %s", got, tc.execArgs)
			}
			if got := backend.ModePolicy(tc.mode, tc.user, tc.dirs).Tools; got != tc.tools {
				t.Errorf("file tools behave as %s, want %s", got, tc.tools)
			}
		})
	}
}

// The user's own settings are offered, and chosen for a new session, only
// when there are some; the user's writable roots are never changed in place.
func TestModesOffered(t *testing.T) {
	ids := func(user codex.UserConfig) []string {
		var out []string
		for _, m := range modeState(defaultMode(user), user).AvailableModes {
			out = append(out, string(m.Id))
		}
		return out
	}
	if got := ids(codex.UserConfig{}); !slices.Equal(got, []string{"read-only", "ask", "auto", "full-access"}) || defaultMode(codex.UserConfig{}) != backend.ModeAsk {
		t.Errorf("nothing configured: modes %v, default %s", got, defaultMode(codex.UserConfig{}))
	}
	if got := ids(userRoots); !slices.Equal(got, []string{"custom", "read-only", "ask", "auto", "full-access"}) || defaultMode(userRoots) != backend.ModeCustom {
		t.Errorf("configured: modes %v, default %s", got, defaultMode(userRoots))
	}
	if _, ok := parseMode("custom", codex.UserConfig{}); ok {
		t.Error("custom accepted with nothing configured")
	}
	if !strings.Contains(modeList(userRoots), "custom") {
		t.Errorf("modeList = %s", modeList(userRoots))
	}
	backend.ModePolicy(backend.ModeAuto, userRoots, []string{"/extra"})
	if !slices.Equal(userRoots.WorkspaceWrite.WritableRoots, []string{"/cache"}) {
		t.Errorf("the user's roots were changed: %v", userRoots.WorkspaceWrite.WritableRoots)
	}
}

// A plan turn runs read-only in every mode, the mode's approval policy
// kept; while planning, the file tools refuse writes whatever the mode.
func TestPlanTurnReadOnly(t *testing.T) {
	for _, tc := range []struct {
		mode backend.Mode
		user codex.UserConfig
	}{
		{backend.ModeAsk, codex.UserConfig{}},
		{backend.ModeAuto, userRoots},
		{backend.ModeFullAccess, codex.UserConfig{}},
		{backend.ModeCustom, userAll},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			turn := backend.Turn{Mode: tc.mode, User: tc.user, Cwd: "/ws", Plan: true}
			sandbox, approval := appServerPolicy(turn)
			_, wantApproval := appServerPolicy(backend.Turn{Mode: tc.mode, User: tc.user, Cwd: "/ws"})
			if b, _ := json.Marshal(sandbox); string(b) != `{"type":"readOnly"}` {
				t.Errorf("plan turn sandbox %s, want readOnly", b)
			}
			if a, _ := json.Marshal(approval); string(a) != mustJSON(wantApproval) {
				t.Errorf("plan turn approval %s, want the mode's %s", a, mustJSON(wantApproval))
			}
			if got := threadParams(turn, "")["sandbox"]; got != codex.SandboxReadOnly {
				t.Errorf("thread/start sandbox in a plan turn = %v", got)
			}

			s := newSession("s", t.TempDir(), nil, nil, events.Options{})
			s.user = tc.user
			s.setMode(tc.mode)
			s.setPlanning(true)
			if got := s.toolMode(); got != backend.ModeReadOnly {
				t.Errorf("planning: file tools behave as %s, want read-only", got)
			}
			var fe *fsops.Error
			if err := s.writeAllowed(filepath.Join(s.cwd, "f.txt")); !errors.As(err, &fe) || !strings.Contains(fe.Hint, "plan mode") {
				t.Errorf("planning: write not refused as a plan-mode write (%v)", err)
			}
			s.setPlanning(false)
			if got, want := s.toolMode(), backend.ModePolicy(tc.mode, tc.user, nil).Tools; got != want {
				t.Errorf("after planning: file tools behave as %s, want %s", got, want)
			}
		})
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
