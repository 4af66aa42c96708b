//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/codexacp/codexacp/internal/syncbuf"
)

// TestRecordTargetRefused: --record naming a symbolic link or a FIFO is
// refused at start-up with an error line that says why; the link's target
// is left as it was (content and mode), a FIFO does not hold the agent,
// and the agent serves without a transcript.
func TestRecordTargetRefused(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "bashrc")
	if err := os.WriteFile(target, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.ndjson")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.ndjson")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, why string }{
		{link, "is a symbolic link"},
		{fifo, "not a regular file (a FIFO)"},
	} {
		var stderr syncbuf.Buffer
		done := make(chan error, 1)
		go func() {
			done <- run([]string{"--codex-path", "/nonexistent/codex", "--record", tc.path}, strings.NewReader(""), &strings.Builder{}, &stderr)
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("run: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("--record %s: the agent did not serve and exit within 30 s", tc.path)
		}
		log := stderr.String()
		if !strings.Contains(log, "not recording") || !strings.Contains(log, tc.path) || !strings.Contains(log, tc.why) {
			t.Errorf("--record %s: stderr lacks the refusal (%q):\n%s", tc.path, tc.why, log)
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("the link's target was changed: %q", b)
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o644 {
		t.Errorf("the link's target's mode changed to %v", fi.Mode().Perm())
	}
}
