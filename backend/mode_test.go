package backend_test

import (
	"slices"
	"testing"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/backend/backendtest"
)

// The preset whose file-tool behaviour applies in each mode.
func TestModePolicyTools(t *testing.T) {
	for _, tc := range backendtest.ModeCases {
		if got := backend.ModePolicy(tc.Mode, tc.User, tc.Dirs).Tools; got != tc.Tools {
			t.Errorf("%s: file tools behave as %s, want %s", tc.Name, got, tc.Tools)
		}
	}
}

// The user's writable roots are never changed in place.
func TestModePolicyKeepsUserRoots(t *testing.T) {
	backend.ModePolicy(backend.ModeAuto, backendtest.UserRoots, []string{"/extra"})
	if !slices.Equal(backendtest.UserRoots.WorkspaceWrite.WritableRoots, []string{"/cache"}) {
		t.Errorf("the user's roots were changed: %v", backendtest.UserRoots.WorkspaceWrite.WritableRoots)
	}
}
