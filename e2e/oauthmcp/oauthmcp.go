// Package oauthmcp is a streamable-HTTP MCP server on loopback that needs
// OAuth, together with the OAuth authorization server that signs its users
// in: what a remote MCP server in codex's config looks like to codex, for
// the e2e tests of signing in from the editor (`/mcp login`).
//
// The MCP endpoint (URL) answers 401 with `WWW-Authenticate: Bearer
// resource_metadata=…` until a request carries a token the authorization
// server issued. The authorization server publishes its metadata (RFC 8414)
// and the resource's (RFC 9728), registers clients dynamically (RFC 7591),
// and runs the authorization-code grant with PKCE (S256 only): /authorize
// redirects at once to the client's loopback redirect_uri with a code (no
// page, no user: whoever GETs the authorization URL signs in), and /token
// checks the code verifier before it gives a token. Its one tool, vault,
// answers VaultAnswer.
package oauthmcp

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// VaultAnswer is what the vault tool answers a signed-in caller.
const VaultAnswer = "the vault holds 7 gold bars"

// Server is the MCP server and its authorization server, on one loopback
// listener. Its methods are safe for concurrent use.
type Server struct {
	base string
	srv  *http.Server
	ln   net.Listener

	mu      sync.Mutex
	clients map[string]bool      // registered client ids
	codes   map[string]grant     // authorization codes not yet exchanged
	tokens  map[string]time.Time // access tokens issued, and when they expire
	counts  Counts
}

// grant is what an authorization code stands for.
type grant struct {
	clientID, redirectURI, challenge string
}

// Counts are what the servers saw.
type Counts struct {
	Registrations  int // clients registered
	Authorizations int // codes handed out by /authorize
	Tokens         int // access tokens issued
	Unauthorized   int // MCP requests refused for want of a valid token
	Authorized     int // MCP requests with a valid token
}

// Start listens on 127.0.0.1 and serves until Close.
func Start() (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("oauthmcp: %w", err)
	}
	s := &Server{base: "http://" + ln.Addr().String(), ln: ln,
		clients: map[string]bool{}, codes: map[string]grant{}, tokens: map[string]time.Time{}}

	m := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "oauthmcp", Version: "1.0.0"}, nil)
	mcpsdk.AddTool(m, &mcpsdk.Tool{
		Name:        "vault",
		Description: "Tells what the vault holds (needs the user's sign-in).",
		Annotations: &mcpsdk.ToolAnnotations{ReadOnlyHint: true},
	}, func(context.Context, *mcpsdk.CallToolRequest, struct{}) (*mcpsdk.CallToolResult, any, error) {
		return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: VaultAnswer}}}, nil, nil
	})
	streamable := mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return m }, nil)
	resourceMeta := s.base + "/.well-known/oauth-protected-resource/mcp"
	protected := auth.RequireBearerToken(s.verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: resourceMeta})(streamable)

	mux := http.NewServeMux()
	mux.Handle("/mcp", protected)
	prm := auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: s.URL(), AuthorizationServers: []string{s.base}, BearerMethodsSupported: []string{"header"},
		ResourceName: "oauthmcp"})
	mux.Handle("/.well-known/oauth-protected-resource", prm)
	mux.Handle("/.well-known/oauth-protected-resource/mcp", prm)
	mux.HandleFunc("/.well-known/oauth-authorization-server", s.authServerMeta)
	mux.HandleFunc("/.well-known/oauth-authorization-server/mcp", s.authServerMeta)
	mux.HandleFunc("/.well-known/openid-configuration", s.authServerMeta)
	mux.HandleFunc("POST /register", s.register)
	mux.HandleFunc("GET /authorize", s.authorize)
	mux.HandleFunc("POST /token", s.token)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

// URL is the MCP endpoint, for codex's `mcp_servers.<name>.url`.
func (s *Server) URL() string { return s.base + "/mcp" }

// Close stops serving.
func (s *Server) Close() error { return s.srv.Close() }

// Counts is what the servers saw so far.
func (s *Server) Counts() Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts
}

// Tokens are the access tokens issued so far: a test looks for them where
// they must not be (logs, recordings).
func (s *Server) Tokens() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ts []string
	for t := range s.tokens {
		ts = append(ts, t)
	}
	return ts
}

func (s *Server) verify(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := s.tokens[token]
	if !ok || time.Now().After(exp) {
		s.counts.Unauthorized++
		return nil, auth.ErrInvalidToken
	}
	s.counts.Authorized++
	return &auth.TokenInfo{Expiration: exp}, nil
}

func (s *Server) authServerMeta(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                s.base,
		"authorization_endpoint":                s.base + "/authorize",
		"token_endpoint":                        s.base + "/token",
		"registration_endpoint":                 s.base + "/register",
		"response_types_supported":              []string{"code"},
		"grant_types_supported":                 []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":      []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{"none"},
	})
}

func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	var meta struct {
		RedirectURIs []string `json:"redirect_uris"`
		ClientName   string   `json:"client_name"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&meta); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata", "error_description": err.Error()})
		return
	}
	for _, u := range meta.RedirectURIs {
		if !loopback(u) {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_redirect_uri", "error_description": u})
			return
		}
	}
	id := randomString()
	s.mu.Lock()
	s.clients[id] = true
	s.counts.Registrations++
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{
		"client_id": id, "client_id_issued_at": time.Now().Unix(), "redirect_uris": meta.RedirectURIs,
		"token_endpoint_auth_method": "none", "grant_types": []string{"authorization_code", "refresh_token"},
		"response_types": []string{"code"}, "client_name": meta.ClientName,
	})
}

// authorize signs the caller in at once: it redirects to the client's
// redirect_uri with a code for the PKCE challenge.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	client, redirect, challenge := q.Get("client_id"), q.Get("redirect_uri"), q.Get("code_challenge")
	s.mu.Lock()
	known := s.clients[client]
	s.mu.Unlock()
	switch {
	case q.Get("response_type") != "code":
		http.Error(w, "response_type must be code", http.StatusBadRequest)
		return
	case !known:
		http.Error(w, "unknown client_id", http.StatusBadRequest)
		return
	case !loopback(redirect):
		http.Error(w, "redirect_uri must be a loopback URL", http.StatusBadRequest)
		return
	case challenge == "" || q.Get("code_challenge_method") != "S256":
		http.Error(w, "PKCE with S256 is required", http.StatusBadRequest)
		return
	}
	code := randomString()
	s.mu.Lock()
	s.codes[code] = grant{clientID: client, redirectURI: redirect, challenge: challenge}
	s.counts.Authorizations++
	s.mu.Unlock()
	to, _ := url.Parse(redirect)
	back := to.Query()
	back.Set("code", code)
	if st := q.Get("state"); st != "" {
		back.Set("state", st)
	}
	to.RawQuery = back.Encode()
	http.Redirect(w, r, to.String(), http.StatusFound)
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	f := r.PostForm
	s.mu.Lock()
	defer s.mu.Unlock()
	switch f.Get("grant_type") {
	case "authorization_code":
		g, ok := s.codes[f.Get("code")]
		delete(s.codes, f.Get("code")) // a code is good once
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		switch {
		case !ok:
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant", "error_description": "unknown code"})
			return
		case f.Get("client_id") != "" && f.Get("client_id") != g.clientID:
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant", "error_description": "another client's code"})
			return
		case f.Get("redirect_uri") != g.redirectURI:
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant", "error_description": "redirect_uri differs"})
			return
		case base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge:
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant", "error_description": "code_verifier does not match"})
			return
		}
	case "refresh_token":
		// Any refresh token of ours will do: the fake does not expire them.
		if !strings.HasPrefix(f.Get("refresh_token"), "refresh-") {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
			return
		}
	default:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	token := "oauthmcp-token-" + randomString()
	s.tokens[token] = time.Now().Add(time.Hour)
	s.counts.Tokens++
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token": token, "token_type": "Bearer", "expires_in": 3600,
		"refresh_token": "refresh-" + randomString(),
	})
}

func loopback(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" {
		return false
	}
	ip := net.ParseIP(u.Hostname())
	return u.Hostname() == "localhost" || (ip != nil && ip.IsLoopback())
}

func randomString() string {
	b := make([]byte, 18)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
