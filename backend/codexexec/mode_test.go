package codexexec

import (
	"strings"
	"testing"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/backend/backendtest"
)

// Each mode as codex exec's sandbox arguments, on top of the user's settings.
func TestModePolicy(t *testing.T) {
	for _, tc := range backendtest.ModeCases {
		t.Run(tc.Name, func(t *testing.T) {
			inv := execInvocation(backend.Turn{Mode: tc.Mode, User: tc.User, Dirs: tc.Dirs, Cwd: "/ws"})
			args := []string{"-s", inv.Sandbox}
			for _, c := range inv.Config {
				if strings.HasPrefix(c, "sandbox") || strings.HasPrefix(c, "approval") {
					args = append(args, "-c", c)
				}
			}
			if got := strings.Join(args, " "); got != tc.ExecArgs {
				t.Errorf("exec: %s, want %s", got, tc.ExecArgs)
			}
		})
	}
}
