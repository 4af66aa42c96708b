package fsops

import (
	"bytes"
	"strconv"
	"strings"
)

// diffContext is the number of unchanged lines shown around a change, as
// with `diff -u`.
const diffContext = 3

// UnifiedDiff returns the unified diff old → new (3 lines of context,
// hunks closer than 7 lines merged, "\ No newline at end of file" markers)
// under the headers "--- path" and "+++ path", as GNU `patch` applies it.
// It returns "" when old and new are equal.
//
// Lines common to the start and the end of both files are skipped with
// plain byte comparisons; only the lines in between are aligned, with
// go-diff (see diffalign.go). So a small change in a large file costs
// little more than comparing the two files.
func UnifiedDiff(path string, old, new []byte) string {
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
	prefix, oldSuffix, newSuffix := commonLineAffixes(old, data, 0, 0)
	return []region{{oldStart: prefix, oldEnd: oldSuffix, newStart: prefix, newEnd: newSuffix}}
}

// affixBlock is how many bytes commonLineAffixes compares at a time before
// looking for the first difference byte by byte.
const affixBlock = 256

// commonLineAffixes returns where the lines that old and new share at their
// start end (the same offset in both) and where the lines they share at
// their end begin in old and in new. The caller may know that the first
// `same` bytes are common, and the last `sameEnd`.
func commonLineAffixes(old, new []byte, same, sameEnd int) (prefix, oldSuffix, newSuffix int) {
	n := min(len(old), len(new))
	k := min(same, n)
	for k+affixBlock <= n && bytes.Equal(old[k:k+affixBlock], new[k:k+affixBlock]) {
		k += affixBlock
	}
	for k < n && old[k] == new[k] {
		k++
	}
	// Keep only whole lines: a line that ends inside the common bytes.
	prefix = bytes.LastIndexByte(old[:k], '\n') + 1

	limit := n - prefix
	s := min(sameEnd, limit)
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

// diffAndLines returns the unified diff of old → new and the 1-based lines
// in new where each change starts. regions (sorted, disjoint, outside
// which old and new are identical) only say where to look: the result is
// that of the whole files, but the scan for the lines common to their
// start and end begins at the first and last region instead of at the
// ends of the files, so the cost follows the edited window.
//
// The window is counted before anything is split or aligned: one of more
// than MaxDiffLines lines on either side is not aligned but shown replaced
// whole (coarser, still correct, as when the alignment's deadline passes),
// written straight from the bytes. So the diff's memory is bounded (about
// 100 bytes a line a side when aligned) and its text is at most about twice
// old and new together.
func diffAndLines(path string, old, new []byte, regions []region) (string, []int) {
	if len(regions) == 0 {
		return "", nil
	}
	first, last := regions[0], regions[len(regions)-1]
	prefix, oldSuffix, newSuffix := commonLineAffixes(old, new, first.oldStart, len(old)-last.oldEnd)
	if max(countLines(old[prefix:oldSuffix]), countLines(new[prefix:newSuffix])) > MaxDiffLines {
		return replacedWhole(path, old, new, prefix, oldSuffix, newSuffix)
	}
	s := newDiffSpan(old, new, prefix, oldSuffix)
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

// replacedWhole is the diff of one hunk that deletes old's window
// [prefix, oldSuffix) and inserts new's [prefix, newSuffix), with the usual
// context, formatted from the bytes without splitting them into lines.
func replacedWhole(path string, old, new []byte, prefix, oldSuffix, newSuffix int) (string, []int) {
	start := linesBack(old, prefix, diffContext)
	end := linesForward(old, oldSuffix, diffContext)
	newEnd := end + len(new) - len(old)
	firstLine := bytes.Count(old[:start], []byte{'\n'})
	before := bytes.Count(old[start:prefix], []byte{'\n'})

	var b strings.Builder
	b.Grow(len(old[start:end]) + len(new[prefix:newSuffix]) + countLines(old[start:end]) + countLines(new[prefix:newSuffix]) + 2*len(path) + 64)
	b.WriteString("--- ")
	b.WriteString(path)
	b.WriteString("\n+++ ")
	b.WriteString(path)
	b.WriteString("\n@@ -")
	writeRange(&b, firstLine, countLines(old[start:end]))
	b.WriteString(" +")
	writeRange(&b, firstLine, countLines(new[start:newEnd]))
	b.WriteString(" @@\n")
	writeLines(&b, ' ', old[start:prefix])
	writeLines(&b, '-', old[prefix:oldSuffix])
	writeLines(&b, '+', new[prefix:newSuffix])
	writeLines(&b, ' ', old[oldSuffix:end])
	line := min(max(firstLine+before+1, 1), max(countLines(new), 1))
	return b.String(), []int{line}
}

// writeLines writes each line of data with tag.
func writeLines(b *strings.Builder, tag byte, data []byte) {
	for len(data) > 0 {
		n := bytes.IndexByte(data, '\n') + 1
		if n == 0 {
			n = len(data)
		}
		writeLine(b, tag, data[:n])
		data = data[n:]
	}
}

// diffSpan holds the lines of old and new around the ones that differ,
// with the changed-line marks of each.
type diffSpan struct {
	firstLine int // 0-based line number of the span's first line (same in both)
	lines     [2][][]byte
	changed   [2][]bool // changed[f][k] marks lines[f][k]
}

// newDiffSpan aligns the lines of old from prefix to oldSuffix with those
// of new from prefix to the same distance from its end (the window of
// lines that are not common to the start or the end of both). The span
// has diffContext more lines on either side for the hunks' context.
func newDiffSpan(old, new []byte, prefix, oldSuffix int) *diffSpan {
	start := linesBack(old, prefix, diffContext)
	end := linesForward(old, oldSuffix, diffContext)
	s := &diffSpan{firstLine: bytes.Count(old[:start], []byte{'\n'})}
	before := bytes.Count(old[start:prefix], []byte{'\n'})
	after := countLines(old[oldSuffix:end])
	var window [2][][]byte
	var marks [2][]bool
	for f, data := range [2][]byte{old, new} {
		shift := len(data) - len(old) // moves an offset in old's common suffix to data's
		s.lines[f] = splitLines(data[start : end+shift])
		n := len(s.lines[f])
		s.changed[f] = make([]bool, n)
		window[f] = s.lines[f][before : n-after]
		marks[f] = s.changed[f][before : n-after]
	}
	alignLines(window[0], window[1], marks[0], marks[1])
	return s
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
		if i < n0 && j < n1 && !c0[i] && !c1[j] {
			i++
			j++
			continue
		}
		c := change{old: i, new: j}
		for i < n0 && c0[i] {
			i++
		}
		for j < n1 && c1[j] {
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
