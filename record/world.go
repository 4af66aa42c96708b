package record

import (
	"encoding/json"
	"path/filepath"
	"slices"

	"github.com/codexacp/codexacp/fsops"
)

// world is what of the user's machine a recording may show: the
// workspaces the editor named in this recording (session cwds, their
// additional directories, a session/list's cwd). A session/list without a
// cwd makes the agent list every stored session of the user, other
// projects' titles and paths among them; the recorder keeps only those
// whose cwd lies in one of these workspaces, in the answer and in the
// stored records, so that the replay, which recreates only the records
// kept, lists the same. Guarded by Recorder.mu.
type world struct {
	workspaces []string
	lists      map[string]bool   // session/list requests not yet answered, by JSON-RPC id
	loads      map[string]string // session/load, resume, fork requests not yet answered: id → session
}

// sessionMethods name a session's directories in their params.
var sessionMethods = map[string]bool{
	"session/new": true, "session/load": true, "session/resume": true, "session/fork": true, methodSessionList: true,
}

const methodSessionList = "session/list"

// request notes an editor's message.
func (w *world) request(msg json.RawMessage) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Cwd       string   `json:"cwd"`
			Dirs      []string `json:"additionalDirectories"`
			SessionID string   `json:"sessionId"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &m) != nil || !sessionMethods[m.Method] {
		return
	}
	for _, d := range append([]string{m.Params.Cwd}, m.Params.Dirs...) {
		if filepath.IsAbs(d) && !slices.Contains(w.workspaces, d) {
			w.workspaces = append(w.workspaces, d)
		}
	}
	if len(m.ID) == 0 {
		return
	}
	switch m.Method {
	case methodSessionList:
		if w.lists == nil {
			w.lists = map[string]bool{}
		}
		w.lists[string(m.ID)] = true
	case "session/new":
	default:
		if w.loads == nil {
			w.loads = map[string]string{}
		}
		w.loads[string(m.ID)] = m.Params.SessionID
	}
}

// inWorkspace reports whether dir lies in a workspace of the recording.
func (w *world) inWorkspace(dir string) bool {
	return dir != "" && slices.ContainsFunc(w.workspaces, func(ws string) bool { return fsops.Within(ws, dir) })
}

// answer filters the agent's message msg: the answer to a session/list
// keeps the sessions of the recording's workspaces. Other messages come
// back unchanged.
func (w *world) answer(msg json.RawMessage) json.RawMessage {
	if len(w.lists) == 0 && len(w.loads) == 0 {
		return msg
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Method != "" || len(m.ID) == 0 {
		return msg
	}
	delete(w.loads, string(m.ID))
	if !w.lists[string(m.ID)] {
		return msg
	}
	delete(w.lists, string(m.ID))
	v, err := decodeJSON(msg)
	if err != nil {
		return msg
	}
	result, _ := v.(map[string]any)["result"].(map[string]any)
	sessions, ok := result["sessions"].([]any)
	if !ok {
		return msg
	}
	kept := make([]any, 0, len(sessions))
	for _, s := range sessions {
		info, _ := s.(map[string]any)
		cwd, _ := info["cwd"].(string)
		if w.inWorkspace(cwd) {
			kept = append(kept, s)
		}
	}
	if len(kept) == len(sessions) {
		return msg
	}
	result["sessions"] = kept
	out, err := encodeJSON(v)
	if err != nil {
		return msg
	}
	return out
}

// keepStored reports whether a stored file the agent read may be
// recorded: not the record of another workspace's session read for a
// session/list (one being loaded is kept whatever its cwd: the load needs
// it).
func (w *world) keepStored(e *Entry) bool {
	if len(w.lists) == 0 || e.Content == nil {
		return true
	}
	var rec struct {
		SessionID string `json:"sessionId"`
		Cwd       string `json:"cwd"`
	}
	if json.Unmarshal([]byte(*e.Content), &rec) != nil || rec.SessionID == "" {
		return true // not a session record
	}
	for _, loading := range w.loads {
		if loading == rec.SessionID {
			return true
		}
	}
	return w.inWorkspace(rec.Cwd)
}
