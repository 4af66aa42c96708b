//go:build unix

package fsops

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
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
