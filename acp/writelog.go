package acp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/events"
	"github.com/codexacp/codexacp/fsops"
	"github.com/codexacp/codexacp/mcp"
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
)

var errWriteTooLarge = errors.New("kept diff too large")

// writeLogPath is the write log of the record at recordPath.
func writeLogPath(recordPath string) string {
	return strings.TrimSuffix(recordPath, ".json") + ".writes.jsonl"
}

// keepOverwrite keeps what the completed call ch showed (shown), if it
// overwrote a file with write_text_file. A failure costs only the diff in
// a later replay: it is logged.
func (a *Agent) keepOverwrite(s *session, c *mcp.Call, ch *fsops.Change, shown []acpsdk.ToolCallContent) {
	if a.store == nil || ch.Created || ch.Tool != fsops.ToolWriteTextFile || s.isDeleted() {
		return
	}
	w := events.KnownWrite{Path: c.Path, Hash: fsops.HashOf(ch.New), Content: shown}
	err := a.store.keepWrite(s.id, w)
	if errors.Is(err, errWriteTooLarge) {
		if w.Content = hunkContents(ch.Path, ch.Diff); len(w.Content) > 0 {
			err = a.store.keepWrite(s.id, w)
		}
	}
	if err != nil {
		a.log.Info("overwrite's diff not kept; a loaded session shows the write without it", "session", s.id, "path", ch.Path, "err", err)
	}
}

// keepWrite appends w to the session's write log, dropping the oldest
// entries when the log would pass writeLogMax.
func (st *sessionStore) keepWrite(id string, w events.KnownWrite) error {
	p, err := st.path(id)
	if err != nil {
		return err
	}
	line, err := json.Marshal(w)
	if err != nil {
		return err
	}
	line = append(line, '\n')
	if len(line) > writeLogEntryMax {
		return fmt.Errorf("%w: %d bytes", errWriteTooLarge, len(line))
	}
	st.logMu.Lock()
	defer st.logMu.Unlock()
	if err := os.MkdirAll(st.dir, 0o700); err != nil {
		return fmt.Errorf("session store: %w", err)
	}
	lp := writeLogPath(p)
	size := int64(0)
	if info, err := os.Stat(lp); err == nil {
		size = info.Size()
	}
	if size+int64(len(line)) <= writeLogMax {
		f, err := os.OpenFile(lp, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return fmt.Errorf("session store: %w", err)
		}
		_, err = f.Write(line)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("session store: %w", err)
		}
		return nil
	}
	// The newest entries that fit with this one.
	data, err := os.ReadFile(lp)
	if err != nil {
		return fmt.Errorf("session store: %w", err)
	}
	for len(data)+len(line) > writeLogMax {
		_, rest, found := bytes.Cut(data, []byte("\n"))
		if !found {
			rest = nil
		}
		data = rest
	}
	return st.replace(lp, append(bytes.Clone(data), line...))
}

// writes reads the session's write log, oldest first; none without one.
// A line that does not decode (cut short by a crash) is skipped.
func (st *sessionStore) writes(id string) ([]events.KnownWrite, error) {
	p, err := st.path(id)
	if err != nil {
		return nil, err
	}
	st.logMu.Lock()
	data, err := os.ReadFile(writeLogPath(p))
	st.logMu.Unlock()
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("session store: %w", err)
	}
	var out []events.KnownWrite
	for _, line := range bytes.Split(data, []byte("\n")) {
		var w events.KnownWrite
		if len(line) > 0 && json.Unmarshal(line, &w) == nil {
			out = append(out, w)
		}
	}
	return out, nil
}

// copyWrites gives the session to the write log of the session from: a
// fork, whose history holds the source's writes.
func (st *sessionStore) copyWrites(from, to string) error {
	src, err := st.path(from)
	if err != nil {
		return err
	}
	dst, err := st.path(to)
	if err != nil {
		return err
	}
	st.logMu.Lock()
	defer st.logMu.Unlock()
	data, err := os.ReadFile(writeLogPath(src))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("session store: %w", err)
	}
	if err := os.MkdirAll(st.dir, 0o700); err != nil {
		return fmt.Errorf("session store: %w", err)
	}
	return st.replace(writeLogPath(dst), data)
}
