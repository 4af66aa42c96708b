package fsops

import (
	"bytes"
	"fmt"
	"math/rand"
	"slices"
	"testing"
)

// staging.find must agree with a plain search of the staged content after
// any sequence of replacements, including self-overlapping patterns,
// deletions and insertions that create or cut matches.
func TestStagingFindMatchesPlainSearch(t *testing.T) {
	t.Parallel()
	for _, limit := range []int{maxTrackedOccurrences, 2} {
		t.Run(fmt.Sprint("limit ", limit), func(t *testing.T) {
			defer func(old int) { maxTrackedOccurrences = old }(maxTrackedOccurrences)
			maxTrackedOccurrences = limit
			testStagingFindMatchesPlainSearch(t)
		})
	}
}

func testStagingFindMatchesPlainSearch(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	alphabet := []byte("ab\n")
	randText := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[r.Intn(len(alphabet))]
		}
		return b
	}
	for c := range 2000 {
		orig := randText(r.Intn(60))
		var pats [][]byte
		for range 1 + r.Intn(6) {
			pats = append(pats, randText(1+r.Intn(6)))
		}
		st := newStaging(orig, pats)
		plain := slices.Clone(orig)
		for step := range 8 {
			pat := pats[r.Intn(len(pats))]
			first, n := st.find(pat)
			wantFirst, wantN := bytes.Index(plain, pat), bytes.Count(plain, pat)
			if first != wantFirst || n != wantN {
				t.Fatalf("case %d step %d: find(%q) in %q = %d, %d; want %d, %d", c, step, pat, plain, first, n, wantFirst, wantN)
			}
			if n == 0 {
				continue
			}
			// Replace the first match, as apply does, without the
			// uniqueness rule so that the test reaches more states.
			repl := randText(r.Intn(5))
			a, b := first, first+len(pat)
			st.track(step, a, b, len(repl), len(repl)-len(pat))
			st.content = slices.Replace(st.content, a, b, repl...)
			plain = slices.Replace(plain, a, b, repl...)
		}
		if !bytes.Equal(st.content, plain) {
			t.Fatalf("case %d: staged %q, want %q", c, st.content, plain)
		}
		// Outside the regions the original and the staged content agree.
		po, ps := 0, 0
		for _, d := range st.regions() {
			if d.oldStart < po || d.newStart < ps || !bytes.Equal(orig[po:d.oldStart], plain[ps:d.newStart]) {
				t.Fatalf("case %d: region %+v does not follow an unchanged stretch", c, d)
			}
			po, ps = d.oldEnd, d.newEnd
		}
		if !bytes.Equal(orig[po:], plain[ps:]) {
			t.Fatalf("case %d: tails after the last region differ", c)
		}
	}
}

func TestOccurrences(t *testing.T) {
	t.Parallel()
	data := []byte("aaaa abcabc xyzxyz abcabc")
	got, untracked := occurrences(data, [][]byte{[]byte("aa"), []byte("abcabc"), []byte("abcabc"), []byte("zxyz a"), []byte("none!")}, 10)
	want := map[string][]int{"aa": {0, 1, 2}, "abcabc": {5, 19}, "zxyz a": {14}, "none!": nil}
	if fmt.Sprint(got) != fmt.Sprint(want) || len(untracked) != 0 {
		t.Errorf("got %v %v, want %v", got, untracked, want)
	}
	// Over the limit a pattern is not listed, short or long.
	got, untracked = occurrences(data, [][]byte{[]byte("a"), []byte("abcabc"), []byte("xyz")}, 2)
	if fmt.Sprint(got) != fmt.Sprint(map[string][]int{"abcabc": {5, 19}, "xyz": {12, 15}}) || fmt.Sprint(untracked) != "map[a:true]" {
		t.Errorf("limit 2: got %v, untracked %v", got, untracked)
	}
	if got, untracked = occurrences(data, [][]byte{[]byte("abcabc")}, 1); len(got) != 0 || !untracked["abcabc"] {
		t.Errorf("limit 1: got %v, untracked %v", got, untracked)
	}
}
