package shelledits

import (
	"os"
	"testing"

	"github.com/codexacp/codexacp/internal/recovery"
)

// A panic the agent recovers from still fails the tests (internal/recovery).
func TestMain(m *testing.M) {
	code := recovery.Main(m)
	if templateDir != "" {
		os.RemoveAll(templateDir)
	}
	os.Exit(code)
}
