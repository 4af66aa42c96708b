//go:build unix

package acp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/fsops"
	"github.com/codexacp/codexacp/internal/fakeeditor"
)

// hardLinkedOutside makes name in the workspace a second name (hard link)
// of a file outside it, and returns the outside name.
func hardLinkedOutside(t *testing.T, name string) string {
	t.Helper()
	outside := filepath.Join(t.TempDir(), "victim")
	mustWrite(t, outside, "precious one\n")
	if err := os.Link(outside, name); err != nil {
		t.Skipf("hard links unavailable: %v", err)
	}
	return outside
}

func errorHint(res *mcpsdk.CallToolResult) string {
	m, _ := res.StructuredContent.(map[string]any)
	e, _ := m["error"].(map[string]any)
	hint, _ := e["hint"].(string)
	return hint
}

// editorWrites counts the fs/write_text_file requests since before.
func (th *toolsHarness) editorWritesSince(before int) int {
	n := 0
	for _, c := range th.editor.Calls()[before:] {
		if c.Method == "fs/write_text_file" {
			n++
		}
	}
	return n
}

// A file with a second name outside the workspace cannot be written through
// an editor that writes in place without changing the outside file: auto
// mode refuses it, saying why; nothing is sent to the editor.
func TestHardLinkRefusedInAutoThroughTheEditor(t *testing.T) {
	t.Parallel()
	th := startTools(t, fakeeditor.Options{FS: true, WriteThrough: true}, backend.ModeAuto)
	path := filepath.Join(th.cwd, "a.txt")
	outside := hardLinkedOutside(t, path)
	before := len(th.editor.Calls())
	res := th.call(t, "edit_text_file", map[string]any{"path": path, "old_string": "one", "new_string": "two"})
	if code, msg := errorCode(res); code != fsops.CodePermission || !strings.Contains(msg, path) {
		t.Fatalf("code %d %q, want -32002 naming the path: %+v", code, msg, res.StructuredContent)
	}
	if hint := errorHint(res); !strings.Contains(hint, "hard link") || !strings.Contains(hint, "2 names") {
		t.Errorf("hint %q does not give the reason", hint)
	}
	if got, _ := os.ReadFile(outside); string(got) != "precious one\n" {
		t.Fatalf("the outside file changed: %q", got)
	}
	if n := th.editorWritesSince(before); n != 0 {
		t.Errorf("the editor was asked to write %d times", n)
	}
	if th.askedSince(before) {
		t.Error("auto mode asked")
	}
}

// In ask mode the question says the file has other names, even after the
// user allowed every edit of the session; allowed, the editor writes it.
func TestHardLinkAsksWithTheReason(t *testing.T) {
	t.Parallel()
	var questions []acpsdk.RequestPermissionRequest
	th := startTools(t, fakeeditor.Options{FS: true, WriteThrough: true,
		Permission: func(req acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse {
			questions = append(questions, req)
			return fakeeditor.Select("allow_always")
		}}, backend.ModeAsk)
	plain := filepath.Join(th.cwd, "plain.txt")
	mustWrite(t, plain, "one\n")
	if res := th.call(t, "edit_text_file", map[string]any{"path": plain, "old_string": "one", "new_string": "two"}); res.IsError {
		t.Fatalf("plain edit: %+v", res.StructuredContent)
	}
	path := filepath.Join(th.cwd, "a.txt")
	outside := hardLinkedOutside(t, path)
	res := th.call(t, "edit_text_file", map[string]any{"path": path, "old_string": "one", "new_string": "two"})
	if res.IsError {
		t.Fatalf("allowed edit: %+v", res.StructuredContent)
	}
	if len(questions) != 2 {
		t.Fatalf("%d questions, want 2 (the hard-linked file asks despite allow_always)", len(questions))
	}
	q := questions[1]
	if title := *q.ToolCall.Title; !strings.Contains(title, "hard link") {
		t.Errorf("title %q does not give the reason", title)
	}
	var text string
	for _, c := range q.ToolCall.Content {
		if c.Content != nil && c.Content.Content.Text != nil {
			text += c.Content.Content.Text.Text
		}
	}
	if !strings.Contains(text, "2 names") || !strings.Contains(text, "in place") {
		t.Errorf("question text %q does not explain", text)
	}
	if got, _ := os.ReadFile(outside); string(got) != "precious two\n" {
		t.Errorf("the user allowed it, yet the outside name reads %q", got)
	}
}

// A hard link made while the user is asked (the file swapped for a second
// name of an outside file) is caught by the check right before the write.
func TestHardLinkMadeDuringTheQuestionRefused(t *testing.T) {
	t.Parallel()
	outside := filepath.Join(t.TempDir(), "victim")
	mustWrite(t, outside, "precious one\n")
	var path string
	th := startTools(t, fakeeditor.Options{FS: true, WriteThrough: true,
		Permission: func(acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse {
			_ = os.Remove(path)
			if err := os.Link(outside, path); err != nil {
				t.Errorf("link: %v", err)
			}
			return fakeeditor.Select("allow_once")
		}}, backend.ModeAsk)
	path = filepath.Join(th.cwd, "a.txt")
	mustWrite(t, path, "one\n")
	res := th.call(t, "edit_text_file", map[string]any{"path": path, "old_string": "one", "new_string": "two"})
	if code, _ := errorCode(res); code != fsops.CodePermission {
		t.Fatalf("code %d, want -32002: %+v", code, res.StructuredContent)
	}
	if got, _ := os.ReadFile(outside); string(got) != "precious one\n" {
		t.Fatalf("the outside file changed: %q", got)
	}
}

// Full access writes anywhere anyway: a hard link does not stop it. The
// local route replaces the file by rename: the link is broken, the other
// name keeps its content, so there is nothing to refuse.
func TestHardLinkFullAccessAndLocalRoute(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		fs          bool
		mode        backend.Mode
		wantOutside string
	}{
		{"full access, editor", true, backend.ModeFullAccess, "precious two\n"},
		{"auto, local disk", false, backend.ModeAuto, "precious one\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			th := startTools(t, fakeeditor.Options{FS: tc.fs, WriteThrough: true}, tc.mode)
			path := filepath.Join(th.cwd, "a.txt")
			outside := hardLinkedOutside(t, path)
			res := th.call(t, "edit_text_file", map[string]any{"path": path, "old_string": "one", "new_string": "two"})
			if res.IsError {
				t.Fatalf("%+v", res.StructuredContent)
			}
			if got, _ := os.ReadFile(outside); string(got) != tc.wantOutside {
				t.Errorf("outside name reads %q, want %q", got, tc.wantOutside)
			}
		})
	}
}
