package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codexacp/codexacp/fsops"
	"github.com/codexacp/codexacp/fsops/fsopstest"
	"github.com/codexacp/codexacp/internal/bearer"
)

// transport connects a test client to a server in one of the ways the
// server is reachable.
type transport struct {
	name    string
	connect func(t testing.TB, srv *mcpsdk.Server) *mcpsdk.ClientSession
}

// transports are the two ways every shared case runs: the go-sdk's
// in-memory pipe, and streamable HTTP through a Host with the session's
// bearer token (what codex uses).
var transports = []transport{
	{"inmemory", connectInMemory},
	{"http", connectHTTP},
}

func connectInMemory(t testing.TB, srv *mcpsdk.Server) *mcpsdk.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcpsdk.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatalf("server connect: %v", err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatalf("client connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func connectHTTP(t testing.TB, srv *mcpsdk.Server) *mcpsdk.ClientSession {
	t.Helper()
	h := newTestHost(t, nil)
	token, unregister := h.Register(srv)
	t.Cleanup(unregister)
	return dialHTTP(t, h.URL(), token)
}

// newTestHost starts a Host that is closed when the test ends.
func newTestHost(t testing.TB, opts *HostOptions) *Host {
	t.Helper()
	if opts == nil {
		opts = &HostOptions{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	h, err := NewHost(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("host close: %v", err)
		}
	})
	return h
}

// dialHTTP connects an MCP client to url sending token as a bearer token
// ("" sends no Authorization header). The client has connections of its
// own, closed with it: a connection its pool opened but never used would
// make the host's Close wait its whole shutdown grace.
func dialHTTP(t testing.TB, url, token string) *mcpsdk.ClientSession {
	t.Helper()
	cs, closeConns, err := dialHTTPConns(url, token)
	if err != nil {
		t.Fatalf("client connect: %v", err)
	}
	t.Cleanup(func() {
		cs.Close()
		closeConns()
	})
	return cs
}

func tryDialHTTP(url, token string) (*mcpsdk.ClientSession, error) {
	tr := &mcpsdk.StreamableClientTransport{
		Endpoint:   url,
		HTTPClient: bearer.Client(token),
		MaxRetries: -1,
	}
	return mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test"}, nil).Connect(context.Background(), tr, nil)
}

// dialHTTPConns is tryDialHTTP on a transport of the client's own, with
// the function that closes its idle connections.
func dialHTTPConns(url, token string) (*mcpsdk.ClientSession, func(), error) {
	conns := http.DefaultTransport.(*http.Transport).Clone()
	tr := &mcpsdk.StreamableClientTransport{
		Endpoint:   url,
		HTTPClient: &http.Client{Transport: &bearer.Transport{Token: token, Base: conns}},
		MaxRetries: -1,
	}
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test"}, nil).Connect(context.Background(), tr, nil)
	if err != nil {
		conns.CloseIdleConnections()
	}
	return cs, conns.CloseIdleConnections, err
}

// call runs a tool and returns the result with its structuredContent
// decoded into a generic JSON value.
func call(t testing.TB, cs *mcpsdk.ClientSession, tool string, args any) (*mcpsdk.CallToolResult, map[string]any) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcpsdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", tool, err)
	}
	if res.StructuredContent == nil {
		t.Fatalf("%s: result has no structuredContent: %+v", tool, res)
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var sc map[string]any
	if err := json.Unmarshal(b, &sc); err != nil {
		t.Fatalf("%s: structuredContent is not an object: %s", tool, b)
	}
	return res, sc
}

// toolErr extracts structuredContent.error, failing the test if the result
// is not an error result of the documented shape.
func toolErr(t testing.TB, res *mcpsdk.CallToolResult, sc map[string]any) (code int, message, hint string) {
	t.Helper()
	if !res.IsError {
		t.Fatalf("want isError result, got success: %v", sc)
	}
	e, ok := sc["error"].(map[string]any)
	if !ok || len(sc) != 1 {
		t.Fatalf("structuredContent = %v, want exactly {error: {...}}", sc)
	}
	c, _ := e["code"].(float64)
	message, _ = e["message"].(string)
	hint, _ = e["hint"].(string)
	if len(e) != 3 || message == "" || hint == "" {
		t.Fatalf("error = %v, want code, message and a non-empty hint", e)
	}
	text := resultText(res)
	for _, want := range []string{message, hint} {
		if !strings.Contains(text, want) {
			t.Errorf("text content %q lacks %q", text, want)
		}
	}
	return int(c), message, hint
}

func resultText(res *mcpsdk.CallToolResult) string {
	var s string
	for _, c := range res.Content {
		if tc, ok := c.(*mcpsdk.TextContent); ok {
			s += tc.Text
		}
	}
	return s
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// recorder is an Observer that records what it is told, in order, and can
// veto writes.
type recorder struct {
	mu     sync.Mutex
	events []event
	veto   error // returned by BeforeWrite when non-nil
}

type event struct {
	kind   string // "started", "before-write", "finished"
	call   Call
	change *fsops.Change
	result any
	err    *fsops.Error
}

func (r *recorder) CallStarted(ctx context.Context, c *Call) context.Context {
	r.add(event{kind: "started", call: *c})
	return ctx
}

func (r *recorder) BeforeWrite(ctx context.Context, c *Call, ch *fsops.Change) error {
	r.add(event{kind: "before-write", call: *c, change: ch})
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.veto
}

func (r *recorder) CallFinished(ctx context.Context, c *Call, result any, err *fsops.Error) {
	r.add(event{kind: "finished", call: *c, result: result, err: err})
}

func (r *recorder) add(e event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) snapshot() []event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]event(nil), r.events...)
}

func (r *recorder) kinds() []string {
	var ks []string
	for _, e := range r.snapshot() {
		ks = append(ks, e.kind)
	}
	return ks
}

// Test files live in an fsopstest.MemFiles.

func setFile(m *fsopstest.MemFiles, path, content string)       { m.Set(path, content) }
func getFile(m *fsopstest.MemFiles, path string) (string, bool) { return m.Get(path) }
func setDir(m *fsopstest.MemFiles, path string)                 { m.Mkdir(path) }

// denyWrites makes writes of path fail the way the OS does for a file the
// process may not write (tests run as root, so chmod cannot do this).
func denyWrites(m *fsopstest.MemFiles, path string) {
	m.FailWrite(path, &fs.PathError{Op: "open", Path: path, Err: fs.ErrPermission})
}
