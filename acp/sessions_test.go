package acp

import (
	"encoding/json"
	"testing"
)

func TestWithDeleteCapability(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"result":{"agentCapabilities":{"sessionCapabilities":{}}}}`, `{"result":{"agentCapabilities":{"sessionCapabilities":{"delete":{}}}}}`},
		{`{"result":{"agentCapabilities":{"sessionCapabilities":{"close":{}}}}}`, `{"result":{"agentCapabilities":{"sessionCapabilities":{"delete":{},"close":{}}}}}`},
		{`{"method":"session/update","params":{}}`, `{"method":"session/update","params":{}}`},
	} {
		if got := string(withDeleteCapability([]byte(tc.in))); got != tc.want {
			t.Errorf("%s → %s, want %s", tc.in, got, tc.want)
		}
		if !json.Valid(withDeleteCapability([]byte(tc.in))) {
			t.Errorf("%s: invalid JSON", tc.in)
		}
	}
}

func TestRenameMethod(t *testing.T) {
	got := renameMethod([]byte(`{"jsonrpc":"2.0","id":7,"method":"session/delete","params":{"sessionId":"s"}}`), extDeleteSession)
	var m struct {
		ID     int             `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(got, &m); err != nil || m.ID != 7 || m.Method != extDeleteSession || string(m.Params) != `{"sessionId":"s"}` {
		t.Errorf("renamed = %s (%v)", got, err)
	}
}
