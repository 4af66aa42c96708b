//go:build unix

package images

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stateWait bounds what a regression would hang: the test fails rather
// than hang CI.
const stateWait = 30 * time.Second

// TestCopyImageFileRefusesFIFO: a user's image swapped for a FIFO after it
// was checked is not waited on when copied (WriteFiles).
func TestCopyImageFileRefusesFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "a,b.png")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		files, err := WriteFiles(context.Background(), t.TempDir(), []Image{{MimeType: "image/png", Path: fifo}})
		if err == nil {
			files.Remove()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("WriteFiles of a FIFO: %v", err)
		}
	case <-time.After(stateWait):
		t.Fatalf("WriteFiles of a FIFO did not return within %v", stateWait)
	}
}

// TestWriteImageFilesStopsAtCancel: a cancelled turn writes no image and
// leaves nothing behind.
func TestWriteImageFilesStopsAtCancel(t *testing.T) {
	root := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := WriteFiles(ctx, root, []Image{{MimeType: "image/png", Data: pngBytes(t)}}); !errors.Is(err, context.Canceled) {
		t.Errorf("WriteFiles after cancel: %v", err)
	}
	var buf strings.Builder
	src := filepath.Join(t.TempDir(), "a.png")
	if err := os.WriteFile(src, pngBytes(t), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := copyFile(ctx, &buf, src); !errors.Is(err, context.Canceled) || buf.Len() != 0 {
		t.Errorf("copyFile after cancel: %v, %d bytes copied", err, buf.Len())
	}
	if ents, _ := os.ReadDir(root); len(ents) != 0 {
		t.Errorf("left behind: %v", ents)
	}
}
