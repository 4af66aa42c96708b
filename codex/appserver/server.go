package appserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/codexacp/codexacp/codex/appserver/protocol"
	"github.com/codexacp/codexacp/codex/proc"
	"github.com/codexacp/codexacp/internal/recovery"
)

// ErrClosed reports a call to an app-server process that has ended
// or is being closed.
var ErrClosed = errors.New("codex app-server is not running")

// maxLoggedMessage caps how much of an unreadable line is logged.
const maxLoggedMessage = 256

// Options configure a codex app-server process.
type Options struct {
	Path   string        // codex executable
	Config []string      // user's -c key=value, passed as `codex app-server -c k=v ...`
	Env    []string      // base environment (nil: os.Environ()); RUST_BACKTRACE removed as for exec (proc.Env)
	Grace  time.Duration // stdin close, the agent's death → SIGKILL of its group; 0: DefaultGrace
	Logger *slog.Logger  // nil: slog.Default()

	ClientName, ClientVersion string // initialize clientInfo; empty: "codexacp", "0"

	// Trace, when set, sees the conversation with the process, for a
	// transcript (--record): each line written to its stdin (sent) and
	// each line read from its stdout (!sent), without the newline, in
	// order, synchronously: a sent line before it is written (under the
	// write lock), a read line before it is handled, on the reader
	// goroutine (Trace must not call the client). line is nil for the end
	// of a stream: sent when Close closes the process's stdin, !sent when
	// its stdout has ended. line is valid during the call only. The
	// lines carry secrets (bearer tokens in thread/start's config).
	Trace func(sent bool, line []byte)
	// Unrouted, when set, is called with each notification no thread's
	// handler takes (skills/changed, say), on the reader goroutine: like
	// Notify, it must not wait for Call or Close.
	Unrouted func(method string, params json.RawMessage)
}

// Handler receives what the app-server sends about one thread.
type Handler interface {
	// Notify is called for each notification of the thread, in order, on
	// the client's reader goroutine: it must not wait for Call or Close,
	// which need that goroutine to read on. params is the handler's to keep.
	Notify(method string, params json.RawMessage)
	// Request answers a server→client request of the thread (approvals).
	// It runs on its own goroutine, after every notification that arrived
	// before it was delivered; ctx ends when the client closes (Close
	// waits for Request to return, so Request must not call Close). The
	// returned value is marshalled as the result; an error becomes a
	// JSON-RPC error (*RPCError keeps its code, others -32603).
	Request(ctx context.Context, method string, params json.RawMessage) (any, error)
}

// RPCError is a JSON-RPC error, received from the app-server or sent to it.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string {
	msg := e.Message
	if len(msg) > 512 {
		// codex lists every method it knows in an unknown-method error.
		msg = msg[:512] + "…"
	}
	return fmt.Sprintf("codex app-server: %s (code %d)", msg, e.Code)
}

// Server is a running `codex app-server`: a JSON-RPC peer on its stdio
// that hosts any number of threads. Its methods are safe for concurrent use.
type Server struct {
	log      *slog.Logger
	grace    time.Duration
	trace    func(sent bool, line []byte)                // Options.Trace; nil: none
	unrouted func(method string, params json.RawMessage) // Options.Unrouted; nil: none
	p        *proc.Process
	pid      int
	start    time.Time

	stderr     *proc.StderrLog
	stderrDone chan struct{}

	writeMu sync.Mutex // one message at a time on stdin

	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan response // nil once the process has ended
	// unrecorded are pending calls made with CallUnrecorded, whose answers
	// the trace does not see.
	unrecorded map[int64]bool
	routes     map[string]*route
	err        error // why it ended; set before done is closed

	closing   atomic.Bool // Close has closed stdin
	killed    atomic.Bool // Close had to kill it
	closeOnce sync.Once

	handlerCtx    context.Context // ends when the client closes or the process ends
	cancelHandler context.CancelFunc

	done chan struct{}
	wg   sync.WaitGroup // every goroutine of the client
}

type route struct{ h Handler }

type response struct {
	result json.RawMessage
	err    error
}

// message is any JSON-RPC message. The app-server omits "jsonrpc" and does
// not require it (docs/codex.md#pinned-codex-facts), so we send none either.
type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *RPCError       `json:"error,omitempty"`
}

// Start starts `codex app-server` and performs the handshake
// (initialize with clientInfo, then the `initialized` notification). ctx
// bounds the handshake only; the process runs until Close or its own end.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if opts.Path == "" {
		return nil, proc.ErrNotFound
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("codex app-server: %w", err)
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	grace := opts.Grace
	if grace <= 0 {
		grace = proc.DefaultGrace
	}
	args := []string{"app-server"}
	for _, kv := range opts.Config {
		args = append(args, "-c", kv)
	}
	cmd := exec.Command(opts.Path, args...)
	cmd.Env = proc.Env(opts.Env, nil)

	c := &Server{
		log:        log,
		grace:      grace,
		trace:      opts.Trace,
		unrouted:   opts.Unrouted,
		start:      time.Now(),
		stderr:     proc.NewStderrLog(log, proc.StderrTailSize),
		stderrDone: make(chan struct{}),
		pending:    make(map[int64]chan response),
		routes:     make(map[string]*route),
		done:       make(chan struct{}),
	}
	c.handlerCtx, c.cancelHandler = context.WithCancel(context.Background())
	p, err := proc.Start(cmd, syscall.SIGTERM, proc.Timing{Grace: grace}, &c.wg, log)
	if err != nil {
		c.cancelHandler()
		return nil, err
	}
	c.p = p
	c.pid = cmd.Process.Pid
	log.Debug("codex app-server started", "pid", c.pid, "args", proc.LogArgs(args))

	c.wg.Add(2)
	go func() {
		defer c.wg.Done()
		defer close(c.stderrDone)
		defer recovery.Recover(log, "codex app-server stderr", nil)
		io.Copy(c.stderr, p.StderrReader())
		c.stderr.Flush()
	}()
	go func() {
		defer c.wg.Done()
		defer recovery.Recover(log, "codex app-server reader", nil)
		c.readLoop()
	}()

	name, version := opts.ClientName, opts.ClientVersion
	if name == "" {
		name = "codexacp"
	}
	if version == "" {
		version = "0"
	}
	init, err := Call(ctx, c, protocol.Initialize, protocol.InitializeParams{
		ClientInfo: protocol.ClientInfo{Name: name, Version: version},
		// Plan mode (turn/start collaborationMode) and codex's questions to
		// the user (item/tool/requestUserInput) are experimental API
		// (docs/codex.md#pinned-codex-facts).
		Capabilities: &protocol.InitializeCapabilities{ExperimentalAPI: true},
	})
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("codex app-server: initialize: %w", err)
	}
	if err := c.send(&message{Method: string(protocol.Initialized)}); err != nil {
		c.Close()
		return nil, fmt.Errorf("codex app-server: initialized: %w", ErrClosed)
	}
	log.Debug("codex app-server ready", "pid", c.pid, "userAgent", init.UserAgent, "elapsed", time.Since(c.start))
	return c, nil
}

// Pid is the app-server's process id, also its process group id.
func (c *Server) Pid() int { return c.pid }

// Done is closed once the process has exited and the reader has ended.
func (c *Server) Done() <-chan struct{} { return c.done }

// Err tells, after Done, why the process ended: nil when Close ended it,
// an *ExitError (with the tail of its stderr) when it ended by itself.
func (c *Server) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Call sends a request and waits for its answer, decoded into result
// (unless nil). A JSON-RPC error is an *RPCError; an app-server that ends
// first fails the call with ErrClosed wrapping the exit reason.
// When ctx ends first, Call returns its error and a late answer is dropped;
// a request already being written is written whole, though, as a partial
// line would end the connection.
func (c *Server) Call(ctx context.Context, method string, params, result any) error {
	return c.call(ctx, method, params, result, true)
}

// Call sends the request m with params and returns its result: the typed
// form of Server.Call, for the methods package protocol declares.
func Call[P, R any](ctx context.Context, s *Server, m protocol.Request[P, R], params P) (R, error) {
	var result R
	err := s.Call(ctx, m.Method(), params, &result)
	return result, err
}

// CallUnrecorded is the typed form of Server.CallUnrecorded.
func CallUnrecorded[P, R any](ctx context.Context, s *Server, m protocol.Request[P, R], params P) (R, error) {
	var result R
	err := s.CallUnrecorded(ctx, m.Method(), params, &result)
	return result, err
}

// CallUnrecorded is Call with neither the request nor its answer passed to
// Options.Trace: for an answer a recording must not hold, such as
// config/read's (the user's whole configuration, MCP servers' headers and
// environment included).
func (c *Server) CallUnrecorded(ctx context.Context, method string, params, result any) error {
	return c.call(ctx, method, params, result, false)
}

func (c *Server) call(ctx context.Context, method string, params, result any, traced bool) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("codex app-server %s: %w", method, err)
	}
	var raw json.RawMessage
	if params != nil {
		var err error
		if raw, err = json.Marshal(params); err != nil {
			return fmt.Errorf("codex app-server %s: params: %w", method, err)
		}
	}
	ch := make(chan response, 1)
	c.mu.Lock()
	if c.pending == nil {
		c.mu.Unlock()
		return c.closedError(method)
	}
	c.nextID++
	id := c.nextID
	c.pending[id] = ch
	if !traced && c.trace != nil {
		if c.unrecorded == nil {
			c.unrecorded = map[int64]bool{}
		}
		c.unrecorded[id] = true
	}
	c.mu.Unlock()

	start := time.Now()
	// Method and size only: params carry secrets (MCP bearer tokens in config).
	c.log.Debug("codex app-server call", "method", method, "id", id, "bytes", len(raw))
	if err := c.sendTraced(&message{ID: strconv.AppendInt(nil, id, 10), Method: method, Params: raw}, traced); err != nil {
		c.forget(id)
		// The process is gone or going: its exit reason says more than EPIPE.
		timer := time.NewTimer(proc.DrainTimeout + time.Second)
		defer timer.Stop()
		select {
		case <-c.done:
			return c.closedError(method)
		case <-timer.C:
			return fmt.Errorf("codex app-server %s: %w (%v)", method, ErrClosed, err)
		case <-ctx.Done():
			return fmt.Errorf("codex app-server %s: %w", method, ctx.Err())
		}
	}
	select {
	case r := <-ch:
		if r.err != nil {
			// Not the message: codex's parse errors quote the params.
			var rpc *RPCError
			code := 0
			if errors.As(r.err, &rpc) {
				code = rpc.Code
			}
			c.log.Debug("codex app-server call failed", "method", method, "id", id, "elapsed", time.Since(start), "code", code)
			if errors.Is(r.err, ErrClosed) {
				return fmt.Errorf("codex app-server %s: %w", method, r.err)
			}
			return r.err
		}
		c.log.Debug("codex app-server answer", "method", method, "id", id, "elapsed", time.Since(start), "bytes", len(r.result))
		if result == nil {
			return nil
		}
		if err := json.Unmarshal(r.result, result); err != nil {
			return fmt.Errorf("codex app-server %s: result: %w", method, err)
		}
		return nil
	case <-ctx.Done():
		c.forget(id)
		return fmt.Errorf("codex app-server %s: %w", method, ctx.Err())
	}
}

// closedError is the error of a call made or pending when the process ended.
func (c *Server) closedError(method string) error {
	c.mu.Lock()
	err := c.err
	c.mu.Unlock()
	if err == nil {
		return fmt.Errorf("codex app-server %s: %w", method, ErrClosed)
	}
	return fmt.Errorf("codex app-server %s: %w: %w", method, ErrClosed, err)
}

func (c *Server) forget(id int64) {
	c.mu.Lock()
	if c.pending != nil {
		delete(c.pending, id)
	}
	delete(c.unrecorded, id)
	c.mu.Unlock()
}

// Route sends the notifications and requests of threadID to h, until remove
// is called; a later Route of the same thread replaces h. A thread's
// messages that arrive before Route (thread/started races the answer of
// thread/start) are dropped.
func (c *Server) Route(threadID string, h Handler) (remove func()) {
	r := &route{h: h}
	c.mu.Lock()
	c.routes[threadID] = r
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		if c.routes[threadID] == r {
			delete(c.routes, threadID)
		}
		c.mu.Unlock()
	}
}

// Close closes the app-server's stdin, on which it exits (0) after ending
// the commands of its threads; after the grace period it kills what is left
// of its process tree. Whatever the process left behind is killed too.
// Close returns after every goroutine of the client has ended, with Err.
func (c *Server) Close() error {
	c.closeOnce.Do(func() {
		c.cancelHandler()
		// The tree before stdin closes: what survives the process is killed.
		var tree proc.Tree
		if !c.p.HasExited() {
			tree = proc.SnapshotBelow(c.pid)
		}
		c.closing.Store(true)
		if c.trace != nil {
			c.trace(true, nil)
		}
		c.p.Stdin.Close() // also ends a write blocked on a full pipe
		timer := time.NewTimer(c.grace)
		select {
		case <-c.p.Exited():
		case <-timer.C:
			c.log.Debug("codex app-server outlived its input; killing it", "pid", c.pid, "grace", c.grace)
			c.killed.Store(true)
			c.kill()
		}
		timer.Stop()
		<-c.done
		if n := tree.Kill(c.pid); n > 0 {
			c.log.Debug("codex app-server left processes behind; killed", "pid", c.pid, "count", n)
		}
		c.wg.Wait()
	})
	return c.Err()
}

// kill kills the app-server and everything below it (proc.KillTree).
func (c *Server) kill() { c.p.KillTree() }

// send writes one message; an error means the process is gone.
func (c *Server) send(m *message) error { return c.sendTraced(m, true) }

// sendTraced is send, with the trace told when traced.
func (c *Server) sendTraced(m *message, traced bool) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if c.trace != nil && traced {
		c.trace(true, b[:len(b)-1])
	}
	_, err = c.p.Stdin.Write(b)
	return err
}

// readLoop reads stdout until it ends, then waits for the process and
// reports its end.
func (c *Server) readLoop() {
	proc.ReadLines(c.p.StdoutReader(), c.dispatch)
	if c.trace != nil {
		c.trace(false, nil)
	}
	// Without its stdout the server can answer nothing: end it.
	timer := time.NewTimer(c.grace)
	select {
	case <-c.p.Exited():
	case <-timer.C:
		c.log.Debug("codex app-server closed its stdout; killing it", "pid", c.pid)
		c.kill()
		<-c.p.Exited()
	}
	timer.Stop()
	<-c.stderrDone
	c.finish()
}

// finish records why the process ended, fails pending calls and closes done.
func (c *Server) finish() {
	state := c.p.Cmd.ProcessState
	var err error
	switch {
	case state == nil:
		err = fmt.Errorf("codex app-server: wait: %w", c.p.WaitErr())
	case c.killed.Load(), c.closing.Load() && state.Success():
	default:
		e := proc.ExitErrorOf(state, c.stderr)
		e.Stderr = stripANSI(e.Stderr)
		err = e
	}
	attrs := []any{"pid", c.pid, "elapsed", time.Since(c.start)}
	if state != nil {
		attrs = append(attrs, "status", state.String())
		if kib, ok := proc.PeakRSSKiB(state); ok {
			attrs = append(attrs, "maxrss_kib", kib)
		}
	}
	c.log.Debug("codex app-server exited", attrs...)

	c.mu.Lock()
	c.err = err
	pending := c.pending
	c.pending = nil
	c.mu.Unlock()
	callErr := ErrClosed
	if err != nil {
		callErr = fmt.Errorf("%w: %w", ErrClosed, err)
	}
	for _, ch := range pending {
		ch <- response{err: callErr}
	}
	c.cancelHandler()
	close(c.done)
}

// dispatch handles one line of the app-server's stdout.
func (c *Server) dispatch(line []byte) {
	defer recovery.Recover(c.log, "codex app-server message", nil) // that message only: the next is read
	var m message
	err := json.Unmarshal(line, &m)
	if c.trace != nil && (err != nil || !c.unrecordedAnswer(m)) {
		c.trace(false, line)
	}
	if err != nil {
		c.log.Warn("codex app-server: unreadable line skipped", "bytes", len(line), "err", err, "line", clip(line))
		return
	}
	hasID := len(m.ID) > 0 && !bytes.Equal(m.ID, []byte("null"))
	switch {
	case m.Method != "" && hasID:
		c.serverRequest(m)
	case m.Method != "":
		if r := c.routeOf(m.Params); r != nil {
			r.h.Notify(m.Method, m.Params)
			return
		}
		c.log.Debug("codex app-server notification", "method", m.Method, "bytes", len(m.Params))
		if c.unrouted != nil {
			c.unrouted(m.Method, m.Params)
		}
	case hasID:
		c.answer(m)
	default:
		c.log.Warn("codex app-server: message without method or id skipped", "bytes", len(line), "line", clip(line))
	}
}

// unrecordedAnswer reports whether m answers a CallUnrecorded call.
func (c *Server) unrecordedAnswer(m message) bool {
	if m.Method != "" {
		return false
	}
	id, err := strconv.ParseInt(string(m.ID), 10, 64)
	if err != nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.unrecorded[id] {
		return false
	}
	delete(c.unrecorded, id)
	return true
}

// answer delivers a response to the pending call.
func (c *Server) answer(m message) {
	id, err := strconv.ParseInt(string(m.ID), 10, 64)
	c.mu.Lock()
	ch, ok := c.pending[id]
	if ok {
		delete(c.pending, id)
	}
	c.mu.Unlock()
	if err != nil || !ok {
		c.log.Debug("codex app-server: answer to no pending call dropped", "id", clip(m.ID))
		return
	}
	if m.Error != nil {
		ch <- response{err: m.Error}
		return
	}
	if m.Result == nil {
		m.Result = json.RawMessage("null")
	}
	ch <- response{result: m.Result}
}

// serverRequest runs a routed request's handler on a goroutine of its own
// and answers any other request at once: codex waits for every answer.
func (c *Server) serverRequest(m message) {
	r := c.routeOf(m.Params)
	c.wg.Add(1)
	if r == nil {
		c.log.Debug("codex app-server request for no thread refused", "method", m.Method)
		go func() {
			defer c.wg.Done()
			defer recovery.Recover(c.log, "codex app-server reply", nil)
			c.reply(m.ID, m.Method, nil, &RPCError{Code: protocol.CodeMethodNotFound, Message: "no handler for " + m.Method})
		}()
		return
	}
	go func() {
		defer c.wg.Done()
		defer recovery.Recover(c.log, "codex app-server reply", nil)
		result, err := c.handle(r.h, m)
		c.reply(m.ID, m.Method, result, err)
	}()
}

// handle runs the handler; a panic becomes an internal error, so that codex
// still gets its answer.
func (c *Server) handle(h Handler, m message) (result any, err error) {
	defer recovery.Recover(c.log, "codex app-server request "+m.Method, &err)
	return h.Request(c.handlerCtx, m.Method, m.Params)
}

// reply answers the server request id with result or err.
func (c *Server) reply(id json.RawMessage, method string, result any, err error) {
	out := &message{ID: id}
	if err == nil {
		b, merr := json.Marshal(result)
		if merr != nil {
			err = fmt.Errorf("result: %w", merr)
		} else {
			out.Result = b
		}
	}
	if err != nil {
		var rpc *RPCError
		if !errors.As(err, &rpc) {
			rpc = &RPCError{Code: protocol.CodeInternal, Message: err.Error()}
		}
		out.Error = rpc
	}
	if werr := c.send(out); werr != nil {
		c.log.Debug("codex app-server: answer not sent", "method", method, "err", werr)
	}
}

// routeOf finds the route of a message by the thread its params name.
func (c *Server) routeOf(params json.RawMessage) *route {
	if len(params) == 0 || params[0] != '{' {
		return nil
	}
	var p struct {
		ThreadID       string `json:"threadId"`
		ConversationID string `json:"conversationId"`
		Thread         struct {
			ID string `json:"id"`
		} `json:"thread"`
	}
	json.Unmarshal(params, &p) // a field of another type leaves it empty
	id := p.ThreadID
	if id == "" {
		id = p.ConversationID
	}
	if id == "" {
		id = p.Thread.ID
	}
	if id == "" {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.routes[id]
}

// clip is b as it may be logged: at most maxLoggedMessage bytes.
func clip(b []byte) string {
	if len(b) > maxLoggedMessage {
		return string(b[:maxLoggedMessage]) + "…"
	}
	return string(b)
}

// stripANSI removes terminal escape sequences (CSI): codex app-server colours
// its log lines even on a pipe.
func stripANSI(s string) string {
	if !strings.Contains(s, "\x1b[") {
		return s
	}
	var out []byte
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j
			continue
		}
		out = append(out, s[i])
	}
	return string(out)
}
