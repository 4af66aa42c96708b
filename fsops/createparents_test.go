package fsops

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// tree lists every path under dir (links not followed), relative to it.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var paths []string
	err := filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			rel, _ := filepath.Rel(dir, p)
			paths = append(paths, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return paths
}

// mkdirFailing is a LocalFiles whose directory creation fails with err.
func mkdirFailing(err error) *LocalFiles {
	ops := realOS
	ops.openRoot = func(dir string) (dirHandle, error) {
		d, oerr := realOS.openRoot(dir)
		if oerr != nil {
			return nil, oerr
		}
		return mkdirFailingDir{d, err}, nil
	}
	return &LocalFiles{ops: ops}
}

type mkdirFailingDir struct {
	dirHandle
	err error
}

func (d mkdirFailingDir) OpenRoot(name string) (dirHandle, error) {
	sub, err := d.dirHandle.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	return mkdirFailingDir{sub, d.err}, nil
}

func (d mkdirFailingDir) Mkdir(name string, _ fs.FileMode) error {
	return &fs.PathError{Op: "mkdirat", Path: name, Err: d.err}
}

// write_text_file with create_parents on the local disk: directories are
// made only inside the workspace root, judged on the resolved location, and
// only once the write is approved.
func TestWriteTextFileCreateParentsLocal(t *testing.T) {
	t.Parallel()
	veto := errors.New("rejected")
	tests := []struct {
		name   string
		files  func(ws string) *LocalFiles // default: NewLocalFiles().Within(ws)
		setup  func(t *testing.T, ws, out string)
		path   string // relative to ws; "OUT/…" is relative to out
		create bool
		guard  bool  // refuse writes outside ws in BeforeWrite, as the ACP layer does
		veto   error // BeforeWrite's answer
		code   int
		msg    string // {ws} and {out} stand for the directories
		hint   string
		// wantWS and wantOut list every path under ws and out afterwards.
		wantWS, wantOut []string
	}{
		{name: "default: parent not found (seed TC6)", path: "missing-dir/file.txt",
			code: CodeNotFound, msg: "Parent directory not found: {ws}/missing-dir", hint: "create_parents: true"},
		{name: "nested", path: "a/b/c/f.txt", create: true,
			wantWS: []string{"a", "a/b", "a/b/c", "a/b/c/f.txt"}},
		{name: "idempotent", path: "a/b/f.txt", create: true,
			setup:  func(t *testing.T, ws, _ string) { mkdir(t, filepath.Join(ws, "a", "b")) },
			wantWS: []string{"a", "a/b", "a/b/f.txt"}},
		{name: "permission denied: nothing created", path: "a/b/f.txt", create: true, veto: veto,
			code: CodePermission, msg: "Permission denied: {ws}/a/b/f.txt"},
		{name: "symlinked parent to outside, judged on the resolved path", path: "link/new/f.txt", create: true,
			setup: func(t *testing.T, ws, out string) { symlink(t, out, filepath.Join(ws, "link")) },
			code:  CodePermission, msg: "Permission denied: {out}/new", hint: "only inside the workspace",
			wantWS: []string{"link"}},
		{name: "symlinked parent to outside, refused by the guard", path: "link/new/f.txt", create: true, guard: true,
			setup: func(t *testing.T, ws, out string) { symlink(t, out, filepath.Join(ws, "link")) },
			code:  CodePermission, msg: "Permission denied: {out}/new/f.txt",
			wantWS: []string{"link"}},
		{name: "outside path", path: "OUT/new/f.txt", create: true,
			code: CodePermission, msg: "Permission denied: {out}/new", hint: "only inside the workspace"},
		{name: "dangling symlink inside", path: "dangling/a/f.txt", create: true,
			setup: func(t *testing.T, ws, _ string) {
				symlink(t, filepath.Join(ws, "nowhere"), filepath.Join(ws, "dangling"))
			},
			code: CodePermission, msg: "Permission denied: {ws}/dangling", hint: "symbolic link",
			wantWS: []string{"dangling"}},
		{name: "dangling symlink to outside", path: "dangling/a/f.txt", create: true,
			setup: func(t *testing.T, ws, out string) {
				symlink(t, filepath.Join(out, "nowhere"), filepath.Join(ws, "dangling"))
			},
			code: CodePermission, msg: "Permission denied: {ws}/dangling", hint: "symbolic link",
			wantWS: []string{"dangling"}},
		{name: "no workspace roots", path: "a/f.txt", create: true,
			files: func(string) *LocalFiles { return NewLocalFiles() },
			code:  CodePermission, msg: "Permission denied: {ws}/a", hint: "no workspace directory is known"},
		{name: "a file in the way", path: "file/a/f.txt", create: true,
			setup: func(t *testing.T, ws, _ string) { writeFile(t, filepath.Join(ws, "file"), "") },
			code:  CodeNotFound, msg: "Parent directory not found: {ws}/file", hint: "is a file",
			wantWS: []string{"file"}},
		{name: "mkdir denied", path: "a/f.txt", create: true,
			files: func(ws string) *LocalFiles { return mkdirFailing(syscall.EACCES).Within(ws) },
			code:  CodePermission, msg: "Permission denied: {ws}/a"},
		{name: "read-only file system", path: "a/f.txt", create: true,
			files: func(ws string) *LocalFiles { return mkdirFailing(syscall.EROFS).Within(ws) },
			code:  CodePermission, msg: "Read-only filesystem: {ws}/a"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ws, out := t.TempDir(), t.TempDir()
			if tc.setup != nil {
				tc.setup(t, ws, out)
			}
			files := NewLocalFiles().Within(ws)
			if tc.files != nil {
				files = tc.files(ws)
			}
			path := filepath.Join(ws, tc.path)
			if rest, ok := strings.CutPrefix(tc.path, "OUT/"); ok {
				path = filepath.Join(out, rest)
			}
			before := func(_ context.Context, c *Change) error {
				if tc.guard && !Within(ws, c.Path) {
					return errors.New("outside the workspace")
				}
				for _, d := range c.NewDirs {
					if _, err := os.Lstat(d); err == nil {
						t.Errorf("%s exists before the write was approved", d)
					}
				}
				return tc.veto
			}
			_, err := NewEngine(files).WriteTextFile(context.Background(),
				WriteParams{Path: path, Content: "x\n", CreateParents: tc.create}, before)
			if tc.code != 0 {
				msg := strings.NewReplacer("{ws}", ws, "{out}", out).Replace(tc.msg)
				wantToolError(t, err, tc.code, msg)
				if te := AsError(err); !strings.Contains(te.Hint, tc.hint) {
					t.Errorf("hint %q lacks %q", te.Hint, tc.hint)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if got := tree(t, ws); !slices.Equal(got, tc.wantWS) {
				t.Errorf("workspace holds %q, want %q", got, tc.wantWS)
			}
			if got := tree(t, out); !slices.Equal(got, tc.wantOut) {
				t.Errorf("outside holds %q, want %q", got, tc.wantOut)
			}
		})
	}
}

// The port itself refuses links and files on the way, whatever the engine
// checked before: a link swapped into the path after it was resolved cannot
// lead the creation elsewhere, inside the workspace or out.
func TestLocalMkdirAllRefusesLinks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		setup func(t *testing.T, ws, out string)
		dir   string // relative to ws
		code  int
		msg   string
	}{
		{name: "link to outside", dir: "link/sub",
			setup: func(t *testing.T, ws, out string) { symlink(t, out, filepath.Join(ws, "link")) },
			code:  CodePermission, msg: "Permission denied: {ws}/link"},
		{name: "link inside", dir: "link/sub",
			setup: func(t *testing.T, ws, _ string) {
				mkdir(t, filepath.Join(ws, "real"))
				symlink(t, filepath.Join(ws, "real"), filepath.Join(ws, "link"))
			},
			code: CodePermission, msg: "Permission denied: {ws}/link"},
		{name: "file", dir: "file/sub",
			setup: func(t *testing.T, ws, _ string) { writeFile(t, filepath.Join(ws, "file"), "") },
			code:  CodeNotFound, msg: "Parent directory not found: {ws}/file"},
		{name: "root itself", dir: "."},
		{name: "made", dir: "a/b"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ws, out := t.TempDir(), t.TempDir()
			if tc.setup != nil {
				tc.setup(t, ws, out)
			}
			before := tree(t, ws)
			err := NewLocalFiles().Within(ws).MkdirAll(context.Background(), filepath.Join(ws, tc.dir))
			if tc.code == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if fi, err := os.Lstat(filepath.Join(ws, tc.dir)); err != nil || !fi.IsDir() {
					t.Errorf("%s: %v, %v", tc.dir, fi, err)
				}
				return
			}
			wantToolError(t, err, tc.code, strings.ReplaceAll(tc.msg, "{ws}", ws))
			if got := tree(t, ws); !slices.Equal(got, before) {
				t.Errorf("workspace holds %q, want %q", got, before)
			}
			if got := tree(t, out); len(got) != 0 {
				t.Errorf("created outside: %q", got)
			}
		})
	}
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
