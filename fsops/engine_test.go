package fsops_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/codexacp/codexacp/fsops"
	"github.com/codexacp/codexacp/fsops/fsopstest"
)

// wantError checks that err is a tool error with code and message, and that
// it carries a hint.
func wantError(t *testing.T, err error, code int, msg string) *fsops.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %d %q", code, msg)
	}
	var te *fsops.Error
	if !errors.As(err, &te) {
		t.Fatalf("error %v (%T) is not an *fsops.Error", err, err)
	}
	if te.Code != code || te.Message != msg {
		t.Fatalf("got error %d %q, want %d %q", te.Code, te.Message, code, msg)
	}
	if te.Hint == "" {
		t.Errorf("error %d %q has no hint", te.Code, te.Message)
	}
	return te
}

func wantFile(t *testing.T, files *fsopstest.MemFiles, path, want string) {
	t.Helper()
	got, ok := files.Get(path)
	if !ok {
		t.Fatalf("%s does not exist, want %q", path, want)
	}
	if got != want {
		t.Fatalf("%s = %q, want %q", path, got, want)
	}
}

func intp(n int) *int { return &n }

// Seed 000: edit_text_file.
func TestEditTextFileSeed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		file      string // content of path; "" with missing = true for none
		missing   bool
		path      string
		old, new  string
		code      int
		msg       string
		wantRange fsops.LineRange
		wantDiff  string
		wantAfter string
	}{
		{
			name: "TC1 simple replacement", path: "/test/config.toml",
			file: "[server]\nhost = \"localhost\"\nport = 8080\n",
			old:  "port = 8080", new: "port = 3000",
			wantRange: fsops.LineRange{Start: 3, End: 3},
			wantDiff: "--- /test/config.toml\n+++ /test/config.toml\n@@ -1,3 +1,3 @@\n [server]\n host = \"localhost\"\n" +
				"-port = 8080\n+port = 3000\n",
			wantAfter: "[server]\nhost = \"localhost\"\nport = 3000\n",
		},
		{
			name: "TC2 multi-line replacement", path: "/test/code.rs",
			file: "fn old_func() {\n    println!(\"old\");\n}\n",
			old:  "fn old_func() {\n    println!(\"old\");\n}", new: "fn new_func() {\n    println!(\"new\");\n}",
			wantRange: fsops.LineRange{Start: 1, End: 3},
			// The closing brace is the same in both, so diff -u keeps it as context.
			wantDiff: "--- /test/code.rs\n+++ /test/code.rs\n@@ -1,3 +1,3 @@\n-fn old_func() {\n-    println!(\"old\");\n" +
				"+fn new_func() {\n+    println!(\"new\");\n }\n",
			wantAfter: "fn new_func() {\n    println!(\"new\");\n}\n",
		},
		{
			name: "TC3 string not found", path: "/test/file.txt", file: "Hello World",
			old: "Goodbye", new: "Hello",
			code: fsops.CodeStringNotFound, msg: "String not found in file: Goodbye",
		},
		{
			name: "TC4 multiple matches", path: "/test/file.txt", file: "foo\nfoo\nfoo",
			old: "foo", new: "bar",
			code: fsops.CodeMatchCount, msg: "String appears 3 times (must be unique): foo",
		},
		{
			name: "TC5 delete line", path: "/test/file.txt", file: "line 1\nline 2\nline 3\n",
			old: "line 2\n", new: "",
			wantRange: fsops.LineRange{Start: 2, End: 2},
			wantDiff:  "--- /test/file.txt\n+++ /test/file.txt\n@@ -1,3 +1,2 @@\n line 1\n-line 2\n line 3\n",
			wantAfter: "line 1\nline 3\n",
		},
		{
			name: "TC6 file not found", path: "/test/missing.txt", missing: true,
			old: "a", new: "b",
			code: fsops.CodeNotFound, msg: "File not found: /test/missing.txt",
		},
		{
			name: "TC7 identical strings", path: "/test/file.txt", file: "same",
			old: "same", new: "same",
			code: fsops.CodeInvalidRequest, msg: "old_string and new_string are identical",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := fsopstest.NewMemFiles()
			files.Mkdir("/test")
			if !tc.missing {
				files.Set(tc.path, tc.file)
			}
			res, err := fsops.NewEngine(files).EditTextFile(context.Background(),
				fsops.EditParams{Path: tc.path, OldString: tc.old, NewString: tc.new}, nil)
			if tc.code != 0 {
				wantError(t, err, tc.code, tc.msg)
				if !tc.missing {
					wantFile(t, files, tc.path, tc.file)
				}
				if files.Writes() != 0 {
					t.Errorf("a failed edit wrote %d times", files.Writes())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !res.Success || res.LineRange != tc.wantRange || res.Diff != tc.wantDiff || res.Replacements != 1 {
				t.Errorf("got success %v range %+v replacements %d diff\n%s\nwant range %+v diff\n%s",
					res.Success, res.LineRange, res.Replacements, res.Diff, tc.wantRange, tc.wantDiff)
			}
			wantFile(t, files, tc.path, tc.wantAfter)
			if res.Hash != fsops.HashOf([]byte(tc.wantAfter)) || res.TotalLines != fsops.CountLines([]byte(tc.wantAfter)) {
				t.Errorf("hash %s total_lines %d do not describe the new content", res.Hash, res.TotalLines)
			}
		})
	}
}

// Seed 002: expected_replacements, and the file is untouched on failure.
func TestEditTextFileExpectedReplacements(t *testing.T) {
	t.Parallel()
	const path = "/w/a.txt"
	tests := []struct {
		name      string
		file      string
		old, new  string
		expected  *int
		code      int
		msg       string
		wantAfter string
		wantN     int
	}{
		{name: "one match, default 1", file: "a foo b", old: "foo", new: "bar", wantAfter: "a bar b", wantN: 1},
		{name: "zero matches", file: "a foo b", old: "baz", new: "bar",
			code: fsops.CodeStringNotFound, msg: "String not found in file: baz"},
		{name: "two matches with default 1", file: "foo foo", old: "foo", new: "bar",
			code: fsops.CodeMatchCount, msg: "String appears 2 times (must be unique): foo"},
		{name: "two matches with explicit 1", file: "foo foo", old: "foo", new: "bar", expected: intp(1),
			code: fsops.CodeMatchCount, msg: "Expected 1 replacements but found 2: foo"},
		{name: "all of them", file: "foo foo\nfoo", old: "foo", new: "bar", expected: intp(3),
			wantAfter: "bar bar\nbar", wantN: 3},
		{name: "fewer than expected", file: "foo foo", old: "foo", new: "bar", expected: intp(3),
			code: fsops.CodeMatchCount, msg: "Expected 3 replacements but found 2: foo"},
		{name: "non-overlapping count", file: "aaaa", old: "aa", new: "b", expected: intp(2), wantAfter: "bb", wantN: 2},
		{name: "empty old", file: "x", old: "", new: "y",
			code: fsops.CodeInvalidRequest, msg: "old_string cannot be empty"},
		{name: "expected 0", file: "x", old: "x", new: "y", expected: intp(0),
			code: fsops.CodeInvalidRequest, msg: "expected_replacements must be at least 1, got 0"},
		{name: "exact match, CRLF not normalised", file: "a\r\nb\r\n", old: "a\nb", new: "c",
			code: fsops.CodeStringNotFound, msg: "String not found in file: a\nb"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := fsopstest.NewMemFiles()
			files.Set(path, tc.file)
			res, err := fsops.NewEngine(files).EditTextFile(context.Background(),
				fsops.EditParams{Path: path, OldString: tc.old, NewString: tc.new, ExpectedReplacements: tc.expected}, nil)
			if tc.code != 0 {
				wantError(t, err, tc.code, tc.msg)
				wantFile(t, files, path, tc.file)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Replacements != tc.wantN {
				t.Errorf("replacements = %d, want %d", res.Replacements, tc.wantN)
			}
			wantFile(t, files, path, tc.wantAfter)
		})
	}
}

// Seed 001: multi_edit_text_file.
func TestMultiEditTextFileSeed(t *testing.T) {
	t.Parallel()
	const config = "[server]\nhost = \"localhost\"\nport = 8080\n\n[app]\ndebug = false\n"
	var many, manyAfter strings.Builder
	var manyEdits []fsops.EditOp
	for i := range 100 {
		fmt.Fprintf(&many, "key_%03d = old\n", i)
		fmt.Fprintf(&manyAfter, "key_%03d = new\n", i)
		manyEdits = append(manyEdits, fsops.EditOp{OldString: fmt.Sprintf("key_%03d = old", i), NewString: fmt.Sprintf("key_%03d = new", i)})
	}
	tests := []struct {
		name       string
		path, file string
		edits      []fsops.EditOp
		code       int
		msg        string
		wantRanges []fsops.EditLineRange
		wantDiff   string
		wantAfter  string
	}{
		{
			name: "TC1 multiple edits", path: "/test/config.toml", file: config,
			edits: []fsops.EditOp{
				{OldString: "port = 8080", NewString: "port = 3000"},
				{OldString: "host = \"localhost\"", NewString: "host = \"0.0.0.0\""},
				{OldString: "debug = false", NewString: "debug = true"},
			},
			wantRanges: []fsops.EditLineRange{{EditIndex: 0, Start: 3, End: 3}, {EditIndex: 1, Start: 2, End: 2}, {EditIndex: 2, Start: 6, End: 6}},
			wantDiff: "--- /test/config.toml\n+++ /test/config.toml\n@@ -1,6 +1,6 @@\n [server]\n-host = \"localhost\"\n-port = 8080\n" +
				"+host = \"0.0.0.0\"\n+port = 3000\n \n [app]\n-debug = false\n+debug = true\n",
			wantAfter: "[server]\nhost = \"0.0.0.0\"\nport = 3000\n\n[app]\ndebug = true\n",
		},
		{
			name: "TC2 sequential edits", path: "/test/file.txt", file: "AAA",
			edits:      []fsops.EditOp{{OldString: "AAA", NewString: "BBB"}, {OldString: "BBB", NewString: "CCC"}},
			wantRanges: []fsops.EditLineRange{{EditIndex: 0, Start: 1, End: 1}, {EditIndex: 1, Start: 1, End: 1}},
			wantDiff: "--- /test/file.txt\n+++ /test/file.txt\n@@ -1 +1 @@\n-AAA\n\\ No newline at end of file\n" +
				"+CCC\n\\ No newline at end of file\n",
			wantAfter: "CCC",
		},
		{
			name: "TC3 string not found in edit 1", path: "/test/file.txt", file: "line 1\nline 2\n",
			edits: []fsops.EditOp{{OldString: "line 1", NewString: "LINE 1"}, {OldString: "line 3", NewString: "LINE 3"}},
			code:  fsops.CodeStringNotFound, msg: "Edit 1: String not found: line 3",
		},
		{
			name: "TC4 empty edits", path: "/test/file.txt", file: "x",
			code: fsops.CodeInvalidRequest, msg: "Edits array cannot be empty",
		},
		{
			name: "TC5 duplicate edits", path: "/test/file.txt", file: "foo",
			edits: []fsops.EditOp{{OldString: "foo", NewString: "bar"}, {OldString: "foo", NewString: "baz"}},
			code:  fsops.CodeStringNotFound, msg: "Edit 1: String not found: foo",
		},
		{
			name: "TC6 100 edits", path: "/test/many.txt", file: many.String(),
			edits: manyEdits, wantAfter: manyAfter.String(),
		},
		{
			name: "TC7 edits creating ambiguity", path: "/test/file.txt", file: "A",
			edits: []fsops.EditOp{{OldString: "A", NewString: "AA"}, {OldString: "A", NewString: "B"}},
			code:  fsops.CodeMatchCount, msg: "Edit 1: String appears 2 times: A",
		},
		{
			name: "match partly over an earlier edit's text", path: "/test/file.txt", file: "one two three",
			edits: []fsops.EditOp{{OldString: "two", NewString: "deux"}, {OldString: "ux three", NewString: "x"}},
			code:  fsops.CodeConflict, msg: "Edit 1 conflicts with edit 0",
		},
		{
			name: "match inside an earlier edit's text", path: "/test/file.txt", file: "one two three",
			edits:      []fsops.EditOp{{OldString: "two", NewString: "deux zwei"}, {OldString: "zwei", NewString: "dos"}},
			wantRanges: []fsops.EditLineRange{{EditIndex: 0, Start: 1, End: 1}, {EditIndex: 1, Start: 1, End: 1}},
			wantAfter:  "one deux dos three",
		},
		{
			name: "match covering an earlier edit's text", path: "/test/file.txt", file: "a\nb\nc\n",
			edits:      []fsops.EditOp{{OldString: "b", NewString: "B"}, {OldString: "a\nB\nc", NewString: "z"}},
			wantRanges: []fsops.EditLineRange{{EditIndex: 0, Start: 2, End: 2}, {EditIndex: 1, Start: 1, End: 3}},
			wantAfter:  "z\n",
		},
		{
			name: "conflict tracked through later shifts", path: "/test/file.txt", file: "head middle tail",
			edits: []fsops.EditOp{
				{OldString: "tail", NewString: "TAIL"},
				{OldString: "head", NewString: "a much longer head"},
				{OldString: "middle TA", NewString: "x"},
			},
			code: fsops.CodeConflict, msg: "Edit 2 conflicts with edit 0",
		},
		{
			name: "edit i invalid", path: "/test/file.txt", file: "x",
			edits: []fsops.EditOp{{OldString: "x", NewString: "y"}, {OldString: "", NewString: "z"}},
			code:  fsops.CodeInvalidRequest, msg: "Edit 1: old_string cannot be empty",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := fsopstest.NewMemFiles()
			files.Set(tc.path, tc.file)
			res, err := fsops.NewEngine(files).MultiEditTextFile(context.Background(),
				fsops.MultiEditParams{Path: tc.path, Edits: tc.edits}, nil)
			if tc.code != 0 {
				wantError(t, err, tc.code, tc.msg)
				wantFile(t, files, tc.path, tc.file)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !res.Success || res.AppliedCount != len(tc.edits) {
				t.Errorf("success %v applied_count %d, want true %d", res.Success, res.AppliedCount, len(tc.edits))
			}
			if tc.wantRanges != nil && fmt.Sprint(res.LineRanges) != fmt.Sprint(tc.wantRanges) {
				t.Errorf("line_ranges = %v, want %v", res.LineRanges, tc.wantRanges)
			}
			if tc.wantDiff != "" && res.Diff != tc.wantDiff {
				t.Errorf("diff:\n%s\nwant:\n%s", res.Diff, tc.wantDiff)
			}
			wantFile(t, files, tc.path, tc.wantAfter)
			if want := fsops.UnifiedDiff(tc.path, []byte(tc.file), []byte(tc.wantAfter)); res.Diff != want {
				t.Errorf("windowed diff differs from the whole-file diff:\n%s\nwant:\n%s", res.Diff, want)
			}
		})
	}
}

// Seed 003: write_text_file.
func TestWriteTextFileSeed(t *testing.T) {
	t.Parallel()
	oneMB := strings.Repeat(strings.Repeat("x", 1023)+"\n", 1024)
	tests := []struct {
		name         string
		setup        func(*fsopstest.MemFiles)
		path         string
		content      string
		code         int
		msg          string
		wantBytes    int
		wantCreated  bool
		wantLines    int
		wantCreatedF bool
	}{
		{name: "TC1 create", path: "/test/new.txt", content: "Hello\n", wantBytes: 6, wantCreated: true, wantLines: 1},
		{name: "TC2 overwrite", path: "/test/existing.txt", content: "New content\n",
			setup:     func(m *fsopstest.MemFiles) { m.Set("/test/existing.txt", "Old content\n") },
			wantBytes: 12, wantLines: 1},
		{name: "TC3 empty", path: "/test/empty.txt", content: "", wantBytes: 0, wantCreated: true, wantLines: 0},
		{name: "TC4 permission denied", path: "/root/secret.txt", content: "data",
			setup: func(m *fsopstest.MemFiles) {
				m.Mkdir("/root")
				m.FailWrite("/root/secret.txt", &fs.PathError{Op: "open", Path: "/root/secret.txt", Err: syscall.EACCES})
			},
			code: fsops.CodePermission, msg: "Permission denied: /root/secret.txt"},
		{name: "TC5 relative path", path: "relative/path.txt", content: "data",
			code: fsops.CodeInvalidRequest, msg: "Path must be absolute: relative/path.txt"},
		{name: "TC6 parent not found", path: "/test/missing-dir/file.txt", content: "data",
			code: fsops.CodeNotFound, msg: "Parent directory not found: /test/missing-dir"},
		{name: "TC7 path is a directory", path: "/test/dir", content: "data",
			setup: func(m *fsopstest.MemFiles) { m.Mkdir("/test/dir") },
			code:  fsops.CodeIsDirectory, msg: "/test/dir is a directory"},
		{name: "TC8 large file", path: "/test/large.txt", content: oneMB, wantBytes: 1048576, wantCreated: true, wantLines: 1024},
		{name: "disk full", path: "/test/full.txt", content: "data",
			setup: func(m *fsopstest.MemFiles) {
				m.FailWrite("/test/full.txt", fsops.DiskFullError("/test/full.txt", 4, syscall.ENOSPC))
			},
			code: fsops.CodeDiskFull, msg: "Disk full: cannot write 4 bytes to /test/full.txt"},
		{name: "parent is a file", path: "/test/file.txt/x", content: "data",
			setup: func(m *fsopstest.MemFiles) { m.Set("/test/file.txt", "") },
			code:  fsops.CodeNotFound, msg: "Parent directory not found: /test/file.txt"},
		{name: "path is cleaned", path: "/test/./sub/../new.txt", content: "x", wantBytes: 1, wantCreated: true, wantLines: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := fsopstest.NewMemFiles()
			files.Mkdir("/test")
			if tc.setup != nil {
				tc.setup(files)
			}
			before, _ := files.Get(tc.path)
			res, err := fsops.NewEngine(files).WriteTextFile(context.Background(),
				fsops.WriteParams{Path: tc.path, Content: tc.content}, nil)
			if tc.code != 0 {
				wantError(t, err, tc.code, tc.msg)
				if got, _ := files.Get(tc.path); got != before {
					t.Errorf("failed write changed the file to %q", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !res.Success || res.BytesWritten != tc.wantBytes || res.Created != tc.wantCreated || res.TotalLines != tc.wantLines ||
				res.Hash != fsops.HashOf([]byte(tc.content)) {
				t.Errorf("got %+v, want %d bytes, created %v, %d lines", res, tc.wantBytes, tc.wantCreated, tc.wantLines)
			}
			wantFile(t, files, strings.Replace(tc.path, "/./sub/..", "", 1), tc.content)
		})
	}
}

func TestWriteTextFileExpectedHash(t *testing.T) {
	t.Parallel()
	const path = "/w/a.txt"
	ctx := context.Background()
	files := fsopstest.NewMemFiles()
	files.Set(path, "one\n")
	e := fsops.NewEngine(files)

	_, err := e.WriteTextFile(ctx, fsops.WriteParams{Path: path, Content: "two\n", ExpectedHash: fsops.HashOf([]byte("zero\n"))}, nil)
	te := wantError(t, err, fsops.CodeStale, fmt.Sprintf("Stale content: %s changed since it was read (expected hash %s, current hash %s, now 1 lines)",
		path, fsops.HashOf([]byte("zero\n")), fsops.HashOf([]byte("one\n"))))
	if !strings.Contains(te.Hint, "read_text_file") {
		t.Errorf("hint %q does not say to re-read", te.Hint)
	}
	wantFile(t, files, path, "one\n")

	res, err := e.WriteTextFile(ctx, fsops.WriteParams{Path: path, Content: "two\n", ExpectedHash: fsops.HashOf([]byte("one\n"))}, nil)
	if err != nil || res.Created {
		t.Fatalf("write with the right hash: %+v, %v", res, err)
	}
	wantFile(t, files, path, "two\n")

	_, err = e.WriteTextFile(ctx, fsops.WriteParams{Path: "/w/new.txt", Content: "x", ExpectedHash: res.Hash}, nil)
	if te := fsops.AsError(err); te == nil || te.Code != fsops.CodeStale || !strings.Contains(te.Message, "does not exist") {
		t.Fatalf("expected hash for a missing file: %v", err)
	}
	if _, ok := files.Get("/w/new.txt"); ok {
		t.Error("file was created despite the stale hash")
	}
}

// An existing file's BOM and CRLF endings survive a whole-file write whose
// content has neither.
func TestWriteTextFileKeepsConventions(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, old, content, want string }{
		{"crlf kept", "a\r\nb\r\n", "x\ny\n", "x\r\ny\r\n"},
		{"crlf content as given", "a\r\nb\r\n", "x\r\ny\n", "x\r\ny\n"},
		{"lf stays lf", "a\nb\n", "x\ny", "x\ny"},
		{"bom kept", "\uFEFFa\n", "b\n", "\uFEFFb\n"},
		{"bom not doubled", "\uFEFFa\n", "\uFEFFb\n", "\uFEFFb\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := fsopstest.NewMemFiles()
			files.Set("/w/f", tc.old)
			res, err := fsops.NewEngine(files).WriteTextFile(context.Background(), fsops.WriteParams{Path: "/w/f", Content: tc.content}, nil)
			if err != nil {
				t.Fatal(err)
			}
			wantFile(t, files, "/w/f", tc.want)
			if res.BytesWritten != len(tc.want) || res.Hash != fsops.HashOf([]byte(tc.want)) {
				t.Errorf("result %+v does not describe %q", res, tc.want)
			}
		})
	}
}

// filesOnly hides the port's DirMaker: a port that cannot create directories.
type filesOnly struct{ fsops.Files }

// write_text_file with create_parents: the missing directories are listed
// in the change, created only once it is approved, and reported; without
// the flag a missing parent stays seed 003 TC6's error.
func TestWriteTextFileCreateParents(t *testing.T) {
	t.Parallel()
	veto := errors.New("the user said no")
	eacces := &fs.PathError{Op: "mkdir", Path: "/test/a/b", Err: syscall.EACCES}
	tests := []struct {
		name     string
		setup    func(*fsopstest.MemFiles)
		noDirs   bool // the port cannot create directories
		path     string
		create   bool
		veto     error
		code     int
		msg      string
		hint     string   // a substring of the error's hint
		asked    bool     // BeforeWrite was called
		wantDirs []string // Change.NewDirs and WriteResult.CreatedDirs
		created  bool     // WriteResult.Created
		absent   []string // paths that must not exist afterwards
	}{
		{name: "default: seed TC6", path: "/test/missing-dir/file.txt",
			code: fsops.CodeNotFound, msg: "Parent directory not found: /test/missing-dir", hint: "create_parents: true",
			absent: []string{"/test/missing-dir", "/test/missing-dir/file.txt"}},
		{name: "default: two levels missing", path: "/test/a/b/f.txt",
			code: fsops.CodeNotFound, msg: "Parent directory not found: /test/a/b", hint: "create_parents: true",
			absent: []string{"/test/a", "/test/a/b"}},
		{name: "nested directories", path: "/test/a/b/c/f.txt", create: true, asked: true, created: true,
			wantDirs: []string{"/test/a", "/test/a/b", "/test/a/b/c"}},
		{name: "some exist", path: "/test/a/b/f.txt", create: true, asked: true, created: true,
			setup:    func(m *fsopstest.MemFiles) { m.Mkdir("/test/a") },
			wantDirs: []string{"/test/a/b"}},
		{name: "all exist: idempotent", path: "/test/a/b/f.txt", create: true, asked: true, created: true,
			setup: func(m *fsopstest.MemFiles) { m.Mkdir("/test/a/b") }},
		{name: "existing file: overwritten", path: "/test/a/f.txt", create: true, asked: true,
			setup: func(m *fsopstest.MemFiles) { m.Set("/test/a/f.txt", "old\n") }},
		{name: "permission denied: nothing created", path: "/test/a/b/f.txt", create: true, veto: veto, asked: true,
			code: fsops.CodePermission, msg: "Permission denied: /test/a/b/f.txt",
			absent: []string{"/test/a", "/test/a/b", "/test/a/b/f.txt"}},
		{name: "a file in the way", path: "/test/file.txt/a/f.txt", create: true,
			setup: func(m *fsopstest.MemFiles) { m.Set("/test/file.txt", "") },
			code:  fsops.CodeNotFound, msg: "Parent directory not found: /test/file.txt", hint: "is a file",
			absent: []string{"/test/file.txt/a"}},
		{name: "creating fails", path: "/test/a/b/f.txt", create: true, asked: true,
			setup: func(m *fsopstest.MemFiles) { m.FailMkdir("/test/a/b", eacces) },
			code:  fsops.CodePermission, msg: "Permission denied: /test/a/b",
			absent: []string{"/test/a", "/test/a/b/f.txt"}},
		{name: "port cannot create directories", path: "/test/a/f.txt", create: true, noDirs: true,
			code: fsops.CodeNotFound, msg: "Parent directory not found: /test/a", hint: "cannot create directories",
			absent: []string{"/test/a"}},
		{name: "port cannot, parent exists", path: "/test/f.txt", create: true, noDirs: true, asked: true, created: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := fsopstest.NewMemFiles()
			mem.Mkdir("/test")
			if tc.setup != nil {
				tc.setup(mem)
			}
			var files fsops.Files = mem
			if tc.noDirs {
				files = filesOnly{mem}
			}
			var asked []*fsops.Change
			before := func(_ context.Context, c *fsops.Change) error {
				if info, _ := mem.Stat(context.Background(), c.Path); len(c.NewDirs) > 0 && info.Exists {
					t.Error("the file exists before the write was approved")
				}
				for _, d := range c.NewDirs {
					if info, _ := mem.Stat(context.Background(), d); info.Exists {
						t.Errorf("%s was created before the write was approved", d)
					}
				}
				asked = append(asked, c)
				return tc.veto
			}
			res, err := fsops.NewEngine(files).WriteTextFile(context.Background(),
				fsops.WriteParams{Path: tc.path, Content: "data\n", CreateParents: tc.create}, before)
			if (len(asked) > 0) != tc.asked {
				t.Errorf("asked %d times, want asked = %v", len(asked), tc.asked)
			}
			for _, p := range tc.absent {
				if info, _ := mem.Stat(context.Background(), p); info.Exists {
					t.Errorf("%s exists", p)
				}
			}
			if tc.code != 0 {
				te := wantError(t, err, tc.code, tc.msg)
				if !strings.Contains(te.Hint, tc.hint) {
					t.Errorf("hint %q lacks %q", te.Hint, tc.hint)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(asked) != 1 || !slices.Equal(asked[0].NewDirs, tc.wantDirs) {
				t.Errorf("asked about %v, want NewDirs %q", asked, tc.wantDirs)
			}
			if !slices.Equal(res.CreatedDirs, tc.wantDirs) || res.Created != tc.created {
				t.Errorf("result %+v, want created %v, CreatedDirs %q", res, tc.created, tc.wantDirs)
			}
			wantFile(t, mem, tc.path, "data\n")
			for _, d := range tc.wantDirs {
				if info, _ := mem.Stat(context.Background(), d); !info.IsDir {
					t.Errorf("%s is not a directory", d)
				}
			}
		})
	}
}

func TestReadTextFile(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("y", 300<<10)
	var big strings.Builder
	for i := 1; i <= 3000; i++ {
		fmt.Fprintf(&big, "%0199d\n", i) // 200-byte lines
	}
	tests := []struct {
		name        string
		file        string
		line, limit *int
		code        int
		msg         string
		wantContent string
		want        fsops.ReadResult // Content and Hash are checked separately
	}{
		{name: "whole file", file: "a\nb\nc\n", wantContent: "a\nb\nc\n",
			want: fsops.ReadResult{TotalLines: 3, StartLine: 1, EndLine: 3}},
		{name: "no final newline", file: "a\nb", wantContent: "a\nb",
			want: fsops.ReadResult{TotalLines: 2, StartLine: 1, EndLine: 2}},
		{name: "empty file", file: "", wantContent: "",
			want: fsops.ReadResult{TotalLines: 0, StartLine: 1, EndLine: 0}},
		{name: "blank last line", file: "a\n\n", wantContent: "a\n\n",
			want: fsops.ReadResult{TotalLines: 2, StartLine: 1, EndLine: 2}},
		{name: "line and limit", file: "a\nb\nc\nd\n", line: intp(2), limit: intp(2), wantContent: "b\nc\n",
			want: fsops.ReadResult{TotalLines: 4, StartLine: 2, EndLine: 3, HasMore: true,
				Hint: "Showing lines 2-3 of 4. Call read_text_file again with line=4 to continue."}},
		{name: "negative line", file: "a\nb\nc\nd\n", line: intp(-2), wantContent: "c\nd\n",
			want: fsops.ReadResult{TotalLines: 4, StartLine: 3, EndLine: 4}},
		{name: "negative beyond start", file: "a\nb\n", line: intp(-10), wantContent: "a\nb\n",
			want: fsops.ReadResult{TotalLines: 2, StartLine: 1, EndLine: 2}},
		{name: "bom not shown", file: "\uFEFFa\nb\n", wantContent: "a\nb\n",
			want: fsops.ReadResult{TotalLines: 2, StartLine: 1, EndLine: 2}},
		{name: "bom only", file: "\uFEFF", wantContent: "",
			want: fsops.ReadResult{TotalLines: 0, StartLine: 1, EndLine: 0}},
		{name: "crlf kept", file: "a\r\nb\r\n", wantContent: "a\r\nb\r\n",
			want: fsops.ReadResult{TotalLines: 2, StartLine: 1, EndLine: 2}},
		{name: "default limit", file: big.String(), line: intp(1), wantContent: big.String()[:200*1310],
			want: fsops.ReadResult{TotalLines: 3000, StartLine: 1, EndLine: 1310, HasMore: true,
				Hint: "Showing lines 1-1310 of 3000. Call read_text_file again with line=1311 to continue."}},
		{name: "byte cap", file: big.String(), line: intp(2990), wantContent: big.String()[200*2989:],
			want: fsops.ReadResult{TotalLines: 3000, StartLine: 2990, EndLine: 3000}},
		{name: "overlong line", file: long + "\nz\n", wantContent: long[:256<<10],
			want: fsops.ReadResult{TotalLines: 2, StartLine: 1, EndLine: 1, HasMore: true,
				Hint: "Line 1 is longer than 256 KiB and was cut; use the shell to inspect it. Call read_text_file again with line=2 to read on."}},
		{name: "line 0", file: "a\n", line: intp(0), code: fsops.CodeInvalidRequest,
			msg: "line must not be 0: lines are 1-based (negative counts from the end)"},
		{name: "past the end", file: "a\n", line: intp(3), code: fsops.CodeInvalidRequest,
			msg: "line 3 is past the end of the file (1 lines)"},
		{name: "limit 0", file: "a\n", limit: intp(0), code: fsops.CodeInvalidRequest, msg: "limit must be at least 1, got 0"},
		{name: "binary", file: "a\x00b", code: fsops.CodeBinary, msg: "Cannot edit binary file: /w/f"},
		{name: "invalid utf-8", file: "a\xffb", code: fsops.CodeBinary, msg: "Cannot edit binary file: /w/f"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := fsopstest.NewMemFiles()
			files.Set("/w/f", tc.file)
			res, err := fsops.NewEngine(files).ReadTextFile(context.Background(), fsops.ReadParams{Path: "/w/f", Line: tc.line, Limit: tc.limit})
			if tc.code != 0 {
				wantError(t, err, tc.code, tc.msg)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Content != tc.wantContent {
				t.Errorf("content = %.80q (%d bytes), want %.80q (%d bytes)", res.Content, len(res.Content), tc.wantContent, len(tc.wantContent))
			}
			if res.Hash != fsops.HashOf([]byte(tc.file)) {
				t.Errorf("hash is not the whole file's")
			}
			res.Content, res.Hash = "", ""
			if *res != tc.want {
				t.Errorf("got %+v\nwant %+v", *res, tc.want)
			}
		})
	}
}

func TestReadTextFileErrors(t *testing.T) {
	t.Parallel()
	files := fsopstest.NewMemFiles()
	files.Mkdir("/w/dir")
	e := fsops.NewEngine(files)
	ctx := context.Background()
	_, err := e.ReadTextFile(ctx, fsops.ReadParams{Path: "w/f"})
	wantError(t, err, fsops.CodeInvalidRequest, "Path must be absolute: w/f")
	_, err = e.ReadTextFile(ctx, fsops.ReadParams{Path: "/w/missing"})
	wantError(t, err, fsops.CodeNotFound, "File not found: /w/missing")
	_, err = e.ReadTextFile(ctx, fsops.ReadParams{Path: "/w/dir"})
	wantError(t, err, fsops.CodeIsDirectory, "/w/dir is a directory")
	files.Set("/w/eacces", "x")
	files.FailRead("/w/eacces", &fs.PathError{Op: "open", Path: "/w/eacces", Err: syscall.EACCES})
	_, err = e.ReadTextFile(ctx, fsops.ReadParams{Path: "/w/eacces"})
	wantError(t, err, fsops.CodePermission, "Permission denied: /w/eacces")
}

// Every editing tool refuses relative paths, directories, binary files and
// missing files, and writes nothing.
func TestEditingToolsRejectBadTargets(t *testing.T) {
	t.Parallel()
	h := fsops.HashOf([]byte("x"))
	tools := map[string]func(e *fsops.Engine, path string) error{
		"edit": func(e *fsops.Engine, path string) error {
			_, err := e.EditTextFile(context.Background(), fsops.EditParams{Path: path, OldString: "x", NewString: "y"}, nil)
			return err
		},
		"multi": func(e *fsops.Engine, path string) error {
			_, err := e.MultiEditTextFile(context.Background(), fsops.MultiEditParams{Path: path, Edits: []fsops.EditOp{{OldString: "x", NewString: "y"}}}, nil)
			return err
		},
		"replace": func(e *fsops.Engine, path string) error {
			_, err := e.ReplaceTextLines(context.Background(), fsops.ReplaceLinesParams{Path: path, Hash: h, Lines: []int{1, 2}, Old: "x", New: "y"}, nil)
			return err
		},
		"insert": func(e *fsops.Engine, path string) error {
			_, err := e.InsertTextLines(context.Background(), fsops.InsertLinesParams{Path: path, Hash: h, Line: 1, Anchor: "x", Content: "y"}, nil)
			return err
		},
		"append": func(e *fsops.Engine, path string) error {
			_, err := e.AppendTextFile(context.Background(), fsops.AppendParams{Path: path, Hash: h, Content: "y"}, nil)
			return err
		},
	}
	targets := []struct {
		name, path string
		code       int
		msg        string
	}{
		{"relative", "w/x.txt", fsops.CodeInvalidRequest, "Path must be absolute: w/x.txt"},
		{"directory", "/w/dir", fsops.CodeIsDirectory, "/w/dir is a directory"},
		{"missing", "/w/missing.txt", fsops.CodeNotFound, "File not found: /w/missing.txt"},
		{"nul byte", "/w/nul.bin", fsops.CodeBinary, "Cannot edit binary file: /w/nul.bin"},
		{"invalid utf-8", "/w/latin1.txt", fsops.CodeBinary, "Cannot edit binary file: /w/latin1.txt"},
	}
	for name, call := range tools {
		for _, tg := range targets {
			t.Run(name+"/"+tg.name, func(t *testing.T) {
				files := fsopstest.NewMemFiles()
				files.Mkdir("/w/dir")
				files.Set("/w/nul.bin", "x\x00")
				files.Set("/w/latin1.txt", "x caf\xe9\n")
				wantError(t, call(fsops.NewEngine(files), tg.path), tg.code, tg.msg)
				if files.Writes() != 0 {
					t.Error("something was written")
				}
			})
		}
	}
}

func TestModelTextMustBeText(t *testing.T) {
	t.Parallel()
	files := fsopstest.NewMemFiles()
	files.Set("/w/f", "x\n")
	e := fsops.NewEngine(files)
	ctx := context.Background()
	_, err := e.EditTextFile(ctx, fsops.EditParams{Path: "/w/f", OldString: "x", NewString: "y\xff"}, nil)
	wantError(t, err, fsops.CodeInvalidRequest, "new_string is not valid UTF-8")
	_, err = e.WriteTextFile(ctx, fsops.WriteParams{Path: "/w/f", Content: "a\x00"}, nil)
	wantError(t, err, fsops.CodeInvalidRequest, "content contains a NUL character")
	_, err = e.MultiEditTextFile(ctx, fsops.MultiEditParams{Path: "/w/f", Edits: []fsops.EditOp{{OldString: "x", NewString: "x"}}}, nil)
	wantError(t, err, fsops.CodeInvalidRequest, "Edit 0: old_string and new_string are identical")
	wantFile(t, files, "/w/f", "x\n")
}

// Edits keep CRLF endings, a BOM and a missing final newline.
func TestEditsPreserveBytes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, file, old, new, want string
	}{
		{"crlf", "a\r\nb\r\nc\r\n", "b", "B", "a\r\nB\r\nc\r\n"},
		{"bom", "\uFEFFfirst\nsecond\n", "first", "1st", "\uFEFF1st\nsecond\n"},
		{"no final newline", "a\nb", "a", "A", "A\nb"},
		{"no final newline at the edit", "a\nb", "b", "B", "a\nB"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := fsopstest.NewMemFiles()
			files.Set("/w/f", tc.file)
			if _, err := fsops.NewEngine(files).EditTextFile(context.Background(), fsops.EditParams{Path: "/w/f", OldString: tc.old, NewString: tc.new}, nil); err != nil {
				t.Fatal(err)
			}
			wantFile(t, files, "/w/f", tc.want)
		})
	}
}

func TestBeforeWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("sees the change", func(t *testing.T) {
		files := fsopstest.NewMemFiles()
		files.Set("/w/f", "a\nb\nc\n")
		var got *fsops.Change
		_, err := fsops.NewEngine(files).EditTextFile(ctx, fsops.EditParams{Path: "/w/f", OldString: "b\n", NewString: "B\nB2\n"},
			func(_ context.Context, c *fsops.Change) error {
				if _, ok := files.Get("/w/f"); ok && files.Writes() != 0 {
					t.Error("written before BeforeWrite")
				}
				got = c
				return nil
			})
		if err != nil {
			t.Fatal(err)
		}
		if got.Tool != fsops.ToolEditTextFile || got.Path != "/w/f" || string(got.Old) != "a\nb\nc\n" || string(got.New) != "a\nB\nB2\nc\n" ||
			got.Created || got.Diff != fsops.UnifiedDiff("/w/f", got.Old, got.New) || fmt.Sprint(got.ChangedLines) != "[2]" {
			t.Errorf("change = %+v", got)
		}
	})
	t.Run("created file", func(t *testing.T) {
		files := fsopstest.NewMemFiles()
		files.Mkdir("/w")
		var got *fsops.Change
		_, err := fsops.NewEngine(files).WriteTextFile(ctx, fsops.WriteParams{Path: "/w/new", Content: "x\ny\n"},
			func(_ context.Context, c *fsops.Change) error { got = c; return nil })
		if err != nil {
			t.Fatal(err)
		}
		if got.Old != nil || !got.Created || got.Diff != "--- /w/new\n+++ /w/new\n@@ -0,0 +1,2 @@\n+x\n+y\n" || fmt.Sprint(got.ChangedLines) != "[1]" {
			t.Errorf("change = %+v", got)
		}
	})
	t.Run("pure deletion points at the following line", func(t *testing.T) {
		files := fsopstest.NewMemFiles()
		files.Set("/w/f", "a\nb\nc\nd\n")
		var got *fsops.Change
		_, err := fsops.NewEngine(files).MultiEditTextFile(ctx, fsops.MultiEditParams{Path: "/w/f",
			Edits: []fsops.EditOp{{OldString: "b\n", NewString: ""}, {OldString: "d\n", NewString: ""}}},
			func(_ context.Context, c *fsops.Change) error { got = c; return nil })
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got.ChangedLines) != "[2 2]" {
			t.Errorf("changed lines = %v, want [2 2]", got.ChangedLines)
		}
	})

	vetoes := []struct {
		name string
		err  error
		code int
		msg  string
	}{
		{"plain error", errors.New("user said no"), fsops.CodePermission, "Permission denied: /w/f"},
		{"tool error", &fsops.Error{Code: fsops.CodePermission, Message: "Session is read-only: /w/f", Hint: "switch mode"},
			fsops.CodePermission, "Session is read-only: /w/f"},
	}
	for _, v := range vetoes {
		t.Run("veto "+v.name, func(t *testing.T) {
			files := fsopstest.NewMemFiles()
			files.Set("/w/f", "a\n")
			veto := func(context.Context, *fsops.Change) error { return v.err }
			e := fsops.NewEngine(files)
			calls := []func() error{
				func() error {
					_, err := e.EditTextFile(ctx, fsops.EditParams{Path: "/w/f", OldString: "a", NewString: "b"}, veto)
					return err
				},
				func() error {
					_, err := e.WriteTextFile(ctx, fsops.WriteParams{Path: "/w/f", Content: "b"}, veto)
					return err
				},
				func() error {
					_, err := e.AppendTextFile(ctx, fsops.AppendParams{Path: "/w/f", Hash: fsops.HashOf([]byte("a\n")), Content: "b"}, veto)
					return err
				},
			}
			for _, call := range calls {
				te := wantError(t, call(), v.code, v.msg)
				if !errors.Is(te, v.err) && te != v.err {
					t.Errorf("veto error %v is not kept as the cause of %v", v.err, te)
				}
			}
			wantFile(t, files, "/w/f", "a\n")
			if files.Writes() != 0 {
				t.Error("a vetoed change was written")
			}
		})
	}
}

// Concurrent edits of one file are serialised: none is lost.
func TestConcurrentEditsAreSerialised(t *testing.T) {
	t.Parallel()
	const n = 50
	var file strings.Builder
	for i := range n {
		fmt.Fprintf(&file, "token %d\n", i)
	}
	files := fsopstest.NewMemFiles()
	files.Set("/w/f", file.String())
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			e := fsops.NewEngine(files) // engines share the process-wide path locks
			_, err := e.EditTextFile(context.Background(), fsops.EditParams{Path: "/w/f",
				OldString: fmt.Sprintf("token %d\n", i), NewString: fmt.Sprintf("done %d\n", i)}, nil)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	got, _ := files.Get("/w/f")
	if strings.Contains(got, "token") || strings.Count(got, "done") != n {
		t.Fatalf("lost updates:\n%s", got)
	}
}

func TestCancelledContext(t *testing.T) {
	t.Parallel()
	files := fsopstest.NewMemFiles()
	files.Set("/w/f", "a\n")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := fsops.NewEngine(files).EditTextFile(ctx, fsops.EditParams{Path: "/w/f", OldString: "a", NewString: "b"}, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if te := fsops.AsError(err); te.Code != fsops.CodeInternal || te.Message != "Operation cancelled" {
		t.Errorf("AsError = %+v", te)
	}
	wantFile(t, files, "/w/f", "a\n")
}

func TestAsError(t *testing.T) {
	t.Parallel()
	te := &fsops.Error{Code: fsops.CodeStale, Message: "m", Hint: "h"}
	tests := []struct {
		err  error
		code int
		msg  string
	}{
		{te, fsops.CodeStale, "m"},
		{fmt.Errorf("wrapped: %w", te), fsops.CodeStale, "m"},
		{context.DeadlineExceeded, fsops.CodeInternal, "Operation timed out"},
		{errors.New("boom"), fsops.CodeInternal, "Internal error: boom"},
	}
	for _, tc := range tests {
		got := fsops.AsError(tc.err)
		if got.Code != tc.code || got.Message != tc.msg {
			t.Errorf("AsError(%v) = %d %q, want %d %q", tc.err, got.Code, got.Message, tc.code, tc.msg)
		}
	}
	if fsops.AsError(nil) != nil {
		t.Error("AsError(nil) != nil")
	}
}
