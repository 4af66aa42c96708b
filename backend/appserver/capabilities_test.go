package appserver

import (
	"context"
	"errors"
	"testing"

	"github.com/codexacp/codexacp/backend/backendtest"
	codexapp "github.com/codexacp/codexacp/codex/appserver"
	"github.com/codexacp/codexacp/internal/testkit"
)

// The app-server backend's Capabilities and its methods agree. No codex
// runs: every start fails, so the granted methods answer that failure.
func TestAppServerCapabilities(t *testing.T) {
	b := New(codexapp.Options{Logger: testkit.DiscardLogger()})
	b.start = func(context.Context, codexapp.Options) (*codexapp.Server, error) {
		return nil, errors.New("no app-server in this test")
	}
	t.Cleanup(func() { b.Close() })
	backendtest.CheckCapabilities(t, b)
}
