package events

import (
	"encoding/json"
	"testing"
)

func TestMCPSignInNeeded(t *testing.T) {
	for _, tc := range []struct {
		name, params string
		server       string // "": not a sign-in
	}{
		// codex 0.169 against a server answering 401 with resource_metadata
		// (e2e/oauthmcp), before any login.
		{"0.169 not logged in", `{"threadId":"th","name":"vault","status":"failed","error":"The vault MCP server is not logged in. Run ` + "`codex mcp login vault`" + `.","failureReason":null}`, "vault"},
		{"reauthentication", `{"threadId":"th","name":"docs","status":"failed","error":"token expired","failureReason":"reauthenticationRequired"}`, "docs"},
		{"other failure", `{"threadId":"th","name":"vault","status":"failed","error":"connection refused","failureReason":null}`, ""},
		{"starting", `{"threadId":"th","name":"vault","status":"starting","error":null,"failureReason":null}`, ""},
		{"ready", `{"threadId":"th","name":"vault","status":"ready"}`, ""},
		{"no name", `{"status":"failed","failureReason":"reauthenticationRequired"}`, ""},
		{"unreadable", `[1]`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			thread, server, ok := MCPSignInNeeded(json.RawMessage(tc.params))
			if ok != (tc.server != "") || server != tc.server {
				t.Fatalf("MCPSignInNeeded = %q, %q, %v; want %q", thread, server, ok, tc.server)
			}
			if ok && thread != "th" {
				t.Errorf("thread = %q", thread)
			}
			evs, err := NewAppServer().Convert(methodMCPStartupStatus, json.RawMessage(tc.params))
			if err != nil {
				t.Fatal(err)
			}
			if tc.server == "" {
				if len(evs) != 0 {
					t.Errorf("events = %+v, want none", evs)
				}
				return
			}
			if len(evs) != 1 || evs[0].Type != TypeError || evs[0].Message != MCPSignInMessage(tc.server) {
				t.Errorf("events = %+v, want the sign-in warning", evs)
			}
		})
	}
}
