//go:build linux || darwin

package shelledits

import (
	"path/filepath"
	"syscall"
	"testing"
)

// A file that became a FIFO between its stat and its read is not waited on.
func TestReadFileDoesNotBlockOnAFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skip(err)
	}
	if data, _, kind, _ := readFile(openFile, p, 1<<20); kind != kindOther || data != nil {
		t.Errorf("kind = %v, data = %q", kind, data)
	}
}
