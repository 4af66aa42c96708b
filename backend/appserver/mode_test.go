package appserver

import (
	"encoding/json"
	"testing"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/backend/backendtest"
	"github.com/codexacp/codexacp/codex"
)

// Each mode as the app-server's policies, on top of the user's settings.
func TestModePolicy(t *testing.T) {
	for _, tc := range backendtest.ModeCases {
		t.Run(tc.Name, func(t *testing.T) {
			turn := backend.Turn{Mode: tc.Mode, User: tc.User, Dirs: tc.Dirs, Cwd: "/ws"}
			sandbox, approval := appServerPolicy(turn)
			b, _ := json.Marshal(sandbox)
			a, _ := json.Marshal(approval)
			if string(b) != tc.Sandbox || string(a) != tc.Approval {
				t.Errorf("app-server: sandbox %s approval %s, want %s %s", b, a, tc.Sandbox, tc.Approval)
			}
			if got := threadParams(turn).Sandbox; got != backend.ModePolicy(tc.Mode, tc.User, tc.Dirs).Sandbox {
				t.Errorf("thread/start sandbox = %v", got)
			}
		})
	}
}

// A plan turn runs read-only in every mode, the mode's approval policy
// kept.
func TestPlanTurnReadOnly(t *testing.T) {
	for _, tc := range backendtest.WritableModes {
		t.Run(string(tc.Mode), func(t *testing.T) {
			turn := backend.Turn{Mode: tc.Mode, User: tc.User, Cwd: "/ws", Plan: true}
			sandbox, approval := appServerPolicy(turn)
			_, wantApproval := appServerPolicy(backend.Turn{Mode: tc.Mode, User: tc.User, Cwd: "/ws"})
			if b, _ := json.Marshal(sandbox); string(b) != `{"type":"readOnly"}` {
				t.Errorf("plan turn sandbox %s, want readOnly", b)
			}
			a, _ := json.Marshal(approval)
			w, _ := json.Marshal(wantApproval)
			if string(a) != string(w) {
				t.Errorf("plan turn approval %s, want the mode's %s", a, w)
			}
			if got := threadParams(turn).Sandbox; got != codex.SandboxReadOnly {
				t.Errorf("thread/start sandbox in a plan turn = %v", got)
			}
		})
	}
}
