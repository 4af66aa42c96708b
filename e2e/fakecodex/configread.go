package main

import (
	"bufio"
	"encoding/json"
	"io"
)

// answerConfigRead plays the app-server the agent starts only to read the
// user's sandbox and approval settings (codex.ReadUserConfigOnce): it
// answers initialize and config/read, with nothing configured (recorded
// agents read none), and exits when its stdin ends. It takes no run number:
// the recorded runs are the ones that ran turns.
func answerConfigRead(stdin io.Reader, stdout io.Writer) int {
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
			result = map[string]any{"config": map[string]any{"approval_policy": nil, "sandbox_mode": nil, "sandbox_workspace_write": nil}}
		default:
			_ = enc.Encode(map[string]any{"id": m.ID, "error": map[string]any{"code": -32601, "message": "fakecodex: only config/read here"}})
			continue
		}
		_ = enc.Encode(map[string]any{"id": m.ID, "result": result})
	}
	return 0
}
