// Package sessionstore keeps what survives a restart of the agent: one
// record per session (enough to list, load and resume it) and, next to it,
// the session's write log (the diffs its overwrites showed, which codex's
// rollout lacks) and its change sets for /undo (undo.go). It is a directory
// of small JSON files written atomically.
//
// The directory is data, not trust: every file in it is opened without
// following a final symlink, without blocking, and only when it is a
// regular file within its bound.
//
//	st := sessionstore.New(dir, log)
//	err := st.Save(sessionstore.Record{SessionID: id, Cwd: cwd, Mode: "auto"})
//	recs, err := st.List(cwd)
package sessionstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/codexacp/codexacp/events"
	"github.com/codexacp/codexacp/internal/regularfile"
)

// Record is what survives a restart of the agent: enough to list a
// session, load it (history comes from codex's rollout of the thread) and
// resume its codex thread. ThreadID is empty until the first turn.
type Record struct {
	SessionID             string       `json:"sessionId"`
	ThreadID              string       `json:"threadId,omitempty"`
	Cwd                   string       `json:"cwd"`
	AdditionalDirectories []string     `json:"additionalDirectories,omitempty"`
	Mode                  string       `json:"mode"`                  // the session's acp.Mode
	Model                 string       `json:"model,omitempty"`       // chosen in the model picker
	Effort                string       `json:"effort,omitempty"`      // chosen in the effort picker
	ServiceTier           string       `json:"serviceTier,omitempty"` // chosen in the fast-mode picker
	Plan                  bool         `json:"plan,omitempty"`        // collaboration_mode plan
	Title                 string       `json:"title,omitempty"`
	UpdatedAt             time.Time    `json:"updatedAt"`
	ThreadUsage           events.Usage `json:"threadUsage"`

	// Foreign says why the record's file may not be the user's own work
	// (recordForeign): its mode is then not granted (acp's storedMode).
	// Not stored: it is a property of the file, looked at on each load.
	Foreign string `json:"-"`
}

// recordMax bounds a session record's file. Those codexacp writes hold
// ids, a cwd, a title of at most 80 characters and token totals: under
// 1 KiB, a few KiB with many additional directories. The bound leaves room
// for hundreds of those and keeps a listing of planted files cheap.
const recordMax = 256 << 10

// Store keeps one JSON file per session in dir, written atomically.
// Files are small and few; listing reads them all. Next to a record, its
// write log (writelog.go), which listing does not read.
//
// The directory is data, not trust (docs/reliability.md): every file in it
// is opened without following a final symlink (codexacp makes none there),
// without blocking, only when it is a regular file within its bound; what
// is not is skipped with one log line, or refused by name on load.
type Store struct {
	dir string
	log *slog.Logger // nil: slog.Default()

	logMu sync.Mutex // serializes changes to write logs (writelog.go)
}

// New returns the store of the directory dir (made when first written).
// log gets what is skipped or replaced; nil: slog.Default().
func New(dir string, log *slog.Logger) *Store {
	return &Store{dir: dir, log: log}
}

func (st *Store) logger() *slog.Logger {
	if st.log != nil {
		return st.log
	}
	return slog.Default()
}

// ErrBadSessionID: an id newSessionID cannot have made. It names no file,
// so that no id an editor sends can reach outside the store's directory.
var ErrBadSessionID = errors.New("malformed session id")

// ValidSessionID reports whether id has newSessionID's form: "sess_" and 32
// lowercase hex digits.
func ValidSessionID(id string) bool {
	digits, ok := strings.CutPrefix(id, "sess_")
	if !ok || len(digits) != 32 {
		return false
	}
	for _, c := range digits {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func (st *Store) Path(id string) (string, error) {
	if !ValidSessionID(id) {
		return "", fmt.Errorf("%w: %q", ErrBadSessionID, id)
	}
	return filepath.Join(st.dir, id+".json"), nil
}

func (st *Store) Save(rec Record) error {
	p, err := st.Path(rec.SessionID)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(st.dir, 0o700); err != nil {
		return fmt.Errorf("session store: %w", err)
	}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	if len(b)+1 > recordMax {
		// It could not be loaded again.
		return fmt.Errorf("session store: the record of %s is %d bytes, over the limit of %d", rec.SessionID, len(b)+1, recordMax)
	}
	return st.replace(p, append(b, '\n'))
}

// replace writes the file at p atomically (a temporary file renamed over
// it): a reader sees the old content or the new, never a mix.
func (st *Store) replace(p string, data []byte) error {
	tmp, err := os.CreateTemp(st.dir, ".session-*")
	if err != nil {
		return fmt.Errorf("session store: %w", err)
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("session store: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("session store: %w", err)
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return fmt.Errorf("session store: %w", err)
	}
	return nil
}

var ErrNoSession = errors.New("no such session")

// ErrBadRecord is wrapped by the error of a file named like a session's
// record that cannot be one: a link, a FIFO or device, too large, not JSON
// of a record, or a record of another id.
var ErrBadRecord = errors.New("unusable session record")

func (st *Store) Load(id string) (Record, error) {
	p, err := st.Path(id)
	if err != nil {
		return Record{}, err
	}
	b, fi, err := readStateFile(p, recordMax)
	if errors.Is(err, fs.ErrNotExist) {
		return Record{}, ErrNoSession
	}
	if err != nil {
		return Record{}, fmt.Errorf("session store: %w: %w", ErrBadRecord, err)
	}
	rec, err := decodeRecord(b, id)
	if err != nil {
		return Record{}, fmt.Errorf("session store: %w: %s: %w", ErrBadRecord, p, err)
	}
	rec.Foreign = recordForeign(fi)
	return rec, nil
}

// readStateFile reads a file of the state directory: a regular file, not
// a link (codexacp writes none there), opened without blocking, of at most
// max bytes (checked on the opened file before reading, and while reading).
// It returns the file's fstat with its content.
func readStateFile(p string, max int64) ([]byte, fs.FileInfo, error) {
	f, fi, err := regularfile.Open(p, regularfile.NoFollowLink)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	if fi.Size() > max {
		return nil, nil, fmt.Errorf("%s: %w (%d bytes, limit %d)", p, regularfile.ErrTooLarge, fi.Size(), max)
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", p, err)
	}
	if int64(len(b)) > max {
		return nil, nil, fmt.Errorf("%s: %w (grew past the limit of %d bytes while read)", p, regularfile.ErrTooLarge, max)
	}
	return b, fi, nil
}

// decodeRecord decodes the record of session id from a record file's
// content. The id inside must be the one that names the file (the id the
// editor is given), and the thread id, which codex exec is given as an
// argument, must have a thread id's form.
func decodeRecord(b []byte, id string) (Record, error) {
	var rec Record
	if err := json.Unmarshal(b, &rec); err != nil {
		return Record{}, err
	}
	if rec.SessionID != id {
		return Record{}, fmt.Errorf("holds session %q", rec.SessionID)
	}
	if rec.ThreadID != "" && !validThreadID(rec.ThreadID) {
		return Record{}, fmt.Errorf("malformed thread id %q", rec.ThreadID)
	}
	return rec, nil
}

// validThreadID reports whether id can be a codex thread id: codex's are
// UUIDs; letters, digits, '-' and '_' are taken, not starting with '-' (it
// goes on codex exec's command line) and at most 128 bytes.
func validThreadID(id string) bool {
	if id == "" || len(id) > 128 || id[0] == '-' {
		return false
	}
	for _, c := range id {
		if (c < '0' || c > '9') && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && c != '-' && c != '_' {
			return false
		}
	}
	return true
}

// List returns the stored sessions, newest first; with cwd set, only those
// of that working directory. A file named like a record that is not a
// usable one is skipped with one log line; other files are not records.
func (st *Store) List(cwd string) ([]Record, error) {
	entries, err := readDir(st.dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("session store: %w", err)
	}
	var out []Record
	for _, e := range entries {
		name := e.Name()
		id, ok := strings.CutSuffix(name, ".json")
		if e.IsDir() || !ok || !ValidSessionID(id) {
			continue
		}
		rec, err := st.Load(id)
		if err != nil {
			if !errors.Is(err, ErrNoSession) { // gone since the listing
				st.logger().Warn("session record skipped", "err", err)
			}
			continue
		}
		if cwd != "" && rec.Cwd != cwd {
			continue
		}
		out = append(out, rec)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].UpdatedAt.After(out[j].UpdatedAt) })
	return out, nil
}

// Remove deletes a session's record, its write log and its change sets
// (UndoDirPath); missing ones are no error.
func (st *Store) Remove(id string) error {
	p, err := st.Path(id)
	if err != nil {
		return err
	}
	st.logMu.Lock()
	defer st.logMu.Unlock()
	for _, f := range []string{p, WriteLogPath(p)} {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("session store: %w", err)
		}
	}
	// RemoveAll removes a link in its place, never what it points to.
	if err := os.RemoveAll(UndoDirPath(p)); err != nil {
		return fmt.Errorf("session store: %w", err)
	}
	return nil
}
