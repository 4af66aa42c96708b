package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"

	"github.com/codexacp/codexacp/codex"
	"github.com/codexacp/codexacp/record"
)

// answerConfigRead plays the app-server the agent starts only to read the
// user's sandbox and approval settings and to list skills for the exec
// backend (appserver.ConfigServer): it answers initialize, config/read with the
// settings the recorded agent read (the user_config entry; nothing
// configured without one), and skills/list with the recording's next
// skills entry (none: no skills), and exits when its stdin ends. It takes
// no run number: the recorded runs are the ones that ran turns.
func answerConfigRead(entries []record.Entry, state string, stdin io.Reader, stdout io.Writer) int {
	settings := recordedConfigRead(entries)
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	enc := json.NewEncoder(stdout)
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil || len(m.ID) == 0 {
			continue // initialized, or not a request
		}
		var result any
		switch m.Method {
		case "initialize":
			result = map[string]any{"userAgent": "fakecodex"}
		case "config/read":
			result = settings
		case "skills/list":
			listed, err := nextSkills(entries, state)
			if err != nil {
				_ = enc.Encode(map[string]any{"id": m.ID, "error": map[string]any{"code": -32603, "message": err.Error()}})
				continue
			}
			result = listed
		default:
			_ = enc.Encode(map[string]any{"id": m.ID, "error": map[string]any{"code": -32601, "message": "fakecodex: only config/read and skills/list here"}})
			continue
		}
		_ = enc.Encode(map[string]any{"id": m.ID, "result": result})
	}
	return 0
}

// recordedConfigRead is config/read's answer in a replay, for any cwd: the
// settings the recorded agent read at start (the user_config entry;
// nothing configured without one). A project's own settings are not
// recorded.
func recordedConfigRead(entries []record.Entry) any {
	settings := codex.UserConfig{}.ConfigRead()
	for _, e := range entries {
		if e.Kind == record.KindUserConfig {
			settings = e.Result
		}
	}
	return settings
}

// nextSkills is skills/list's answer from the recording's next skills
// entry (the agent lists a session's skills one session at a time, in the
// recorded order): the entries are claimed in the state directory, as runs
// are. Listings of one workspace that overlap share one request, so a
// replay can list more often than the recording did (two sessions opened
// at once, their listings apart this time): past the recorded ones, the
// last is answered again — in a replay no skill changes.
func nextSkills(entries []record.Entry, state string) (any, error) {
	var recorded []*record.Entry
	for i := range entries {
		if entries[i].Kind == record.KindSkills {
			recorded = append(recorded, &entries[i])
		}
	}
	if len(recorded) == 0 {
		return map[string]any{"data": []any{}}, nil // recorded before skills were listed on exec
	}
	n, err := claimCounter(state, "skills")
	if err != nil {
		return nil, err
	}
	e := recorded[min(n, len(recorded))-1]
	if e.Error != "" {
		return nil, errors.New(e.Error)
	}
	skills := make([]map[string]any, 0, len(e.Skills))
	for _, s := range e.Skills {
		skills = append(skills, map[string]any{"name": s.Name, "description": s.Description, "path": s.Path, "scope": s.Scope, "enabled": true})
	}
	return map[string]any{"data": []any{map[string]any{"cwd": e.Cwd, "skills": skills, "errors": []any{}}}}, nil
}
