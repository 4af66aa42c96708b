package mcp

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/codexacp/codexacp/fsops"
)

// write_text_file's create_parents through an MCP client, on the local disk
// with the workspace as the adapter's root (as the ACP layer sets it up):
// the seed's error by default; with the flag the directories and the file,
// only inside the workspace and only once the observer approved.
func TestWriteTextFileCreateParents(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		setup  func(t *testing.T, ws, out string)
		path   string         // relative to ws
		args   map[string]any // besides path and content
		veto   error
		code   int
		msg    string // {ws} and {out} stand for the directories
		hint   string
		asked  bool     // BeforeWrite was called
		dirs   []string // created_dirs, relative to ws
		wantWS []string // every path under ws afterwards
	}{
		{name: "default: seed 003 TC6", path: "missing-dir/file.txt",
			code: fsops.CodeNotFound, msg: "Parent directory not found: {ws}/missing-dir", hint: "create_parents: true"},
		{name: "false: seed 003 TC6", path: "missing-dir/file.txt", args: map[string]any{"create_parents": false},
			code: fsops.CodeNotFound, msg: "Parent directory not found: {ws}/missing-dir", hint: "create_parents: true"},
		{name: "nested directories", path: "a/b/f.txt", args: map[string]any{"create_parents": true}, asked: true,
			dirs: []string{"a", "a/b"}, wantWS: []string{"a", "a/b", "a/b/f.txt"}},
		{name: "directories exist", path: "a/b/f.txt", args: map[string]any{"create_parents": true}, asked: true,
			setup:  func(t *testing.T, ws, _ string) { mkdirs(t, filepath.Join(ws, "a", "b")) },
			wantWS: []string{"a", "a/b", "a/b/f.txt"}},
		{name: "permission denied", path: "a/b/f.txt", args: map[string]any{"create_parents": true}, asked: true,
			veto: errors.New("rejected"), code: fsops.CodePermission, msg: "Permission denied: {ws}/a/b/f.txt"},
		{name: "symlinked parent to outside", path: "link/new/f.txt", args: map[string]any{"create_parents": true}, asked: true,
			setup: func(t *testing.T, ws, out string) { symlinkOrSkip(t, out, filepath.Join(ws, "link")) },
			code:  fsops.CodePermission, msg: "Permission denied: {out}/new", hint: "only inside the workspace",
			wantWS: []string{"link"}},
		{name: "dangling symlink", path: "dangling/a/f.txt", args: map[string]any{"create_parents": true},
			setup: func(t *testing.T, ws, out string) {
				symlinkOrSkip(t, filepath.Join(out, "nowhere"), filepath.Join(ws, "dangling"))
			},
			code: fsops.CodePermission, msg: "Permission denied: {ws}/dangling", hint: "symbolic link",
			wantWS: []string{"dangling"}},
		{name: "not a boolean", path: "a/f.txt", args: map[string]any{"create_parents": "yes"},
			code: fsops.CodeInvalidRequest, msg: `Invalid arguments for write_text_file: create_parents: type: yes has type "string", want "boolean"`,
			hint: "create_parents (boolean, optional)"},
	}
	for _, tr := range transports {
		for _, tc := range tests {
			t.Run(tr.name+"/"+tc.name, func(t *testing.T) {
				ws, out := t.TempDir(), t.TempDir()
				if tc.setup != nil {
					tc.setup(t, ws, out)
				}
				rec := &recorder{veto: tc.veto}
				cs := tr.connect(t, NewServer(fsops.NewEngine(fsops.NewLocalFiles().Within(ws)), rec))
				args := map[string]any{"path": filepath.Join(ws, tc.path), "content": "x\n"}
				for k, v := range tc.args {
					args[k] = v
				}
				res, sc := call(t, cs, fsops.ToolWriteTextFile, args)

				var asked *fsops.Change
				for _, e := range rec.snapshot() {
					if e.kind == "before-write" {
						asked = e.change
					}
				}
				if (asked != nil) != tc.asked {
					t.Errorf("asked: %v, want %v", asked != nil, tc.asked)
				}
				if tc.code != 0 {
					code, msg, hint := toolErr(t, res, sc)
					if want := strings.NewReplacer("{ws}", ws, "{out}", out).Replace(tc.msg); code != tc.code || msg != want {
						t.Errorf("error %d %q, want %d %q", code, msg, tc.code, want)
					}
					if !strings.Contains(hint, tc.hint) {
						t.Errorf("hint %q lacks %q", hint, tc.hint)
					}
				} else {
					if res.IsError || sc["created"] != true {
						t.Fatalf("result %v", sc)
					}
					var want []string
					for _, d := range tc.dirs {
						want = append(want, filepath.Join(ws, d))
					}
					var got []string
					if dirs, ok := sc["created_dirs"].([]any); ok {
						for _, d := range dirs {
							got = append(got, d.(string))
						}
					} else if _, present := sc["created_dirs"]; present {
						t.Errorf("created_dirs = %v", sc["created_dirs"])
					}
					if !slices.Equal(got, want) || !slices.Equal(asked.NewDirs, want) {
						t.Errorf("created_dirs %q, asked about %q, want %q", got, asked.NewDirs, want)
					}
					if len(want) > 0 && !strings.Contains(resultText(res), "and the directories "+strings.Join(want, ", ")) {
						t.Errorf("summary %q does not name the directories", resultText(res))
					}
				}
				if got := walk(t, ws); !slices.Equal(got, tc.wantWS) {
					t.Errorf("workspace holds %q, want %q", got, tc.wantWS)
				}
				if got := walk(t, out); len(got) != 0 {
					t.Errorf("created outside the workspace: %q", got)
				}
			})
		}
	}
}

// walk lists every path under dir (links not followed), relative to it.
func walk(t *testing.T, dir string) []string {
	t.Helper()
	var paths []string
	err := filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err == nil && p != dir {
			rel, _ := filepath.Rel(dir, p)
			paths = append(paths, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return paths
}

func mkdirs(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func symlinkOrSkip(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
}
