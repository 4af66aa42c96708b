package e2e_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/e2e/mockapi"
	"github.com/codexacp/codexacp/internal/fakeeditor"
)

// In ask mode the shell cannot mkdir; write_text_file's create_parents
// makes the directories once the user allows the write, and the model is
// told about the argument when it writes into a missing directory without it.
func TestWriteCreatesParentsInAskMode(t *testing.T) { eachBackend(t, testWriteCreatesParentsInAskMode) }

func testWriteCreatesParentsInAskMode(t *testing.T, backend string) {
	e := start(t, setup{backend: backend, fs: true, mode: "ask", permission: func(acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse {
		return fakeeditor.Select("allow_once")
	}})
	path := filepath.Join(e.cwd, "pkg", "sub", "new.go")
	e.mock.Enqueue(
		mockapi.Reply(acpCall(t, "c1", "write_text_file", map[string]any{"path": path, "content": "package sub\n"})),
		mockapi.Reply(acpCall(t, "c2", "write_text_file", map[string]any{"path": path, "content": "package sub\n", "create_parents": true})),
		mockapi.Reply(mockapi.Message("created")),
	)
	e.mustPrompt("create a file in a new package")
	if out := toolOutput(t, e, "c1"); !strings.Contains(out, "create_parents") {
		t.Errorf("the first write's answer does not point at create_parents: %s", out)
	}
	if out := toolOutput(t, e, "c2"); strings.Contains(out, `"error"`) {
		t.Errorf("the write with create_parents failed: %s", out)
	}
	if fi, err := os.Stat(filepath.Dir(path)); err != nil || !fi.IsDir() {
		t.Fatalf("directory not created: %v", err)
	}
	if buf, _ := e.editor.Buffer(path); buf != "package sub\n" {
		t.Errorf("editor buffer = %q", buf)
	}
}
