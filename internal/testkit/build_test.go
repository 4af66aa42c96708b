package testkit

import (
	"os"
	"testing"
)

// TestBuildCommandsLinksOnce builds a small command twice: the second
// build is the very file the first one left (not linked again).
func TestBuildCommandsLinksOnce(t *testing.T) {
	const pkg = "github.com/codexacp/codexacp/e2e/mcpfixture"
	first, err := BuildCommands(t.TempDir(), pkg)
	if err != nil {
		t.Fatal(err)
	}
	second, err := BuildCommands(t.TempDir(), pkg)
	if err != nil {
		t.Fatal(err)
	}
	if !same(first[0], second[0]) {
		t.Errorf("the unchanged command was linked again: %s and %s are two files", first[0], second[0])
	}
	if fi, err := os.Stat(second[0]); err != nil || fi.Mode()&0o111 == 0 {
		t.Errorf("no executable at %s: %v", second[0], err)
	}
}
