package fsops

import (
	"bytes"
	"slices"
)

// occurrences finds every occurrence (overlapping ones included) of each
// pattern in data, in one pass for all patterns of 4 bytes or more: a
// rolling hash of the first w bytes of each pattern is looked up in a
// small bitmap, and only hits are compared. This keeps a multi-edit of
// many edits to about one pass over the file instead of one per edit.
// The result maps each pattern to its sorted start offsets. A pattern
// occurring more than limit times is not listed but reported in untracked
// (its offsets would cost 8 bytes each: "a" in an 8 MiB file, 64 MB, and
// a multi-edit may have many such patterns); the caller searches the
// content for it instead.
func occurrences(data []byte, patterns [][]byte, limit int) (out map[string][]int, untracked map[string]bool) {
	out = make(map[string][]int, len(patterns))
	untracked = make(map[string]bool)
	w := 32
	for _, p := range patterns {
		if _, done := out[string(p)]; done || untracked[string(p)] {
			continue
		}
		out[string(p)] = nil
		if len(p) < minHashedPattern {
			if at, ok := indexAllMax(data, p, limit); ok {
				out[string(p)] = at
			} else {
				delete(out, string(p))
				untracked[string(p)] = true
			}
		} else {
			w = min(w, len(p))
		}
	}
	var long [][]byte
	for _, p := range patterns {
		if len(p) >= minHashedPattern && !slices.ContainsFunc(long, func(q []byte) bool { return bytes.Equal(p, q) }) {
			long = append(long, p)
		}
	}
	if len(long) == 0 || len(data) < w {
		return out, untracked
	}

	live := len(long) // long patterns still listed
	var bitmap [1 << (hashBits - 6)]uint64
	byHash := make(map[uint64][]int, len(long))
	for i, p := range long {
		h := rollHash(p[:w])
		bitmap[h>>(64-hashBits)/64] |= 1 << (h >> (64 - hashBits) % 64)
		byHash[h] = append(byHash[h], i)
	}
	var top uint64 = 1 // hashBase^(w-1)
	for range w - 1 {
		top *= hashBase
	}
	h := rollHash(data[:w])
	for pos := 0; ; pos++ {
		if k := h >> (64 - hashBits); bitmap[k/64]&(1<<(k%64)) != 0 {
			for k := 0; k < len(byHash[h]); k++ {
				p := long[byHash[h][k]]
				if pos+len(p) > len(data) || !bytes.Equal(data[pos:pos+len(p)], p) {
					continue
				}
				if len(out[string(p)]) < limit {
					out[string(p)] = append(out[string(p)], pos)
					continue
				}
				// Too many: drop it, and stop looking for it.
				delete(out, string(p))
				untracked[string(p)] = true
				byHash[h] = slices.Delete(byHash[h], k, k+1)
				k--
				if live--; live == 0 {
					return out, untracked
				}
			}
		}
		if pos+w >= len(data) {
			break
		}
		h = (h-uint64(data[pos])*top)*hashBase + uint64(data[pos+w])
	}
	return out, untracked
}

const (
	minHashedPattern = 4
	hashBits         = 16 // bitmap of 2^16 bits
	hashBase         = 0x100000001b3
)

func rollHash(b []byte) uint64 {
	var h uint64
	for _, c := range b {
		h = h*hashBase + uint64(c)
	}
	return h
}

// indexAll returns the start of every occurrence of sub in data,
// overlapping ones included.
func indexAll(data, sub []byte) []int {
	var out []int
	for pos := 0; pos+len(sub) <= len(data); {
		i := bytes.Index(data[pos:], sub)
		if i < 0 {
			break
		}
		out = append(out, pos+i)
		pos += i + 1
	}
	return out
}

// indexAllMax is indexAll, giving up (ok false) past limit occurrences.
func indexAllMax(data, sub []byte, limit int) (at []int, ok bool) {
	for pos := 0; pos+len(sub) <= len(data); {
		i := bytes.Index(data[pos:], sub)
		if i < 0 {
			break
		}
		if len(at) == limit {
			return nil, false
		}
		at = append(at, pos+i)
		pos += i + 1
	}
	return at, true
}

// countNonOverlapping returns how many of the sorted occurrence starts a
// left-to-right scan takes when each occurrence of length n consumes its
// bytes: the count bytes.Count reports.
func countNonOverlapping(starts []int, n int) int {
	count, end := 0, -1
	for _, s := range starts {
		if s >= end {
			count++
			end = s + n
		}
	}
	return count
}
