//go:build unix

package images

import (
	"context"
	"io/fs"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestImageSweepOfAFIFO: a temporary directory that is a FIFO is not
// waited on by the start-up sweep, whose stop the agent's exit waits for.
func TestImageSweepOfAFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "tmp")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	s := &imageSweep{root: fifo, now: time.Now, owned: func(fs.FileInfo) bool { return true }, max: maxSweptEntries, log: discardLogger()}
	done := make(chan []string, 1)
	go func() { done <- s.run(context.Background()) }()
	select {
	case removed := <-done:
		if len(removed) != 0 {
			t.Errorf("removed %v", removed)
		}
	case <-time.After(stateWait):
		t.Fatalf("the sweep of a FIFO did not return within %v", stateWait)
	}
}
