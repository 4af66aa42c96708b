package e2e_test

import (
	"os"
	"strings"
	"testing"

	"github.com/codexacp/codexacp/e2e/mockapi"
)

// TestToolsRoute: codex reaches the file tools through the relay with
// CODEXACP_MCP_RELAY=on (codex runs the agent's binary as a stdio MCP
// server, mcp.RunRelay), and over HTTP by default, on both backends; a
// tool call works either way.
func TestToolsRoute(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		eachRoute(t, backend, func(t *testing.T, route string, s setup) {
			e := start(t, s)
			p := e.writeFile("notes.txt", "through the "+route+" route\n")
			e.mock.Enqueue(
				mockapi.Reply(acpCall(t, "call_read", "read_text_file", map[string]any{"path": p})),
				mockapi.Reply(mockapi.Message("read it")),
			)
			if _, err := e.prompt("read notes.txt"); err != nil {
				t.Fatalf("prompt: %v", err)
			}
			if out := toolOutput(t, e, "call_read"); !strings.Contains(out, "through the "+route+" route") {
				t.Errorf("read_text_file output = %q, want the file's content", out)
			}
			relayed := strings.Contains(e.stderr.String(), "mcp host: relay connected")
			if relayed != (route == "relay") {
				t.Errorf("the agent's log says the relay connected: %v, want %v", relayed, route == "relay")
			}
		})
	})
}

// TestOversizeToolCallReachesModel: a tool call larger than the host's
// bound (8 MiB) is refused before any tool runs, on either route, and the
// model is told how to write in parts; the session's tools go on working.
func TestOversizeToolCallReachesModel(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		eachRoute(t, backend, func(t *testing.T, route string, s setup) {
			e := start(t, s)
			p := e.writeFile("big.txt", "small\n")
			e.mock.Enqueue(
				mockapi.Reply(acpCall(t, "call_big", "write_text_file", map[string]any{"path": p, "content": strings.Repeat("x", 9<<20)})),
				mockapi.Reply(acpCall(t, "call_read", "read_text_file", map[string]any{"path": p})),
				mockapi.Reply(mockapi.Message("done")),
			)
			if _, err := e.prompt("write a big file"); err != nil {
				t.Fatalf("prompt: %v", err)
			}
			if out := toolOutput(t, e, "call_big"); !strings.Contains(out, "write a large file in parts") {
				t.Errorf("the oversize call's output = %.300q, want the advice", out)
			}
			if got, err := os.ReadFile(p); err != nil || string(got) != "small\n" {
				t.Errorf("big.txt = %.40q, %v; want it unchanged", got, err)
			}
			if out := toolOutput(t, e, "call_read"); !strings.Contains(out, "small") {
				t.Errorf("the read after it = %.300q, want the file's content", out)
			}
		})
	})
}

// eachRoute runs f as a subtest per route of codex to the file tools: the
// relay (CODEXACP_MCP_RELAY=on) and HTTP (the default).
func eachRoute(t *testing.T, backend string, f func(t *testing.T, route string, s setup)) {
	for _, route := range []string{"relay", "http"} {
		t.Run(route, func(t *testing.T) {
			s := setup{backend: backend}
			if route == "relay" {
				s.env = []string{"CODEXACP_MCP_RELAY=on"}
			}
			f(t, route, s)
		})
	}
}
