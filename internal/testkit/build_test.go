package testkit

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuildCommandsLinksOnce builds a small command twice: the second
// build is the very file the first one left (not linked again).
func TestBuildCommandsLinksOnce(t *testing.T) {
	const pkg = "github.com/codexacp/codexacp/e2e/mcpfixture"
	// The cache beside the build directories: hard links need one file
	// system, and the user's cache may be on another than the temporary
	// directory (where BuildCommands links afresh, by design).
	// The go command's own caches stay where they are.
	for _, name := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		out, err := exec.Command("go", "env", name).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", name, err)
		}
		t.Setenv(name, strings.TrimSpace(string(out)))
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, "cache"))
	t.Setenv("LocalAppData", filepath.Join(home, "cache"))
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
