package main

import (
	"errors"
	"testing"

	"github.com/codexacp/codexacp/backend/backendtest"
)

// The backend without codex offers nothing, and says so.
func TestUnavailableCapabilities(t *testing.T) {
	backendtest.CheckCapabilities(t, unavailable{err: errors.New("codex not found")})
}
