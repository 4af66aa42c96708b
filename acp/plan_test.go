package acp

import (
	"testing"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/backend/appserver"
	"github.com/codexacp/codexacp/backend/codexexec"
	codexapp "github.com/codexacp/codexacp/codex/appserver"
	"github.com/codexacp/codexacp/events"
)

// Plan mode is offered where the backend can plan (the app-server), not on exec.
func TestCollabOptionOffered(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		backend backend.Backend
		offered bool
	}{
		{"exec", &codexexec.Backend{}, false},
		{"app-server", appserver.New(codexapp.Options{}), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := NewAgent(Options{Backend: tc.backend})
			s := newSession("sess_x", t.TempDir(), nil, nil, events.Options{})
			found := false
			for _, o := range a.configOptions(s) {
				if o.Select != nil && string(o.Select.Id) == configCollab {
					found = true
					if string(o.Select.CurrentValue) != collabDefault {
						t.Errorf("current = %q", o.Select.CurrentValue)
					}
				}
			}
			if found != tc.offered {
				t.Errorf("collaboration_mode offered = %v, want %v", found, tc.offered)
			}
		})
	}
}
