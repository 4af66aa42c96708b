package stdioguard

import (
	"encoding/json"
	"io"
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
func TestWriterRewritesOnlyInitialize(t *testing.T) {
	var out strings.Builder
	w := &Writer{w: &out, deleteCap: true}
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
	got := renameMethod([]byte(`{"jsonrpc":"2.0","id":7,"method":"session/delete","params":{"sessionId":"s"}}`), "_codexacp/session/delete")
	var m struct {
		ID     int             `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(got, &m); err != nil || m.ID != 7 || m.Method != "_codexacp/session/delete" || string(m.Params) != `{"sessionId":"s"}` {
		t.Errorf("renamed = %s (%v)", got, err)
	}
}

// Options.Initialized is called once, after the answer to the editor's
// initialize request has been written (with or without DeleteCapability),
// and not for other lines.
func TestWriterInitialized(t *testing.T) {
	for _, deleteCap := range []bool{false, true} {
		var out strings.Builder
		var calls []string // what had been written at each call
		_, pw := io.Pipe()
		w, _ := New(&out, pw, Options{DeleteCapability: deleteCap, Initialized: func() { calls = append(calls, out.String()) }})
		w.inits.sent(json.RawMessage(`1`))
		for _, line := range []string{
			`{"jsonrpc":"2.0","method":"session/update","params":{}}` + "\n",
			`{"jsonrpc":"2.0","id":2,"result":{}}` + "\n",
		} {
			w.Write([]byte(line))
		}
		if len(calls) != 0 {
			t.Fatalf("deleteCap %v: called before initialize was answered", deleteCap)
		}
		answer := `{"jsonrpc":"2.0","id":1,"result":{"agentCapabilities":{"sessionCapabilities":{}}}}` + "\n"
		w.Write([]byte(answer))
		w.inits.sent(json.RawMessage(`3`))
		w.Write([]byte(`{"jsonrpc":"2.0","id":3,"result":{"agentCapabilities":{"sessionCapabilities":{}}}}` + "\n"))
		if len(calls) != 1 || !strings.Contains(calls[0], `"id":1`) {
			t.Errorf("deleteCap %v: calls %q, want one, after the answer was written", deleteCap, calls)
		}
	}
}
