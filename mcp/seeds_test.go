package mcp

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/codexacp/codexacp/fsops"
	"github.com/codexacp/codexacp/fsops/fsopstest"
)

// seedCase is one test case of the seed contracts, run through an MCP
// client over every transport.
type seedCase struct {
	name  string
	setup func(m *fsopstest.MemFiles)
	tool  string
	args  any

	// On success: want is a subset of structuredContent (JSON), check
	// inspects it further.
	want  string
	check func(t testing.TB, sc map[string]any)

	// On failure: the code and, when set, the exact message.
	wantCode int
	wantMsg  string

	// Files after the call: content, or absent when nil.
	wantFiles map[string]*string
}

func str(s string) *string { return &s }

const (
	configToml = "[server]\nhost = \"localhost\"\nport = 8080\n"
	codeRs     = "fn old_func() {\n    println!(\"old\");\n}\n"
	multiToml  = "[server]\nhost = \"localhost\"\nport = 8080\n\n[app]\ndebug = false\n"
	fiveLines  = "l1\nl2\nl3\nl4\nl5\n"
)

func files(kv ...string) func(m *fsopstest.MemFiles) {
	return func(m *fsopstest.MemFiles) {
		for i := 0; i < len(kv); i += 2 {
			setFile(m, kv[i], kv[i+1])
		}
	}
}

// diffHas checks that the diff contains each line.
func diffHas(lines ...string) func(t testing.TB, sc map[string]any) {
	return func(t testing.TB, sc map[string]any) {
		t.Helper()
		diff, _ := sc["diff"].(string)
		for _, l := range lines {
			if !strings.Contains(diff, "\n"+l+"\n") {
				t.Errorf("diff lacks line %q:\n%s", l, diff)
			}
		}
	}
}

func seedCases() []seedCase {
	hundredIn, hundredOut, hundredEdits := hundredStrings()
	return []seedCase{
		// Seed 000: edit_text_file.
		{
			name: "000/TC1 simple replacement", setup: files("/test/config.toml", configToml),
			tool: fsops.ToolEditTextFile, args: map[string]any{"path": "/test/config.toml", "old_string": "port = 8080", "new_string": "port = 3000"},
			want:      `{"success":true,"line_range":{"start":3,"end":3},"replacements":1,"total_lines":3}`,
			check:     diffHas("-port = 8080", "+port = 3000"),
			wantFiles: map[string]*string{"/test/config.toml": str("[server]\nhost = \"localhost\"\nport = 3000\n")},
		},
		{
			name: "000/TC2 multi-line replacement", setup: files("/test/code.rs", codeRs),
			tool: fsops.ToolEditTextFile, args: map[string]any{"path": "/test/code.rs",
				"old_string": "fn old_func() {\n    println!(\"old\");\n}", "new_string": "fn new_func() {\n    println!(\"new\");\n}"},
			want: `{"success":true,"line_range":{"start":1,"end":3}}`,
			check: diffHas("@@ -1,3 +1,3 @@", "-fn old_func() {", `-    println!("old");`,
				"+fn new_func() {", `+    println!("new");`, " }"),
			wantFiles: map[string]*string{"/test/code.rs": str("fn new_func() {\n    println!(\"new\");\n}\n")},
		},
		{
			name: "000/TC3 string not found", setup: files("/test/file.txt", "Hello World"),
			tool: fsops.ToolEditTextFile, args: map[string]any{"path": "/test/file.txt", "old_string": "Goodbye", "new_string": "Hello"},
			wantCode: fsops.CodeStringNotFound, wantMsg: "String not found in file: Goodbye",
			wantFiles: map[string]*string{"/test/file.txt": str("Hello World")},
		},
		{
			name: "000/TC4 multiple matches", setup: files("/test/file.txt", "foo\nfoo\nfoo"),
			tool: fsops.ToolEditTextFile, args: map[string]any{"path": "/test/file.txt", "old_string": "foo", "new_string": "bar"},
			wantCode: fsops.CodeMatchCount, wantMsg: "String appears 3 times (must be unique): foo",
			wantFiles: map[string]*string{"/test/file.txt": str("foo\nfoo\nfoo")},
		},
		{
			name: "000/TC5 delete line", setup: files("/test/file.txt", "line 1\nline 2\nline 3\n"),
			tool: fsops.ToolEditTextFile, args: map[string]any{"path": "/test/file.txt", "old_string": "line 2\n", "new_string": ""},
			want: `{"success":true}`, check: diffHas("-line 2"),
			wantFiles: map[string]*string{"/test/file.txt": str("line 1\nline 3\n")},
		},
		{
			name: "000/TC6 file not found", setup: files("/test/other.txt", "x"),
			tool: fsops.ToolEditTextFile, args: map[string]any{"path": "/test/missing.txt", "old_string": "a", "new_string": "b"},
			wantCode: fsops.CodeNotFound, wantMsg: "File not found: /test/missing.txt",
			wantFiles: map[string]*string{"/test/missing.txt": nil},
		},
		{
			name: "000/TC7 identical strings", setup: files(),
			tool: fsops.ToolEditTextFile, args: map[string]any{"path": "/test/file.txt", "old_string": "same", "new_string": "same"},
			wantCode: fsops.CodeInvalidRequest, wantMsg: "old_string and new_string are identical",
		},

		// Seed 001: multi_edit_text_file.
		{
			name: "001/TC1 multiple edits", setup: files("/test/config.toml", multiToml),
			tool: fsops.ToolMultiEditTextFile, args: map[string]any{"path": "/test/config.toml", "edits": []any{
				map[string]any{"old_string": "port = 8080", "new_string": "port = 3000"},
				map[string]any{"old_string": `host = "localhost"`, "new_string": `host = "0.0.0.0"`},
				map[string]any{"old_string": "debug = false", "new_string": "debug = true"},
			}},
			want:      `{"success":true,"applied_count":3,"line_ranges":[{"edit_index":0,"start":3,"end":3},{"edit_index":1,"start":2,"end":2},{"edit_index":2,"start":6,"end":6}]}`,
			check:     diffHas("-port = 8080", "+port = 3000", `-host = "localhost"`, `+host = "0.0.0.0"`, "-debug = false", "+debug = true"),
			wantFiles: map[string]*string{"/test/config.toml": str("[server]\nhost = \"0.0.0.0\"\nport = 3000\n\n[app]\ndebug = true\n")},
		},
		{
			name: "001/TC2 sequential edits", setup: files("/test/file.txt", "AAA"),
			tool: fsops.ToolMultiEditTextFile, args: map[string]any{"path": "/test/file.txt", "edits": []any{
				map[string]any{"old_string": "AAA", "new_string": "BBB"},
				map[string]any{"old_string": "BBB", "new_string": "CCC"},
			}},
			want: `{"success":true,"applied_count":2}`, check: diffHas("-AAA", "+CCC"),
			wantFiles: map[string]*string{"/test/file.txt": str("CCC")},
		},
		{
			name: "001/TC3 string not found in edit 2", setup: files("/test/file.txt", "line 1\nline 2\n"),
			tool: fsops.ToolMultiEditTextFile, args: map[string]any{"path": "/test/file.txt", "edits": []any{
				map[string]any{"old_string": "line 1", "new_string": "LINE 1"},
				map[string]any{"old_string": "line 3", "new_string": "LINE 3"},
			}},
			wantCode: fsops.CodeStringNotFound, wantMsg: "Edit 1: String not found: line 3",
			wantFiles: map[string]*string{"/test/file.txt": str("line 1\nline 2\n")},
		},
		{
			name: "001/TC4 empty edits", setup: files("/test/file.txt", "x\n"),
			tool: fsops.ToolMultiEditTextFile, args: map[string]any{"path": "/test/file.txt", "edits": []any{}},
			wantCode: fsops.CodeInvalidRequest, wantMsg: "Edits array cannot be empty",
			wantFiles: map[string]*string{"/test/file.txt": str("x\n")},
		},
		{
			name: "001/TC5 duplicate edits", setup: files("/test/file.txt", "foo"),
			tool: fsops.ToolMultiEditTextFile, args: map[string]any{"path": "/test/file.txt", "edits": []any{
				map[string]any{"old_string": "foo", "new_string": "bar"},
				map[string]any{"old_string": "foo", "new_string": "baz"},
			}},
			wantCode: fsops.CodeStringNotFound, wantMsg: "Edit 1: String not found: foo",
			wantFiles: map[string]*string{"/test/file.txt": str("foo")},
		},
		{
			name: "001/TC6 hundred edits", setup: files("/test/many.txt", hundredIn),
			tool: fsops.ToolMultiEditTextFile, args: map[string]any{"path": "/test/many.txt", "edits": hundredEdits},
			want:      `{"success":true,"applied_count":100}`,
			wantFiles: map[string]*string{"/test/many.txt": str(hundredOut)},
		},
		{
			name: "001/TC7 edits creating ambiguity", setup: files("/test/file.txt", "A"),
			tool: fsops.ToolMultiEditTextFile, args: map[string]any{"path": "/test/file.txt", "edits": []any{
				map[string]any{"old_string": "A", "new_string": "AA"},
				map[string]any{"old_string": "A", "new_string": "B"},
			}},
			wantCode: fsops.CodeMatchCount, wantMsg: "Edit 1: String appears 2 times: A",
			wantFiles: map[string]*string{"/test/file.txt": str("A")},
		},

		// Seed 003: write_text_file.
		{
			name: "003/TC1 create", setup: files("/test/keep.txt", "k"),
			tool: fsops.ToolWriteTextFile, args: map[string]any{"path": "/test/new.txt", "content": "Hello\n"},
			want:      fmt.Sprintf(`{"success":true,"bytes_written":6,"created":true,"hash":%q,"total_lines":1}`, sha("Hello\n")),
			wantFiles: map[string]*string{"/test/new.txt": str("Hello\n")},
		},
		{
			name: "003/TC2 overwrite", setup: files("/test/existing.txt", "Old content\n"),
			tool: fsops.ToolWriteTextFile, args: map[string]any{"path": "/test/existing.txt", "content": "New content\n"},
			want:      `{"success":true,"bytes_written":12,"created":false}`,
			wantFiles: map[string]*string{"/test/existing.txt": str("New content\n")},
		},
		{
			name: "003/TC3 empty file", setup: files("/test/keep.txt", "k"),
			tool: fsops.ToolWriteTextFile, args: map[string]any{"path": "/test/empty.txt", "content": ""},
			want:      `{"success":true,"bytes_written":0,"created":true}`,
			wantFiles: map[string]*string{"/test/empty.txt": str("")},
		},
		{
			name: "003/TC4 permission denied",
			setup: func(m *fsopstest.MemFiles) {
				setDir(m, "/root")
				denyWrites(m, "/root/secret.txt")
			},
			tool: fsops.ToolWriteTextFile, args: map[string]any{"path": "/root/secret.txt", "content": "data"},
			wantCode: fsops.CodePermission, wantMsg: "Permission denied: /root/secret.txt",
			wantFiles: map[string]*string{"/root/secret.txt": nil},
		},
		{
			name: "003/TC5 relative path", setup: files(),
			tool: fsops.ToolWriteTextFile, args: map[string]any{"path": "relative/path.txt", "content": "data"},
			wantCode: fsops.CodeInvalidRequest, wantMsg: "Path must be absolute: relative/path.txt",
		},
		{
			name: "003/TC6 parent directory not found", setup: files("/test/keep.txt", "k"),
			tool: fsops.ToolWriteTextFile, args: map[string]any{"path": "/test/missing-dir/file.txt", "content": "data"},
			wantCode: fsops.CodeNotFound, wantMsg: "Parent directory not found: /test/missing-dir",
			wantFiles: map[string]*string{"/test/missing-dir/file.txt": nil},
		},
		{
			name: "003/TC7 path is a directory", setup: func(m *fsopstest.MemFiles) { setDir(m, "/test/dir") },
			tool: fsops.ToolWriteTextFile, args: map[string]any{"path": "/test/dir", "content": "data"},
			wantCode: fsops.CodeIsDirectory, wantMsg: "/test/dir is a directory",
		},
		{
			name: "003/TC8 large file", setup: files("/test/keep.txt", "k"),
			tool: fsops.ToolWriteTextFile, args: map[string]any{"path": "/test/large.txt", "content": strings.Repeat("abcdefghijklmno\n", 1<<16)},
			want:      `{"success":true,"bytes_written":1048576,"created":true,"total_lines":65536}`,
			wantFiles: map[string]*string{"/test/large.txt": str(strings.Repeat("abcdefghijklmno\n", 1<<16))},
		},

		// Seed 002: expected_replacements; the file is untouched on failure.
		{
			name: "002 one match, default expected 1", setup: files("/test/readme.md", "say foo here\n"),
			tool: fsops.ToolEditTextFile, args: map[string]any{"path": "/test/readme.md", "old_string": "foo", "new_string": "bar"},
			want:      `{"success":true,"replacements":1}`,
			wantFiles: map[string]*string{"/test/readme.md": str("say bar here\n")},
		},
		{
			name: "002 zero matches", setup: files("/test/readme.md", "say foo here\n"),
			tool: fsops.ToolEditTextFile, args: map[string]any{"path": "/test/readme.md", "old_string": "qux", "new_string": "bar"},
			wantCode: fsops.CodeStringNotFound, wantMsg: "String not found in file: qux",
			wantFiles: map[string]*string{"/test/readme.md": str("say foo here\n")},
		},
		{
			name: "002 two matches, expected 1", setup: files("/test/readme.md", "foo and foo\n"),
			tool: fsops.ToolEditTextFile, args: map[string]any{"path": "/test/readme.md", "old_string": "foo", "new_string": "bar"},
			wantCode: fsops.CodeMatchCount, wantMsg: "String appears 2 times (must be unique): foo",
			wantFiles: map[string]*string{"/test/readme.md": str("foo and foo\n")},
		},
		{
			name: "002 two matches, expected 2", setup: files("/test/readme.md", "foo and foo\n"),
			tool: fsops.ToolEditTextFile, args: map[string]any{"path": "/test/readme.md", "old_string": "foo", "new_string": "bar", "expected_replacements": 2},
			want:      `{"success":true,"replacements":2}`,
			wantFiles: map[string]*string{"/test/readme.md": str("bar and bar\n")},
		},
		{
			name: "002 expected 3, found 2", setup: files("/test/readme.md", "foo and foo\n"),
			tool: fsops.ToolEditTextFile, args: map[string]any{"path": "/test/readme.md", "old_string": "foo", "new_string": "bar", "expected_replacements": 3},
			wantCode: fsops.CodeMatchCount, wantMsg: "Expected 3 replacements but found 2: foo",
			wantFiles: map[string]*string{"/test/readme.md": str("foo and foo\n")},
		},
		{
			name: "002 invalid input: empty old_string", setup: files("/test/readme.md", "foo\n"),
			tool: fsops.ToolEditTextFile, args: map[string]any{"path": "/test/readme.md", "old_string": "", "new_string": "bar"},
			wantCode:  fsops.CodeInvalidRequest,
			wantFiles: map[string]*string{"/test/readme.md": str("foo\n")},
		},
		{
			name: "002 invalid input: expected_replacements 0", setup: files("/test/readme.md", "foo\n"),
			tool: fsops.ToolEditTextFile, args: map[string]any{"path": "/test/readme.md", "old_string": "foo", "new_string": "bar", "expected_replacements": 0},
			wantCode:  fsops.CodeInvalidRequest,
			wantFiles: map[string]*string{"/test/readme.md": str("foo\n")},
		},
	}
}

// hundredStrings builds seed 001 TC6: a file with 100 unique strings and
// the 100 edits that change each of them.
func hundredStrings() (in, out string, edits []any) {
	var b, a strings.Builder
	for i := range 100 {
		fmt.Fprintf(&b, "value_%03d = %d\n", i, i)
		fmt.Fprintf(&a, "value_%03d = %d\n", i, i+1000)
		edits = append(edits, map[string]any{
			"old_string": fmt.Sprintf("value_%03d = %d\n", i, i),
			"new_string": fmt.Sprintf("value_%03d = %d\n", i, i+1000),
		})
	}
	return b.String(), a.String(), edits
}

// TestSeedCases runs every seed contract test case through an MCP client,
// over the in-memory transport and over streamable HTTP with a token.
func TestSeedCases(t *testing.T) {
	t.Parallel()
	cases := append(seedCases(), lineCases()...)
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					runSeedCase(t, tr, tc)
				})
			}
		})
	}
}

func runSeedCase(t *testing.T, tr transport, tc seedCase) {
	mem := fsopstest.NewMemFiles()
	if tc.setup != nil {
		tc.setup(mem)
	}
	rec := &recorder{}
	cs := tr.connect(t, NewServer(fsops.NewEngine(mem), rec))
	res, sc := call(t, cs, tc.tool, tc.args)

	if tc.wantCode != 0 {
		code, msg, _ := toolErr(t, res, sc)
		if code != tc.wantCode {
			t.Errorf("code = %d, want %d (message %q)", code, tc.wantCode, msg)
		}
		if tc.wantMsg != "" && msg != tc.wantMsg {
			t.Errorf("message = %q, want %q", msg, tc.wantMsg)
		}
	} else {
		if res.IsError {
			t.Fatalf("unexpected error result: %v", sc)
		}
		var want map[string]any
		if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
			t.Fatalf("bad want JSON: %v", err)
		}
		if err := subset(want, sc, ""); err != nil {
			t.Errorf("structuredContent %v: %v", sc, err)
		}
		if tc.check != nil {
			tc.check(t, sc)
		}
	}
	for path, want := range tc.wantFiles {
		got, ok := getFile(mem, path)
		switch {
		case want == nil && ok:
			t.Errorf("%s exists (%q), want absent", path, got)
		case want != nil && !ok:
			t.Errorf("%s absent, want %q", path, *want)
		case want != nil && got != *want:
			t.Errorf("%s = %q, want %q", path, got, *want)
		}
	}

	// Every call is reported: started first, finished last, exactly one of
	// result and error.
	ev := rec.snapshot()
	if len(ev) < 2 || ev[0].kind != "started" || ev[len(ev)-1].kind != "finished" {
		t.Fatalf("observer saw %v, want started ... finished", rec.kinds())
	}
	fin := ev[len(ev)-1]
	if (fin.result == nil) == (fin.err == nil) {
		t.Errorf("finished with result %v and err %v, want exactly one", fin.result, fin.err)
	}
	if tc.wantCode != 0 && fin.err != nil && fin.err.Code != tc.wantCode {
		t.Errorf("observer err code = %d, want %d", fin.err.Code, tc.wantCode)
	}
}

// subset reports whether every field of want is in got with an equal value
// (objects recursively; arrays must match element by element).
func subset(want, got any, at string) error {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: got %v, want object", at, got)
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok {
				return fmt.Errorf("%s.%s missing", at, k)
			}
			if err := subset(wv, gv, at+"."+k); err != nil {
				return err
			}
		}
		return nil
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Errorf("%s: got %v, want %v", at, got, want)
		}
		for i := range w {
			if err := subset(w[i], g[i], fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
		return nil
	}
	if !reflect.DeepEqual(want, got) {
		return fmt.Errorf("%s = %v, want %v", at, got, want)
	}
	return nil
}

// lineCases are seed 004's range semantics for the hash-checked line
// tools: 1-based lines, [start, end) with end exclusive, negative numbers
// counting from the end (-1 = last line), end 0 = to the end of the file.
func lineCases() []seedCase {
	h := sha(fiveLines)
	five := files("/w/five.txt", fiveLines)
	replace := func(lines []int, old, new string) map[string]any {
		return map[string]any{"path": "/w/five.txt", "hash": h, "lines": lines, "old": old, "new": new}
	}
	ok := func(after string) string {
		return fmt.Sprintf(`{"success":true,"hash":%q,"total_lines":%d}`, sha(after), strings.Count(after, "\n"))
	}
	unchanged := map[string]*string{"/w/five.txt": str(fiveLines)}
	return []seedCase{
		{
			name: "004 replace [2, 4) is lines 2 and 3", setup: five,
			tool: fsops.ToolReplaceTextLines, args: replace([]int{2, 4}, "l2\nl3", "X"),
			want: ok("l1\nX\nl4\nl5\n"), check: diffHas("-l2", "-l3", "+X", " l1", " l4"),
			wantFiles: map[string]*string{"/w/five.txt": str("l1\nX\nl4\nl5\n")},
		},
		{
			name: "004 replace [-3, 0] is the last three lines", setup: five,
			tool: fsops.ToolReplaceTextLines, args: replace([]int{-3, 0}, "l3\nl4\nl5\n", "END\n"),
			want: ok("l1\nl2\nEND\n"), wantFiles: map[string]*string{"/w/five.txt": str("l1\nl2\nEND\n")},
		},
		{
			name: "004 replace [-1, 0] deletes the last line", setup: five,
			tool: fsops.ToolReplaceTextLines, args: replace([]int{-1, 0}, "l5", ""),
			want: ok("l1\nl2\nl3\nl4\n"), check: diffHas("-l5"),
			wantFiles: map[string]*string{"/w/five.txt": str("l1\nl2\nl3\nl4\n")},
		},
		{
			name: "004 replace [1, -1] stops before the last line", setup: five,
			tool: fsops.ToolReplaceTextLines, args: replace([]int{1, -1}, "l1\nl2\nl3\nl4", "A"),
			want: ok("A\nl5\n"), wantFiles: map[string]*string{"/w/five.txt": str("A\nl5\n")},
		},
		{
			name: "004 replace with an empty range", setup: five,
			tool: fsops.ToolReplaceTextLines, args: replace([]int{4, 2}, "", "x"),
			wantCode: fsops.CodeInvalidRequest, wantMsg: "Invalid line range [4, 2) for a file of 5 lines", wantFiles: unchanged,
		},
		{
			name: "004 replace with line 0", setup: five,
			tool: fsops.ToolReplaceTextLines, args: replace([]int{0, 1}, "", "x"),
			wantCode: fsops.CodeInvalidRequest, wantFiles: unchanged,
		},
		{
			name: "004 replace with a stale hash", setup: files("/w/five.txt", fiveLines),
			tool: fsops.ToolReplaceTextLines, args: map[string]any{"path": "/w/five.txt", "hash": sha("older content\n"), "lines": []int{1, 2}, "old": "l1", "new": "x"},
			wantCode: fsops.CodeStale, wantFiles: unchanged,
		},
		{
			name: "004 replace when old is not the lines", setup: five,
			tool: fsops.ToolReplaceTextLines, args: replace([]int{2, 3}, "l3", "x"),
			wantCode: fsops.CodeOldMismatch, wantMsg: `Line 2 contains "l2", not "l3"`, wantFiles: unchanged,
		},
		{
			name: "004 insert before line 1", setup: five,
			tool: fsops.ToolInsertTextLines, args: map[string]any{"path": "/w/five.txt", "hash": h, "line": 1, "anchor": "l1", "content": "l0"},
			want: ok("l0\n" + fiveLines), check: diffHas("+l0"),
			wantFiles: map[string]*string{"/w/five.txt": str("l0\n" + fiveLines)},
		},
		{
			name: "004 insert before line -1", setup: five,
			tool: fsops.ToolInsertTextLines, args: map[string]any{"path": "/w/five.txt", "hash": h, "line": -1, "anchor": "l5", "content": "l4.5\n"},
			want: ok("l1\nl2\nl3\nl4\nl4.5\nl5\n"), wantFiles: map[string]*string{"/w/five.txt": str("l1\nl2\nl3\nl4\nl4.5\nl5\n")},
		},
		{
			name: "004 insert when anchor is not the line", setup: five,
			tool: fsops.ToolInsertTextLines, args: map[string]any{"path": "/w/five.txt", "hash": h, "line": 2, "anchor": "l3", "content": "x"},
			wantCode: fsops.CodeAnchorMismatch, wantMsg: `Line 2 contains "l2", not "l3"`, wantFiles: unchanged,
		},
		{
			name: "004 insert with a stale hash", setup: five,
			tool: fsops.ToolInsertTextLines, args: map[string]any{"path": "/w/five.txt", "hash": sha("x"), "line": 1, "anchor": "l1", "content": "x"},
			wantCode: fsops.CodeStale, wantFiles: unchanged,
		},
		{
			name: "004 append", setup: five,
			tool: fsops.ToolAppendTextFile, args: map[string]any{"path": "/w/five.txt", "hash": h, "content": "l6"},
			want: ok(fiveLines + "l6\n"), check: diffHas("+l6"),
			wantFiles: map[string]*string{"/w/five.txt": str(fiveLines + "l6\n")},
		},
		{
			name: "004 append with a stale hash", setup: five,
			tool: fsops.ToolAppendTextFile, args: map[string]any{"path": "/w/five.txt", "hash": sha("x"), "content": "l6"},
			wantCode: fsops.CodeStale, wantFiles: unchanged,
		},
		{
			name: "004 append without a hash", setup: five,
			tool: fsops.ToolAppendTextFile, args: map[string]any{"path": "/w/five.txt", "hash": "", "content": "l6"},
			wantCode: fsops.CodeInvalidRequest, wantMsg: "hash is required", wantFiles: unchanged,
		},
	}
}
