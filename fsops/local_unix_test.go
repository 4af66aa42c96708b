//go:build unix

package fsops

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// testNotRegular: a FIFO would block a read forever and a device may never
// end: refused without opening them.
func testNotRegular(t *testing.T, l *LocalFiles, dir string) {
	t.Helper()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, "/dev/zero"} {
		_, err := l.ReadFile(context.Background(), p)
		wantToolError(t, err, CodeNotRegular, p+" is not a regular file")
	}
	if err := os.Remove(fifo); err != nil {
		t.Fatal(err)
	}
}

// read_text_file of line 1 of a 64 GiB sparse file (what `truncate -s 64G`
// makes) reads one chunk: the line, no hash, no line count. It used to read
// the whole file and the agent died.
func TestReadHugeSparseFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "big.log")
	if err := os.WriteFile(path, []byte("first line\nsecond\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 64<<30); err != nil {
		t.Skipf("no sparse files: %v", err)
	}
	e := NewEngine(NewLocalFiles())
	ctx := context.Background()
	one := 1
	res, err := e.ReadTextFile(ctx, ReadParams{Path: path, Limit: &one})
	if err != nil {
		t.Fatal(err)
	}
	if res.Content != "first line\n" || res.StartLine != 1 || res.EndLine != 1 || !res.HasMore ||
		res.Hash != "" || res.TotalLines != 0 || !strings.Contains(res.Hint, "line=2") || !strings.Contains(res.Hint, "8 MiB") {
		t.Errorf("read = %+v", *res)
	}
	// Line 3 is the 64 GiB of NUL bytes: binary, found in the first chunk.
	three := 3
	_, err = e.ReadTextFile(ctx, ReadParams{Path: path, Line: &three, Limit: &one})
	wantToolError(t, err, CodeBinary, "Cannot edit binary file: "+path)
	// Counting from the end would read it all.
	last := -1
	_, err = e.ReadTextFile(ctx, ReadParams{Path: path, Line: &last})
	if te := AsError(err); te.Code != CodeInvalidRequest || !strings.Contains(te.Hint, "tail") {
		t.Errorf("line -1: %v", err)
	}
}

// A FIFO swapped in for a file while an edit holds its lock: the edit
// waiting for the lock gets an error at once instead of blocking in the
// open, and the lock is free afterwards.
func TestFIFOSwappedInUnderLock(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.txt")
	fifo := filepath.Join(dir, "fifo")
	if err := os.WriteFile(path, []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	e := NewEngine(NewLocalFiles().Within(dir))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	holding, release := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		_, err := e.EditTextFile(ctx, EditParams{Path: path, OldString: "alpha", NewString: "beta"},
			func(context.Context, *Change) error { close(holding); <-release; return nil })
		first <- err
	}()
	<-holding
	// Under the lock: the file becomes a link to the FIFO.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(fifo, path); err != nil {
		t.Fatal(err)
	}
	second := make(chan error, 1)
	go func() {
		// Resolved before the lock, to the file: it then finds the link.
		_, err := e.EditTextFile(ctx, EditParams{Path: path, OldString: "alpha", NewString: "gamma"}, nil)
		second <- err
	}()
	close(release)
	if err := <-first; err == nil {
		t.Error("the first edit wrote through a link swapped in under it")
	}
	select {
	case err := <-second:
		if err == nil {
			t.Error("the second edit succeeded on a FIFO")
		}
	case <-ctx.Done():
		t.Fatal("the edit waiting for the lock blocked on the FIFO")
	}
	for _, p := range []string{path, fifo} {
		if _, err := e.ReadTextFile(ctx, ReadParams{Path: p}); AsError(err).Code != CodeNotRegular {
			t.Errorf("read %s: %v, want %d", p, err, CodeNotRegular)
		}
	}
	if processLocks.size() != 0 {
		t.Errorf("%d path locks held after the calls", processLocks.size())
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := e.EditTextFile(ctx, EditParams{Path: path, OldString: "alpha", NewString: "delta"}, nil); err != nil {
		t.Errorf("an edit after the FIFO is gone: %v", err)
	}
}
