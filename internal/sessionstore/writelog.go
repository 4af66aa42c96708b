package sessionstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/codexacp/codexacp/events"
	"github.com/codexacp/codexacp/internal/regularfile"
)

// Overwrites in a loaded session's history (docs/sessions.md). Codex's
// rollout has a write_text_file call's arguments (the new text) and its
// result (the new text's hash), not the text the call replaced, so a replay
// from it alone shows no diff. When such a call completes, the session
// keeps the content its tool call showed (the diff the user reviewed) in a
// write log next to its record, <id>.writes.jsonl, one JSON object per
// line; session/load hands the log to events.History, which shows each
// entry on the replayed call of the same path and new text.

const (
	// writeLogEntryMax bounds one kept diff (bytes of its JSON line): a
	// larger whole-file diff is kept as its hunks, and one whose hunks are
	// larger still is not kept (its replay shows the tool's result line).
	writeLogEntryMax = 64 << 10
	// writeLogMax bounds a session's log: the oldest entries go first.
	writeLogMax = 1 << 20
	// writeLogStoreMax bounds the logs of all sessions together: the least
	// recently written go first (pruneWriteLogs).
	writeLogStoreMax = 32 << 20
)

var ErrWriteTooLarge = errors.New("kept diff too large")

// WriteLogPath is the write log of the record at recordPath.
func WriteLogPath(recordPath string) string {
	return strings.TrimSuffix(recordPath, ".json") + ".writes.jsonl"
}

// KeepWrite appends w to the session's write log. A log that would pass
// writeLogMax keeps its newest entries up to half of it, so that the next
// few hundred kilobytes of entries are appends again: the rewrite costs
// about one byte per byte appended, not the whole log per entry. Starting
// a log prunes the store's logs (pruneWriteLogs). Nothing is written for a
// session whose record is gone: session/delete removed it (under logMu)
// and a log written after would outlive it.
func (st *Store) KeepWrite(id string, w events.KnownWrite) error {
	p, err := st.Path(id)
	if err != nil {
		return err
	}
	line, err := json.Marshal(w)
	if err != nil {
		return err
	}
	line = append(line, '\n')
	if len(line) > writeLogEntryMax {
		return fmt.Errorf("%w: %d bytes", ErrWriteTooLarge, len(line))
	}
	st.logMu.Lock()
	defer st.logMu.Unlock()
	if _, err := os.Lstat(p); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return ErrNoSession
		}
		return fmt.Errorf("session store: %w", err)
	}
	lp := WriteLogPath(p)
	info, err := os.Lstat(lp)
	switch {
	case errors.Is(err, os.ErrNotExist):
		st.pruneWriteLogs()
		return appendLine(lp, line)
	case err != nil:
		return fmt.Errorf("session store: %w", err)
	case !info.Mode().IsRegular() || info.Size() > writeLogMax:
		// Not a log codexacp wrote (a link, a FIFO, oversized): replaced
		// by one of this entry; the rename never opens what was there.
		st.logger().Warn("write log replaced: not a regular file within its bound", "log", lp,
			"kind", regularfile.Kind(info.Mode().Type()), "bytes", info.Size())
		return st.replace(lp, line)
	case info.Size()+int64(len(line)) <= writeLogMax:
		return appendLine(lp, line)
	}
	// The newest entries that fit with this one in half the bound.
	data, _, err := readStateFile(lp, writeLogMax)
	if err != nil {
		return fmt.Errorf("session store: %w", err)
	}
	for len(data)+len(line) > writeLogMax/2 {
		_, rest, found := bytes.Cut(data, []byte("\n"))
		if !found {
			rest = nil
		}
		data = rest
	}
	return st.replace(lp, append(bytes.Clone(data), line...))
}

// appendLine appends line to the log at lp, a regular file (created when
// missing; a link or FIFO put there since is refused, not followed or
// waited on). A last line that a crash cut short (no newline at its end)
// is cut off first: the line appended after it would be glued to it and
// lost with it.
func appendLine(lp string, line []byte) error {
	f, _, err := regularfile.OpenFile(lp, os.O_RDWR|os.O_CREATE, 0o600, regularfile.NoFollowLink)
	if err != nil {
		return fmt.Errorf("session store: %w", err)
	}
	err = cutPartialLine(f)
	if err == nil {
		_, err = f.Write(line) // at the end: cutPartialLine seeks there
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("session store: %w", err)
	}
	return nil
}

// cutPartialLine truncates f after its last newline when its last byte is
// not one, and leaves its offset at its end.
func cutPartialLine(f *os.File) error {
	end, err := f.Seek(0, io.SeekEnd)
	if err != nil || end == 0 {
		return err
	}
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, end-1); err != nil {
		return err
	}
	if last[0] == '\n' {
		return nil
	}
	data := make([]byte, end)
	if _, err := f.ReadAt(data, 0); err != nil {
		return err
	}
	keep := int64(bytes.LastIndexByte(data, '\n') + 1)
	if err := f.Truncate(keep); err != nil {
		return err
	}
	_, err = f.Seek(keep, io.SeekStart)
	return err
}

// pruneWriteLogs removes the store's least recently written write logs
// while all of them together pass writeLogStoreMax (each is bounded by
// writeLogMax, but sessions are never pruned). Their sessions' overwrites
// replay without their diffs. Called with logMu held when a log starts:
// the store grows only by new logs once each is at its bound. A failure
// is no error: the logs stay.
func (st *Store) pruneWriteLogs() {
	entries, err := readDir(st.dir)
	if err != nil {
		return
	}
	type logFile struct {
		path string
		size int64
		mod  time.Time
	}
	var logs []logFile
	total := int64(0)
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".writes.jsonl") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		logs = append(logs, logFile{filepath.Join(st.dir, e.Name()), info.Size(), info.ModTime()})
		total += info.Size()
	}
	sort.Slice(logs, func(i, j int) bool { return logs[i].mod.Before(logs[j].mod) })
	for _, l := range logs {
		if total <= writeLogStoreMax {
			break
		}
		if os.Remove(l.path) == nil {
			total -= l.size
		}
	}
}

// Writes reads the session's write log, oldest first; none without one.
// A log that is not a regular file within writeLogMax is an error (the
// caller replays without it).
func (st *Store) Writes(id string) ([]events.KnownWrite, error) {
	p, err := st.Path(id)
	if err != nil {
		return nil, err
	}
	st.logMu.Lock()
	data, _, err := readStateFile(WriteLogPath(p), writeLogMax)
	st.logMu.Unlock()
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("session store: %w", err)
	}
	return decodeWriteLog(data), nil
}

// decodeWriteLog decodes a write log's lines, oldest first. A line that
// does not decode (cut short by a crash) is skipped, and so is one that is
// not an entry KeepWrite writes: without a path or hash, or with content
// that does not encode again (`[{}]` decodes as a content block of no
// type), which a load would fail to send the editor.
func decodeWriteLog(data []byte) []events.KnownWrite {
	var out []events.KnownWrite
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		var w events.KnownWrite
		if len(line) == 0 || json.Unmarshal(line, &w) != nil || w.Path == "" || w.Hash == "" {
			continue
		}
		if _, err := json.Marshal(w.Content); err != nil {
			continue
		}
		out = append(out, w)
	}
	return out
}

// CopyWrites gives the session to the write log of the session from: a
// fork, whose history holds the source's writes.
func (st *Store) CopyWrites(from, to string) error {
	src, err := st.Path(from)
	if err != nil {
		return err
	}
	dst, err := st.Path(to)
	if err != nil {
		return err
	}
	st.logMu.Lock()
	defer st.logMu.Unlock()
	data, _, err := readStateFile(WriteLogPath(src), writeLogMax)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("session store: %w", err)
	}
	if err := os.MkdirAll(st.dir, 0o700); err != nil {
		return fmt.Errorf("session store: %w", err)
	}
	return st.replace(WriteLogPath(dst), data)
}
