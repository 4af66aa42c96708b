//go:build unix

package acp

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestGitdirOfSpecialFile: a root's .git that is a FIFO or a link to
// /dev/zero (the model's shell can make either) is no pointer to a git
// directory, and reading it neither waits nor runs without end: a write
// check in auto mode would hold its tool call for good.
func TestGitdirOfSpecialFile(t *testing.T) {
	t.Parallel()
	for name, mk := range map[string]func(string) error{
		"fifo": func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"zero": func(p string) error { return os.Symlink("/dev/zero", p) },
	} {
		root := t.TempDir()
		if err := mk(filepath.Join(root, ".git")); err != nil {
			t.Fatal(err)
		}
		done := make(chan string, 1)
		go func() { done <- gitdirOf(root) }()
		select {
		case got := <-done:
			if got != "" {
				t.Errorf("%s: gitdirOf = %q, want none", name, got)
			}
		case <-time.After(stateWait):
			t.Fatalf("%s: gitdirOf did not return within %v", name, stateWait)
		}
	}
}
