package fsops

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// checkPath refuses what cannot name a file, before anything is looked up:
// a path ending in a slash (or "/.", "/..") names a directory (POSIX), so
// "new.txt/" must not write new.txt.
func TestCheckPath(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("Unix paths")
	}
	for _, tc := range []struct {
		path string
		want string // cleaned path; "" when refused
		msg  string // the refusal's message prefix
	}{
		{"/w/a.txt", "/w/a.txt", ""},
		{"/w//a.txt", "/w/a.txt", ""},
		{"/w/./b/../a.txt", "/w/a.txt", ""},
		{"/w/.a", "/w/.a", ""},
		{"/w/a..", "/w/a..", ""},
		{"", "", "Path must be absolute: (empty)"},
		{"w/a.txt", "", "Path must be absolute: w/a.txt"},
		{"/w/a\x00b", "", "Path contains a NUL character"},
		{"/" + strings.Repeat("a/", 2100) + "f", "", "Path too long: 4202 bytes (at most 4096)"},
		{"/w/new.txt/", "", "Path names a directory: /w/new.txt/"},
		{"/w/new.txt//", "", "Path names a directory: /w/new.txt//"},
		{"/w/a.txt/.", "", "Path names a directory: /w/a.txt/."},
		{"/w/a.txt/..", "", "Path names a directory: /w/a.txt/.."},
		{"/w/", "", "Path names a directory: /w/"},
		{"/", "", "Path names a directory: /"},
	} {
		got, err := checkPath(tc.path)
		if tc.msg == "" {
			if err != nil || got != tc.want {
				t.Errorf("checkPath(%q) = %q, %v; want %q", tc.path, got, err, tc.want)
			}
			continue
		}
		var te *Error
		if !errors.As(err, &te) || te.Code != CodeInvalidRequest || !strings.HasPrefix(te.Message, tc.msg) || te.Hint == "" {
			t.Errorf("checkPath(%q) = %q, %v; want -32600 %q with a hint", tc.path, got, err, tc.msg)
		}
	}
}

// Paths that lead nowhere a file can be are the model's mistake, answered
// with a client error that names the path (never -32603), on every tool,
// and nothing is created.
func TestClientPathErrors(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("symlinks and POSIX errors")
	}
	dir := t.TempDir()
	dir, _ = filepath.EvalSymlinks(dir)
	mustWriteFile(t, filepath.Join(dir, "file.txt"), "one\n")
	for _, l := range [][2]string{{"loopb", "loopa"}, {"loopa", "loopb"}, {"self", "self"}} {
		if err := os.Symlink(l[0], filepath.Join(dir, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	long := strings.Repeat("n", 300)
	engine := NewEngine(NewLocalFiles().Within(dir))
	for _, tc := range []struct {
		name, rel string
		code      int
		msg       string // {dir} stands for the directory
	}{
		{"loop", "loopa", CodeInvalidRequest, "Too many levels of symbolic links: {dir}/loopa"},
		{"link to itself", "self", CodeInvalidRequest, "Too many levels of symbolic links: {dir}/self"},
		{"loop in a directory", "loopa/x", CodeInvalidRequest, "Too many levels of symbolic links: {dir}/loopa/x"},
		{"loop above a missing directory", "loopa/missing/x", CodeInvalidRequest, "Too many levels of symbolic links: {dir}/loopa/missing/x"},
		{"trailing slash, missing", "new.txt/", CodeInvalidRequest, "Path names a directory: {dir}/new.txt/"},
		{"trailing slash, file", "file.txt/", CodeInvalidRequest, "Path names a directory: {dir}/file.txt/"},
		{"trailing dot, file", "file.txt/.", CodeInvalidRequest, "Path names a directory: {dir}/file.txt/."},
		{"component over NAME_MAX", long, CodeInvalidRequest, "File name too long: {dir}/" + long},
		{"directory over NAME_MAX", long + "/x", CodeInvalidRequest, "File name too long: {dir}/" + long + "/x"},
		{"file as a directory", "file.txt/x", CodeNotFound, ""},
	} {
		path := dir + "/" + tc.rel // as given: Join would clean "/" and "/." away
		msg := strings.ReplaceAll(tc.msg, "{dir}", dir)
		calls := map[string]func() error{
			"read": func() error {
				_, err := engine.ReadTextFile(context.Background(), ReadParams{Path: path})
				return err
			},
			"write": func() error {
				_, err := engine.WriteTextFile(context.Background(), WriteParams{Path: path, Content: "x\n"}, nil)
				return err
			},
			"edit": func() error {
				_, err := engine.EditTextFile(context.Background(), EditParams{Path: path, OldString: "one", NewString: "two"}, nil)
				return err
			},
		}
		for op, run := range calls {
			err := run()
			te := AsError(err)
			if te == nil || te.Code != tc.code || !strings.HasPrefix(te.Message, msg) || te.Hint == "" {
				t.Errorf("%s: %s: %v, want %d %q with a hint", tc.name, op, err, tc.code, msg)
			}
		}
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "file.txt")); string(got) != "one\n" {
		t.Errorf("file.txt = %q", got)
	}
	if _, err := os.Lstat(filepath.Join(dir, "new.txt")); err == nil {
		t.Error("new.txt/ created new.txt")
	}
}

func mustWriteFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
