package stdioguard

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzGuardInput feeds arbitrary input lines through the input guard, at
// the real line limit and at a tiny one that sends most lines down the
// oversized path. It checks that the guard passes the SDK only what the SDK
// routes safely, answers the editor only with well-formed errors (at most
// one per line), and that the oversized scanner agrees with encoding/json.
// acp's FuzzServe runs this corpus through a real Agent.Serve.
// Fuzz it: go test ./internal/stdioguard/ -run '^$' -fuzz '^FuzzGuardInput$' -fuzztime=10s (CI: .ci/run)
func FuzzGuardInput(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"1"}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}` + "\n" + `{"id":null,"method":"x"}`))
	f.Fuzz(func(t *testing.T, input []byte) {
		if len(input) > 64<<10 {
			return // long input finds nothing short input does not, slower
		}
		lines := bytes.Split(input, []byte("\n"))
		for _, line := range lines {
			checkTopLevelScan(t, line)
		}
		for _, limit := range []int{maxLineBytes, 48} {
			toSDK, toEditor, _ := runGuard(t, input, limit, discardLogger())
			for _, line := range toSDK {
				checkPassed(t, line)
			}
			for _, line := range toEditor {
				checkAnswer(t, line)
			}
			if len(toEditor) > len(lines) {
				t.Fatalf("limit %d: %d answers to %d lines", limit, len(toEditor), len(lines))
			}
		}
	})
}

// checkTopLevelScan compares what topLevel finds in a JSON object with what
// encoding/json reads, where they should agree (keys without escapes), and
// otherwise only runs it.
func checkTopLevelScan(t *testing.T, line []byte) {
	var s topLevel
	step := 1 + len(line)%5
	for in := line; len(in) > 0; in = in[min(step, len(in)):] {
		s.scan(in[:min(step, len(in))])
	}
	trimmed := bytes.TrimSpace(line)
	if !json.Valid(trimmed) || len(trimmed) == 0 || bytes.IndexByte(trimmed, '\\') >= 0 {
		return
	}
	if s.object != (trimmed[0] == '{') {
		t.Fatalf("scan of %q: object = %v", line, s.object)
	}
	var env envelope
	if !s.object || json.Unmarshal(trimmed, &env) != nil {
		return
	}
	method := env.Method != nil && !isNull(env.Method)
	reply := env.Result != nil || env.Error != nil
	var wantID []byte
	if len(env.ID) <= maxIDBytes {
		wantID = compact(env.ID)
	}
	// Raw: the line has no escapes, and the scan keeps bytes as they are
	// (encoding/json would replace invalid UTF-8).
	var wantName []byte
	if m := bytes.TrimSpace(env.Method); len(m) >= 2 && m[0] == '"' && len(m)-2 <= maxKeyBytes {
		wantName = m[1 : len(m)-1]
	}
	if string(s.name) != string(wantName) {
		t.Fatalf("scan of %q: method name %q; encoding/json: %q", line, s.name, env.Method)
	}
	if s.idSeen != (env.ID != nil) || !bytes.Equal(compact(s.id), wantID) || s.method != method || s.reply != reply {
		t.Fatalf("scan of %q: idSeen %v id %q method %v reply %v; encoding/json: id %q method %v reply %v",
			line, s.idSeen, s.id, s.method, s.reply, env.ID, method, reply)
	}
}

func compact(raw []byte) []byte {
	if raw == nil {
		return nil
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// checkPassed fails unless the SDK decodes line and routes it safely: a
// request with a valid id, a response to an id it can key, or
// $/cancel_request (handled inline). Anything else would be dropped without
// an answer, or queued.
func checkPassed(t *testing.T, line []byte) {
	var m sdkMessage
	if len(line) > maxLineBytes || json.Unmarshal(line, &m) != nil {
		t.Fatalf("passed on what the SDK cannot read: %q", line)
	}
	switch {
	case m.ID != nil && m.Method != "" && validID(*m.ID):
	case m.ID != nil && m.Method == "" && routableID(*m.ID) && (m.Result != nil || m.Error != nil):
	case m.ID == nil && m.Method == "$/cancel_request":
	default:
		t.Fatalf("passed on %q", line)
	}
}

// checkAnswer fails unless line is a JSON-RPC error response.
func checkAnswer(t *testing.T, line []byte) {
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if dec.Decode(&m) != nil || m.JSONRPC != "2.0" || !validID(m.ID) || m.Error == nil || m.Error.Code == 0 || m.Error.Message == "" {
		t.Fatalf("answered with %q", line)
	}
}
