//go:build unix

package record

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// SetDirs reads codex's installation id from a file in codex's home,
// which any local process of the user can replace: a FIFO there must not
// hold --record's start-up (before the editor's initialize is read), nor a
// link to an endless device grow memory, and the recorder's lock must not
// be held while the file is read.
func TestSetDirsDoesNotBlockOnTheInstallationID(t *testing.T) {
	for name, plant := range map[string]func(t *testing.T, path string){
		"fifo":           func(t *testing.T, path string) { mkfifo(t, path) },
		"link to device": func(t *testing.T, path string) { symlink(t, "/dev/zero", path) },
		"too large":      func(t *testing.T, path string) { writeFile(t, path, strings.Repeat("x", maxInstallationIDBytes+1)) },
	} {
		t.Run(name, func(t *testing.T) {
			codexHome := t.TempDir()
			plant(t, filepath.Join(codexHome, installationIDFile))
			var buf bytes.Buffer
			r := New(&buf)
			done := make(chan struct{})
			go func() {
				defer close(done)
				r.SetDirs(t.TempDir(), codexHome)
			}()
			select {
			case <-done:
			case <-time.After(30 * time.Second): // a generous bound: a regression fails instead of hanging
				t.Fatal("SetDirs still reading the installation id after 30 s")
			}
			if len(r.installationIDs) != 0 {
				t.Errorf("installation ids learned from a %s: %d", name, len(r.installationIDs))
			}
			if len(r.storeDirs) != 2 {
				t.Errorf("directories = %+v, want the state directory and codex's home", r.storeDirs)
			}
		})
	}
}

// A link to a regular file is followed: codex's home is the user's own.
func TestSetDirsFollowsALinkToTheInstallationID(t *testing.T) {
	const id = "110424a3-5b7c-4d2e-9f10-abcdef012345"
	codexHome, elsewhere := t.TempDir(), t.TempDir()
	target := filepath.Join(elsewhere, "id")
	writeFile(t, target, id+"\n")
	symlink(t, target, filepath.Join(codexHome, installationIDFile))
	r := New(&bytes.Buffer{})
	r.SetDirs("", codexHome)
	if len(r.installationIDs) != 1 || string(r.installationIDs[0]) != id {
		t.Errorf("installation ids = %q, want %q", r.installationIDs, id)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
