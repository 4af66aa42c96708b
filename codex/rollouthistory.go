package codex

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/codexacp/codexacp/internal/regularfile"
)

// A thread's history is not always one rollout file (measured on the
// pinned codex: docs/undo.md, e2e/codexexec/revert_test.go). Codex's
// "paginated" history numbers each record (ordinal) and, when a thread is
// reverted (thread/revert) or forked (thread/fork), starts a file that
// holds only what comes next, whose session_meta names its base:
//
//	"history_base": {"thread_id": T, "end_ordinal_exclusive": E, "end_byte_offset": B}
//
// the records of thread T's file before ordinal E, which end at byte B of
// that file. A revert's file is named rollout-<time>-<thread>_<revision>.jsonl
// next to the thread's; a fork's is the fork thread's own rollout, based on
// its source's. The history is the chain of those prefixes, then the
// newest file's records. RolloutPath names the thread's first file only.

// maxChain bounds how many files one history is made of (a base naming
// itself, or a cycle, ends there as an error).
const maxChain = 64

// maxMetaLine bounds a rollout's first line (session_meta: codex's base
// instructions, tens of KiB).
const maxMetaLine = 4 << 20

// rolloutFiles returns the files of a thread: its first file, then its
// revisions oldest first (by time in the name, then revision id, a UUIDv7).
func rolloutFiles(home, threadID string) ([]string, error) {
	first, err := RolloutPath(home, threadID)
	if err != nil {
		return nil, err
	}
	revs, err := filepath.Glob(filepath.Join(home, "sessions", "*", "*", "*", "rollout-*-"+threadID+"_*.jsonl"))
	if err != nil {
		return nil, err
	}
	key := func(p string) string { // "<time>-<thread>_<rev>": time, then revision
		name := strings.TrimPrefix(filepath.Base(p), "rollout-")
		tm, _, _ := strings.Cut(name, "-"+threadID+"_")
		_, rev, _ := strings.Cut(name, threadID+"_")
		return tm + " " + rev
	}
	sort.Slice(revs, func(i, j int) bool { return key(revs[i]) < key(revs[j]) })
	return append([]string{first}, revs...), nil
}

// RolloutHead is the file a thread's next records go to: its newest
// revision, or its first file when it has none.
func RolloutHead(home, threadID string) (string, error) {
	files, err := rolloutFiles(home, threadID)
	if err != nil {
		return "", err
	}
	return files[len(files)-1], nil
}

// historyBase is a file's session_meta.history_base.
type historyBase struct {
	ThreadID string `json:"thread_id"`
	End      int64  `json:"end_ordinal_exclusive"`
	Offset   int64  `json:"end_byte_offset"`
}

// segment is the part of one file a history takes: the records whose
// ordinal is in [from, to); to < 0: no upper bound (and, with from 0,
// every line, numbered or not).
type segment struct {
	path     string
	from, to int64
}

// RolloutHistory is a thread's history as one rollout stream: the
// records of its chain of files, each within its bounds, oldest first.
// Files are the files it reads (a recording keeps them).
type RolloutHistory struct {
	Files []string
	// Broken says why the chain could not be followed to its start (a
	// base not found, a loop, past maxChain): the history is then its
	// newest part only, the files resolved up to there.
	Broken error

	segs []segment
	f    *os.File
	br   *bufio.Reader
	seg  segment
	buf  []byte // the rest of a line being read out
}

// OpenRolloutHistory resolves the history of thread threadID under home
// (codex's rollouts, read as codex's own files: links followed, but never
// a FIFO or device) and returns it for reading. A thread whose first
// file names no base and has no revision is that file, as before codex
// paginated its history. A chain that cannot be followed to its start
// gives its newest part, with Broken set; a thread without a rollout, or
// whose newest file cannot be read, is an error.
func OpenRolloutHistory(home, threadID string) (*RolloutHistory, error) {
	head, err := RolloutHead(home, threadID)
	if err != nil {
		return nil, err
	}
	h := &RolloutHistory{}
	var segs []segment
	to := int64(-1)
	seen := map[string]bool{}
	for path := head; ; {
		if seen[path] || len(segs) == maxChain {
			h.Broken = fmt.Errorf("rollout history of %s: the files' bases loop at %s, or are more than %d", threadID, path, maxChain)
			break
		}
		seen[path] = true
		base, err := readHistoryBase(path)
		if err != nil {
			if len(segs) == 0 {
				return nil, err
			}
			h.Broken = fmt.Errorf("rollout history of %s: %w", threadID, err)
			break
		}
		if base == nil {
			segs = append(segs, segment{path: path, from: 0, to: to})
			break
		}
		segs = append(segs, segment{path: path, from: base.End, to: to})
		if base.End == 0 {
			break // nothing before it
		}
		if to < 0 || base.End < to {
			to = base.End
		}
		if path, err = findBase(home, *base, path); err != nil {
			h.Broken = fmt.Errorf("rollout history of %s: %w", threadID, err)
			break
		}
	}
	for i := len(segs) - 1; i >= 0; i-- {
		h.segs = append(h.segs, segs[i])
		h.Files = append(h.Files, segs[i].path)
	}
	return h, nil
}

// readHistoryBase reads a rollout's history_base (nil when it has none).
func readHistoryBase(path string) (*historyBase, error) {
	f, _, err := regularfile.Open(path, regularfile.FollowLink)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	line, err := bufio.NewReader(io.LimitReader(f, maxMetaLine)).ReadBytes('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var meta struct {
		Type    string `json:"type"`
		Payload struct {
			HistoryBase *historyBase `json:"history_base"`
		} `json:"payload"`
	}
	if json.Unmarshal(line, &meta) != nil || meta.Type != "session_meta" {
		return nil, nil // not codex's paginated format: read whole
	}
	b := meta.Payload.HistoryBase
	if b != nil && (b.ThreadID == "" || b.End < 0 || b.Offset < 0) {
		return nil, fmt.Errorf("%s: history_base %+v", path, *b)
	}
	return b, nil
}

// findBase finds the file a history_base names: the file of its thread
// (not child itself) where a line ends at byte Offset and that line's
// ordinal is End-1.
func findBase(home string, b historyBase, child string) (string, error) {
	files, err := rolloutFiles(home, b.ThreadID)
	if err != nil {
		return "", err
	}
	for i := len(files) - 1; i >= 0; i-- {
		if files[i] != child && endsAt(files[i], b.Offset, b.End-1) {
			return files[i], nil
		}
	}
	return "", fmt.Errorf("no file of thread %s has record %d ending at byte %d", b.ThreadID, b.End-1, b.Offset)
}

// endsAt reports whether a line of the file at path ends at byte offset
// (its newline included) and has the ordinal want.
func endsAt(path string, offset, want int64) bool {
	f, fi, err := regularfile.Open(path, regularfile.FollowLink)
	if err != nil || fi.Size() < offset {
		return false
	}
	defer f.Close()
	br := bufio.NewReader(io.LimitReader(f, offset))
	var at int64
	for {
		line, err := br.ReadBytes('\n')
		at += int64(len(line))
		if at == offset && len(line) > 0 && line[len(line)-1] == '\n' {
			o, ok := ordinalOf(line)
			return ok && o == want
		}
		if err != nil || at > offset {
			return false
		}
	}
}

// ordinalOf is a rollout line's ordinal.
func ordinalOf(line []byte) (int64, bool) {
	var rec struct {
		Ordinal *int64 `json:"ordinal"`
	}
	if json.Unmarshal(line, &rec) != nil || rec.Ordinal == nil {
		return 0, false
	}
	return *rec.Ordinal, true
}

// Read reads the history's lines, each segment's in turn.
func (h *RolloutHistory) Read(p []byte) (int, error) {
	for len(h.buf) == 0 {
		if h.br == nil {
			if len(h.segs) == 0 {
				return 0, io.EOF
			}
			h.seg, h.segs = h.segs[0], h.segs[1:]
			f, _, err := regularfile.Open(h.seg.path, regularfile.FollowLink)
			if err != nil {
				return 0, err
			}
			h.f, h.br = f, bufio.NewReader(f)
		}
		line, err := h.br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 && h.takes(line) {
			if line[len(line)-1] != '\n' {
				line = append(line, '\n') // a last line without one: the next file's must not join it
			}
			h.buf = line
		}
		if errors.Is(err, io.EOF) {
			h.f.Close()
			h.f, h.br = nil, nil
		} else if err != nil {
			return 0, err
		}
	}
	n := copy(p, h.buf)
	h.buf = h.buf[n:]
	return n, nil
}

// takes reports whether the current segment keeps line.
func (h *RolloutHistory) takes(line []byte) bool {
	if h.seg.from == 0 && h.seg.to < 0 {
		return true
	}
	o, ok := ordinalOf(line)
	return ok && o >= h.seg.from && (h.seg.to < 0 || o < h.seg.to)
}

// Close closes the file being read.
func (h *RolloutHistory) Close() error {
	if h.f != nil {
		err := h.f.Close()
		h.f, h.br = nil, nil
		return err
	}
	return nil
}
