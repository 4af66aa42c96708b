//go:build unix

package acp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/internal/fakeeditor"
)

// failedTexts are the texts of the failed tool_call_updates the editor
// received.
func (th *toolsHarness) failedTexts(t *testing.T) []string {
	t.Helper()
	if err := th.editor.Sync(th.ctx); err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, u := range th.editor.Updates() {
		tu := u.Update.ToolCallUpdate
		if tu == nil || tu.Status == nil || *tu.Status != acpsdk.ToolCallStatusFailed {
			continue
		}
		for _, c := range tu.Content {
			if c.Content != nil && c.Content.Content.Text != nil {
				texts = append(texts, c.Content.Content.Text.Text)
			}
		}
	}
	return texts
}

// An editor that follows links writes wherever a link swapped in after our
// last check leads: that cannot be prevented, so the path is checked again
// once the editor answers, and a write that may have gone elsewhere fails
// the tool call, naming the path and where it led, for the model and the
// user. Editors that keep the change in their buffer, write in place or
// save by rename are not flagged.
func TestEditorWriteCheckedAfterwards(t *testing.T) {
	t.Parallel()
	type env struct{ ws, path, outside string }
	swapForLink := func(e env) {
		_ = os.Remove(e.path)
		_ = os.Symlink(e.outside, e.path)
	}
	for _, tc := range []struct {
		name         string
		writeThrough bool
		newFile      bool
		before       func(e env) // right before the editor writes
		after        func(e env) // right after
		msg          string      // "": no error; {path}, {outside}
		outside      bool        // the outside file was written
	}{
		{name: "link stays", writeThrough: true, before: swapForLink,
			msg: "Path changed during the write: {path} now leads to {outside}", outside: true},
		{name: "link swapped back", writeThrough: true, before: swapForLink,
			after: func(e env) {
				_ = os.Remove(e.path)
				mustWrite(t, e.path, "inside\n")
			},
			msg: "Path changed during the write: {path} does not hold what was written, or the editor saved more than the write", outside: true},
		{name: "new file, link to a new outside file", writeThrough: true, newFile: true, before: swapForLink,
			msg: "Path changed during the write: {path} now leads to {outside}", outside: true},
		{name: "hard link swapped in", writeThrough: true,
			before: func(e env) {
				_ = os.Remove(e.path)
				_ = os.Link(e.outside, e.path)
			},
			msg: "Path changed during the write: {path} is now another file, of 2 names (hard links)", outside: true},
		{name: "file removed", writeThrough: false, after: func(e env) { _ = os.Remove(e.path) },
			msg: "Path changed during the write: {path} no longer exists"},
		{name: "buffer only", writeThrough: false},
		{name: "buffer only, new file", writeThrough: false, newFile: true},
		{name: "in place", writeThrough: true},
		{name: "in place, new file", writeThrough: true, newFile: true},
		{name: "reformatted in place", writeThrough: true, after: func(e env) {
			if err := os.WriteFile(e.path, []byte("two\n\n"), 0o644); err != nil {
				t.Error(err)
			}
		}},
		{name: "saved by rename", writeThrough: false, after: func(e env) {
			tmp := e.path + ".save"
			mustWrite(t, tmp, "two\n")
			if err := os.Rename(tmp, e.path); err != nil {
				t.Error(err)
			}
		}},
		// Editors that normalise on save (line endings, final newline,
		// BOM, trailing blanks: Zed and Emacs can) wrote inside all the same.
		{name: "saved by rename, reformatted", writeThrough: false, after: func(e env) {
			tmp := e.path + ".save"
			mustWrite(t, tmp, "\ufefftwo  \r\n\r\n")
			if err := os.Rename(tmp, e.path); err != nil {
				t.Error(err)
			}
		}},
		{name: "new file, reformatted", writeThrough: false, newFile: true, after: func(e env) {
			mustWrite(t, e.path, "two")
		}},
		{name: "new file, other content", writeThrough: false, newFile: true, after: func(e env) {
			mustWrite(t, e.path, "three\n")
		}, msg: "Path changed during the write: {path} does not hold what was written, or the editor saved more than the write"},
		// An editor that writes into its open buffer and saves it
		// (Neovim with codecompanion.nvim) saves the buffer's unsaved text
		// with the edit: the user is told, not left with a diff that
		// misses it.
		{name: "saved by rename with unsaved text of the buffer", writeThrough: false, after: func(e env) {
			tmp := e.path + ".save"
			mustWrite(t, tmp, "two\nunsaved line typed by the user\n")
			if err := os.Rename(tmp, e.path); err != nil {
				t.Error(err)
			}
		}, msg: "Path changed during the write: {path} does not hold what was written, or the editor saved more than the write"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var e env
			e.outside = filepath.Join(t.TempDir(), "victim")
			if !tc.newFile {
				mustWrite(t, e.outside, "precious\n")
			}
			th := startTools(t, fakeeditor.Options{FS: true, WriteThrough: tc.writeThrough,
				BeforeFS: func(_ context.Context, method, _ string) {
					if method == "fs/write_text_file" && tc.before != nil {
						tc.before(e)
					}
				},
				AfterFS: func(string, string) {
					if tc.after != nil {
						tc.after(e)
					}
				}}, backend.ModeAuto)
			e.ws, e.path = th.cwd, filepath.Join(th.cwd, "a.txt")
			if !tc.newFile {
				mustWrite(t, e.path, "one\n")
			}
			res := th.call(t, "write_text_file", map[string]any{"path": e.path, "content": "two\n"})
			_, msg := errorCode(res)
			want := strings.NewReplacer("{path}", e.path, "{outside}", e.outside).Replace(tc.msg)
			if msg != want || res.IsError != (want != "") {
				t.Fatalf("error %q, want %q: %+v", msg, want, res.StructuredContent)
			}
			if hint := errorHint(res); want != "" && !strings.Contains(hint, "Tell the user") {
				t.Errorf("hint %q", hint)
			}
			failed := th.failedTexts(t)
			if want != "" && (len(failed) != 1 || !strings.HasPrefix(failed[0], want)) {
				t.Errorf("the user was shown %q, want %q", failed, want)
			}
			if want == "" && len(failed) != 0 {
				t.Errorf("the user was shown %q", failed)
			}
			got, _ := os.ReadFile(e.outside)
			if wrote := string(got) == "two\n"; wrote != tc.outside {
				t.Errorf("outside file = %q", got)
			}
		})
	}
}

// What editors change on save is the same text; other content is not.
func TestSameText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"two\n", "two\n", true},
		{"", "", true},
		{"a\nb\n", "a\r\nb\r\n", true},
		{"a\nb", "a\nb\n", true},
		{"a\nb\n\n\n", "a\nb\n", true},
		{"\ufeffa\n", "a\n", true},
		{"a  \nb\t\n", "a\nb\n", true},
		{"\ufeffa \r\nb\r\n\r\n", "a\nb", true},
		{"", "\n", true},
		{"a\nb\n", "a\n\nb\n", false},
		{"a b\n", "ab\n", false},
		{"  a\n", "a\n", false},
		{"inside\n", "two\n", false},
		{"two\n", "", false},
		{"a\nb\n", "a\n", false},
	} {
		if got := sameText([]byte(tc.a), []byte(tc.b)); got != tc.same {
			t.Errorf("sameText(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.same)
		}
		if got := sameText([]byte(tc.b), []byte(tc.a)); got != tc.same {
			t.Errorf("sameText(%q, %q) = %v, want %v", tc.b, tc.a, got, tc.same)
		}
	}
	// Longer than normalising can make data: not read to its end.
	if holdsText(strings.NewReader(strings.Repeat("x", 100)), []byte("x")) {
		t.Error("a long file holds one byte of text")
	}
}
