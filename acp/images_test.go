package acp

import (
	"encoding/base64"
	"errors"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/internal/fakeeditor"
	"github.com/codexacp/codexacp/internal/testkit"
)

func fileURI(path string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
}

// /review and /compact take no images: a prompt with some is refused with
// a clear error, and codex does not run.
func TestCommandTurnRefusesImages(t *testing.T) {
	t.Parallel()
	be := &cmdBackend{feats: backend.Review | backend.Compact}
	h := startAgent(t, be, fakeeditor.Options{})
	sid := h.newSession(t, t.TempDir())
	img := acpsdk.ImageBlock(base64.StdEncoding.EncodeToString(testkit.PNG(t)), "image/png")
	for _, cmd := range []string{"/review look at this", "/compact"} {
		_, err := h.editor.Conn.Prompt(h.ctx, acpsdk.PromptRequest{SessionId: sid, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock(cmd), img}})
		var re *acpsdk.RequestError
		if !errors.As(err, &re) || re.Code != -32602 || !strings.Contains(re.Message, "takes no images") {
			t.Errorf("%s with an image: %v, want -32602 saying it takes no images", cmd, err)
		}
	}
	if n := be.turnCount(); n != 0 {
		t.Errorf("codex ran %d turns", n)
	}
}
