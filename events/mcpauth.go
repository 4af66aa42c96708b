package events

import (
	"encoding/json"
	"strings"
)

// methodMCPStartupStatus is codex's report of an MCP server's start for a
// thread (starting, ready, failed, cancelled).
const methodMCPStartupStatus = "mcpServer/startupStatus/updated"

// MCPSignInNeeded reads an mcpServer/startupStatus/updated notification:
// ok when the server's start failed because the user must sign in to it
// (failureReason reauthenticationRequired, or codex 0.169's "The <name>
// MCP server is not logged in. Run `codex mcp login <name>`.", which comes
// without a reason). thread is the thread it started for.
func MCPSignInNeeded(params json.RawMessage) (thread, server string, ok bool) {
	var p struct {
		ThreadID      string  `json:"threadId"`
		Name          string  `json:"name"`
		Status        string  `json:"status"`
		Error         *string `json:"error"`
		FailureReason *string `json:"failureReason"`
	}
	if json.Unmarshal(params, &p) != nil || p.Name == "" || p.Status != "failed" {
		return "", "", false
	}
	if p.FailureReason != nil && *p.FailureReason == "reauthenticationRequired" {
		return p.ThreadID, p.Name, true
	}
	if p.Error != nil {
		e := strings.ToLower(*p.Error)
		if strings.Contains(e, "not logged in") || strings.Contains(e, "mcp login") {
			return p.ThreadID, p.Name, true
		}
	}
	return "", "", false
}

// MCPSignInMessage tells the user that codex cannot use an MCP server
// until they sign in, and how (the editor's /mcp login, not codex's CLI).
func MCPSignInMessage(server string) string {
	return "MCP server " + server + " needs you to sign in before codex can use its tools: run /mcp login " + server
}

// mcpStartupNotice warns the user, as agent text, of an MCP server that
// did not start for want of a sign-in; other startup reports show nothing
// (a failure codex says more of comes as a warning of its own).
func mcpStartupNotice(params json.RawMessage) ([]Event, error) {
	if _, server, ok := MCPSignInNeeded(params); ok {
		return []Event{{Type: TypeError, Message: MCPSignInMessage(server)}}, nil
	}
	return nil, nil
}
