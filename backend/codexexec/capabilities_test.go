package codexexec

import (
	"context"
	"testing"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/backend/backendtest"
)

// The exec backend's Capabilities and its methods agree, with and without
// a way to list skills.
func TestExecCapabilities(t *testing.T) {
	backendtest.CheckCapabilities(t, &Backend{})
	backendtest.CheckCapabilities(t, &Backend{ListSkills: func(context.Context, string) ([]backend.Skill, error) { return nil, nil }})
}
