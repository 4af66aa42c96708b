package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codexacp/codexacp/fsops"
	"github.com/codexacp/codexacp/fsops/fsopstest"
)

// relayRun is one RunRelay in the test's process, as codex would start it:
// codex writes to stdin and reads stdout.
type relayRun struct {
	stdin  *io.PipeWriter
	stdout *io.PipeReader
	done   chan error
}

// startRelay runs RunRelay with route's environment and token.
func startRelay(t *testing.T, route *RelayRoute, token string) *relayRun {
	t.Helper()
	env := map[string]string{route.TokenEnv: token}
	for k, v := range route.Env {
		env[k] = v
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	r := &relayRun{stdin: inW, stdout: outR, done: make(chan error, 1)}
	go func() {
		err := RunRelay(inR, outW, func(k string) string { return env[k] })
		outW.Close() // the process's exit closes its stdout
		inR.Close()
		r.done <- err
	}()
	t.Cleanup(func() {
		inW.Close()
		outR.Close()
		r.wait(t)
	})
	return r
}

// wait returns RunRelay's result, failing the test if it does not end.
func (r *relayRun) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-r.done:
		r.done <- err // for a second wait (the cleanup)
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("the relay did not end")
		return nil
	}
}

// client is codex's side: an MCP client over the relay's stdio.
func (r *relayRun) client(t *testing.T) *mcpsdk.ClientSession {
	t.Helper()
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "codex"}, nil).Connect(context.Background(),
		&mcpsdk.IOTransport{Reader: r.stdout, Writer: r.stdin}, nil)
	if err != nil {
		t.Fatalf("client connect through the relay: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func newRelayHost(t *testing.T, opts *HostOptions) (*Host, *RelayRoute) {
	t.Helper()
	if !relaySupported() {
		t.Skip("no relay on " + runtime.GOOS + ": codex uses the HTTP route")
	}
	if opts == nil {
		opts = &HostOptions{}
	}
	opts.RelayCommand = "/path/to/codexacp"
	h := newTestHost(t, opts)
	route := h.Relay()
	if route == nil {
		t.Fatal("Relay() = nil with a relay command")
	}
	return h, route
}

func TestHostRelayRoute(t *testing.T) {
	if h := newTestHost(t, nil); h.Relay() != nil {
		t.Errorf("Relay() = %+v without a relay command, want nil (HTTP only)", h.Relay())
	}
	h, route := newRelayHost(t, nil)
	if route.Command != "/path/to/codexacp" || len(route.Args) != 1 || route.Args[0] != RelayArg || route.TokenEnv != RelayTokenEnv {
		t.Errorf("route = %+v", route)
	}
	socket := route.Env[RelaySocketEnv]
	fi, err := os.Stat(socket[:strings.LastIndexByte(socket, '/')])
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o700 {
		t.Errorf("the socket's directory has mode %v, want 0700 (this user only)", perm)
	}
	for k, v := range route.Env {
		if strings.Contains(v, "token") || k == RelayTokenEnv {
			t.Errorf("the route's Env carries %s=%s: the token goes apart", k, v)
		}
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(socket); !os.IsNotExist(err) {
		t.Errorf("after Close the socket is still there: %v", err)
	}
}

// TestRelayForwardsBothWays: codex's requests reach the session's server
// and its answers and notifications come back, through one relay per
// session, each reaching its own session's files.
func TestRelayForwardsBothWays(t *testing.T) {
	h, route := newRelayHost(t, nil)
	tokA, recA, memA := newSession(t, h, "/w/a.txt", "session a\n")
	tokB, _, _ := newSession(t, h, "/w/a.txt", "session b\n")

	a := startRelay(t, route, tokA).client(t)
	b := startRelay(t, route, tokB).client(t)
	tools, err := a.ListTools(context.Background(), nil)
	if err != nil || len(tools.Tools) != 7 {
		t.Fatalf("tools/list: %d tools, %v", len(tools.Tools), err)
	}
	if _, sc := call(t, a, fsops.ToolReadTextFile, map[string]any{"path": "/w/a.txt"}); !strings.Contains(sc["content"].(string), "session a") {
		t.Errorf("session a read %v", sc)
	}
	if _, sc := call(t, b, fsops.ToolReadTextFile, map[string]any{"path": "/w/a.txt"}); !strings.Contains(sc["content"].(string), "session b") {
		t.Errorf("session b read %v", sc)
	}
	big := strings.Repeat("0123456789abcdef\n", 1<<20/17) // ~1 MiB each way, longer than the relay's buffers
	if res, sc := call(t, a, fsops.ToolWriteTextFile, map[string]any{"path": "/w/big.txt", "content": big}); res.IsError {
		t.Fatalf("1 MiB write: %v", sc)
	}
	if got, _ := getFile(memA, "/w/big.txt"); got != big {
		t.Errorf("the written file has %d bytes, want %d", len(got), len(big))
	}
	// A read's answer (up to fsops.MaxReadBytes of content) is longer than
	// the relay's buffer too.
	_, sc := call(t, a, fsops.ToolReadTextFile, map[string]any{"path": "/w/big.txt", "limit": 100000})
	if got := sc["content"].(string); len(got) <= relayBuffer || !strings.HasPrefix(big, got) {
		t.Errorf("the read came back with %d bytes, want more than %d of the file", len(got), relayBuffer)
	}
	if n := len(recA.snapshot()); n == 0 {
		t.Error("session a's observer saw no call")
	}
}

// TestRelayAgentGone: a relay whose agent closes the connection (the
// session's token revoked, or the agent gone) exits with an error, and
// writes nothing to stdout after the agent's last message.
func TestRelayAgentGone(t *testing.T) {
	for _, how := range []string{"unregister", "host closed"} {
		t.Run(how, func(t *testing.T) {
			h, route := newRelayHost(t, nil)
			mem := fsopstest.NewMemFiles()
			setFile(mem, "/w/a.txt", "a\n")
			token, unregister := h.Register(NewServer(fsops.NewEngine(mem), nil))
			defer unregister()
			r := startRelay(t, route, token)
			cs := r.client(t)
			call(t, cs, fsops.ToolReadTextFile, map[string]any{"path": "/w/a.txt"})
			if how == "unregister" {
				unregister()
			} else if err := h.Close(); err != nil {
				t.Fatal(err)
			}
			err := r.wait(t)
			if err == nil || !strings.Contains(err.Error(), "the agent closed the connection") {
				t.Errorf("RunRelay = %v, want the agent closed the connection", err)
			}
		})
	}
}

// TestRelayCodexGone: when codex closes the relay's stdin the relay ends
// without an error, and so does the session's connection on the host.
func TestRelayCodexGone(t *testing.T) {
	h, route := newRelayHost(t, nil)
	token, _, _ := newSession(t, h, "/w/a.txt", "a\n")
	r := startRelay(t, route, token)
	call(t, r.client(t), fsops.ToolReadTextFile, map[string]any{"path": "/w/a.txt"})
	r.stdin.Close()
	if err := r.wait(t); err != nil {
		t.Errorf("RunRelay = %v after stdin closed, want nil", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		h.relay.mu.Lock()
		n := len(h.relay.conns)
		h.relay.mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the host still holds %d relay connections", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRelayBadToken: a relay with a token the host does not know is
// refused; it exits with an error and writes nothing to stdout.
func TestRelayBadToken(t *testing.T) {
	h, route := newRelayHost(t, nil)
	newSession(t, h, "/w/a.txt", "a\n")
	for _, token := range []string{strings.Repeat("0", 64), "short"} {
		r := startRelay(t, route, token)
		var out bytes.Buffer
		copied := make(chan struct{})
		go func() { io.Copy(&out, r.stdout); close(copied) }()
		io.WriteString(r.stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`+"\n")
		err := r.wait(t)
		if err == nil || !strings.Contains(err.Error(), "refused the token") {
			t.Errorf("token %q: RunRelay = %v, want a refusal", token, err)
		}
		<-copied
		if out.Len() != 0 {
			t.Errorf("token %q: the relay wrote %q to stdout", token, out.String())
		}
	}
}

// TestRelayEnvironment: without a usable socket or token the relay says so
// and writes nothing to stdout.
func TestRelayEnvironment(t *testing.T) {
	if !relaySupported() {
		t.Skip("no relay on " + runtime.GOOS + ": codex uses the HTTP route")
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	open := t.TempDir()
	if err := os.Chmod(open, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"no socket", map[string]string{RelayTokenEnv: "t"}, RelaySocketEnv},
		{"relative socket", map[string]string{RelaySocketEnv: "s", RelayTokenEnv: "t"}, RelaySocketEnv},
		{"no token", map[string]string{RelaySocketEnv: dir + "/s"}, RelayTokenEnv},
		{"token with a newline", map[string]string{RelaySocketEnv: dir + "/s", RelayTokenEnv: "a\nb"}, RelayTokenEnv},
		{"bad bound", map[string]string{RelaySocketEnv: dir + "/s", RelayTokenEnv: "t", RelayMaxEnv: "-1"}, RelayMaxEnv},
		{"no agent", map[string]string{RelaySocketEnv: dir + "/s", RelayTokenEnv: "t"}, "cannot reach the agent"},
		{"a directory others may enter", map[string]string{RelaySocketEnv: open + "/s", RelayTokenEnv: "t"}, "not the agent's socket"},
		{"no directory", map[string]string{RelaySocketEnv: dir + "/none/s", RelayTokenEnv: "t"}, "not the agent's socket"},
	} {
		var out bytes.Buffer
		err := RunRelay(strings.NewReader(""), &out, func(k string) string { return tc.env[k] })
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: RunRelay = %v, want an error naming %s", tc.name, err, tc.want)
		}
		if out.Len() != 0 {
			t.Errorf("%s: stdout got %q", tc.name, out.String())
		}
	}
}

// TestRelayOversizeMessage: a message from codex over the host's bound
// never reaches the agent; a request gets an error answer saying how to
// write in parts (as the HTTP route's 413), and the session goes on.
func TestRelayOversizeMessage(t *testing.T) {
	const limit = 64 << 10
	h, route := newRelayHost(t, &HostOptions{MaxRequestBodyBytes: limit})
	token, rec, mem := newSession(t, h, "/w/a.txt", "a\n")
	cs := startRelay(t, route, token).client(t)

	tooBig := strings.Repeat("x", 2*limit)
	_, err := cs.CallTool(context.Background(), &mcpsdk.CallToolParams{Name: fsops.ToolWriteTextFile,
		Arguments: map[string]any{"path": "/w/a.txt", "content": tooBig}})
	if err == nil || !strings.Contains(err.Error(), "request body exceeds 65536 bytes: write a large file in parts") {
		t.Fatalf("write over the bound: err = %v, want the advice", err)
	}
	if got, _ := getFile(mem, "/w/a.txt"); got != "a\n" {
		t.Errorf("file changed by the refused write (len %d)", len(got))
	}
	for _, e := range rec.snapshot() {
		if strings.Contains(string(e.call.Arguments), "xxxx") {
			t.Error("the refused request reached the tool")
		}
	}
	fits := strings.Repeat("y", limit/2)
	if res, sc := call(t, cs, fsops.ToolWriteTextFile, map[string]any{"path": "/w/a.txt", "content": fits}); res.IsError {
		t.Fatalf("a write within the bound after the refused one: %v", sc)
	}
}

// TestForwardBounded covers the codex → agent side on its own: lines pass
// whole and in order, blank lines are dropped, an unterminated last line
// is terminated, an oversize notification (no id) is dropped silently and
// an oversize request is answered.
func TestForwardBounded(t *testing.T) {
	const limit = 100
	long := `{"jsonrpc":"2.0","id":"r-7","method":"tools/call","params":{"x":"` + strings.Repeat("z", 3*relayBuffer) + `"}}`
	longNote := `{"jsonrpc":"2.0","method":"notifications/x","params":{"x":"` + strings.Repeat("z", 200) + `"}}`
	in := "{\"a\":1}\n\n" + long + "\n" + longNote + "\n{\"b\":2}\n{\"c\":3}"
	var agent, codex bytes.Buffer
	if err := forwardBounded(&agent, strings.NewReader(in), &lineWriter{w: &codex}, limit); err != nil {
		t.Fatal(err)
	}
	if want := "{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n"; agent.String() != want {
		t.Errorf("the agent got %q, want %q", agent.String(), want)
	}
	var answer struct {
		ID    string `json:"id"`
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	sc := bufio.NewScanner(&codex)
	if !sc.Scan() || json.Unmarshal(sc.Bytes(), &answer) != nil || answer.ID != "r-7" || answer.Error.Code != -32600 ||
		!strings.Contains(answer.Error.Message, "exceeds 100 bytes") {
		t.Errorf("codex got %q, want one error answer to r-7", codex.String())
	}
	if sc.Scan() {
		t.Errorf("codex got a second line %q", sc.Text())
	}
}

// TestCopyLines covers the agent → codex side: lines pass whole, long
// ones too, and an unterminated last line (the agent stopped mid-message)
// is not written.
func TestCopyLines(t *testing.T) {
	long := `{"x":"` + strings.Repeat("z", 3*relayBuffer) + `"}` + "\n"
	var codex bytes.Buffer
	if err := copyLines(&lineWriter{w: &codex}, strings.NewReader("{\"a\":1}\n"+long+`{"b":`)); err != nil {
		t.Fatal(err)
	}
	if want := "{\"a\":1}\n" + long; codex.String() != want {
		t.Errorf("codex got %d bytes ending %q, want %d", codex.Len(), codex.String()[max(0, codex.Len()-20):], len(want))
	}
}

func TestRequestID(t *testing.T) {
	for _, tc := range []struct{ prefix, want string }{
		{`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"arguments":{"content":"xxx`, `5`},
		{`{"id":"a\"b","jsonrpc":"2.0"`, `"a\"b"`},
		{`{"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"content":"xxx`, ``}, // id after the cut
		{`{"jsonrpc":"2.0","method":"notifications/cancelled"}`, ``},
		{`{"id":null}`, ``},
		{`[{"id":1}]`, ``},
		{`not json`, ``},
	} {
		if got := string(requestID([]byte(tc.prefix))); got != tc.want {
			t.Errorf("requestID(%.40q) = %q, want %q", tc.prefix, got, tc.want)
		}
	}
}

// TestRelaySocketRefusesBadClients: a connection to the socket whose first
// line is not a known token is closed.
func TestRelaySocketRefusesBadClients(t *testing.T) {
	h, route := newRelayHost(t, nil)
	newSession(t, h, "/w/a.txt", "a\n")
	for _, first := range []string{strings.Repeat("t", 200) + "\n", "unknown\n"} {
		c, err := net.Dial("unix", route.Env[RelaySocketEnv])
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, first)
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		n, err := c.Read(make([]byte, 1))
		if n != 0 || err == nil {
			t.Errorf("first line %.20q: read %d bytes, %v; want the connection closed", first, n, err)
		}
		c.Close()
	}
}

// TestRelayTokenRevokedWhileConnecting: a session unregistered between
// the host's check of a relay's token and its MCP session's start (when
// unregister finds no session of the server to close) does not leave that
// relay connected to the revoked server.
func TestRelayTokenRevokedWhileConnecting(t *testing.T) {
	var unregister func()
	h, route := newRelayHost(t, &HostOptions{relayAuthenticated: func() { unregister() }})
	var token string
	token, unregister = h.Register(NewServer(fsops.NewEngine(fsopstest.NewMemFiles()), nil))
	r := startRelay(t, route, token)
	if err := r.wait(t); err == nil || !strings.Contains(err.Error(), "the agent closed the connection") {
		t.Errorf("RunRelay = %v, want the agent closed the connection", err)
	}
}

// TestHostRelayRouteSocketGone: once the socket is gone (a cleaner of old
// temporary files removed it) codex is sent the HTTP route, not a relay
// that cannot connect, which would fail the thread (the server is
// required).
func TestHostRelayRouteSocketGone(t *testing.T) {
	h, route := newRelayHost(t, nil)
	socket := route.Env[RelaySocketEnv]
	if err := os.Remove(socket); err != nil {
		t.Fatal(err)
	}
	if r := h.Relay(); r != nil {
		t.Errorf("Relay() = %+v with the socket removed, want nil (HTTP)", r)
	}
	if err := os.RemoveAll(socket[:strings.LastIndexByte(socket, '/')]); err != nil {
		t.Fatal(err)
	}
	if r := h.Relay(); r != nil {
		t.Errorf("Relay() = %+v with the socket's directory removed, want nil (HTTP)", r)
	}
}

// TestRelayEndAgentGone: when the agent's end closes as codex sends it a
// message (a refused token: codex's initialize follows it at once), the
// write to the socket may fail before the read sees the end, and the read
// may see a reset (the agent closed with that message unread); the relay
// still says the agent closed the connection, not "broken pipe".
func TestRelayEndAgentGone(t *testing.T) {
	for _, tc := range []struct {
		name          string
		write, read   error
		writeFailsToo bool
	}{
		{"the write fails first", syscall.EPIPE, nil, true},
		{"the write fails, the read sees a reset", syscall.EPIPE, syscall.ECONNRESET, true},
		{"the read sees a reset", nil, syscall.ECONNRESET, false},
	} {
		agentDone, codexDone := make(chan error, 1), make(chan error)
		go func() {
			if tc.writeFailsToo {
				codexDone <- &agentWriteError{err: tc.write}
			}
			agentDone <- tc.read // the read sees the end once the write failed
		}()
		if err := relayEnd(agentDone, codexDone); err == nil || !strings.Contains(err.Error(), "the agent closed the connection") {
			t.Errorf("%s: relayEnd = %v, want the agent closed the connection", tc.name, err)
		}
	}
}

// TestRelaySocketSurvivesFlood: connections to the relay socket that show
// no token are capped as the HTTP listener's are (past the cap the oldest
// close), so a local flood pins at most that many descriptors, goroutines
// and read buffers; a relay connecting during the flood is served.
func TestRelaySocketSurvivesFlood(t *testing.T) {
	const max = 8
	// Flood connections stay unless the cap closes them: a flood outlives
	// any one connection's time to show a token.
	h, route := newRelayHost(t, &HostOptions{MaxUnauthenticatedConns: max, relayAuthTimeout: time.Hour})
	tok, _, _ := newSession(t, h, "/w/a.txt", "during the flood\n")
	var flood []net.Conn
	defer func() {
		for _, c := range flood {
			c.Close()
		}
	}()
	for range 10 * max {
		c, err := net.Dial("unix", route.Env[RelaySocketEnv])
		if err != nil {
			t.Fatal(err)
		}
		flood = append(flood, c)
	}
	cs := startRelay(t, route, tok).client(t)
	if _, sc := call(t, cs, fsops.ToolReadTextFile, map[string]any{"path": "/w/a.txt"}); !strings.Contains(sc["content"].(string), "during the flood") {
		t.Errorf("read during the flood = %v", sc)
	}
	// Every flood connection but the newest max was closed by the host.
	closed, deadline := 0, time.Now().Add(30*time.Second) // bounds a failure's wait only
	for _, c := range flood {
		c.SetReadDeadline(deadline)
		if _, err := c.Read(make([]byte, 1)); err == io.EOF {
			closed++
		}
		if closed >= len(flood)-max {
			break
		}
	}
	if closed < len(flood)-max {
		t.Errorf("flood connections closed by the host: %d of %d, want at least %d", closed, len(flood), len(flood)-max)
	}
}
