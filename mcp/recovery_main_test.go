package mcp

import (
	"os"
	"testing"

	"github.com/codexacp/codexacp/internal/recovery"
)

// A panic the agent recovers from still fails the tests (internal/recovery).
func TestMain(m *testing.M) { os.Exit(recovery.Main(m)) }
