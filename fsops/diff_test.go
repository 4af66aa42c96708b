package fsops

import (
	"fmt"
	"strings"
	"testing"
)

func TestUnifiedDiff(t *testing.T) {
	t.Parallel()
	const h = "--- /f\n+++ /f\n"
	twelve := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n"
	tests := []struct {
		name, old, new, want string
	}{
		{"equal", "a\nb\n", "a\nb\n", ""},
		{"both empty", "", "", ""},
		{"from empty", "", "a\nb\n", h + "@@ -0,0 +1,2 @@\n+a\n+b\n"},
		{"to empty", "a\nb\n", "", h + "@@ -1,2 +0,0 @@\n-a\n-b\n"},
		{"final newline added", "a", "a\n", h + "@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+a\n"},
		{"no newline either side", "x", "y", h + "@@ -1 +1 @@\n-x\n\\ No newline at end of file\n+y\n\\ No newline at end of file\n"},
		{"crlf", "a\r\nb\r\n", "a\r\nc\r\n", h + "@@ -1,2 +1,2 @@\n a\r\n-b\r\n+c\r\n"},
		{"deleted line", "a\nb\nc\n", "a\nc\n", h + "@@ -1,3 +1,2 @@\n a\n-b\n c\n"},
		{"repeated line slides down", "a\nb\n", "a\nb\nb\n", h + "@@ -1,2 +1,3 @@\n a\n b\n+b\n"},
		{"bom change", "\uFEFFa\n", "a\n", h + "@@ -1 +1 @@\n-\uFEFFa\n+a\n"},
		{"gap of 6 merges", twelve, strings.Replace(strings.Replace(twelve, "2\n", "X\n", 1), "\n9\n", "\nY\n", 1),
			h + "@@ -1,12 +1,12 @@\n 1\n-2\n+X\n 3\n 4\n 5\n 6\n 7\n 8\n-9\n+Y\n 10\n 11\n 12\n"},
		{"gap of 7 splits", twelve, strings.Replace(strings.Replace(twelve, "2\n", "X\n", 1), "\n10\n", "\nY\n", 1),
			h + "@@ -1,5 +1,5 @@\n 1\n-2\n+X\n 3\n 4\n 5\n@@ -7,6 +7,6 @@\n 7\n 8\n 9\n-10\n+Y\n 11\n 12\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := UnifiedDiff("/f", []byte(tc.old), []byte(tc.new)); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// A change far from the ends of a big file is diffed through a small span,
// with line numbers counted from the start of the file.
func TestUnifiedDiffLineNumbersInBigFile(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := 1; i <= 10000; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	old := b.String()
	new := strings.Replace(old, "line 5000\n", "changed\n", 1)
	want := "--- /f\n+++ /f\n@@ -4997,7 +4997,7 @@\n line 4997\n line 4998\n line 4999\n-line 5000\n+changed\n line 5001\n line 5002\n line 5003\n"
	if got := UnifiedDiff("/f", []byte(old), []byte(new)); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// The engine's regions only say where to look: an insertion reported at
// the start of a run of equal lines lands where the whole-file diff puts
// it (at the end of the run, where GNU diff puts it too).
func TestUnifiedDiffRegionIsAHint(t *testing.T) {
	t.Parallel()
	old := "head\n" + strings.Repeat("x\n", 40) + "tail\n"
	new := "head\n" + strings.Repeat("x\n", 41) + "tail\n"
	want := "--- /f\n+++ /f\n@@ -39,4 +39,5 @@\n x\n x\n x\n+x\n tail\n"
	// Give the engine's region at the start of the run: it must still land at the end.
	got, lines := diffAndLines("/f", []byte(old), []byte(new), []region{{oldStart: 5, oldEnd: 5, newStart: 5, newEnd: 7}})
	if got != want || fmt.Sprint(lines) != "[42]" {
		t.Errorf("got lines %v\n%s\nwant\n%s", lines, got, want)
	}
}

func TestCommonLineAffixes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		old, new                  string
		prefix, oldSuffix, newSuf int
	}{
		{"a\nb\nc\n", "a\nX\nc\n", 2, 4, 4},
		{"a\nb", "a\nb\n", 2, 3, 4},
		{"x\nfoo\n", "xyfoo\n", 0, 6, 6},
		{"same\n", "same\nmore\n", 5, 5, 10},
		{"", "a\n", 0, 0, 2},
	}
	for _, tc := range tests {
		p, os, ns := commonLineAffixes([]byte(tc.old), []byte(tc.new), 0, 0)
		if p != tc.prefix || os != tc.oldSuffix || ns != tc.newSuf {
			t.Errorf("commonLineAffixes(%q, %q) = %d, %d, %d; want %d, %d, %d", tc.old, tc.new, p, os, ns, tc.prefix, tc.oldSuffix, tc.newSuf)
		}
	}
}

func TestCountLines(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int{"": 0, "a": 1, "a\n": 1, "a\nb": 2, "a\n\n": 2, "\n": 1, "a\r\nb\r\n": 2, "\uFEFF": 0, "\uFEFFa": 1} {
		if got := CountLines([]byte(in)); got != want {
			t.Errorf("CountLines(%q) = %d, want %d", in, got, want)
		}
	}
}
