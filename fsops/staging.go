package fsops

import (
	"bytes"
	"fmt"
	"slices"
)

// staging applies the edits of one multi_edit_text_file call in order to an
// in-memory copy of the file. It remembers which text each edit wrote (to
// detect an edit that cuts through another's text) and which stretches of
// the original were replaced (so the diff only looks at those).
//
// To find an edit's matches without scanning the whole content once per
// edit, it searches the original once for every edit's old_string up front;
// an edit's matches are then the original ones that no earlier edit
// touched, plus those found near the replaced stretches.
type staging struct {
	content []byte
	written []written        // text written by earlier edits, in staged offsets
	dirty   []dirty          // replaced stretches, sorted, disjoint, never touching
	orig    map[string][]int // occurrences of each old_string in the original
	// untracked are the old_strings with too many occurrences to list
	// (maxTrackedOccurrences): find searches the staged content for them.
	untracked map[string]bool
	starts    []int  // scratch
	path      string // for messages
}

// written is the text edit wrote, at [start, end) of the staged content.
type written struct {
	start, end int
	edit       int
}

// dirty pairs a stretch of the staged content with the stretch of the
// original it replaced. Outside them the two are identical.
type dirty struct {
	sStart, sEnd int // staged
	oStart, oEnd int // original
}

// maxTrackedOccurrences is how many occurrences of one old_string the
// index lists (8 KiB of offsets); a tests changes it.
var maxTrackedOccurrences = 1024

func newStaging(orig []byte, oldStrings [][]byte) *staging {
	content := make([]byte, len(orig), len(orig)+len(orig)/8+64)
	copy(content, orig)
	occ, untracked := occurrences(orig, oldStrings, maxTrackedOccurrences)
	return &staging{content: content, orig: occ, untracked: untracked}
}

// find returns the first occurrence of oldStr in the staged content and the
// number of non-overlapping occurrences (-1 and 0 when there is none).
func (st *staging) find(oldStr []byte) (first, n int) {
	if st.untracked[string(oldStr)] {
		// A plain scan: no list of its many occurrences is kept.
		if first = bytes.Index(st.content, oldStr); first < 0 {
			return -1, 0
		}
		return first, bytes.Count(st.content, oldStr)
	}
	size := len(oldStr)
	starts := st.starts[:0]
	// Occurrences in the original that no replacement touched, moved by
	// the replacements before them.
	k, shift := 0, 0
	for _, p := range st.orig[string(oldStr)] {
		for k < len(st.dirty) && st.dirty[k].oEnd <= p {
			d := st.dirty[k]
			shift += (d.sEnd - d.sStart) - (d.oEnd - d.oStart)
			k++
		}
		if k < len(st.dirty) && st.dirty[k].oStart < p+size {
			continue // cut by a replacement
		}
		starts = append(starts, p+shift)
	}
	// Occurrences that overlap replaced text (or span a deletion).
	for _, d := range st.dirty {
		lo, hi := max(0, d.sStart-size+1), d.sEnd-1 // range of starts
		if hi < lo {
			continue
		}
		window := st.content[lo:min(len(st.content), hi+size)]
		for _, i := range indexAll(window, oldStr) {
			starts = append(starts, lo+i)
		}
	}
	st.starts = starts
	if len(starts) == 0 {
		return -1, 0
	}
	slices.Sort(starts)
	starts = slices.Compact(starts)
	return starts[0], countNonOverlapping(starts, size)
}

// apply replaces the unique occurrence of oldStr with newStr (edit i) and
// returns the lines the match covered before the replacement.
func (st *staging) apply(i int, oldStr, newStr []byte) (LineRange, error) {
	a, n := st.find(oldStr)
	if n == 0 {
		return LineRange{}, &Error{Code: CodeStringNotFound,
			Message: fmt.Sprintf("Edit %d: String not found: %s", i, oldStr),
			Hint: notFoundHint(st.content, string(oldStr)) +
				" Edits apply in order: each old_string must match the content as the edits before it left it."}
	}
	b := a + len(oldStr)
	if n > 1 {
		return LineRange{}, &Error{Code: CodeMatchCount,
			Message: fmt.Sprintf("Edit %d: String appears %d times: %s", i, n, oldStr),
			Hint: fmt.Sprintf("Edits apply in order to the result of the edits before them. Add surrounding lines to edit %d's "+
				"old_string so that it matches one place only (use edit_text_file with expected_replacements to replace every occurrence).", i)}
	}
	for _, w := range st.written {
		overlaps := a < w.end && w.start < b
		inside := w.start <= a && b <= w.end
		covers := a <= w.start && w.end <= b
		if overlaps && !inside && !covers {
			return LineRange{}, &Error{Code: CodeConflict,
				Message: fmt.Sprintf("Edit %d conflicts with edit %d", i, w.edit),
				Hint: fmt.Sprintf("Edit %d's old_string covers only part of the text edit %d wrote. "+
					"Merge the two edits into one, or make edit %d's old_string cover all or none of edit %d's new_string.", i, w.edit, i, w.edit)}
		}
	}
	delta := len(newStr) - len(oldStr)
	if size := int64(len(st.content)) + int64(delta); size > MaxEditBytes {
		// Sized before it is built: each edit may add up to 8 MiB.
		return LineRange{}, resultTooLargeError(st.path, size)
	}
	lr := matchLines(st.content, a, len(oldStr))
	st.track(i, a, b, len(newStr), delta)
	st.content = slices.Replace(st.content, a, b, newStr...)
	return lr, nil
}

// track updates written and dirty for a replacement of [a, b) by n bytes.
func (st *staging) track(i, a, b, n, delta int) {
	ws := st.written[:0]
	for _, w := range st.written {
		switch {
		case a <= w.start && w.end <= b: // overwritten
			continue
		case w.start <= a && b <= w.end: // the edit is inside it
			w.end += delta
		case w.start >= b:
			w.start += delta
			w.end += delta
		}
		ws = append(ws, w)
	}
	st.written = append(ws, written{start: a, end: a + n, edit: i})

	// Merge the dirty stretches that meet [a, b) into one.
	first, last := len(st.dirty), -1
	cumBefore, cumThrough := 0, 0
	for k, d := range st.dirty {
		shift := (d.sEnd - d.sStart) - (d.oEnd - d.oStart)
		switch {
		case d.sEnd < a:
			cumBefore += shift
			cumThrough += shift
		case d.sStart <= b:
			first = min(first, k)
			last = k
			cumThrough += shift
		}
	}
	ns, ne := a, b
	if last >= 0 {
		ns = min(a, st.dirty[first].sStart)
		ne = max(b, st.dirty[last].sEnd)
	} else {
		first = len(st.dirty)
		for k, d := range st.dirty {
			if d.sStart > b {
				first = k
				break
			}
		}
		last = first - 1
	}
	merged := dirty{sStart: ns, sEnd: ne + delta, oStart: ns - cumBefore, oEnd: ne - cumThrough}
	for k := last + 1; k < len(st.dirty); k++ {
		st.dirty[k].sStart += delta
		st.dirty[k].sEnd += delta
	}
	st.dirty = slices.Replace(st.dirty, first, last+1, merged)
}

// regions returns the replaced stretches as diff regions original → staged.
func (st *staging) regions() []region {
	out := make([]region, len(st.dirty))
	for k, d := range st.dirty {
		out[k] = region{oldStart: d.oStart, oldEnd: d.oEnd, newStart: d.sStart, newEnd: d.sEnd}
	}
	return out
}
