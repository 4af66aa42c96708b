//go:build unix

package acp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/internal/fakeeditor"
)

// TestPromptImageFIFO: an image block naming a FIFO (a pasted path) is
// refused at once with the path and what it is; the prompt never waits
// for a writer. So is a link to one.
func TestPromptImageFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "a.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "shot.png")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	h := startAgent(t, &fakeBackend{script: oneTurn}, fakeeditor.Options{})
	sid := h.newSession(t, t.TempDir())
	ctx, cancel := context.WithTimeout(h.ctx, stateWait)
	defer cancel()
	for _, p := range []string{fifo, link} {
		uri := fileURI(p)
		_, err := h.editor.Conn.Prompt(ctx, acpsdk.PromptRequest{SessionId: sid, Prompt: []acpsdk.ContentBlock{
			acpsdk.TextBlock("what is this?"),
			{Image: &acpsdk.ContentBlockImage{Type: "image", MimeType: "image/png", Uri: &uri}},
		}})
		if ctx.Err() != nil {
			t.Fatalf("the prompt with image %s did not answer within %v", p, stateWait)
		}
		var re *acpsdk.RequestError
		if !errors.As(err, &re) || re.Code != -32602 || !strings.Contains(re.Message, p) || !strings.Contains(re.Message, "not a regular file (a FIFO)") {
			t.Errorf("image %s: %v, want -32602 naming it as a FIFO", p, err)
		}
	}
}

// TestCopyImageFileRefusesFIFO: a user's image swapped for a FIFO after it
// was checked is not waited on when copied (writeImageFiles).
func TestCopyImageFileRefusesFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "a,b.png")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		files, err := writeImageFiles(context.Background(), t.TempDir(), []Image{{MimeType: "image/png", Path: fifo}})
		if err == nil {
			files.Remove()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("writeImageFiles of a FIFO: %v", err)
		}
	case <-time.After(stateWait):
		t.Fatalf("writeImageFiles of a FIFO did not return within %v", stateWait)
	}
}

// TestWriteImageFilesStopsAtCancel: a cancelled turn writes no image and
// leaves nothing behind.
func TestWriteImageFilesStopsAtCancel(t *testing.T) {
	root := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := writeImageFiles(ctx, root, []Image{{MimeType: "image/png", Data: pngBytes(t)}}); !errors.Is(err, context.Canceled) {
		t.Errorf("writeImageFiles after cancel: %v", err)
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
