package acp

import (
	"encoding/json"
	"errors"
	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/backend/backendtest"
	"github.com/codexacp/codexacp/codex"
	"github.com/codexacp/codexacp/events"
	"github.com/codexacp/codexacp/fsops"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The user's own settings are offered, and chosen for a new session, only
// when there are some.
func TestModesOffered(t *testing.T) {
	t.Parallel()
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
	if got := ids(backendtest.UserRoots); !slices.Equal(got, []string{"custom", "read-only", "ask", "auto", "full-access"}) || defaultMode(backendtest.UserRoots) != backend.ModeCustom {
		t.Errorf("configured: modes %v, default %s", got, defaultMode(backendtest.UserRoots))
	}
	if _, ok := parseMode("custom", codex.UserConfig{}); ok {
		t.Error("custom accepted with nothing configured")
	}
	if !strings.Contains(modeList(backendtest.UserRoots), "custom") {
		t.Errorf("modeList = %s", modeList(backendtest.UserRoots))
	}
}

// While planning, the file tools refuse writes whatever the mode.
func TestPlanningRefusesWrites(t *testing.T) {
	t.Parallel()
	for _, tc := range backendtest.WritableModes {
		t.Run(string(tc.Mode), func(t *testing.T) {
			s := newSession("s", t.TempDir(), nil, nil, events.Options{})
			s.user = tc.User
			s.setMode(tc.Mode)
			s.setPlanning(true)
			if got := s.toolMode(); got != backend.ModeReadOnly {
				t.Errorf("planning: file tools behave as %s, want read-only", got)
			}
			var fe *fsops.Error
			if err := s.writeAllowed(filepath.Join(s.cwd, "f.txt")); !errors.As(err, &fe) || !strings.Contains(fe.Hint, "plan mode") {
				t.Errorf("planning: write not refused as a plan-mode write (%v)", err)
			}
			s.setPlanning(false)
			if got, want := s.toolMode(), backend.ModePolicy(tc.Mode, tc.User, nil).Tools; got != want {
				t.Errorf("after planning: file tools behave as %s, want %s", got, want)
			}
		})
	}
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
