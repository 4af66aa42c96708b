package mcp

import (
	"container/list"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codexacp/codexacp/internal/recovery"
)

// DefaultMaxRequestBodyBytes bounds one HTTP request body. A write_text_file
// of a few MiB of text fits (JSON escaping adds little to ordinary text),
// and the limit stays below the 10 MiB line limit of the ACP connection the
// content is forwarded on (fs/write_text_file), so a write the host accepts
// can also reach the editor.
const DefaultMaxRequestBodyBytes = 8 << 20

// Production defaults of the host's connection limits (HostOptions).
const (
	// DefaultReadTimeout bounds reading one request, headers and body: an
	// 8 MiB body over loopback takes milliseconds, so this is generous for
	// codex and short for a client that stops sending mid-request.
	DefaultReadTimeout = 30 * time.Second
	// DefaultIdleTimeout closes keep-alive connections idle this long.
	DefaultIdleTimeout = 2 * time.Minute
	// DefaultMaxUnauthenticatedConns caps connections that have not (yet)
	// shown a valid token. Codex opens a handful and authenticates each at
	// once; the cap is what a local flood can hold of the agent's file
	// descriptors.
	DefaultMaxUnauthenticatedConns = 128
)

// maxReadHeaderTimeout bounds reading request headers even when
// ReadTimeout is longer.
const maxReadHeaderTimeout = 10 * time.Second

// shutdownGrace is how long Close lets requests in flight finish.
const shutdownGrace = time.Second

// Path is the URL path the host serves MCP on.
const Path = "/mcp"

// HostOptions configure a Host. The zero value is usable.
type HostOptions struct {
	// MaxRequestBodyBytes bounds a request body; larger requests get 413.
	// 0 means DefaultMaxRequestBodyBytes.
	MaxRequestBodyBytes int64
	// Logger receives the host's logs, including panics of the tools of
	// servers it serves. nil means slog.Default().
	Logger *slog.Logger
	// ReadTimeout bounds reading one request, headers and body (headers
	// alone at most 10 s). It does not limit how long a call may run or a
	// response may stream: net/http clears the read deadline once the body
	// is read, so a call waiting minutes for the user's permission and the
	// SSE streams are unaffected. 0 means DefaultReadTimeout.
	ReadTimeout time.Duration
	// IdleTimeout closes a keep-alive connection idle this long. 0 means
	// DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxUnauthenticatedConns caps the open connections that have not yet
	// carried a request with a valid token; past it, the oldest of them is
	// closed. Authenticated connections never count, so a local flood cannot
	// lock codex out or pin more descriptors than this. 0 means
	// DefaultMaxUnauthenticatedConns.
	MaxUnauthenticatedConns int
	// RelayCommand is the executable codex runs as a session's relay
	// (RelayArg; the agent's own binary), which reaches the host over a
	// private unix socket instead of HTTP. "" means codex uses HTTP only
	// (as it does on Windows): see Host.Relay.
	RelayCommand string

	// relayAuthenticated, in tests, runs once a relay's token is known,
	// before its MCP session starts.
	relayAuthenticated func()
	// relayAuthTimeout, in tests, replaces relayAuthTimeout when set.
	relayAuthTimeout time.Duration
}

// Host serves the MCP servers of all sessions of one agent process over
// streamable HTTP on a loopback port. Each registered server has its own
// bearer token and its own streamable handler (so its MCP sessions cannot be
// addressed with another session's token).
//
// The host runs the http.Server on a goroutine it starts in NewHost; Close
// stops it and waits for that goroutine.
type Host struct {
	ln     *guardListener
	srv    *http.Server
	opts   HostOptions
	served chan struct{}  // closed when the serving goroutine returns
	relay  *relayListener // nil: HTTP only

	mu       sync.RWMutex
	sessions map[string]*hostSession // by token
	closed   bool
}

// hostSession is one registered server.
type hostSession struct {
	token   string
	server  *mcpsdk.Server
	handler http.Handler
}

// NewHost listens on 127.0.0.1 on a free port and starts serving. (codex
// reaches that address directly even when the user's environment names an
// HTTP proxy: codex/proc.Env exempts it in NO_PROXY.)
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
	if h.opts.ReadTimeout <= 0 {
		h.opts.ReadTimeout = DefaultReadTimeout
	}
	if h.opts.IdleTimeout <= 0 {
		h.opts.IdleTimeout = DefaultIdleTimeout
	}
	if h.opts.MaxUnauthenticatedConns <= 0 {
		h.opts.MaxUnauthenticatedConns = DefaultMaxUnauthenticatedConns
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("mcp host: listen: %w", err)
	}
	h.ln = &guardListener{Listener: ln, max: h.opts.MaxUnauthenticatedConns, log: h.opts.Logger}
	h.srv = &http.Server{
		Handler:           h,
		ReadHeaderTimeout: min(h.opts.ReadTimeout, maxReadHeaderTimeout),
		ReadTimeout:       h.opts.ReadTimeout,
		IdleTimeout:       h.opts.IdleTimeout,
		// No WriteTimeout: a tool call may wait minutes for the user's
		// permission, and responses stream (SSE).
		ErrorLog: slog.NewLogLogger(h.opts.Logger.Handler(), slog.LevelWarn),
		// ServeHTTP finds the connection here to exempt it from the cap.
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if gc, ok := c.(*guardedConn); ok {
				return context.WithValue(ctx, connKey{}, gc)
			}
			return ctx
		},
	}
	h.relay = h.startRelay(h.opts.RelayCommand)
	go func() {
		defer close(h.served)
		defer recovery.Recover(h.opts.Logger, "mcp host", nil)
		if err := h.srv.Serve(h.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
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
func (h *Host) Register(server *mcpsdk.Server) (token string, unregister func()) {
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
		handler: mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return server },
			&mcpsdk.StreamableHTTPOptions{
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
	if h.relay != nil {
		h.relay.close()
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

func closeSessions(server *mcpsdk.Server) {
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
		// The body is never read: a client may announce one and never send
		// it, and net/http would wait for it after the handler returns. An
		// unauthenticated client has no use for the connection: close it.
		http.NewResponseController(w).SetReadDeadline(time.Unix(1, 0))
		w.Header().Set("Connection", "close")
		w.Header().Set("WWW-Authenticate", `Bearer realm="codexacp"`)
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return
	}
	if gc, ok := r.Context().Value(connKey{}).(*guardedConn); ok {
		h.ln.authenticated(gc)
	}
	// The go-sdk derives its sessions' contexts from the requests', so
	// tools find the host's logger there (see runGuarded).
	r = r.WithContext(withLogger(r.Context(), h.opts.Logger))
	if r.URL.Path != Path {
		http.NotFound(w, r)
		return
	}
	if r.ContentLength > h.opts.MaxRequestBodyBytes {
		// Codex shows the model this text (as "HTTP 413: ..."), so say what
		// to do. Bodies without a length are cut by the go-sdk, with its
		// own message.
		http.Error(w, tooLargeMessage(h.opts.MaxRequestBodyBytes), http.StatusRequestEntityTooLarge)
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
	return h.sessionByToken(strings.TrimSpace(token))
}

type loggerKey struct{}

// withLogger returns ctx carrying l for loggerFrom.
func withLogger(ctx context.Context, l *slog.Logger) context.Context {
	return context.WithValue(ctx, loggerKey{}, l)
}

// loggerFrom returns the logger of the host serving ctx's request, or
// slog.Default() outside a host (in-memory transports).
func loggerFrom(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(loggerKey{}).(*slog.Logger); ok {
		return l
	}
	return slog.Default()
}

type connKey struct{}

// guardListener caps the connections that have not (yet) carried a request
// with a valid token. Past the cap it closes the oldest of them rather than
// refusing or delaying the new one: a new connection may be codex's, which
// authenticates with its first request, while a flood's connections are
// the ones that linger. Connections marked authenticated are never closed
// here and do not count.
type guardListener struct {
	net.Listener
	max int
	log *slog.Logger

	mu      sync.Mutex
	unauth  list.List // of *guardedConn, oldest first
	evicted int
}

// guardedConn is an accepted connection; elem is its place in the
// listener's unauth list, nil once authenticated or closed.
type guardedConn struct {
	net.Conn
	l    *guardListener
	elem *list.Element

	closeOnce sync.Once
	closeErr  error
}

func (l *guardListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	gc := &guardedConn{Conn: c, l: l}
	var oldest *guardedConn
	l.mu.Lock()
	gc.elem = l.unauth.PushBack(gc)
	if l.unauth.Len() > l.max {
		oldest = l.unauth.Remove(l.unauth.Front()).(*guardedConn)
		oldest.elem = nil
		l.evicted++
		if l.evicted == 1 || l.evicted%1000 == 0 { // a flood would flood the log too
			l.log.Warn("mcp host: too many unauthenticated connections, closing the oldest",
				"max", l.max, "closed_so_far", l.evicted)
		}
	}
	l.mu.Unlock()
	if oldest != nil {
		oldest.Close()
	}
	return gc, nil
}

// authenticated exempts c from the cap (also called when c closes).
func (l *guardListener) authenticated(c *guardedConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.elem != nil {
		l.unauth.Remove(c.elem)
		c.elem = nil
	}
}

// CloseWrite lets net/http half-close the connection before closing it
// after a response it cut short (it looks for this method).
func (c *guardedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// Close is safe to call twice (by the listener's eviction and by the
// http.Server).
func (c *guardedConn) Close() error {
	c.closeOnce.Do(func() {
		c.l.authenticated(c)
		c.closeErr = c.Conn.Close()
	})
	return c.closeErr
}
