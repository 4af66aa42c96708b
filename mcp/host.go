package mcp

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxRequestBodyBytes bounds one HTTP request body. A write_text_file
// of a few MiB of text fits (JSON escaping adds little to ordinary text),
// and the limit stays below the 10 MiB line limit of the ACP connection the
// content is forwarded on (fs/write_text_file), so a write the host accepts
// can also reach the editor.
const DefaultMaxRequestBodyBytes = 8 << 20

// shutdownGrace is how long Close lets requests in flight finish.
const shutdownGrace = time.Second

// Path is the URL path the host serves MCP on.
const Path = "/mcp"

// HostOptions configure a Host. The zero value is usable.
type HostOptions struct {
	// MaxRequestBodyBytes bounds a request body; larger requests get 413.
	// 0 means DefaultMaxRequestBodyBytes.
	MaxRequestBodyBytes int64
	// Logger receives the host's logs. nil means slog.Default().
	Logger *slog.Logger
}

// Host serves the MCP servers of all sessions of one agent process over
// streamable HTTP on a loopback port. Each registered server has its own
// bearer token and its own streamable handler (so its MCP sessions cannot be
// addressed with another session's token).
//
// The host runs the http.Server on a goroutine it starts in NewHost; Close
// stops it and waits for that goroutine.
type Host struct {
	ln     net.Listener
	srv    *http.Server
	opts   HostOptions
	served chan struct{} // closed when the serving goroutine returns

	mu       sync.RWMutex
	sessions map[string]*hostSession // by token
	closed   bool
}

// hostSession is one registered server.
type hostSession struct {
	token   string
	server  *sdk.Server
	handler http.Handler
}

// NewHost listens on 127.0.0.1 on a free port and starts serving.
func NewHost(opts *HostOptions) (*Host, error) {
	h := &Host{sessions: make(map[string]*hostSession), served: make(chan struct{})}
	if opts != nil {
		h.opts = *opts
	}
	if h.opts.MaxRequestBodyBytes == 0 {
		h.opts.MaxRequestBodyBytes = DefaultMaxRequestBodyBytes
	}
	if h.opts.Logger == nil {
		h.opts.Logger = slog.Default()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("mcp host: listen: %w", err)
	}
	h.ln = ln
	h.srv = &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(h.opts.Logger.Handler(), slog.LevelWarn),
		// No read/write timeouts: a tool call may wait minutes for the
		// user's permission, and responses stream (SSE).
	}
	go func() {
		defer close(h.served)
		if err := h.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			h.opts.Logger.Error("mcp host stopped", "err", err)
		}
	}()
	return h, nil
}

// URL is the address to give codex, http://127.0.0.1:PORT/mcp.
func (h *Host) URL() string { return "http://" + h.ln.Addr().String() + Path }

// Register makes server reachable with a new random 256-bit token (hex),
// which the client must send as "Authorization: Bearer <token>".
// unregister revokes the token and closes the server's MCP sessions; it is
// safe to call more than once. Registering on a closed host returns a token
// that is never accepted.
func (h *Host) Register(server *sdk.Server) (token string, unregister func()) {
	var b [32]byte
	rand.Read(b[:]) // never fails
	token = hex.EncodeToString(b[:])
	s := &hostSession{
		token:  token,
		server: server,
		// Stateful: codex keeps one MCP session per process (it sends the
		// Mcp-Session-Id it was given and a DELETE at exit), and a live
		// session lets the client cancel an in-flight call. A handler per
		// registered server keeps session ids from crossing tokens.
		handler: sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server },
			&sdk.StreamableHTTPOptions{
				MaxRequestBodyBytes: h.opts.MaxRequestBodyBytes,
				Logger:              h.opts.Logger,
			}),
	}
	h.mu.Lock()
	if !h.closed {
		h.sessions[token] = s
	}
	h.mu.Unlock()
	var once sync.Once
	return token, func() {
		once.Do(func() {
			h.mu.Lock()
			delete(h.sessions, token)
			h.mu.Unlock()
			closeSessions(server)
		})
	}
}

// Close stops serving: it revokes every token, closes the MCP sessions
// (ending their streams), shuts the HTTP server down and waits for the
// serving goroutine.
func (h *Host) Close() error {
	h.mu.Lock()
	already := h.closed
	h.closed = true
	sessions := h.sessions
	h.sessions = make(map[string]*hostSession)
	h.mu.Unlock()
	if already {
		<-h.served
		return nil
	}
	for _, s := range sessions {
		closeSessions(s.server)
	}
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	err := h.srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		// Still busy after the grace period, or opened by a client's
		// connection pool but never used (net/http waits 5 s for those):
		// cut them.
		err = h.srv.Close()
	}
	<-h.served
	if err != nil {
		return fmt.Errorf("mcp host: close: %w", err)
	}
	return nil
}

func closeSessions(server *sdk.Server) {
	for ss := range server.Sessions() {
		ss.Close()
	}
}

// ServeHTTP authenticates the request and hands it to its session's
// streamable handler (which checks the Host header against DNS rebinding,
// bounds the body and speaks MCP).
func (h *Host) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s := h.authenticate(r)
	if s == nil {
		// Same answer whether the header is missing, malformed or wrong.
		w.Header().Set("WWW-Authenticate", `Bearer realm="codexacp"`)
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return
	}
	if r.URL.Path != Path {
		http.NotFound(w, r)
		return
	}
	if r.ContentLength > h.opts.MaxRequestBodyBytes {
		// Codex shows the model this text (as "HTTP 413: ..."), so say what
		// to do. Bodies without a length are cut by the go-sdk, with its
		// own message.
		http.Error(w, fmt.Sprintf("request body exceeds %d bytes: write a large file in parts, each ending at a line "+
			"end (write_text_file with the first part, then append_text_file with the next, which adds whole lines)",
			h.opts.MaxRequestBodyBytes),
			http.StatusRequestEntityTooLarge)
		return
	}
	s.handler.ServeHTTP(w, r)
}

// authenticate returns the session whose token the request carries, or nil.
// Every registered token is compared in constant time, with no early exit.
func (h *Host) authenticate(r *http.Request) *hostSession {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return nil
	}
	token = strings.TrimSpace(token)
	h.mu.RLock()
	defer h.mu.RUnlock()
	var found *hostSession
	for _, s := range h.sessions {
		if subtle.ConstantTimeCompare([]byte(s.token), []byte(token)) == 1 {
			found = s
		}
	}
	return found
}
