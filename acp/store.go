package acp

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/codexacp/codexacp/events"
)

// sessionRecord is what survives a restart of the agent: enough to list a
// session, load it (history comes from codex's rollout of the thread) and
// resume its codex thread. ThreadID is empty until the first turn.
type sessionRecord struct {
	SessionID             string       `json:"sessionId"`
	ThreadID              string       `json:"threadId,omitempty"`
	Cwd                   string       `json:"cwd"`
	AdditionalDirectories []string     `json:"additionalDirectories,omitempty"`
	Mode                  Mode         `json:"mode"`
	Model                 string       `json:"model,omitempty"`       // chosen in the model picker
	Effort                string       `json:"effort,omitempty"`      // chosen in the effort picker
	ServiceTier           string       `json:"serviceTier,omitempty"` // chosen in the fast-mode picker
	Plan                  bool         `json:"plan,omitempty"`        // collaboration_mode plan
	Title                 string       `json:"title,omitempty"`
	UpdatedAt             time.Time    `json:"updatedAt"`
	ThreadUsage           events.Usage `json:"threadUsage"`
}

// sessionStore keeps one JSON file per session in dir, written atomically.
// Files are small and few; listing reads them all. Next to a record, its
// write log (writelog.go), which listing does not read.
type sessionStore struct {
	dir string

	logMu sync.Mutex // serializes changes to write logs (writelog.go)
}

// errBadSessionID: an id newSessionID cannot have made. It names no file,
// so that no id an editor sends can reach outside the store's directory.
var errBadSessionID = errors.New("malformed session id")

// validSessionID reports whether id has newSessionID's form: "sess_" and 32
// lowercase hex digits.
func validSessionID(id string) bool {
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

func (st *sessionStore) path(id string) (string, error) {
	if !validSessionID(id) {
		return "", fmt.Errorf("%w: %q", errBadSessionID, id)
	}
	return filepath.Join(st.dir, id+".json"), nil
}

func (st *sessionStore) save(rec sessionRecord) error {
	p, err := st.path(rec.SessionID)
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
	return st.replace(p, append(b, '\n'))
}

// replace writes the file at p atomically (a temporary file renamed over
// it): a reader sees the old content or the new, never a mix.
func (st *sessionStore) replace(p string, data []byte) error {
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

var errNoSession = errors.New("no such session")

func (st *sessionStore) load(id string) (sessionRecord, error) {
	p, err := st.path(id)
	if err != nil {
		return sessionRecord{}, err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return sessionRecord{}, errNoSession
	}
	if err != nil {
		return sessionRecord{}, fmt.Errorf("session store: %w", err)
	}
	var rec sessionRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return sessionRecord{}, fmt.Errorf("session store: %s: %w", p, err)
	}
	// The id the editor is given must be the one that names the file.
	if rec.SessionID != id {
		return sessionRecord{}, fmt.Errorf("session store: %s holds session %q", p, rec.SessionID)
	}
	return rec, nil
}

// list returns the stored sessions, newest first; with cwd set, only those
// of that working directory. Unreadable files are skipped.
func (st *sessionStore) list(cwd string) ([]sessionRecord, error) {
	entries, err := os.ReadDir(st.dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("session store: %w", err)
	}
	var out []sessionRecord
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".json") || strings.HasPrefix(name, ".") {
			continue
		}
		rec, err := st.load(strings.TrimSuffix(name, ".json"))
		if err != nil || (cwd != "" && rec.Cwd != cwd) {
			continue
		}
		out = append(out, rec)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].UpdatedAt.After(out[j].UpdatedAt) })
	return out, nil
}

// sessionTitle is the first line of the first prompt, shortened.
func sessionTitle(prompt string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(prompt), "\n")
	line = strings.TrimSpace(line)
	const max = 80
	if r := []rune(line); len(r) > max {
		line = string(r[:max-1]) + "…"
	}
	return line
}

// remove deletes a session's record and its write log; missing ones are
// no error.
func (st *sessionStore) remove(id string) error {
	p, err := st.path(id)
	if err != nil {
		return err
	}
	st.logMu.Lock()
	defer st.logMu.Unlock()
	for _, f := range []string{p, writeLogPath(p)} {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("session store: %w", err)
		}
	}
	return nil
}
