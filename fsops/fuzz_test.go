package fsops

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// oneFile is a Files holding a single file, for fuzzing the engine without
// a disk (fsopstest imports this package, so it cannot be used here).
type oneFile struct {
	path string
	data []byte
}

func (o *oneFile) ReadFile(_ context.Context, p string) ([]byte, error) {
	if p != o.path {
		return nil, NotFoundError(p, nil)
	}
	return bytes.Clone(o.data), nil
}

func (o *oneFile) WriteFile(_ context.Context, p string, data []byte) error {
	if p != o.path {
		return ParentNotFoundError(p, nil)
	}
	o.data = bytes.Clone(data)
	return nil
}

func (o *oneFile) Stat(_ context.Context, p string) (FileInfo, error) {
	return FileInfo{Exists: p == o.path}, nil
}

func (o *oneFile) Resolve(_ context.Context, p string) (string, error) { return p, nil }

// applyUnified applies a unified diff made by UnifiedDiff to old, the way
// patch does with no fuzz: every context and removed line must match.
func applyUnified(old []byte, diff string) ([]byte, error) {
	if diff == "" {
		return old, nil
	}
	oldLines := splitLines(old)
	var out []byte
	next := 0 // index of the next old line not yet copied
	lines := strings.SplitAfter(diff, "\n")
	i := 0
	for i < len(lines) && !strings.HasPrefix(lines[i], "@@") {
		i++ // the ---/+++ headers
	}
	for i < len(lines) && lines[i] != "" {
		h := lines[i]
		var oldStart, oldCount, newStart, newCount int
		if err := parseHunkHeader(h, &oldStart, &oldCount, &newStart, &newCount); err != nil {
			return nil, err
		}
		from := oldStart - 1
		if oldCount == 0 {
			from = oldStart // "-a,0": the hunk goes after line a
		}
		if from < next || from > len(oldLines) {
			return nil, fmt.Errorf("hunk %q out of order", h)
		}
		for ; next < from; next++ {
			out = append(out, oldLines[next]...)
		}
		i++
		var seenOld, seenNew int
		for i < len(lines) && lines[i] != "" && !strings.HasPrefix(lines[i], "@@") {
			l := lines[i]
			text := []byte(l[1:])
			// "\ No newline at end of file" removes the newline of the line before it.
			if i+1 < len(lines) && strings.HasPrefix(lines[i+1], `\`) {
				text = bytes.TrimSuffix(text, []byte{'\n'})
			}
			switch l[0] {
			case ' ', '-':
				if next >= len(oldLines) || !bytes.Equal(oldLines[next], text) {
					return nil, fmt.Errorf("line %d does not match %q", next+1, l)
				}
				if l[0] == ' ' {
					out = append(out, text...)
					seenNew++
				}
				next++
				seenOld++
			case '+':
				out = append(out, text...)
				seenNew++
			case '\\':
			default:
				return nil, fmt.Errorf("bad diff line %q", l)
			}
			i++
		}
		if seenOld != oldCount || seenNew != newCount {
			return nil, fmt.Errorf("hunk %q: %d old and %d new lines", h, seenOld, seenNew)
		}
	}
	for ; next < len(oldLines); next++ {
		out = append(out, oldLines[next]...)
	}
	return out, nil
}

func parseHunkHeader(h string, oldStart, oldCount, newStart, newCount *int) error {
	f := strings.Fields(h)
	if len(f) < 4 || f[0] != "@@" || f[3] != "@@" {
		return fmt.Errorf("bad hunk header %q", h)
	}
	parse := func(s string, start, count *int) error {
		a, b, ok := strings.Cut(s[1:], ",")
		var err error
		if *start, err = strconv.Atoi(a); err != nil {
			return err
		}
		*count = 1
		if ok {
			*count, err = strconv.Atoi(b)
		}
		return err
	}
	if err := parse(f[1], oldStart, oldCount); err != nil {
		return err
	}
	return parse(f[2], newStart, newCount)
}

// Every diff re-applies to the original and gives the new text.
func FuzzUnifiedDiff(f *testing.F) {
	for _, s := range [][2]string{
		{"a\nb\nc\n", "a\nB\nc\n"},
		{"", "new\n"},
		{"old\n", ""},
		{"no newline", "no newline\n"},
		{"x\r\ny\r\n", "x\r\nz\r\n"},
		{"\ufeffbom\n", "bom\n"},
		{strings.Repeat("same\n", 20) + "a\n", "b\n" + strings.Repeat("same\n", 20)},
		{"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n", "1\n2\nX\n4\n5\n6\n7\n8\n9\n10\n11\n12\nY\n14\n15"},
		{"a\na\nb\n", "b\na\nb\nc\n"}, // one line against one is left to align (go-diff's DiffBisect cannot)
		{"x\ny\nz\n", "z\ny\nx\n"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, old, new string) {
		if !utf8.ValidString(old) || !utf8.ValidString(new) {
			return // the tools refuse what is not text
		}
		diff := UnifiedDiff("/w/f", []byte(old), []byte(new))
		if (diff == "") != (old == new) {
			t.Fatalf("diff %q for old %q new %q", diff, old, new)
		}
		got, err := applyUnified([]byte(old), diff)
		if err != nil {
			t.Fatalf("%v\nold %q\nnew %q\ndiff:\n%s", err, old, new, diff)
		}
		if string(got) != new {
			t.Fatalf("applied to %q, want %q\nold %q\ndiff:\n%s", got, new, old, diff)
		}
	})
}

// Line ranges of the line tools: any [start, end) either names lines of the
// file (and replacing them changes exactly those) or is refused with a tool
// error; nothing panics.
func FuzzReplaceLinesRange(f *testing.F) {
	for _, s := range []struct {
		content    string
		start, end int
	}{
		{"a\nb\nc\n", 1, 2}, {"a\nb\nc\n", -1, 0}, {"a\nb\nc\n", -3, 0}, {"a\nb\nc\n", 2, -1},
		{"a\nb", 0, 1}, {"", 1, 1}, {"x\r\ny\r\n", 2, 3}, {"a\n", -9223372036854775808, 9223372036854775807},
		{"a\nb\n", 3, 1}, {"one", 1, 0},
	} {
		f.Add(s.content, s.start, s.end)
	}
	f.Fuzz(func(t *testing.T, content string, start, end int) {
		if !utf8.ValidString(content) || strings.IndexByte(content, 0) >= 0 {
			return
		}
		files := &oneFile{path: "/w/f", data: []byte(content)}
		tl := newTextLines([]byte(content))
		s, e, rerr := tl.resolveRange(start, end)
		if rerr == nil && (s < 1 || e > tl.n+1 || s >= e) {
			t.Fatalf("resolveRange(%d, %d) = [%d, %d) for %d lines", start, end, s, e, tl.n)
		}
		old := ""
		if rerr == nil {
			for k := s; k < e; k++ {
				old += string(tl.content(k)) + "\n"
			}
		}
		res, err := NewEngine(files).ReplaceTextLines(context.Background(), ReplaceLinesParams{
			Path: "/w/f", Hash: HashOf([]byte(content)), Lines: []int{start, end}, Old: old, New: "NEW\n"}, nil)
		got := string(files.data)
		if err != nil {
			var te *Error
			if !errors.As(err, &te) || te.Message == "" {
				t.Fatalf("error %v is not a tool error", err)
			}
			if got != content {
				t.Fatalf("a failed call changed the file: %q → %q", content, got)
			}
			if rerr == nil && te.Code == CodeInvalidRequest && strings.HasPrefix(te.Message, "Invalid line range") {
				t.Fatalf("range [%d, %d) resolved but the tool refused it: %v", start, end, err)
			}
			return
		}
		if rerr != nil {
			t.Fatalf("range [%d, %d) refused (%v) but the tool accepted it", start, end, rerr)
		}
		if res.Hash != HashOf([]byte(got)) || CountLines([]byte(got)) != res.TotalLines {
			t.Fatalf("result %+v does not describe %q", res, got)
		}
		if applied, err := applyUnified([]byte(content), res.Diff); err != nil || string(applied) != got {
			t.Fatalf("diff does not apply (%v): %q", err, res.Diff)
		}
	})
}
