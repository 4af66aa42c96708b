package acp

import (
	"os"
	"runtime/debug"
	"testing"

	"github.com/codexacp/codexacp/internal/recovery"
)

// A panic the agent recovers from still fails the tests (internal/recovery).
// The collector runs a quarter as often as by default (unless GOGC says
// otherwise): the tests' large files through both SDKs' JSON made it an
// eighth of the package's CPU time, and no test here measures the heap.
func TestMain(m *testing.M) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	os.Exit(recovery.Main(m))
}
