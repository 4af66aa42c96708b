package acp

import (
	"encoding/json"
	"errors"
	"strings"
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

// A client's session/delete (unknown to acp-go-sdk v0.13.0) reaches the
// agent: the record goes, a second delete succeeds, a malformed id is
// -32602; initialize advertises it.
func TestServeSessionDelete(t *testing.T) {
	dir := t.TempDir()
	e := serveRaw(t, Options{Backend: &fakeBackend{}, StateDir: dir})
	e.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":1}}`)
	if m := e.next(t); !strings.Contains(string(m.line), `"sessionCapabilities":{"delete":{}`) {
		t.Fatalf("initialize: %s", m.line)
	}
	st := &sessionStore{dir: dir}
	id := newSessionID()
	if err := st.save(sessionRecord{SessionID: id, ThreadID: "th", Cwd: dir, Mode: ModeAsk}); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		e.send(`{"jsonrpc":"2.0","id":"del","method":"session/delete","params":{"sessionId":"` + id + `"}}`)
		if m := e.next(t); string(m.ID) != `"del"` || m.Error != nil || string(m.Result) != "{}" {
			t.Fatalf("delete %d: %s", i, m.line)
		}
		if _, err := st.load(id); !errors.Is(err, errNoSession) {
			t.Fatalf("record after delete: %v", err)
		}
	}
	e.send(`{"jsonrpc":"2.0","id":"bad","method":"session/delete","params":{"sessionId":"../x"}}`)
	if m := e.next(t); m.Error == nil || m.Error.Code != -32602 {
		t.Fatalf("malformed id: %s", m.line)
	}
}
