package fsops

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// TestSettleRun decides the frequent lines of runs of set-aside lines.
// Runs are written with u for a unique line, f for a frequent one that
// stays set aside and . for one that is kept. (The three cases about long
// stretches were also checked against GNU diff 3.8 directly.)
func TestSettleRun(t *testing.T) {
	tests := []struct{ in, want string }{
		{"f", "."},
		{"fuf", ".u."},           // frequent lines at either end are kept
		{"ufu", "u.u"},           // more than a quarter frequent: all kept
		{"uuufuuuu", "uuufuuuu"}, // three unique lines on either side
		{"uufuuuuu", "uu.uuuuu"}, // only two before it
		// Two frequent lines in a row are a long stretch in runs under 16
		// lines, three from 16 to 63 lines.
		{"uuuuuffuuuuuuuu", "uuuuu..uuuuuuuu"},
		{"uuuuuuffuuuuuuuu", "uuuuuuffuuuuuuuu"},
		{"uuuuuufffuuuuuuuuuuu", "uuuuuu...uuuuuuuuuuu"},
		// From the start, frequent lines are kept until three unique ones
		// in a row or a unique one at least 8 lines in.
		{"ufufufufuf" + strings.Repeat("u", 20), "u.u.u.u.uf" + strings.Repeat("u", 20)},
	}
	for _, tc := range tests {
		run := make([]uint8, len(tc.in))
		for i, c := range tc.in {
			run[i] = map[rune]uint8{'u': unique, 'f': frequent, '.': keep}[c]
		}
		settleRun(run)
		var got strings.Builder
		for _, r := range run {
			got.WriteByte("u.f"[map[uint8]int{unique: 0, keep: 1, frequent: 2}[r]])
		}
		if got.String() != tc.want {
			t.Errorf("settleRun(%s) = %s, want %s", tc.in, got.String(), tc.want)
		}
	}
}

// TestKeptLinesThreshold: a line is frequent when its class occurs more
// than 5 times in the other file, twice that from 256 lines on.
func TestKeptLinesThreshold(t *testing.T) {
	for _, tc := range []struct {
		lines, count int
		kept         bool
	}{
		{9, 5, true}, {9, 6, false}, {255, 6, false}, {256, 10, true}, {256, 11, false},
	} {
		// Line 4 is the one tested, among unique lines (class 0).
		classes := make([]int32, tc.lines)
		classes[4] = 1
		kept := keptLines(classes, []int32{0, int32(tc.count)})
		if kept[4] != tc.kept {
			t.Errorf("%d lines, %d occurrences in the other file: kept = %v, want %v", tc.lines, tc.count, kept[4], tc.kept)
		}
	}
}

// TestAlignLinesValid checks alignments of random files: the lines left
// unchanged must be the same in both, in order, and with no line set
// aside as frequent (files of at most 5 lines) the alignment must be a
// shortest one. With a tiny work budget the alignment is coarser but
// still valid.
func TestAlignLinesValid(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for i := range 3000 {
		budget := defaultDiffBudget
		if i%3 == 2 {
			budget = 1 + r.Intn(20)
		}
		maxLines := []int{5, 40}[i%2]
		alpha := 1 + r.Intn(6)
		gen := func() [][]byte {
			ls := make([][]byte, r.Intn(maxLines+1))
			for k := range ls {
				ls[k] = []byte{byte('a' + r.Intn(alpha)), '\n'}
			}
			return ls
		}
		a, b := gen(), gen()
		ca, cb := make([]bool, len(a)), make([]bool, len(b))
		func() {
			defer func(old int) { diffBudget = old }(diffBudget)
			diffBudget = budget
			alignLines(a, b, ca, cb)
		}()
		name := fmt.Sprintf("case %d (budget %d): %q → %q", i, budget, a, b)
		keptA, keptB := unchanged(a, ca), unchanged(b, cb)
		if keptA != keptB {
			t.Fatalf("%s: unchanged lines differ: %q vs %q", name, keptA, keptB)
		}
		if maxLines == 5 && budget == defaultDiffBudget {
			if got, want := len(keptA)/2, lcsLength(a, b); got != want {
				t.Fatalf("%s: %d lines kept, a shortest alignment keeps %d", name, got, want)
			}
		}
	}
}

func unchanged(lines [][]byte, changed []bool) string {
	var b strings.Builder
	for i, l := range lines {
		if !changed[i] {
			b.Write(l)
		}
	}
	return b.String()
}

func lcsLength(a, b [][]byte) int {
	prev := make([]int, len(b)+1)
	for i := range a {
		cur := make([]int, len(b)+1)
		for j := range b {
			if string(a[i]) == string(b[j]) {
				cur[j+1] = prev[j] + 1
			} else {
				cur[j+1] = max(prev[j+1], cur[j])
			}
		}
		prev = cur
	}
	return prev[len(b)]
}

// BenchmarkUnifiedDiffRewrite: whole-file diff of an 8000-line file with
// half of its lines common ones ("}", "", ...), about a third of its lines
// deleted and many inserted: a heavy rewrite with many equal lines.
func BenchmarkUnifiedDiffRewrite(b *testing.B) {
	r := rand.New(rand.NewSource(1))
	common := []string{"", "}", "\t}", "\treturn nil", "\tif err != nil {", "\t\treturn err", "{", ")"}
	var old, new strings.Builder
	for i := range 8000 {
		line := fmt.Sprintf("\tx%d := f(%d)\n", i, r.Intn(100))
		if r.Intn(2) == 0 {
			line = common[r.Intn(len(common))] + "\n"
		}
		old.WriteString(line)
		if r.Intn(2) == 0 {
			if r.Intn(2) == 0 {
				new.WriteString(common[r.Intn(len(common))] + "\n")
			} else {
				fmt.Fprintf(&new, "\ty%d := g(%d)\n", i, r.Intn(100))
			}
		}
		if r.Intn(3) != 0 {
			new.WriteString(line)
		}
	}
	o, n := []byte(old.String()), []byte(new.String())
	b.SetBytes(int64(len(o)))
	b.ReportAllocs()
	for b.Loop() {
		UnifiedDiff("/f", o, n)
	}
}
