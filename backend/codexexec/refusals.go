package codexexec

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/codexacp/codexacp/codex"
	"github.com/codexacp/codexacp/events"
	"github.com/codexacp/codexacp/internal/regularfile"
)

// Commands codex exec refused (approval policy never) leave no JSONL item,
// only records in the thread's rollout (events.RefusalScanner). An exec
// turn follows the part of the rollout it appends: before each event codex
// prints (codex wrote the refused call's output before the model's next
// item) and once more after codex exited (everything flushed), so that the
// editor sees each refused command as a failed tool call, in its place.

// maxRolloutLine bounds one rollout record kept while it is read: a
// refused call and its output are short; longer records (a file's
// content in a tool call, a command's output) are skipped.
const maxRolloutLine = 1 << 20

// rolloutReadSize is how much of the rollout one read takes: the buffer a
// tail keeps for its turn (a poll runs before every JSONL event).
const rolloutReadSize = 64 << 10

// rolloutLookups bounds how often a turn looks for a new thread's rollout
// before codex has exited (codex may create it after thread.started).
const rolloutLookups = 3

// refusalTail follows one exec turn's part of a thread's rollout. It is
// used by the goroutine running the turn only.
type refusalTail struct {
	find    func(threadID string) (string, error)
	log     *slog.Logger
	observe func(threadID, path string, record []byte) // nil: none
	thread  string
	lookups int
	f       *os.File
	path    string
	off     int64  // where this turn's records start, then how far they were read
	buf     []byte // what one read takes, made at the first read
	line    []byte
	skip    bool // dropping the rest of an overlong record
	scanner events.RefusalScanner
	turnID  string // codex's id of the turn, from its turn_context record
}

// turnContextID is the turn id of a rollout's turn_context record (codex
// writes one as a turn starts), read without decoding other records.
func turnContextID(rec []byte) (string, bool) {
	if !bytes.Contains(rec, []byte(`"turn_context"`)) {
		return "", false
	}
	var r struct {
		Type    string `json:"type"`
		Payload struct {
			TurnID string `json:"turn_id"`
		} `json:"payload"`
	}
	if json.Unmarshal(rec, &r) != nil || r.Type != "turn_context" || r.Payload.TurnID == "" {
		return "", false
	}
	return r.Payload.TurnID, true
}

// turnContextRecord is what a recording keeps of a turn_context record:
// the turn's id, which is all a replay's tail reads of it (the rest is
// the turn's settings and instructions).
func turnContextRecord(turnID string) []byte {
	b, _ := json.Marshal(map[string]any{"type": "turn_context", "payload": map[string]string{"turn_id": turnID}})
	return b
}

// newRefusalTail starts following a turn of threadID ("" for a new
// thread: set by started): the records after the rollout's current end.
// observe, when set, is given each record the scanner needs
// (events.RefusalScanner.Scan), which a recording keeps so that its replay
// finds the same refused commands.
func newRefusalTail(find func(string) (string, error), threadID string, log *slog.Logger, observe func(threadID, path string, record []byte)) *refusalTail {
	t := &refusalTail{find: find, log: log, observe: observe}
	if threadID != "" {
		t.thread = threadID
		if t.open() {
			if fi, err := t.f.Stat(); err == nil {
				t.off = fi.Size()
			}
		}
	}
	return t
}

// started names the new thread whose rollout this turn writes from its
// first byte.
func (t *refusalTail) started(threadID string) {
	if t.thread == "" {
		t.thread = threadID
	}
}

// open opens the rollout once found; false while there is none.
func (t *refusalTail) open() bool {
	if t.f != nil {
		return true
	}
	if t.thread == "" || t.find == nil {
		return false
	}
	path, err := t.find(t.thread)
	if err != nil {
		return false
	}
	f, _, err := regularfile.Open(path, regularfile.FollowLink)
	if err != nil {
		t.log.Debug("rollout not readable for refused commands", "path", path, "err", err)
		return false
	}
	t.f, t.path = f, path
	return true
}

// poll reads what codex appended since the last poll and hands an event
// to emit for each refused command; final is the poll after codex exited.
func (t *refusalTail) poll(emit func(events.Event), final bool) {
	if final && t.turnID == "" && t.f != nil {
		t.moved()
	}
	if t.f == nil {
		if !final && t.lookups >= rolloutLookups {
			return
		}
		t.lookups++
		if !t.open() {
			return
		}
	}
	if t.buf == nil {
		t.buf = make([]byte, rolloutReadSize)
	}
	for {
		n, err := t.f.ReadAt(t.buf, t.off)
		t.off += int64(n)
		t.feed(t.buf[:n], emit)
		if err != nil || n == 0 {
			if err != nil && err != io.EOF {
				t.log.Debug("reading the rollout for refused commands", "err", err)
			}
			return
		}
	}
}

// feed splits data into records, keeping an unfinished one for later.
func (t *refusalTail) feed(data []byte, emit func(events.Event)) {
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			if !t.skip {
				t.line = append(t.line, data...)
				if len(t.line) > maxRolloutLine {
					t.line, t.skip = t.line[:0], true
				}
			}
			return
		}
		if !t.skip && len(t.line)+i <= maxRolloutLine {
			rec := data[:i]
			if len(t.line) > 0 {
				rec = append(t.line, rec...)
			}
			if id, ok := turnContextID(rec); ok {
				if id != t.turnID {
					// codex's id of the turn, which codex exec does not
					// print: /undo names the turns to cut by it.
					t.turnID = id
					if t.observe != nil {
						t.observe(t.thread, t.path, turnContextRecord(id))
					}
					emit(events.Event{Type: events.TypeTurnStarted, TurnID: id})
				}
				t.line, t.skip = t.line[:0], false
				data = data[i+1:]
				continue
			}
			ev, ok, needed := t.scanner.Scan(rec)
			if needed && t.observe != nil {
				t.observe(t.thread, t.path, rec)
			}
			if ok {
				emit(ev)
			}
		}
		t.line, t.skip = t.line[:0], false
		data = data[i+1:]
	}
}

// moved follows the thread to a newer file when its records went there: a
// thread reverted between turns (ForgetTurns) has codex write the turn to
// a revision file, which may not have existed when the turn started. That
// file holds only the records since the revert: it is read from its start.
func (t *refusalTail) moved() {
	path, err := t.find(t.thread)
	if err != nil || path == t.path {
		return
	}
	f, _, err := regularfile.Open(path, regularfile.FollowLink)
	if err != nil {
		return
	}
	t.f.Close()
	t.f, t.path, t.off = f, path, 0
	t.line, t.skip = t.line[:0], false
}

func (t *refusalTail) close() {
	if t.f != nil {
		t.f.Close()
	}
}

// rolloutFinder finds threads' rollouts under codex's home, remembering
// where: a thread's records go to the same file until it is reverted
// (ForgetTurns), after which they go to a revision file next to it
// (codex.RolloutHead). Safe for concurrent use.
type rolloutFinder struct {
	found   sync.Map // thread id → path
	revised sync.Map // thread id → true: reverted, look for its newest file
}

// reverted forgets where the thread's rollout is: its next records go to
// a revision file, which codex may create only when they come.
func (r *rolloutFinder) reverted(threadID string) {
	r.revised.Store(threadID, true)
	r.found.Delete(threadID)
}

// find looks in today's and yesterday's directories first (codex files a
// new thread under the day it started), then everywhere; for a thread
// reverted, its newest file (codex.RolloutHead), not remembered.
func (r *rolloutFinder) find(threadID string) (string, error) {
	if p, ok := r.found.Load(threadID); ok {
		return p.(string), nil
	}
	home, err := codex.Home()
	if err != nil {
		return "", err
	}
	if _, ok := r.revised.Load(threadID); ok {
		return codex.RolloutHead(home, threadID)
	}
	path := ""
	now := time.Now()
	for _, day := range []time.Time{now, now.AddDate(0, 0, -1)} {
		if strings.ContainsAny(threadID, `/\*?[`) {
			break
		}
		m, _ := filepath.Glob(filepath.Join(home, "sessions", day.Format("2006"), day.Format("01"), day.Format("02"), "rollout-*-"+threadID+".jsonl"))
		if len(m) > 0 {
			path = m[len(m)-1]
			break
		}
	}
	if path == "" {
		if path, err = codex.RolloutPath(home, threadID); err != nil {
			return "", err
		}
	}
	r.found.Store(threadID, path)
	return path, nil
}
