package acp

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestWithDeleteCapability(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"empty", `{"result":{"agentCapabilities":{"sessionCapabilities":{}}}}`, `{"result":{"agentCapabilities":{"sessionCapabilities":{"delete":{}}}}}`},
		{"others kept", `{"id":1,"result":{"agentCapabilities":{"loadSession":true,"sessionCapabilities":{"close":{}}},"protocolVersion":1}}`,
			`{"id":1,"result":{"agentCapabilities":{"loadSession":true,"sessionCapabilities":{"close":{},"delete":{}}},"protocolVersion":1}}`},
		{"already there", `{"result":{"agentCapabilities":{"sessionCapabilities":{"delete":{}}}}}`, `{"result":{"agentCapabilities":{"sessionCapabilities":{"delete":{}}}}}`},
		{"no session capabilities", `{"result":{"agentCapabilities":{}}}`, `{"result":{"agentCapabilities":{}}}`},
		{"a notification", `{"method":"session/update","params":{}}`, `{"method":"session/update","params":{}}`},
		{"a tool call's input", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"c","rawInput":{"sessionCapabilities":{"list":{}}}}}}`,
			`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"c","rawInput":{"sessionCapabilities":{"list":{}}}}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(withDeleteCapability([]byte(tc.in))); got != tc.want {
				t.Errorf("%s → %s, want %s", tc.in, got, tc.want)
			}
		})
	}
}

// The writer rewrites only the answer to the editor's initialize request,
// and reports the length it was given (io.Writer's contract).
func TestSyncWriterRewritesOnlyInitialize(t *testing.T) {
	var out strings.Builder
	w := &syncWriter{w: &out, deleteCap: true}
	w.inits.sent(json.RawMessage(`"init"`))
	for _, tc := range []struct{ name, line, want string }{
		{"a tool call quoting capabilities", `{"jsonrpc":"2.0","method":"session/update","params":{"update":{"rawInput":{"result":{"agentCapabilities":{"sessionCapabilities":{}}}}}}}` + "\n", ""},
		{"another request's answer", `{"jsonrpc":"2.0","id":"other","result":{"agentCapabilities":{"sessionCapabilities":{}}}}` + "\n", ""},
		{"initialize's answer", `{"jsonrpc":"2.0","id":"init","result":{"agentCapabilities":{"sessionCapabilities":{"close":{}}}}}` + "\n",
			`{"id":"init","jsonrpc":"2.0","result":{"agentCapabilities":{"sessionCapabilities":{"close":{},"delete":{}}}}}` + "\n"},
		{"a second answer with its id", `{"jsonrpc":"2.0","id":"init","result":{"agentCapabilities":{"sessionCapabilities":{}}}}` + "\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out.Reset()
			n, err := w.Write([]byte(tc.line))
			if err != nil || n != len(tc.line) {
				t.Errorf("Write = %d, %v; want %d, nil", n, err, len(tc.line))
			}
			want := tc.want
			if want == "" {
				want = tc.line
			}
			if out.String() != want {
				t.Errorf("wrote %s\nwant %s", out.String(), want)
			}
		})
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
	var init struct {
		AgentCapabilities struct {
			SessionCapabilities map[string]json.RawMessage `json:"sessionCapabilities"`
		} `json:"agentCapabilities"`
	}
	if m := e.next(t); json.Unmarshal(m.Result, &init) != nil || string(init.AgentCapabilities.SessionCapabilities["delete"]) != "{}" {
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
