package fsops_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/codexacp/codexacp/fsops"
	"github.com/codexacp/codexacp/fsops/fsopstest"
)

const five = "l1\nl2\nl3\nl4\nl5\n"

// lineCase is one call of a line tool on a file.
type lineCase struct {
	name string
	file string
	call func(e *fsops.Engine, hash string) (*fsops.LinesResult, error)
	code int
	msg  string
	want string
}

func runLineCases(t *testing.T, tests []lineCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := fsopstest.NewMemFiles()
			files.Set("/w/f", tc.file)
			res, err := tc.call(fsops.NewEngine(files), fsops.HashOf([]byte(tc.file)))
			if tc.code != 0 {
				wantError(t, err, tc.code, tc.msg)
				wantFile(t, files, "/w/f", tc.file)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			wantFile(t, files, "/w/f", tc.want)
			if !res.Success || res.Hash != fsops.HashOf([]byte(tc.want)) || res.TotalLines != fsops.CountLines([]byte(tc.want)) ||
				res.Diff != fsops.UnifiedDiff("/w/f", []byte(tc.file), []byte(tc.want)) {
				t.Errorf("result %+v does not describe the change to %q", res, tc.want)
			}
		})
	}
}

func replace(lines []int, old, new string) func(*fsops.Engine, string) (*fsops.LinesResult, error) {
	return func(e *fsops.Engine, hash string) (*fsops.LinesResult, error) {
		return e.ReplaceTextLines(context.Background(), fsops.ReplaceLinesParams{Path: "/w/f", Hash: hash, Lines: lines, Old: old, New: new}, nil)
	}
}

func insert(line int, anchor, content string) func(*fsops.Engine, string) (*fsops.LinesResult, error) {
	return func(e *fsops.Engine, hash string) (*fsops.LinesResult, error) {
		return e.InsertTextLines(context.Background(), fsops.InsertLinesParams{Path: "/w/f", Hash: hash, Line: line, Anchor: anchor, Content: content}, nil)
	}
}

func appendText(content string) func(*fsops.Engine, string) (*fsops.LinesResult, error) {
	return func(e *fsops.Engine, hash string) (*fsops.LinesResult, error) {
		return e.AppendTextFile(context.Background(), fsops.AppendParams{Path: "/w/f", Hash: hash, Content: content}, nil)
	}
}

// withHash replaces the hash a call gets.
func withHash(hash string, call func(*fsops.Engine, string) (*fsops.LinesResult, error)) func(*fsops.Engine, string) (*fsops.LinesResult, error) {
	return func(e *fsops.Engine, _ string) (*fsops.LinesResult, error) { return call(e, hash) }
}

// Seed 004: replace_text_lines.
func TestReplaceTextLines(t *testing.T) {
	t.Parallel()
	stale := fsops.HashOf([]byte("older"))
	runLineCases(t, []lineCase{
		{name: "last three lines [-3,0]", file: five, call: replace([]int{-3, 0}, "l3\nl4\nl5", "x\ny"), want: "l1\nl2\nx\ny\n"},
		{name: "one line", file: five, call: replace([]int{2, 3}, "l2", "L2"), want: "l1\nL2\nl3\nl4\nl5\n"},
		{name: "old with final newline", file: five, call: replace([]int{2, 4}, "l2\nl3\n", "x\n"), want: "l1\nx\nl4\nl5\n"},
		{name: "negative end", file: five, call: replace([]int{3, -1}, "l3\nl4", "x"), want: "l1\nl2\nx\nl5\n"},
		{name: "delete lines", file: five, call: replace([]int{2, 4}, "l2\nl3", ""), want: "l1\nl4\nl5\n"},
		{name: "whole file", file: five, call: replace([]int{1, 0}, five, "only\n"), want: "only\n"},
		{name: "crlf file", file: "a\r\nb\r\nc\r\n", call: replace([]int{2, 3}, "b", "x\ny"), want: "a\r\nx\r\ny\r\nc\r\n"},
		{name: "crlf old", file: "a\r\nb\r\nc\r\n", call: replace([]int{1, 3}, "a\r\nb\r\n", "z\r\n"), want: "z\r\nc\r\n"},
		{name: "no final newline kept", file: "a\nb", call: replace([]int{2, 0}, "b", "B\nC\n"), want: "a\nB\nC"},
		{name: "no final newline, earlier line", file: "a\nb", call: replace([]int{1, 2}, "a", "A"), want: "A\nb"},
		{name: "delete last line without newline", file: "a\nb", call: replace([]int{-1, 0}, "b", ""), want: "a"},
		{name: "bom stays before line 1", file: "\uFEFFa\nb\n", call: replace([]int{1, 2}, "a", "z"), want: "\uFEFFz\nb\n"},
		{name: "blank line", file: "a\n\nb\n", call: replace([]int{2, 3}, "", "x"), want: "a\nx\nb\n"},

		{name: "stale hash", file: five, call: withHash(stale, replace([]int{1, 2}, "l1", "x")), code: fsops.CodeStale,
			msg: fmt.Sprintf("Stale content: /w/f changed since it was read (expected hash %s, current hash %s, now 5 lines)", stale, fsops.HashOf([]byte(five)))},
		{name: "stale hash checked before old", file: five, call: withHash(stale, replace([]int{1, 2}, "wrong", "x")), code: fsops.CodeStale,
			msg: fmt.Sprintf("Stale content: /w/f changed since it was read (expected hash %s, current hash %s, now 5 lines)", stale, fsops.HashOf([]byte(five)))},
		{name: "missing hash", file: five, call: withHash("", replace([]int{1, 2}, "l1", "x")), code: fsops.CodeInvalidRequest, msg: "hash is required"},
		{name: "wrong old", file: five, call: replace([]int{2, 3}, "l3", "x"), code: fsops.CodeOldMismatch, msg: `Line 2 contains "l2", not "l3"`},
		{name: "wrong second line", file: five, call: replace([]int{2, 4}, "l2\nl9", "x"), code: fsops.CodeOldMismatch, msg: `Line 3 contains "l3", not "l9"`},
		{name: "old too short", file: five, call: replace([]int{2, 4}, "l2", "x"), code: fsops.CodeOldMismatch,
			msg: `Line 3 contains "l3", not the end of old (old has 1 lines, the range 2)`},
		{name: "old too long", file: five, call: replace([]int{2, 3}, "l2\nl3", "x"), code: fsops.CodeOldMismatch,
			msg: `old continues with "l3" past the end of the range at line 2 (old has 2 lines, the range 1)`},
		{name: "old with an extra blank line", file: five, call: replace([]int{2, 3}, "l2\n\n", "x"), code: fsops.CodeOldMismatch,
			msg: `old continues with "" past the end of the range at line 2 (old has 2 lines, the range 1)`},
		{name: "start 0", file: five, call: replace([]int{0, 2}, "l1", "x"), code: fsops.CodeInvalidRequest, msg: "Invalid line range [0, 2) for a file of 5 lines"},
		{name: "empty range", file: five, call: replace([]int{3, 3}, "", "x"), code: fsops.CodeInvalidRequest, msg: "Invalid line range [3, 3) for a file of 5 lines"},
		{name: "reversed", file: five, call: replace([]int{4, 2}, "", "x"), code: fsops.CodeInvalidRequest, msg: "Invalid line range [4, 2) for a file of 5 lines"},
		{name: "past the end", file: five, call: replace([]int{5, 8}, "l5", "x"), code: fsops.CodeInvalidRequest, msg: "Invalid line range [5, 8) for a file of 5 lines"},
		{name: "before the start", file: five, call: replace([]int{-9, 0}, "", "x"), code: fsops.CodeInvalidRequest, msg: "Invalid line range [-9, 0) for a file of 5 lines"},
		{name: "empty file", file: "", call: replace([]int{1, 0}, "", "x"), code: fsops.CodeInvalidRequest, msg: "Invalid line range [1, 0) for a file of 0 lines"},
		{name: "three numbers", file: five, call: replace([]int{1, 2, 3}, "l1", "x"), code: fsops.CodeInvalidRequest, msg: "lines must be [start, end], got 3 numbers"},
	})
}

// Seed 004: insert_text_lines.
func TestInsertTextLines(t *testing.T) {
	t.Parallel()
	runLineCases(t, []lineCase{
		{name: "before line 2", file: five, call: insert(2, "l2", "new"), want: "l1\nnew\nl2\nl3\nl4\nl5\n"},
		{name: "before line 1", file: five, call: insert(1, "l1", "a\nb\n"), want: "a\nb\nl1\nl2\nl3\nl4\nl5\n"},
		{name: "before the last line", file: five, call: insert(-1, "l5", "x"), want: "l1\nl2\nl3\nl4\nx\nl5\n"},
		{name: "anchor with newline", file: five, call: insert(3, "l3\n", "x"), want: "l1\nl2\nx\nl3\nl4\nl5\n"},
		{name: "crlf", file: "a\r\nb\r\n", call: insert(2, "b", "x\ny"), want: "a\r\nx\r\ny\r\nb\r\n"},
		{name: "no final newline", file: "a\nb", call: insert(2, "b", "x"), want: "a\nx\nb"},
		{name: "bom", file: "\uFEFFa\n", call: insert(1, "a", "z"), want: "\uFEFFz\na\n"},
		{name: "wrong anchor", file: five, call: insert(2, "l3", "x"), code: fsops.CodeAnchorMismatch, msg: `Line 2 contains "l2", not "l3"`},
		{name: "line past the end", file: five, call: insert(6, "", "x"), code: fsops.CodeInvalidRequest, msg: "Line 6 is not a line of the file (5 lines)"},
		{name: "line 0", file: five, call: insert(0, "", "x"), code: fsops.CodeInvalidRequest, msg: "Line 0 is not a line of the file (5 lines)"},
		{name: "empty content", file: five, call: insert(1, "l1", ""), code: fsops.CodeInvalidRequest, msg: "content is empty"},
		{name: "stale hash", file: five, call: withHash(fsops.HashOf(nil), insert(1, "l1", "x")), code: fsops.CodeStale,
			msg: fmt.Sprintf("Stale content: /w/f changed since it was read (expected hash %s, current hash %s, now 5 lines)", fsops.HashOf(nil), fsops.HashOf([]byte(five)))},
	})
}

func TestInsertTextLinesAnchorHint(t *testing.T) {
	t.Parallel()
	files := fsopstest.NewMemFiles()
	files.Set("/w/f", five)
	_, err := fsops.NewEngine(files).InsertTextLines(context.Background(),
		fsops.InsertLinesParams{Path: "/w/f", Hash: fsops.HashOf([]byte(five)), Line: 2, Anchor: "l4", Content: "x"}, nil)
	te := wantError(t, err, fsops.CodeAnchorMismatch, `Line 2 contains "l2", not "l4"`)
	if !strings.Contains(te.Hint, "line 4") {
		t.Errorf("hint %q does not say where the anchor is", te.Hint)
	}
}

// Seed 004: append_text_file.
func TestAppendTextFile(t *testing.T) {
	t.Parallel()
	runLineCases(t, []lineCase{
		{name: "after final newline", file: "l1\n", call: appendText("x"), want: "l1\nx\n"},
		{name: "content with newline", file: "l1\n", call: appendText("x\ny\n"), want: "l1\nx\ny\n"},
		{name: "no final newline stays so", file: "a", call: appendText("b"), want: "a\nb"},
		{name: "no final newline, content with one", file: "a", call: appendText("b\n"), want: "a\nb"},
		{name: "empty file", file: "", call: appendText("x"), want: "x\n"},
		{name: "crlf", file: "a\r\n", call: appendText("x\ny"), want: "a\r\nx\r\ny\r\n"},
		{name: "empty content", file: "a\n", call: appendText(""), code: fsops.CodeInvalidRequest, msg: "content is empty"},
		{name: "stale hash", file: "a\n", call: withHash("abc", appendText("x")), code: fsops.CodeStale,
			msg: fmt.Sprintf("Stale content: /w/f changed since it was read (expected hash abc, current hash %s, now 1 lines)", fsops.HashOf([]byte("a\n")))},
	})
}
