// Package stress sizes the long stress tests. The quick loop (`go test
// ./...`, the README's command) runs them smaller, so it stays fast on a
// busy machine; CI sets CODEXACP_STRESS=1 (.ci/run) and runs them at full
// size. A smaller run exercises the same paths, fewer times: none is
// skipped.
//
//	edits := stress.Size(t, 20, 200) // 20 in the quick loop, 200 in CI
package stress

import (
	"os"
	"testing"
)

// Env names the variable that, set to 1, runs stress tests at full size.
const Env = "CODEXACP_STRESS"

// Full reports whether stress tests run at full size (CODEXACP_STRESS=1).
func Full() bool { return os.Getenv(Env) == "1" }

// Size returns full when CODEXACP_STRESS=1, else quick, and logs the
// choice so a test's output says how big its run was.
func Size(t testing.TB, quick, full int) int {
	t.Helper()
	if Full() {
		return full
	}
	t.Logf("quick size %d (full %d with %s=1)", quick, full, Env)
	return quick
}
