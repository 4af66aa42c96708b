package acp

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// FuzzServe runs arbitrary input through a real Agent.Serve and fails
// unless Serve writes only JSON-RPC messages and still answers a request
// afterwards. Its seeds include the input guard's corpus
// (internal/stdioguard's FuzzGuardInput, which checks the guard alone).
// Fuzz it: go test ./acp/ -run '^$' -fuzz '^FuzzServe$' -fuzztime=10s (CI: .ci/run)
func FuzzServe(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"1"}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}` + "\n" + `{"id":null,"method":"x"}`))
	for _, seed := range guardCorpus(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		if len(input) > 64<<10 {
			return // long input finds nothing short input does not, slower
		}
		checkServes(t, input)
	})
}

// guardCorpus reads the input guard's seed corpus (files of the form
// "go test fuzz v1\n[]byte(\"…\")\n").
func guardCorpus(tb testing.TB) [][]byte {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join("..", "internal", "stdioguard", "testdata", "fuzz", "FuzzGuardInput", "*"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("the input guard's corpus: %d files, %v", len(files), err)
	}
	var seeds [][]byte
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			tb.Fatal(err)
		}
		lines := bytes.SplitN(b, []byte("\n"), 3)
		if len(lines) < 2 || string(lines[0]) != "go test fuzz v1" ||
			!bytes.HasPrefix(lines[1], []byte("[]byte(")) || !bytes.HasSuffix(lines[1], []byte(")")) {
			tb.Fatalf("%s: not a corpus file of one []byte", name)
		}
		s, err := strconv.Unquote(string(lines[1][len("[]byte(") : len(lines[1])-1]))
		if err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
		seeds = append(seeds, []byte(s))
	}
	return seeds
}

// checkServes runs input through Agent.Serve and fails unless Serve writes
// only JSON-RPC messages and still answers a request after the input.
func checkServes(t *testing.T, input []byte) {
	e := serveRaw(t, Options{Backend: &fakeBackend{script: playLines()}})
	e.send(string(input))
	e.send(`{"jsonrpc":"2.0","id":"fuzz-probe","method":"initialize","params":{"protocolVersion":1}}`)
	for {
		m := e.next(t) // fails if Serve stopped
		var v struct {
			JSONRPC string `json:"jsonrpc"`
		}
		if json.Unmarshal(m.line, &v) != nil || v.JSONRPC != "2.0" || (m.Method == "" && !validID(m.ID)) {
			t.Fatalf("agent wrote %q", m.line)
		}
		if string(m.ID) == `"fuzz-probe"` && m.Method == "" {
			return
		}
	}
}

// validID reports whether id is a JSON-RPC id: a string, number or null.
func validID(id json.RawMessage) bool {
	if len(id) == 0 {
		return false
	}
	switch id[0] {
	case '"', 'n', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return true
	}
	return false
}
