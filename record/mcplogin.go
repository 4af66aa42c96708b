package record

import (
	"bytes"
	"encoding/json"
)

// authorizationURLKey is in codex's answer to mcpServer/oauth/login.
var authorizationURLKey = []byte(`"authorizationUrl"`)

// authorizationURLs reads, from a message codex sent, the sign-in page of
// an MCP server's OAuth login (mcpServer/oauth/login's answer). It becomes
// a known secret: until the user signs in, the page's state and PKCE
// challenge let whoever opens it finish the login, and the agent passes it
// to the editor (elicitation/create, or agent text), where it is replaced
// too. The token itself never crosses codex's protocol.
func authorizationURLs(msg json.RawMessage) []string {
	if !bytes.Contains(msg, authorizationURLKey) {
		return nil
	}
	var m struct {
		Result struct {
			AuthorizationURL string `json:"authorizationUrl"`
		} `json:"result"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Result.AuthorizationURL == "" {
		return nil
	}
	return []string{m.Result.AuthorizationURL}
}
