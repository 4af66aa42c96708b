package mcp

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/codexacp/codexacp/fsops"
)

// What the model sees for a path that leads nowhere a file can be: a tool
// error with the contract's -32600 code, the path and a hint, never
// -32603; and "new.txt/" writes nothing.
func TestClientPathErrorsReachTheModel(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("symlinks and POSIX paths")
	}
	ws := t.TempDir()
	symlinkOrSkip(t, "loop", filepath.Join(ws, "loop"))
	cs := connectInMemory(t, NewServer(fsops.NewEngine(fsops.NewLocalFiles().Within(ws)), &recorder{}))
	for _, tc := range []struct {
		tool string
		args map[string]any
		msg  string
	}{
		{fsops.ToolReadTextFile, map[string]any{"path": ws + "/loop"}, "Too many levels of symbolic links: " + ws + "/loop"},
		{fsops.ToolEditTextFile, map[string]any{"path": ws + "/loop/a.txt", "old_string": "a", "new_string": "b"},
			"Too many levels of symbolic links: " + ws + "/loop/a.txt"},
		{fsops.ToolWriteTextFile, map[string]any{"path": ws + "/new.txt/", "content": "x\n"}, "Path names a directory: " + ws + "/new.txt/"},
		{fsops.ToolWriteTextFile, map[string]any{"path": ws + "/" + strings.Repeat("n", 300), "content": "x\n"},
			"File name too long: " + ws + "/" + strings.Repeat("n", 300)},
	} {
		res, sc := call(t, cs, tc.tool, tc.args)
		code, msg, _ := toolErr(t, res, sc)
		if code != fsops.CodeInvalidRequest || msg != tc.msg {
			t.Errorf("%s %v: %d %q, want -32600 %q", tc.tool, tc.args["path"], code, msg, tc.msg)
		}
	}
	if got := walk(t, ws); len(got) != 1 {
		t.Errorf("workspace holds %q, want only the loop", got)
	}
	if _, err := os.Lstat(filepath.Join(ws, "new.txt")); err == nil {
		t.Error("new.txt/ wrote new.txt")
	}
}
