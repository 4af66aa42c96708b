package codex

import (
	"os"
	"path/filepath"
	"testing"
)

// fakeCodex writes a shell script standing in for codex and returns its path.
func fakeCodex(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "codex")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}
