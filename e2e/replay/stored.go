package replay

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/codexacp/codexacp/record"
)

// storeDirs are the replay's own state directory (--state-dir) and codex
// home (CODEX_HOME), which stand in for the recording's
// (record.StateDirPlaceholder, record.CodexHomePlaceholder).
type storeDirs struct {
	state, codexHome string
}

// contains reports whether path lies inside one of the directories.
func (d storeDirs) contains(path string) bool {
	for _, dir := range []string{d.state, d.codexHome} {
		if rel, err := filepath.Rel(dir, path); err == nil && filepath.IsLocal(rel) {
			return true
		}
	}
	return false
}

// recreateStored puts the files the agent read to serve a session/list or
// session/load back as the recording found them (session records, codex's
// rollout of a thread), so that the agent's real list and load run. Session
// ids are mapped to the live ones: the record of a session this replay
// created is named after its live id. A file that cannot be recreated ends
// the replay's claim to match: the reason becomes Result.Incomplete.
func (p *player) recreateStored(entries []*record.Entry) {
	for _, e := range entries {
		if err := p.recreate(e); err != nil {
			p.setIncomplete(fmt.Sprintf("recreating a stored file: %v", err))
		}
	}
}

func (p *player) recreate(e *record.Entry) error {
	if !e.Exists {
		return nil // the recorder found it gone: the agent went without it too
	}
	data, err := e.Data()
	if err != nil {
		return err
	}
	path := []byte(e.Path)
	p.mu.Lock()
	for rec, live := range p.sessions {
		path = bytes.ReplaceAll(path, []byte(rec), []byte(live))
		data = bytes.ReplaceAll(data, []byte(`"`+rec+`"`), []byte(`"`+live+`"`))
	}
	p.mu.Unlock()
	target := filepath.Clean(string(path))
	if !p.dirs.contains(target) {
		return fmt.Errorf("%s lies outside the replay's state directory and codex home", e.Path)
	}
	mode := fs.FileMode(e.Mode)
	if mode == 0 {
		mode = 0o600
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
		return err
	}
	return os.WriteFile(target, data, mode)
}
