package fsops

import (
	"bytes"
	"hash/maphash"
	"math"
)

// This file aligns the differing stretches of two files line by line the
// way GNU diff does by default, so that UnifiedDiff prints what `diff -u`
// prints even where several alignments are equally short:
//
//  1. Equal lines get equal class numbers. A line whose class does not
//     occur in the other file is changed in every alignment and is set
//     aside before the comparison; so is a line whose class occurs very
//     often in the other file, when it sits well inside a run of set-aside
//     lines. Setting lines aside makes the comparison cheaper, and it
//     changes which of several shortest alignments is found.
//  2. The remaining lines are compared with the linear-space variant of
//     E. Myers' algorithm ("An O(ND) Difference Algorithm and Its
//     Variations", Algorithmica 1986, section 4b): find the middle snake
//     of a shortest edit script by searching forward from the start and
//     backward from the end at once, then solve the two halves the same
//     way.
//
// The tie-breaking rules (which diagonal a search prefers, which snake is
// reported when several overlap, which lines are set aside) were fixed by
// comparing with the GNU diff binary on many random inputs.

// costCap is the edit cost beyond which one middle-snake search stops
// looking for the exact middle and splits where it got furthest, as GNU
// diff does for very expensive comparisons.
const costCap = 4096

// defaultDiffBudget bounds the work (diagonal steps and line comparisons)
// of one alignment. Past it, what is left is reported as deleted and
// re-inserted as a whole: coarser, but the diff still applies.
const defaultDiffBudget = 50_000_000

// diffBudget is defaultDiffBudget; tests lower it.
var diffBudget = defaultDiffBudget

// alignLines marks the lines of a and b that the alignment does not pair:
// changedA[i] for a[i], changedB[j] for b[j]. The marks must be false on
// entry.
func alignLines(a, b [][]byte, changedA, changedB []bool) {
	classesA, classesB, counts := classify(a, b)
	keepA := keptLines(classesA, counts[1])
	keepB := keptLines(classesB, counts[0])
	al := &aligner{budget: diffBudget}
	al.xs, al.xLine = collectKept(classesA, keepA, changedA)
	al.ys, al.yLine = collectKept(classesB, keepB, changedB)
	al.changedX, al.changedY = changedA, changedB
	al.compare(0, len(al.xs), 0, len(al.ys))
}

// classify numbers the distinct lines of a and b and counts how often each
// class occurs in each.
func classify(a, b [][]byte) (classesA, classesB []int32, counts [2][]int32) {
	t := newClassTable(len(a) + len(b))
	classesA = make([]int32, len(a))
	classesB = make([]int32, len(b))
	for i, l := range a {
		classesA[i] = t.class(l)
	}
	for i, l := range b {
		classesB[i] = t.class(l)
	}
	for f, cs := range [2][]int32{classesA, classesB} {
		counts[f] = make([]int32, len(t.lines))
		for _, c := range cs {
			counts[f][c]++
		}
	}
	return classesA, classesB, counts
}

// classTable assigns class numbers to lines with an open-addressing hash
// table (no allocation per line, unlike a map keyed by string).
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

// Reasons for setting a line aside.
const (
	keep     = iota
	unique   // its class does not occur in the other file
	frequent // its class occurs more than `many` times in the other file
)

// keptLines decides which lines of one file take part in the comparison,
// given how often each class occurs in the other file: false for a line
// that is set aside (and so changed).
func keptLines(classes []int32, otherCounts []int32) []bool {
	n := len(classes)
	// How often is "very often": 5 below 256 lines, then doubling each time
	// the file grows fourfold.
	many := int32(5)
	for t := n / 64; t >= 4; t /= 4 {
		many *= 2
	}
	reason := make([]uint8, n)
	for i, c := range classes {
		switch k := otherCounts[c]; {
		case k == 0:
			reason[i] = unique
		case k > many:
			reason[i] = frequent
		}
	}
	for i := 0; i < n; {
		if reason[i] == keep {
			i++
			continue
		}
		j := i
		for j < n && reason[j] != keep {
			j++
		}
		settleRun(reason[i:j])
		i = j
	}
	kept := make([]bool, n)
	for i, r := range reason {
		kept[i] = r == keep
	}
	return kept
}

// settleRun decides the frequent lines of a run of lines that are all
// unique or frequent: a frequent line stays set aside only well inside
// the run, among unique lines. The others are kept (reason becomes keep).
func settleRun(run []uint8) {
	// Frequent lines at either end of the run are kept.
	for len(run) > 0 && run[0] == frequent {
		run[0] = keep
		run = run[1:]
	}
	for len(run) > 0 && run[len(run)-1] == frequent {
		run[len(run)-1] = keep
		run = run[:len(run)-1]
	}
	n := len(run)
	if n == 0 {
		return
	}
	nFrequent := 0
	for _, r := range run {
		if r == frequent {
			nFrequent++
		}
	}
	if 4*nFrequent > n {
		// Mostly frequent lines: keep them all.
		keepFrequent(run)
		return
	}
	// Keep every stretch of `long` or more frequent lines in a row.
	long := 1
	for t := n / 4; t >= 4; t /= 4 {
		long *= 2
	}
	long++
	for i := 0; i < n; {
		if run[i] != frequent {
			i++
			continue
		}
		j := i
		for j < n && run[j] == frequent {
			j++
		}
		if j-i >= long {
			keepFrequent(run[i:j])
		}
		i = j
	}
	// From each end, keep frequent lines until three unique lines in a row
	// are met, or a unique line at least 8 lines in.
	settleEnd(run, func(k int) int { return k })
	settleEnd(run, func(k int) int { return n - 1 - k })
}

func keepFrequent(run []uint8) {
	for i, r := range run {
		if r == frequent {
			run[i] = keep
		}
	}
}

// settleEnd walks run from one end (at(k) is the k-th line from it).
func settleEnd(run []uint8, at func(int) int) {
	inRow := 0
	for k := range run {
		i := at(k)
		if k >= 8 && run[i] == unique {
			return
		}
		switch run[i] {
		case frequent:
			run[i] = keep
			inRow = 0
		case keep:
			inRow = 0
		default:
			inRow++
			if inRow == 3 {
				return
			}
		}
	}
}

// collectKept returns the classes of the kept lines and their line
// numbers, and marks the others changed.
func collectKept(classes []int32, kept []bool, changed []bool) ([]int32, []int32) {
	xs := make([]int32, 0, len(classes))
	lines := make([]int32, 0, len(classes))
	for i, c := range classes {
		if kept[i] {
			xs = append(xs, c)
			lines = append(lines, int32(i))
		} else {
			changed[i] = true
		}
	}
	return xs, lines
}

// aligner compares the kept lines xs (old) and ys (new). A point (x, y)
// of the edit graph has x lines of xs and y lines of ys behind it; its
// diagonal is x-y. fwd[k+off] and bwd[k+off] hold the x of the furthest
// point the forward and backward searches have reached on diagonal k.
type aligner struct {
	xs, ys             []int32
	xLine, yLine       []int32
	changedX, changedY []bool
	fwd, bwd           []int
	budget             int
}

// compare marks the changed lines between (xoff, yoff) and (xlim, ylim).
func (al *aligner) compare(xoff, xlim, yoff, ylim int) {
	xs, ys := al.xs, al.ys
	for xoff < xlim && yoff < ylim && xs[xoff] == ys[yoff] {
		xoff++
		yoff++
	}
	for xlim > xoff && ylim > yoff && xs[xlim-1] == ys[ylim-1] {
		xlim--
		ylim--
	}
	switch {
	case xoff == xlim:
		for y := yoff; y < ylim; y++ {
			al.changedY[al.yLine[y]] = true
		}
	case yoff == ylim:
		for x := xoff; x < xlim; x++ {
			al.changedX[al.xLine[x]] = true
		}
	case al.budget <= 0:
		for x := xoff; x < xlim; x++ {
			al.changedX[al.xLine[x]] = true
		}
		for y := yoff; y < ylim; y++ {
			al.changedY[al.yLine[y]] = true
		}
	default:
		if al.fwd == nil {
			// Sub-problems lie inside the first box that needs a search.
			n := (xlim - xoff) + (ylim - yoff) + 3
			al.fwd = make([]int, n)
			al.bwd = make([]int, n)
		}
		xmid, ymid := al.middle(xoff, xlim, yoff, ylim)
		if (xmid == xoff && ymid == yoff) || (xmid == xlim && ymid == ylim) {
			// No progress (only conceivable on the capped path): stop here.
			al.budget = 0
			al.compare(xoff, xlim, yoff, ylim)
			return
		}
		al.compare(xoff, xmid, yoff, ymid)
		al.compare(xmid, xlim, ymid, ylim)
	}
}

// middle returns a point on a shortest edit path from (xoff, yoff) to
// (xlim, ylim), which differ at both ends: the end of the middle snake
// when the forward search finds the overlap, its start when the backward
// search does. Past costCap or the budget it returns furthest's point.
func (al *aligner) middle(xoff, xlim, yoff, ylim int) (xmid, ymid int) {
	xs, ys := al.xs, al.ys
	// Diagonals are offset so that the lowest one the box touches, minus
	// one, is index 0.
	off := ylim - xoff + 1
	fwd, bwd := al.fwd, al.bwd
	dmin, dmax := xoff-ylim, xlim-yoff
	fmid, bmid := xoff-yoff, xlim-ylim
	odd := (bmid-fmid)&1 != 0
	fwd[fmid+off] = xoff
	bwd[bmid+off] = xlim
	fmin, fmax := fmid, fmid
	bmin, bmax := bmid, bmid
	work := 0
	defer func() { al.budget -= work }()
	for cost := 1; ; cost++ {
		// Widen the forward diagonals by one on each side while they stay
		// inside the box, else narrow them to keep the parity.
		if fmin > dmin {
			fmin--
			fwd[fmin-1+off] = -1
		} else {
			fmin++
		}
		if fmax < dmax {
			fmax++
			fwd[fmax+1+off] = -1
		} else {
			fmax--
		}
		for k := fmax; k >= fmin; k -= 2 {
			// Step right (a deletion) from diagonal k-1 unless stepping
			// down (an insertion) from k+1 gets further.
			lo, hi := fwd[k-1+off], fwd[k+1+off]
			x := hi
			if lo >= hi {
				x = lo + 1
			}
			y := x - k
			start := x
			for x < xlim && y < ylim && xs[x] == ys[y] {
				x++
				y++
			}
			work += 1 + x - start
			fwd[k+off] = x
			if odd && bmin <= k && k <= bmax && bwd[k+off] <= x {
				return x, y
			}
		}
		if bmin > dmin {
			bmin--
			bwd[bmin-1+off] = math.MaxInt
		} else {
			bmin++
		}
		if bmax < dmax {
			bmax++
			bwd[bmax+1+off] = math.MaxInt
		} else {
			bmax--
		}
		for k := bmax; k >= bmin; k -= 2 {
			// Step up (an insertion, going backward) from diagonal k-1
			// when that gets further back, else left from k+1.
			lo, hi := bwd[k-1+off], bwd[k+1+off]
			x := hi - 1
			if lo < hi {
				x = lo
			}
			y := x - k
			start := x
			for x > xoff && y > yoff && xs[x-1] == ys[y-1] {
				x--
				y--
			}
			work += 1 + start - x
			bwd[k+off] = x
			if !odd && fmin <= k && k <= fmax && x <= fwd[k+off] {
				return x, y
			}
		}
		if cost >= costCap || work >= al.budget {
			return al.furthest(xoff, xlim, yoff, ylim, fmin, fmax, bmin, bmax, off)
		}
	}
}

// furthest picks a split point when the exact middle is too expensive:
// the point the forward or the backward search pushed furthest from its
// corner (the one that left fewer lines to compare), which still lies on
// a valid (if perhaps not shortest) edit path.
func (al *aligner) furthest(xoff, xlim, yoff, ylim, fmin, fmax, bmin, bmax, off int) (int, int) {
	bestF, fx := -1, 0
	for k := fmax; k >= fmin; k -= 2 {
		x := min(al.fwd[k+off], xlim)
		y := x - k
		if y > ylim {
			x, y = ylim+k, ylim
		}
		if x+y > bestF {
			bestF, fx = x+y, x
		}
	}
	bestB, bx := math.MaxInt, 0
	for k := bmax; k >= bmin; k -= 2 {
		x := max(al.bwd[k+off], xoff)
		y := x - k
		if y < yoff {
			x, y = yoff+k, yoff
		}
		if x+y < bestB {
			bestB, bx = x+y, x
		}
	}
	if bestF-(xoff+yoff) >= (xlim+ylim)-bestB {
		return fx, bestF - fx
	}
	return bx, bestB - bx
}
