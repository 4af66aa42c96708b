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

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/internal/fakeeditor"
)

// TestPromptImageFIFO: an image block naming a FIFO (a pasted path) is
// refused at once with the path and what it is; the prompt never waits
// for a writer. So is a link to one.
func TestPromptImageFIFO(t *testing.T) {
	t.Parallel()
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
