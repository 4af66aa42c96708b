//go:build unix

package acp

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/fsops"
	"github.com/codexacp/codexacp/internal/fakeeditor"
)

func TestEditorReadRefusesNonRegularFiles(t *testing.T) {
	t.Parallel()
	th := startTools(t, fakeeditor.Options{FS: true}, backend.ModeFullAccess)
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

// read_text_file of line 1 of a huge sparse file answers on both routes,
// reading only the start of it: from the disk (an editor without fs), and
// through the editor for the line (the file planned on the disk, streamed;
// it used to be read whole there too). The editor route's file is 16 MiB
// (past the 8 MiB read bound and the editor's 10 MiB line) because the fake
// editor itself reads whole files.
func TestReadHugeFileBothRoutes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		fs   bool
		size int64
	}{{"local", false, 64 << 30}, {"editor", true, 16 << 20}} {
		t.Run(tc.name, func(t *testing.T) {
			th := startTools(t, fakeeditor.Options{FS: tc.fs}, backend.ModeReadOnly)
			big := filepath.Join(th.cwd, "big.log")
			mustWrite(t, big, "first line\nsecond line\n")
			if err := os.Truncate(big, tc.size); err != nil {
				t.Skipf("no sparse files: %v", err)
			}
			res := th.call(t, "read_text_file", map[string]any{"path": big, "limit": 1})
			if res.IsError {
				t.Fatalf("read: %+v", res.StructuredContent)
			}
			m := res.StructuredContent.(map[string]any)
			if m["content"] != "first line\n" || m["hash"] != "" || m["has_more"] != true ||
				!strings.Contains(m["hint"].(string), "over the 8 MiB") {
				t.Errorf("result = %v", m)
			}
			res = th.call(t, "edit_text_file", map[string]any{"path": big, "old_string": "first", "new_string": "1st"})
			if code, _ := errorCode(res); code != fsops.CodeTooLarge {
				t.Errorf("edit: code %d, want %d", code, fsops.CodeTooLarge)
			}
		})
	}
}
