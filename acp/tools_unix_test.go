//go:build unix

package acp

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/codexacp/codexacp/fsops"
	"github.com/codexacp/codexacp/internal/fakeeditor"
)

func TestEditorReadRefusesNonRegularFiles(t *testing.T) {
	th := startTools(t, fakeeditor.Options{FS: true}, ModeFullAccess)
	fifo := filepath.Join(th.cwd, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, "/dev/stdin", "/dev/zero"} {
		res := th.call(t, "read_text_file", map[string]any{"path": p})
		if code, msg := errorCode(res); code != fsops.CodeNotRegular {
			t.Errorf("%s: code %d (%s), want %d", p, code, msg, fsops.CodeNotRegular)
		}
	}
	if n := len(th.editor.Calls()); n != 0 {
		t.Errorf("the editor was asked to read special files %d times", n)
	}
}
