package acp

import (
	"fmt"
	"testing"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/backend/backendtest"
	"github.com/codexacp/codexacp/events"
)

// The tests' fake backends say what they offer as a real one must: a fake
// whose methods and Capabilities disagree tests an agent no backend makes.
func TestFakeBackendsCapabilities(t *testing.T) {
	t.Parallel()
	all := backend.Review | backend.Compact | backend.Skills | backend.ThreadCommands | backend.Plan
	open := make(chan struct{})
	close(open)
	for _, b := range []backend.Backend{
		&fakeBackend{},
		&cmdBackend{feats: all},
		&cmdBackend{feats: backend.Review | backend.Compact},
		&cmdBackend{feats: backend.Skills},
		&gatedSkills{cmdBackend: &cmdBackend{feats: backend.Skills}},
		&slowSkills{cmdBackend: &cmdBackend{feats: backend.Skills}, gate: open},
		&steeringBackend{fakeBackend: &fakeBackend{}},
		&panickyBackend{},
		&forgettingBackend{},
		&failingBackend{},
		limitedBackend{&failingBackend{limits: &events.RateLimits{}}},
		namedBackend{&failingBackend{}, "mine"},
		&tierBackend{},
		&askingBackend{},
		&playedBackend{},
		noBackend{},
	} {
		t.Run(fmt.Sprintf("%T %b", b, b.Capabilities()), func(t *testing.T) { backendtest.CheckCapabilities(t, b) })
	}
}
