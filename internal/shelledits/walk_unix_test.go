//go:build linux || darwin

package shelledits

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/codexacp/codexacp/internal/regularfile"
)

// unblockFIFO opens the FIFO at p for writing, which lets an open(2) that
// waits on it for reading return: a failed test leaves no goroutine stuck.
func unblockFIFO(p string) {
	if f, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		f.Close()
	}
}

// A directory that became a FIFO is refused at once, not waited on.
func TestReadDirFIFO(t *testing.T) {
	w := ws{t, t.TempDir()}
	mkfifo(w, "d")
	for _, follow := range []regularfile.Follow{regularfile.FollowLink, regularfile.NoFollowLink} {
		done := make(chan error, 1)
		go func() {
			_, _, _, err := readDir(w.path("d"), 0, follow)
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, regularfile.ErrNotDir) {
				t.Fatalf("readDir of a FIFO (follow %v): %v, want ErrNotDir", follow, err)
			}
		case <-time.After(walkWait):
			unblockFIFO(w.path("d"))
			t.Fatalf("readDir of a FIFO (follow %v) blocked", follow)
		}
	}
}

// swapDuringWalk makes the walk find rel replaced by swap after its parent
// listed it as a directory and before it is listed itself: the window a
// shell's background job has between two levels of the walk.
func swapDuringWalk(t *testing.T, rel string, swap func()) {
	var once sync.Once
	t.Cleanup(func() { listDir = readDir })
	listDir = func(dir string, dev uint64, follow regularfile.Follow) ([]string, []fileStat, []string, error) {
		if filepath.Base(dir) == rel {
			once.Do(swap)
		}
		return readDir(dir, dev, follow)
	}
}

// scanWithin scans, failing the test if the scan does not end in walkWait.
func scanWithin(t *testing.T, tr *Tracker, unblock string) Report {
	t.Helper()
	type result struct {
		rep Report
		err error
	}
	done := make(chan result, 1)
	go func() {
		rep, err := tr.Scan(context.Background())
		done <- result{rep, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatalf("scan: %v", r.err)
		}
		return r.rep
	case <-time.After(walkWait):
		unblockFIFO(unblock)
		t.Fatal("the scan blocked")
	}
	return Report{}
}

// A directory replaced by a FIFO between two levels of the walk: the scan
// ends, and reports the directory's files deleted.
func TestScanDirSwappedForFIFODuringWalk(t *testing.T) {
	setNotify(t, false) // a scan that walks
	w := plainWS(t)
	tr := New([]string{w.dir}, Limits{Timeout: time.Minute})
	defer tr.Close()
	if err := tr.Baseline(context.Background()); err != nil {
		t.Fatal(err)
	}
	swapDuringWalk(t, "sub", func() {
		if err := os.RemoveAll(w.path("sub")); err != nil {
			t.Error(err)
		}
		mkfifo(w, "sub")
	})
	rep := scanWithin(t, tr, w.path("sub"))
	got, want := summaries(w.dir, rep), []string{summary(w.dir, Change{Path: w.path("sub/c.txt"), Op: Deleted, Old: []byte("charlie\n")})}
	if len(got) != 1 || got[0] != want[0] {
		t.Fatalf("changes = %q, want %q", got, want)
	}
}

// A directory replaced by a symlink between two levels of the walk is not
// followed: what the link points to is not the workspace's.
func TestScanDirSwappedForLinkDuringWalk(t *testing.T) {
	setNotify(t, false) // a scan that walks
	w := plainWS(t)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "x.txt"), []byte("outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tr := New([]string{w.dir}, Limits{Timeout: time.Minute})
	defer tr.Close()
	if err := tr.Baseline(context.Background()); err != nil {
		t.Fatal(err)
	}
	swapDuringWalk(t, "sub", func() {
		if err := os.RemoveAll(w.path("sub")); err != nil {
			t.Error(err)
		}
		if err := os.Symlink(outside, w.path("sub")); err != nil {
			t.Error(err)
		}
	})
	rep := scanWithin(t, tr, "")
	got, want := summaries(w.dir, rep), []string{summary(w.dir, Change{Path: w.path("sub/c.txt"), Op: Deleted, Old: []byte("charlie\n")})}
	if len(got) != 1 || got[0] != want[0] {
		t.Fatalf("changes = %q, want %q", got, want)
	}
}
