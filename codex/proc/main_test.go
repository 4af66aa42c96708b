package proc

import (
	"os"
	"testing"

	"github.com/codexacp/codexacp/internal/recovery"
)

func TestMain(m *testing.M) {
	os.Exit(recovery.Main(m)) // a recovered panic fails the tests too (internal/recovery)
}
