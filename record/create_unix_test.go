//go:build unix

package record

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/codexacp/codexacp/internal/regularfile"
)

// createWait bounds Create in these tests: a FIFO must not hold it, and a
// regression must fail the test, not hang it.
const createWait = 30 * time.Second

func createWithin(t *testing.T, path string) (*Recorder, error) {
	t.Helper()
	type result struct {
		r   *Recorder
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := Create(path)
		done <- result{r, err}
	}()
	select {
	case res := <-done:
		if res.r != nil {
			t.Cleanup(func() { res.r.Close() })
		}
		return res.r, res.err
	case <-time.After(createWait):
		t.Fatalf("Create(%s) did not return within %v", path, createWait)
		return nil, nil
	}
}

// TestCreateRefusesLinksAndFIFOs: the transcript is a new file, or an
// existing regular file of one name, overwritten; never written through a
// symbolic or hard link (the other name's file is left as it was, mode
// included), and a FIFO is refused without waiting for a reader.
func TestCreateRefusesLinksAndFIFOs(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	target := filepath.Join(outside, "target")
	if err := os.WriteFile(target, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(target, filepath.Join(dir, "link.ndjson")))
	must(os.Symlink(filepath.Join(outside, "new"), filepath.Join(dir, "dangling.ndjson")))
	must(os.Link(target, filepath.Join(dir, "hard.ndjson")))
	mkfifo(t, filepath.Join(dir, "fifo.ndjson"))
	mkfifo(t, filepath.Join(dir, "read.ndjson"))
	// A reader waits on this one: the open would succeed without the check.
	rd, err := os.OpenFile(filepath.Join(dir, "read.ndjson"), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	must(err)
	defer rd.Close()

	for _, tc := range []struct {
		name string
		want error
		msg  string
	}{
		{"link.ndjson", regularfile.ErrSymlink, "symbolic link"},
		{"dangling.ndjson", regularfile.ErrSymlink, "symbolic link"},
		{"hard.ndjson", errHardLinked, "2 names"},
		{"fifo.ndjson", regularfile.ErrNotRegular, "FIFO"},
		{"read.ndjson", regularfile.ErrNotRegular, "FIFO"},
	} {
		_, err := createWithin(t, filepath.Join(dir, tc.name))
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) || !strings.Contains(err.Error(), tc.name) {
			t.Errorf("Create(%s) = %v, want %v naming it and %q", tc.name, err, tc.want, tc.msg)
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("the linked file was changed: %q", b)
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o644 {
		t.Errorf("the linked file's mode changed to %v", fi.Mode().Perm())
	}
	if _, err := os.Lstat(filepath.Join(outside, "new")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the dangling link's target was created: %v", err)
	}

	// An existing transcript of one name is overwritten, readable by the
	// user only.
	old := filepath.Join(dir, "old.ndjson")
	must(os.WriteFile(old, []byte("an earlier run\n"), 0o644))
	r, err := createWithin(t, old)
	if err != nil {
		t.Fatal(err)
	}
	r.Start("codexacp test", 0)
	must(r.Close())
	b, _ := os.ReadFile(old)
	if strings.Contains(string(b), "earlier") || !strings.Contains(string(b), `"start"`) {
		t.Errorf("overwritten transcript = %q", b)
	}
	if fi, _ := os.Stat(old); fi.Mode().Perm() != 0o600 {
		t.Errorf("overwritten transcript's mode = %v, want 0600", fi.Mode().Perm())
	}
}
