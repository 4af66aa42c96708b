// Package bearer is the client side of the agent's tool host authentication:
// an http.RoundTripper that sends "Authorization: Bearer <token>" with every
// request, as codex does (mcp_servers.acp's bearer_token_env_var). The fake
// codex and the tests that talk to the tool host use it.
package bearer

import "net/http"

// Transport adds "Authorization: Bearer <Token>" to every request and sends
// it with Base (http.DefaultTransport when nil). An empty Token sends no
// Authorization header: a client the host must refuse. The caller's request
// is never modified.
type Transport struct {
	Token string
	Base  http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	if t.Token != "" {
		req = req.Clone(req.Context())
		req.Header.Set("Authorization", "Bearer "+t.Token)
	}
	return base.RoundTrip(req)
}

// Client returns an HTTP client that sends token with every request.
func Client(token string) *http.Client {
	return &http.Client{Transport: &Transport{Token: token}}
}
