package mcp

import (
	"bufio"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codexacp/codexacp/internal/recovery"
)

// relayAuthTimeout bounds how long a relay may take to send its token.
const relayAuthTimeout = 10 * time.Second

// relayLineSlack is what the host accepts on a relay connection beyond the
// request bound: the relay already drops longer messages, so this only
// bounds a client that is not the relay.
const relayLineSlack = 64 << 10

// RelayRoute is how codex starts a session's relay: a stdio MCP server
// entry (command, args, env). The session's token is not in Env: it goes
// as TokenEnv through whatever keeps it off a command line.
type RelayRoute struct {
	Command  string
	Args     []string
	Env      map[string]string // the socket and the message bound
	TokenEnv string            // the variable the relay reads the token from
}

// relayListener is the host's relay socket: a unix socket in a directory
// of its own, readable by this user only (os.MkdirTemp makes it 0700), and
// every connection must send a registered token first.
type relayListener struct {
	dir     string
	ln      net.Listener
	command string
	log     *slog.Logger

	ctx    context.Context // ends at close, ending the sessions' contexts
	cancel context.CancelFunc
	wg     sync.WaitGroup // the accept loop and every connection's goroutine

	mu    sync.Mutex
	conns map[net.Conn]struct{}

	gone atomic.Bool // the socket was found removed (logged once)
}

// relaySupported says whether this platform gets the relay. Windows keeps
// the HTTP route: codexacp's other Windows paths are tested there, and its
// unix sockets need Windows 10 1803 or later.
func relaySupported() bool { return runtime.GOOS != "windows" }

// startRelay listens on a new private socket for h's relays; nil (and the
// HTTP route) when it cannot.
func (h *Host) startRelay(command string) *relayListener {
	if command == "" || !relaySupported() {
		return nil
	}
	dir, err := os.MkdirTemp("", "codexacp-mcp-")
	if err != nil {
		h.opts.Logger.Warn("mcp host: no relay socket, codex reaches the file tools over HTTP", "err", err)
		return nil
	}
	ln, err := net.Listen("unix", filepath.Join(dir, "s"))
	if err != nil {
		os.RemoveAll(dir)
		h.opts.Logger.Warn("mcp host: no relay socket, codex reaches the file tools over HTTP", "err", err)
		return nil
	}
	// The same cap as the HTTP listener's: connections that have not shown
	// a token (each holding a goroutine and a read buffer for up to
	// relayAuthTimeout) are a local flood's, past the cap the oldest close.
	guarded := &guardListener{Listener: ln, max: h.opts.MaxUnauthenticatedConns, log: h.opts.Logger}
	r := &relayListener{dir: dir, ln: guarded, command: command, log: h.opts.Logger, conns: map[net.Conn]struct{}{}}
	r.ctx, r.cancel = context.WithCancel(withLogger(context.Background(), h.opts.Logger))
	r.wg.Add(1)
	go r.accept(h)
	return r
}

// Relay is the route for codex to reach the file tools through a relay
// process, or nil when codex must use the HTTP route (URL): no relay
// command was given, the platform has none, its socket could not be made
// or is gone.
func (h *Host) Relay() *RelayRoute {
	if h.relay == nil {
		return nil
	}
	// A cleaner of old temporary files may have removed the socket (its
	// directory is in $TMPDIR, and an editor may run for weeks): a relay
	// could not connect, and codex fails a thread whose required server
	// does not start.
	if fi, err := os.Lstat(h.relay.ln.Addr().String()); err != nil || fi.Mode().Type() != os.ModeSocket {
		if !h.relay.gone.Swap(true) {
			h.opts.Logger.Warn("mcp host: the relay socket is gone, codex reaches the file tools over HTTP", "err", err)
		}
		return nil
	}
	return &RelayRoute{
		Command: h.relay.command,
		Args:    []string{RelayArg},
		Env: map[string]string{
			RelaySocketEnv: h.relay.ln.Addr().String(),
			RelayMaxEnv:    strconv.FormatInt(h.opts.MaxRequestBodyBytes, 10),
		},
		TokenEnv: RelayTokenEnv,
	}
}

func (r *relayListener) accept(h *Host) {
	defer r.wg.Done()
	defer recovery.Recover(r.log, "mcp relay listener", nil)
	for {
		c, err := r.ln.Accept()
		if err != nil {
			if r.ctx.Err() == nil {
				r.log.Error("mcp host: relay socket stopped", "err", err)
			}
			return
		}
		r.mu.Lock()
		if r.ctx.Err() != nil {
			r.mu.Unlock()
			c.Close()
			return
		}
		r.conns[c] = struct{}{}
		r.wg.Add(1)
		r.mu.Unlock()
		go r.serve(h, c)
	}
}

// serve authenticates one relay connection and serves its session's MCP
// server on it until either side ends.
func (r *relayListener) serve(h *Host, c net.Conn) {
	defer r.wg.Done()
	defer func() {
		c.Close()
		r.mu.Lock()
		delete(r.conns, c)
		r.mu.Unlock()
	}()
	defer recovery.Recover(r.log, "mcp relay connection", nil)
	authTimeout := relayAuthTimeout
	if h.opts.relayAuthTimeout > 0 {
		authTimeout = h.opts.relayAuthTimeout
	}
	c.SetReadDeadline(time.Now().Add(authTimeout))
	br := bufio.NewReaderSize(c, relayBuffer)
	token, err := readTokenLine(br)
	if err != nil {
		r.log.Warn("mcp host: relay connection refused", "err", err)
		return
	}
	s := h.sessionByToken(token)
	if s == nil {
		r.log.Warn("mcp host: relay connection refused: unknown token")
		return
	}
	if gc, ok := c.(*guardedConn); ok {
		gc.l.authenticated(gc) // no longer counts against the cap
	}
	if h.opts.relayAuthenticated != nil {
		h.opts.relayAuthenticated()
	}
	c.SetReadDeadline(time.Time{})
	ss, err := s.server.Connect(r.ctx, &mcpsdk.IOTransport{
		Reader:        readCloser{br, c},
		Writer:        c,
		MaxLineLength: int(h.opts.MaxRequestBodyBytes) + relayLineSlack,
	}, nil)
	if err != nil {
		r.log.Warn("mcp host: relay session", "err", err)
		return
	}
	// The token may have been revoked since it was checked: unregister
	// (and Close) then closed the server's sessions without this one.
	if h.sessionByToken(token) != s {
		ss.Close()
		r.log.Warn("mcp host: relay connection refused: token revoked")
		return
	}
	r.log.Debug("mcp host: relay connected")
	ss.Wait()
	r.log.Debug("mcp host: relay disconnected")
}

// readTokenLine reads the relay's first line, at most maxTokenLine bytes.
func readTokenLine(br *bufio.Reader) (string, error) {
	var line []byte
	for len(line) <= maxTokenLine {
		b, err := br.ReadByte()
		if err != nil {
			return "", fmt.Errorf("reading the token: %w", err)
		}
		if b == '\n' {
			return strings.TrimSpace(string(line)), nil
		}
		line = append(line, b)
	}
	return "", errors.New("the first line is too long for a token")
}

// close stops accepting, ends every relay connection and removes the
// socket's directory.
func (r *relayListener) close() {
	r.mu.Lock()
	r.cancel()
	for c := range r.conns {
		c.Close()
	}
	r.mu.Unlock()
	r.ln.Close()
	r.wg.Wait()
	os.RemoveAll(r.dir)
}

// readCloser reads through a buffered reader and closes the connection.
type readCloser struct {
	*bufio.Reader
	c net.Conn
}

func (r readCloser) Close() error { return r.c.Close() }

// sessionByToken returns the registered session whose token is token, or
// nil. Every registered token is compared in constant time, with no early
// exit.
func (h *Host) sessionByToken(token string) *hostSession {
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
