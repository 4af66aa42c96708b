package acp

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/internal/sessionstore"
)

// A client's session/delete (unknown to acp-go-sdk v0.13.0) reaches the
// agent: the record goes, a second delete succeeds, a malformed id is
// -32602; initialize advertises it.
func TestServeSessionDelete(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e := serveRaw(t, Options{Backend: &fakeBackend{}, StateDir: dir})
	e.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":1}}`)
	var init struct {
		AgentCapabilities struct {
			SessionCapabilities map[string]json.RawMessage `json:"sessionCapabilities"`
		} `json:"agentCapabilities"`
	}
	if m := e.next(t); json.Unmarshal(m.Result, &init) != nil || string(init.AgentCapabilities.SessionCapabilities["delete"]) != "{}" {
		t.Fatalf("initialize: %s", m.line)
	}
	st := sessionstore.New(dir, nil)
	id := newSessionID()
	if err := st.Save(sessionstore.Record{SessionID: id, ThreadID: "th", Cwd: dir, Mode: string(backend.ModeAsk)}); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		e.send(`{"jsonrpc":"2.0","id":"del","method":"session/delete","params":{"sessionId":"` + id + `"}}`)
		if m := e.next(t); string(m.ID) != `"del"` || m.Error != nil || string(m.Result) != "{}" {
			t.Fatalf("delete %d: %s", i, m.line)
		}
		if _, err := st.Load(id); !errors.Is(err, sessionstore.ErrNoSession) {
			t.Fatalf("record after delete: %v", err)
		}
	}
	e.send(`{"jsonrpc":"2.0","id":"bad","method":"session/delete","params":{"sessionId":"../x"}}`)
	if m := e.next(t); m.Error == nil || m.Error.Code != -32602 {
		t.Fatalf("malformed id: %s", m.line)
	}
}
