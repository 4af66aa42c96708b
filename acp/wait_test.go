package acp

import (
	"testing"

	"github.com/codexacp/codexacp/internal/testkit"
)

// waitFor is testkit.WaitFor, under the name these tests use.
func waitFor[T any](t *testing.T, ch <-chan T, what string) {
	t.Helper()
	testkit.WaitFor(t, ch, what)
}
