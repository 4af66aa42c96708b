package fsops

import (
	"bytes"
	"hash/maphash"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// This file aligns the lines of the edited window with go-diff in line
// mode: each distinct line becomes one rune, go-diff's Myers bisection
// compares the two rune strings, and its result is read back as lines.
//
// go-diff runs in its exact mode (DiffTimeout 0: no half-match heuristic),
// so within the bound the alignment keeps as many lines as possible. The
// bound is a deadline handed to DiffBisect: a search that passes it
// reports what is left of its part as deleted and re-inserted, which is
// coarser but still a correct diff.

// defaultDiffTimeout bounds the time go-diff spends aligning one window.
// Ordinary edits take well under a millisecond; a heavy rewrite of
// thousands of lines tens of milliseconds; only near-random permutations of
// thousands of lines reach it.
const defaultDiffTimeout = 200 * time.Millisecond

// diffTimeout is defaultDiffTimeout; tests change it.
var diffTimeout = defaultDiffTimeout

// maxLineRunes is how many distinct lines can be told apart: the Unicode
// scalar values (the rune strings go through string conversions inside
// go-diff, where a surrogate or an out-of-range rune would become U+FFFD).
const maxLineRunes = utf8.MaxRune + 1 - (0xE000 - 0xD800)

// lineRune is the rune standing for the k-th distinct line, k < maxLineRunes.
func lineRune(k int32) rune {
	if k >= 0xD800 {
		k += 0xE000 - 0xD800 // skip the surrogates
	}
	return rune(k)
}

// alignLines marks the lines of a and b that the alignment does not pair:
// changedA[i] for a[i], changedB[j] for b[j]. The marks must be false on
// entry. It reports whether the deadline passed before the alignment was
// done (so parts of it may have been cut short).
func alignLines(a, b [][]byte, changedA, changedB []bool) (capped bool) {
	if len(a) == 0 || len(b) == 0 {
		markAll(changedA)
		markAll(changedB)
		return false
	}
	classesA, classesB, nClasses := classify(a, b)
	// A line whose class does not occur in the other file is changed in
	// every alignment: mark it now and leave it out of the comparison.
	// This keeps the alignment shortest (the common subsequences are the
	// same) and makes a file rewritten wholesale cost a hash lookup per
	// line. The classes that remain get dense rune numbers.
	const (
		none  = -2 // not seen yet (then: only in b)
		aOnly = -1
	)
	runeOf := make([]int32, nClasses)
	for c := range runeOf {
		runeOf[c] = none
	}
	for _, c := range classesA {
		runeOf[c] = aOnly
	}
	next := int32(0)
	for _, c := range classesB {
		if runeOf[c] == aOnly {
			runeOf[c] = next
			next++
		}
	}
	if int(next) > maxLineRunes {
		// More distinct lines than runes (over a million): no alignment.
		markAll(changedA)
		markAll(changedB)
		return true
	}
	ra, ia := keptRunes(classesA, runeOf, changedA)
	rb, ib := keptRunes(classesB, runeOf, changedB)

	// go-diff's DiffBisect expects no common prefix or suffix.
	p := 0
	for p < len(ra) && p < len(rb) && ra[p] == rb[p] {
		p++
	}
	s := 0
	for s < len(ra)-p && s < len(rb)-p && ra[len(ra)-1-s] == rb[len(rb)-1-s] {
		s++
	}
	ra, ia = ra[p:len(ra)-s], ia[p:len(ia)-s]
	rb, ib = rb[p:len(rb)-s], ib[p:len(ib)-s]
	if len(ra) == 0 || len(rb) == 0 {
		markLines(changedA, ia)
		markLines(changedB, ib)
		return false
	}
	if len(ra) == 1 || len(rb) == 1 {
		// go-diff's own shortcut (DiffBisect cannot take 1 against 1): one
		// line is kept if the other side holds it.
		markLines(changedA, ia)
		markLines(changedB, ib)
		if len(ra) == 1 {
			if k := slices.Index(rb, ra[0]); k >= 0 {
				changedA[ia[0]], changedB[ib[k]] = false, false
			}
		} else if k := slices.Index(ra, rb[0]); k >= 0 {
			changedA[ia[k]], changedB[ib[0]] = false, false
		}
		return false
	}

	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 0 // exact: no half-match shortcut in the recursion
	deadline := time.Now().Add(diffTimeout)
	diffs := dmp.DiffBisect(string(ra), string(rb), deadline)
	i, j := 0, 0 // indexes into ia, ib
	for _, d := range diffs {
		n := utf8.RuneCountInString(d.Text)
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			i += n
			j += n
		case diffmatchpatch.DiffDelete:
			markLines(changedA, ia[i:i+n])
			i += n
		case diffmatchpatch.DiffInsert:
			markLines(changedB, ib[j:j+n])
			j += n
		}
	}
	return time.Now().After(deadline)
}

func markAll(changed []bool) {
	for i := range changed {
		changed[i] = true
	}
}

func markLines(changed []bool, lines []int32) {
	for _, l := range lines {
		changed[l] = true
	}
}

// keptRunes returns the runes of the lines whose class has one (runeOf ≥ 0)
// and their line numbers, and marks the others changed.
func keptRunes(classes []int32, runeOf []int32, changed []bool) ([]rune, []int32) {
	runes := make([]rune, 0, len(classes))
	lines := make([]int32, 0, len(classes))
	for i, c := range classes {
		if r := runeOf[c]; r >= 0 {
			runes = append(runes, lineRune(r))
			lines = append(lines, int32(i))
		} else {
			changed[i] = true
		}
	}
	return runes, lines
}

// classify numbers the distinct lines of a and b (equal lines, equal
// numbers) and returns how many there are.
func classify(a, b [][]byte) (classesA, classesB []int32, n int) {
	t := newClassTable(len(a) + len(b))
	classesA = make([]int32, len(a))
	classesB = make([]int32, len(b))
	for i, l := range a {
		classesA[i] = t.class(l)
	}
	for i, l := range b {
		classesB[i] = t.class(l)
	}
	return classesA, classesB, len(t.lines)
}

// classTable assigns class numbers to lines with an open-addressing hash
// table: no allocation per line, unlike a map keyed by string (go-diff's
// own DiffLinesToRunes builds one, and strings of the whole texts).
type classTable struct {
	seed   maphash.Seed
	slots  []int32 // class+1; 0 is an empty slot
	mask   uint64
	lines  [][]byte // one line of each class
	hashes []uint64 // the hash of each class
}

func newClassTable(n int) *classTable {
	size := 16
	for size < 2*n {
		size *= 2
	}
	return &classTable{seed: maphash.MakeSeed(), slots: make([]int32, size), mask: uint64(size - 1),
		lines: make([][]byte, 0, n), hashes: make([]uint64, 0, n)}
}

func (t *classTable) class(line []byte) int32 {
	h := maphash.Bytes(t.seed, line)
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		c := t.slots[i] - 1
		if c < 0 {
			c = int32(len(t.lines))
			t.slots[i] = c + 1
			t.lines = append(t.lines, line)
			t.hashes = append(t.hashes, h)
			return c
		}
		if t.hashes[c] == h && bytes.Equal(t.lines[c], line) {
			return c
		}
	}
}
