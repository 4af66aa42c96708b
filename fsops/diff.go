package fsops

import (
	"bytes"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// diffContext is the number of unchanged lines shown around a change, as
// with `diff -u`.
const diffContext = 3

// diffTimeout caps the time go-diff spends on one changed region. When it
// runs out the region is reported as deleted and re-inserted as a whole:
// coarser, but the diff still applies.
var diffTimeout = 250 * time.Millisecond

// UnifiedDiff returns the unified diff old → new as GNU `diff -u` prints it
// (3 lines of context, hunks closer than 7 lines merged, "\ No newline at end
// of file" markers) under the headers "--- path" and "+++ path". It returns
// "" when old and new are equal.
//
// Lines common to the start and the end of both files are skipped with plain
// byte comparisons, so a small change in a large file costs little more
// than comparing the two files.
func UnifiedDiff(path string, old, new []byte) string {
	if bytes.Equal(old, new) {
		return ""
	}
	d, _ := diffAndLines(path, old, new, wholeRegion(old, new))
	return d
}

// region is a stretch of old (byte offsets) that was replaced by a stretch
// of new. A diff's regions are sorted and disjoint, and outside them old
// and new are byte-identical, so the first region starts at the same
// offset in both.
type region struct {
	oldStart, oldEnd int
	newStart, newEnd int
}

// wholeRegion is the region of a whole-file change, narrowed to the lines
// that differ.
func wholeRegion(old, data []byte) []region {
	if bytes.Equal(old, data) {
		return nil
	}
	prefix, oldSuffix, newSuffix := commonLineAffixes(old, data)
	return []region{{oldStart: prefix, oldEnd: oldSuffix, newStart: prefix, newEnd: newSuffix}}
}

// affixBlock is how many bytes commonLineAffixes compares at a time before
// looking for the first difference byte by byte.
const affixBlock = 256

// commonLineAffixes returns where the lines that old and new share at their
// start end (the same offset in both) and where the lines they share at
// their end begin in old and in new.
func commonLineAffixes(old, new []byte) (prefix, oldSuffix, newSuffix int) {
	n := min(len(old), len(new))
	k := 0
	for k+affixBlock <= n && bytes.Equal(old[k:k+affixBlock], new[k:k+affixBlock]) {
		k += affixBlock
	}
	for k < n && old[k] == new[k] {
		k++
	}
	// Keep only whole lines: a line that ends inside the common bytes.
	prefix = bytes.LastIndexByte(old[:k], '\n') + 1

	s, limit := 0, n-prefix
	for s+affixBlock <= limit && bytes.Equal(old[len(old)-s-affixBlock:len(old)-s], new[len(new)-s-affixBlock:len(new)-s]) {
		s += affixBlock
	}
	for s < limit && old[len(old)-1-s] == new[len(new)-1-s] {
		s++
	}
	oldSuffix, newSuffix = len(old)-s, len(new)-s
	atLineStart := func(b []byte, at int) bool { return at == prefix || b[at-1] == '\n' }
	if !atLineStart(old, oldSuffix) || !atLineStart(new, newSuffix) {
		// Skip the partial line; the bytes are common, so the same
		// distance moves both to a line start (or to the end).
		nl := bytes.IndexByte(old[oldSuffix:], '\n')
		if nl < 0 {
			return prefix, len(old), len(new)
		}
		oldSuffix += nl + 1
		newSuffix += nl + 1
	}
	return prefix, oldSuffix, newSuffix
}

// diffAndLines aligns an edit's regions (sorted, disjoint, outside which
// old and new are identical) to whole lines and returns the unified diff of
// old → new and the 1-based lines in new where each change starts. Only the
// regions go through the line differ; the lines around them supply context
// and room for GNU's boundary shifting.
func diffAndLines(path string, old, new []byte, regions []region) (string, []int) {
	regions = alignRegions(old, new, regions)
	if len(regions) == 0 {
		return "", nil
	}
	pad := 2 * diffContext
	for {
		s := newDiffSpan(old, new, regions, pad)
		if s.needsMoreRoom() {
			pad *= 4
			continue
		}
		chs := s.changes()
		if len(chs) == 0 {
			return "", nil
		}
		total := countLines(new)
		lines := make([]int, len(chs))
		for i, c := range chs {
			lines[i] = min(max(s.firstLine+c.new+1, 1), max(total, 1))
		}
		return s.format(path, chs), lines
	}
}

// alignRegions widens regions to whole lines, merging those that meet.
func alignRegions(old, new []byte, in []region) []region {
	out := make([]region, 0, len(in))
	for k, r := range in {
		lo := 0
		if len(out) > 0 {
			lo = out[len(out)-1].oldEnd
		}
		// The bytes between lo and the region are the same in old and new,
		// so moving both starts back by the same amount keeps them paired.
		if r.oldStart > lo && old[r.oldStart-1] != '\n' {
			back := r.oldStart - (lo + bytes.LastIndexByte(old[lo:r.oldStart], '\n') + 1)
			r.oldStart -= back
			r.newStart -= back
		}
		if len(out) > 0 && r.oldStart <= lo {
			prev := out[len(out)-1]
			out = out[:len(out)-1]
			r.oldStart, r.newStart = prev.oldStart, prev.newStart
		}
		hi := len(old)
		if k+1 < len(in) {
			hi = in[k+1].oldStart
		}
		if !atLineBoundary(old, r.oldEnd) || !atLineBoundary(new, r.newEnd) {
			adv := hi - r.oldEnd
			if nl := bytes.IndexByte(old[r.oldEnd:hi], '\n'); nl >= 0 {
				adv = nl + 1
			}
			r.oldEnd += adv
			r.newEnd += adv
		}
		out = append(out, r)
	}
	return out
}

// atLineBoundary reports whether pos is where a line starts or the data ends.
func atLineBoundary(data []byte, pos int) bool {
	return pos == 0 || pos == len(data) || data[pos-1] == '\n'
}

// diffSpan holds the lines of old and new from a little before the first
// region to a little after the last, with the changed-line marks of each.
type diffSpan struct {
	firstLine int // 0-based line number of the span's first line (same in both)
	lines     [2][][]byte
	changed   [2][]bool // changed[f][k+1] marks line k; index 0 and len-1 are sentinels
	atStart   bool      // the span begins at the start of the files
	atEnd     bool      // the span ends at the end of the files
}

func newDiffSpan(old, new []byte, regions []region, pad int) *diffSpan {
	first, last := regions[0], regions[len(regions)-1]
	start := linesBack(old, first.oldStart, pad)
	oldEnd := linesForward(old, last.oldEnd, pad)
	newEnd := last.newEnd + (oldEnd - last.oldEnd)

	s := &diffSpan{
		firstLine: bytes.Count(old[:start], []byte{'\n'}),
		atStart:   start == 0,
		atEnd:     oldEnd == len(old),
	}
	s.lines[0] = splitLines(old[start:oldEnd])
	s.lines[1] = splitLines(new[start:newEnd])
	for f := range 2 {
		s.changed[f] = make([]bool, len(s.lines[f])+2)
	}

	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = diffTimeout
	oldLine, newLine := 0, 0 // span line indexes of the current offsets
	oldPos := start
	for _, r := range regions {
		gap := bytes.Count(old[oldPos:r.oldStart], []byte{'\n'})
		oldLine += gap
		newLine += gap
		s.markRegion(dmp, old[r.oldStart:r.oldEnd], new[r.newStart:r.newEnd], oldLine, newLine)
		oldLine += countLines(old[r.oldStart:r.oldEnd])
		newLine += countLines(new[r.newStart:r.newEnd])
		oldPos = r.oldEnd
	}
	s.shiftBoundaries()
	return s
}

// markRegion diffs one region line by line and marks the deleted lines of
// old and the inserted lines of new.
func (s *diffSpan) markRegion(dmp *diffmatchpatch.DiffMatchPatch, a, b []byte, oldLine, newLine int) {
	switch {
	case len(a) == 0:
		s.mark(1, newLine, countLines(b))
		return
	case len(b) == 0:
		s.mark(0, oldLine, countLines(a))
		return
	}
	ra, rb, _ := dmp.DiffLinesToRunes(string(a), string(b))
	// A line that does not occur on the other side is changed in every
	// alignment: mark it at once and leave it out of the line diff. Files
	// rewritten wholesale then cost a set lookup per line instead of
	// go-diff's worst case.
	keptA, idxA := s.keepShared(0, ra, rb, oldLine)
	keptB, idxB := s.keepShared(1, rb, ra, newLine)
	i, j := 0, 0 // indexes into keptA, keptB
	for _, d := range dmp.DiffMainRunes(keptA, keptB, false) {
		n := utf8.RuneCountInString(d.Text)
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			i += n
			j += n
		case diffmatchpatch.DiffDelete:
			for k := i; k < i+n; k++ {
				s.changed[0][oldLine+idxA[k]+1] = true
			}
			i += n
		case diffmatchpatch.DiffInsert:
			for k := j; k < j+n; k++ {
				s.changed[1][newLine+idxB[k]+1] = true
			}
			j += n
		}
	}
}

// keepShared marks the lines of side f (runes, from line `first` on) that
// do not occur in other as changed, and returns the others with their
// indexes.
func (s *diffSpan) keepShared(f int, runes, other []rune, first int) ([]rune, []int) {
	present := make(map[rune]struct{}, len(other))
	for _, r := range other {
		present[r] = struct{}{}
	}
	kept := make([]rune, 0, len(runes))
	idx := make([]int, 0, len(runes))
	for k, r := range runes {
		if _, ok := present[r]; ok {
			kept = append(kept, r)
			idx = append(idx, k)
		} else {
			s.changed[f][first+k+1] = true
		}
	}
	return kept, idx
}

func (s *diffSpan) mark(f, line, n int) {
	for k := line; k < line+n; k++ {
		s.changed[f][k+1] = true
	}
}

// needsMoreRoom reports whether a change lies so close to a cut edge of the
// span that its context or its boundary shifting could reach past it.
func (s *diffSpan) needsMoreRoom() bool {
	for f := range 2 {
		n := len(s.lines[f])
		for k := 0; k < n && k < diffContext+1; k++ {
			if !s.atStart && s.changed[f][k+1] {
				return true
			}
			if !s.atEnd && s.changed[f][n-k] {
				return true
			}
		}
	}
	return false
}

// shiftBoundaries moves runs of changed lines the way GNU diff does before
// printing, so that the output matches `diff -u` where several alignments
// are equally short: runs slide back to merge with earlier runs, then
// forward as far as the text allows, then back again to line up with a run
// of changes in the other file.
func (s *diffSpan) shiftBoundaries() {
	for f := range 2 {
		lines := s.lines[f]
		n := len(lines)
		cur, other := s.changed[f], s.changed[1-f]
		is := func(c []bool, k int) bool { return c[k+1] }
		set := func(c []bool, k int, v bool) { c[k+1] = v }

		i, j := 0, 0 // line in this file, corresponding line in the other
		for {
			// Find the next run, keeping j in step over unchanged lines.
			for i < n && !is(cur, i) {
				for is(other, j) {
					j++
				}
				j++
				i++
			}
			if i == n {
				break
			}
			start := i
			for i++; is(cur, i); i++ {
			}
			for is(other, j) {
				j++
			}

			corresponding := n
			for {
				length := i - start
				// Slide back while the line before the run equals its
				// last line, absorbing earlier runs it meets.
				for start > 0 && bytes.Equal(lines[start-1], lines[i-1]) {
					start--
					set(cur, start, true)
					i--
					set(cur, i, false)
					for start > 0 && is(cur, start-1) {
						start--
					}
					for j--; is(other, j); j-- {
					}
				}
				corresponding = n
				if is(other, j-1) {
					corresponding = i
				}
				// Slide forward while the run's first line equals the
				// line after it, absorbing later runs it meets.
				for i < n && bytes.Equal(lines[start], lines[i]) {
					set(cur, start, false)
					start++
					set(cur, i, true)
					for i++; is(cur, i); i++ {
					}
					for j++; is(other, j); j++ {
						corresponding = i
					}
				}
				if length == i-start {
					break
				}
			}
			// Move back to where the run last lined up with a run in the
			// other file.
			for corresponding < i {
				start--
				set(cur, start, true)
				i--
				set(cur, i, false)
				for j--; is(other, j); j-- {
				}
			}
		}
	}
}

// change is a run of deleted lines in old and inserted lines in new between
// the same pair of unchanged lines (span line indexes).
type change struct {
	old, deleted  int
	new, inserted int
}

func (s *diffSpan) changes() []change {
	var out []change
	n0, n1 := len(s.lines[0]), len(s.lines[1])
	c0, c1 := s.changed[0], s.changed[1]
	i, j := 0, 0
	for i < n0 || j < n1 {
		if !c0[i+1] && !c1[j+1] {
			i++
			j++
			continue
		}
		c := change{old: i, new: j}
		for i < n0 && c0[i+1] {
			i++
		}
		for j < n1 && c1[j+1] {
			j++
		}
		c.deleted, c.inserted = i-c.old, j-c.new
		out = append(out, c)
	}
	return out
}

func (s *diffSpan) format(path string, chs []change) string {
	var b strings.Builder
	b.WriteString("--- ")
	b.WriteString(path)
	b.WriteString("\n+++ ")
	b.WriteString(path)
	b.WriteString("\n")
	n0, n1 := len(s.lines[0]), len(s.lines[1])
	for len(chs) > 0 {
		// A hunk takes changes while fewer than 2*context+1 unchanged
		// lines separate them.
		k := 1
		for k < len(chs) && chs[k].old-(chs[k-1].old+chs[k-1].deleted) <= 2*diffContext {
			k++
		}
		hunk := chs[:k]
		chs = chs[k:]
		first, last := hunk[0], hunk[len(hunk)-1]
		oldFrom := max(first.old-diffContext, 0)
		newFrom := max(first.new-diffContext, 0)
		oldTo := min(last.old+last.deleted+diffContext, n0)
		newTo := min(last.new+last.inserted+diffContext, n1)

		b.WriteString("@@ -")
		writeRange(&b, s.firstLine+oldFrom, oldTo-oldFrom)
		b.WriteString(" +")
		writeRange(&b, s.firstLine+newFrom, newTo-newFrom)
		b.WriteString(" @@\n")

		i := oldFrom
		for _, c := range hunk {
			for ; i < c.old; i++ {
				writeLine(&b, ' ', s.lines[0][i])
			}
			for k := c.old; k < c.old+c.deleted; k++ {
				writeLine(&b, '-', s.lines[0][k])
			}
			for k := c.new; k < c.new+c.inserted; k++ {
				writeLine(&b, '+', s.lines[1][k])
			}
			i = c.old + c.deleted
		}
		for ; i < oldTo; i++ {
			writeLine(&b, ' ', s.lines[0][i])
		}
	}
	return b.String()
}

// writeRange writes a hunk range as GNU diff does: "l,n", just "l" for one
// line, and "l-1,0" (the line before) for none.
func writeRange(b *strings.Builder, from, count int) {
	switch count {
	case 0:
		b.WriteString(strconv.Itoa(from))
		b.WriteString(",0")
	case 1:
		b.WriteString(strconv.Itoa(from + 1))
	default:
		b.WriteString(strconv.Itoa(from + 1))
		b.WriteByte(',')
		b.WriteString(strconv.Itoa(count))
	}
}

func writeLine(b *strings.Builder, tag byte, line []byte) {
	b.WriteByte(tag)
	b.Write(line)
	if len(line) == 0 || line[len(line)-1] != '\n' {
		b.WriteString("\n\\ No newline at end of file\n")
	}
}
