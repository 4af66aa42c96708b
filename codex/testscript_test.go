package codex

import (
	"testing"

	"github.com/codexacp/codexacp/internal/testkit"
)

// fakeCodex writes a shell script standing in for codex and returns its path.
func fakeCodex(t *testing.T, body string) string {
	t.Helper()
	return testkit.Script(t, "codex", body)
}
