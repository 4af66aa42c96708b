package fsops

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/codexacp/codexacp/internal/stress"
)

// TestAlignLinesShortest checks alignments of random files, most of them
// of 1 to 6 distinct lines where many alignments are equally short: the
// lines left unchanged must be the same in both, in order, and as many as
// in a longest common subsequence. With a deadline already passed the
// alignment is coarser but still valid.
func TestAlignLinesShortest(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for i := range stress.Size(t, 1000, 3000) {
		capped := i%5 == 4
		maxLines := []int{5, 40, 200}[i%3]
		alpha := 1 + r.Intn(6)
		if i%7 == 0 {
			alpha = 1000 // mostly distinct lines
		}
		gen := func() [][]byte {
			ls := make([][]byte, r.Intn(maxLines+1))
			for k := range ls {
				ls[k] = fmt.Appendf(nil, "%d\n", r.Intn(alpha))
			}
			return ls
		}
		a, b := gen(), gen()
		ca, cb := make([]bool, len(a)), make([]bool, len(b))
		func() {
			if capped {
				defer func(old time.Duration) { diffTimeout = old }(diffTimeout)
				diffTimeout = -time.Hour
			}
			alignLines(a, b, ca, cb)
		}()
		name := fmt.Sprintf("case %d (capped %v): %q → %q", i, capped, a, b)
		keptA, keptB := unchanged(a, ca), unchanged(b, cb)
		if keptA != keptB {
			t.Fatalf("%s: unchanged lines differ: %q vs %q", name, keptA, keptB)
		}
		if !capped {
			if got, want := countTrue(ca, false), lcsLength(a, b); got != want {
				t.Fatalf("%s: %d lines kept, a shortest alignment keeps %d", name, got, want)
			}
		}
	}
}

// GNU diff's heuristics may change more lines than needed (here, 3.8 sets
// the old "}" aside because it occurs more than 5 times in the new file);
// go-diff in exact mode does not.
func TestUnifiedDiffShorterThanGNU(t *testing.T) {
	t.Parallel()
	file := func(s string) []byte { return []byte(strings.Join(strings.Fields(s), "\n") + "\n") }
	for _, tc := range []struct {
		old, new string
		gnu      int // lines GNU's diff -u changes
	}{
		// "}" occurs 6 times in the new file, so GNU sets the old one aside.
		{"u1 u2 u3 } u4 u5 u6 u7", "} } } } } }", 14},
	} {
		old, new := file(tc.old), file(tc.new)
		d := UnifiedDiff("/f", old, new)
		body := strings.SplitN(d, "\n", 3)[2] // after the headers
		changed := strings.Count("\n"+body, "\n-") + strings.Count("\n"+body, "\n+")
		if want := len(strings.Fields(tc.old)) + len(strings.Fields(tc.new)) - 2*lcsLength(splitLines(old), splitLines(new)); changed != want || changed >= tc.gnu {
			t.Errorf("%q → %q: %d changed lines, want %d (GNU: %d)\n%s", tc.old, tc.new, changed, want, tc.gnu, d)
		}
		if got, err := applyUnified(old, d); err != nil || string(got) != string(new) {
			t.Errorf("%q → %q: diff does not apply (%v)\n%s", tc.old, tc.new, err, d)
		}
	}
}

// A pathological input (a shuffled 20k-line file: tens of thousands of
// edits in every shortest alignment) hits the bound at the default
// deadline, and the diff still applies.
func TestAlignLinesHitsBound(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	var old, new strings.Builder
	for i, k := range r.Perm(20000) {
		fmt.Fprintf(&old, "line %d\n", i)
		fmt.Fprintf(&new, "line %d\n", k)
	}
	o, n := []byte(old.String()), []byte(new.String())
	a, b := splitLines(o), splitLines(n)
	start := time.Now()
	capped := alignLines(a, b, make([]bool, len(a)), make([]bool, len(b)))
	t.Logf("alignment: %v (bound %v)", time.Since(start), diffTimeout)
	if !capped {
		t.Fatal("the alignment of a shuffled file did not reach the bound")
	}
	// The diff of it, capped sooner (it is the bound's outcome, not its
	// duration, that matters here).
	defer func(old time.Duration) { diffTimeout = old }(diffTimeout)
	diffTimeout = 20 * time.Millisecond
	start = time.Now()
	d := UnifiedDiff("/f", o, n)
	t.Logf("unified diff: %v, %d bytes", time.Since(start), len(d))
	if got, err := applyUnified(o, d); err != nil || string(got) != string(n) {
		t.Fatalf("capped diff does not apply: %v", err)
	}
}

func TestLineRune(t *testing.T) {
	t.Parallel()
	seen := map[rune]bool{}
	for _, k := range []int32{0, 1, 0xD7FF, 0xD800, 0xDFFF, 0xE000, 0xFFFF, maxLineRunes - 1} {
		r := lineRune(k)
		if !utf8.ValidRune(r) || seen[r] {
			t.Errorf("lineRune(%#x) = %#x: invalid or repeated", k, r)
		}
		seen[r] = true
	}
	if lineRune(maxLineRunes-1) != utf8.MaxRune {
		t.Errorf("the last line rune is %#x, want %#x", lineRune(maxLineRunes-1), utf8.MaxRune)
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

func countTrue(marks []bool, v bool) int {
	n := 0
	for _, m := range marks {
		if m == v {
			n++
		}
	}
	return n
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
