//go:build unix

package codex

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/codexacp/codexacp/internal/regularfile"
)

// TestOwnReadsRefuseSpecialFiles: the files codexacp reads itself in
// codex's and its own directories (the model catalog, config.toml) are
// never waited on when a FIFO, nor read without end when a link to
// /dev/zero: each read answers at once as it answers for an unreadable
// file.
func TestOwnReadsRefuseSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, zero} {
		within(t, "Models("+p+")", func() {
			if _, err := Models(p); !errors.Is(err, regularfile.ErrNotRegular) {
				t.Errorf("Models(%s) = %v, want not a regular file", p, err)
			}
		})
		within(t, "ContextWindow("+p+")", func() {
			if _, err := ContextWindow(p, ""); !errors.Is(err, regularfile.ErrNotRegular) {
				t.Errorf("ContextWindow(%s) = %v, want not a regular file", p, err)
			}
		})
		within(t, "fileMayMention("+p+")", func() {
			if !fileMayMention(p, func([]byte) bool { return false }) {
				t.Errorf("fileMayMention(%s) = false: an unreadable file may say anything", p)
			}
		})
		within(t, "tomlTopLevel("+p+")", func() {
			if v := tomlTopLevel(p, "model_provider"); v != "" {
				t.Errorf("tomlTopLevel(%s) = %q", p, v)
			}
		})
	}
}

// within runs f and fails the test if it does not return in 30 s (a
// regression would wait on the FIFO for good).
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not return within 30 s", what)
	}
}
