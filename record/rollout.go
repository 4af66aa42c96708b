package record

import (
	"bytes"
	"encoding/json"
	"path/filepath"
)

// Rollout records a record of codex's rollout of threadID (the file at
// path) that an exec turn read to find the commands codex refused, which
// codex exec prints nothing for (codexexec.Backend.ObserveRollout): a
// replay's fake codex appends it to a rollout under its own codex home at
// the recorded point, so that the agent finds it as it did. The entry
// belongs to the thread's latest run, which is in progress, or has just
// ended when the agent reads the rollout a last time after codex exited.
func (r *Recorder) Rollout(threadID, path string, line []byte) {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	e := &Entry{Kind: KindRollout, Path: path}
	if json.Valid(line) {
		e.Line = append(json.RawMessage(nil), line...)
	} else {
		e.Text = string(line)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	e.Run = r.threadRuns[threadID]
	r.writeLocked(e)
}

// noteThreadLocked notes which run works on which thread: a resumed one
// (its invocation names it) or a new one (thread.started). r.mu is held.
func (r *Recorder) noteThreadLocked(run int, threadID string) {
	if threadID == "" {
		return
	}
	if r.threadRuns == nil {
		r.threadRuns = map[string]int{}
	}
	r.threadRuns[threadID] = run
}

// startedThread is the thread a codex exec line starts ("" for other
// lines), read without decoding lines that cannot be one.
func startedThread(line []byte) string {
	if !bytes.Contains(line, []byte(`"thread.started"`)) {
		return ""
	}
	var ev struct {
		Type     string `json:"type"`
		ThreadID string `json:"thread_id"`
	}
	if json.Unmarshal(line, &ev) != nil || ev.Type != "thread.started" {
		return ""
	}
	return ev.ThreadID
}
