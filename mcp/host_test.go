package mcp

import (
	"bufio"
	"context"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codexacp/codexacp/fsops"
	"github.com/codexacp/codexacp/fsops/fsopstest"
	"github.com/codexacp/codexacp/internal/syncbuf"
)

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// post sends one raw MCP POST and returns the status and body.
func post(t *testing.T, url string, header map[string]string, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// newSession registers a server over a MemFiles holding one file.
func newSession(t *testing.T, h *Host, path, content string) (token string, rec *recorder, mem *fsopstest.MemFiles) {
	t.Helper()
	mem = fsopstest.NewMemFiles()
	setFile(mem, path, content)
	rec = &recorder{}
	token, unregister := h.Register(NewServer(fsops.NewEngine(mem), rec))
	t.Cleanup(unregister)
	return token, rec, mem
}

func TestHostURLAndTokens(t *testing.T) {
	t.Parallel()
	h := newTestHost(t, nil)
	if !strings.HasPrefix(h.URL(), "http://127.0.0.1:") || !strings.HasSuffix(h.URL(), "/mcp") {
		t.Errorf("URL = %q, want http://127.0.0.1:PORT/mcp", h.URL())
	}
	seen := make(map[string]bool)
	for range 20 {
		tok, unregister := h.Register(NewServer(fsops.NewEngine(fsopstest.NewMemFiles()), nil))
		defer unregister()
		b, err := hex.DecodeString(tok)
		if err != nil || len(b) != 32 {
			t.Fatalf("token %q is not 256 bits of hex", tok)
		}
		if seen[tok] {
			t.Fatalf("token %q issued twice", tok)
		}
		seen[tok] = true
	}
}

// TestHostRejectsUnauthenticated checks that a request without a valid
// token gets the same 401 whatever was wrong, before any tool runs.
func TestHostRejectsUnauthenticated(t *testing.T) {
	t.Parallel()
	h := newTestHost(t, nil)
	token, rec, _ := newSession(t, h, "/w/a.txt", "secret\n")
	callBody := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"/w/a.txt"}}}`

	tests := []struct {
		name   string
		header map[string]string
	}{
		{"missing", nil},
		{"empty bearer", map[string]string{"Authorization": "Bearer "}},
		{"wrong token", map[string]string{"Authorization": "Bearer " + strings.Repeat("0", 64)}},
		{"token prefix", map[string]string{"Authorization": "Bearer " + token[:32]}},
		{"token with suffix", map[string]string{"Authorization": "Bearer " + token + "0"}},
		{"other scheme", map[string]string{"Authorization": "Basic " + token}},
		{"bare token", map[string]string{"Authorization": token}},
	}
	var firstBody string
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, body := range []string{initializeBody, callBody} {
				status, got := post(t, h.URL(), tt.header, body)
				if status != http.StatusUnauthorized {
					t.Errorf("status = %d, want 401", status)
				}
				if firstBody == "" {
					firstBody = got
				} else if got != firstBody {
					t.Errorf("body %q differs from %q: must not tell what was wrong", got, firstBody)
				}
			}
		})
	}
	if ev := rec.snapshot(); len(ev) != 0 {
		t.Errorf("observer saw %v, want nothing", rec.kinds())
	}

	// The go-sdk client cannot connect either.
	if _, err := tryDialHTTP(h.URL(), ""); err == nil {
		t.Error("client without token connected")
	}
	if _, err := tryDialHTTP(h.URL(), strings.Repeat("ab", 32)); err == nil {
		t.Error("client with wrong token connected")
	}
	// And the right token works, also with a lower-case scheme.
	if status, _ := post(t, h.URL(), map[string]string{"Authorization": "bearer " + token}, initializeBody); status != http.StatusOK {
		t.Errorf("valid token: status %d, want 200", status)
	}
}

// TestHostIsolatesSessions checks that a token reaches only its own
// session's files, and that session ids do not cross tokens.
func TestHostIsolatesSessions(t *testing.T) {
	t.Parallel()
	h := newTestHost(t, nil)
	tokA, recA, memA := newSession(t, h, "/w/file.txt", "A's file\n")
	tokB, recB, memB := newSession(t, h, "/w/file.txt", "B's file\n")

	csA := dialHTTP(t, h.URL(), tokA)
	csB := dialHTTP(t, h.URL(), tokB)
	_, scA := call(t, csA, fsops.ToolReadTextFile, map[string]any{"path": "/w/file.txt"})
	_, scB := call(t, csB, fsops.ToolReadTextFile, map[string]any{"path": "/w/file.txt"})
	if !strings.Contains(scA["content"].(string), "A's file") || !strings.Contains(scB["content"].(string), "B's file") {
		t.Fatalf("A read %q, B read %q", scA["content"], scB["content"])
	}

	// A writes; B's file does not change.
	if res, sc := call(t, csA, fsops.ToolWriteTextFile, map[string]any{"path": "/w/file.txt", "content": "changed by A\n"}); res.IsError {
		t.Fatalf("write: %v", sc)
	}
	if got, _ := getFile(memA, "/w/file.txt"); got != "changed by A\n" {
		t.Errorf("A's file = %q", got)
	}
	if got, _ := getFile(memB, "/w/file.txt"); got != "B's file\n" {
		t.Errorf("B's file = %q, want untouched", got)
	}

	// B's token with A's MCP session id: not found (each token has its own
	// handler), and A's observer hears nothing of it.
	before := len(recA.snapshot())
	status, _ := post(t, h.URL(), map[string]string{"Authorization": "Bearer " + tokB, "Mcp-Session-Id": csA.ID(), "Mcp-Protocol-Version": "2025-06-18"},
		`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"write_text_file","arguments":{"path":"/w/file.txt","content":"from B"}}}`)
	if status != http.StatusNotFound {
		t.Errorf("B's token with A's session id: status %d, want 404", status)
	}
	if got := len(recA.snapshot()); got != before {
		t.Errorf("A's observer saw %d new events", got-before)
	}
	if got, _ := getFile(memA, "/w/file.txt"); got != "changed by A\n" {
		t.Errorf("A's file = %q after B's attempt", got)
	}
	if len(recB.snapshot()) != 2 {
		t.Errorf("B's observer saw %v, want only its read", recB.kinds())
	}
}

func TestHostUnregister(t *testing.T) {
	t.Parallel()
	h := newTestHost(t, nil)
	mem := fsopstest.NewMemFiles()
	setFile(mem, "/w/a.txt", "a\n")
	token, unregister := h.Register(NewServer(fsops.NewEngine(mem), nil))
	cs := dialHTTP(t, h.URL(), token)
	call(t, cs, fsops.ToolReadTextFile, map[string]any{"path": "/w/a.txt"})

	unregister()
	unregister() // idempotent

	if _, err := cs.CallTool(context.Background(), &mcpsdk.CallToolParams{Name: fsops.ToolReadTextFile, Arguments: map[string]any{"path": "/w/a.txt"}}); err == nil {
		t.Error("call after unregister succeeded")
	}
	if status, _ := post(t, h.URL(), map[string]string{"Authorization": "Bearer " + token}, initializeBody); status != http.StatusUnauthorized {
		t.Errorf("revoked token: status %d, want 401", status)
	}
}

// TestHostRejectsForeignHost checks that the go-sdk's DNS-rebinding
// protection is on: a valid token with a non-loopback Host header is refused.
func TestHostRejectsForeignHost(t *testing.T) {
	t.Parallel()
	h := newTestHost(t, nil)
	token, rec, _ := newSession(t, h, "/w/a.txt", "a\n")
	for _, host := range []string{"evil.example:80", "attacker.test"} {
		status, _ := post(t, h.URL(), map[string]string{"Authorization": "Bearer " + token, "Host": host}, initializeBody)
		if status != http.StatusForbidden {
			t.Errorf("Host %q: status %d, want 403", host, status)
		}
	}
	if status, _ := post(t, h.URL(), map[string]string{"Authorization": "Bearer " + token, "Host": "localhost"}, initializeBody); status != http.StatusOK {
		t.Errorf("Host localhost: status %d, want 200", status)
	}
	if ev := rec.snapshot(); len(ev) != 0 {
		t.Errorf("observer saw %v", rec.kinds())
	}
}

func TestHostUnknownPath(t *testing.T) {
	t.Parallel()
	h := newTestHost(t, nil)
	token, _, _ := newSession(t, h, "/w/a.txt", "a\n")
	url := strings.TrimSuffix(h.URL(), "/mcp") + "/other"
	if status, _ := post(t, url, map[string]string{"Authorization": "Bearer " + token}, initializeBody); status != http.StatusNotFound {
		t.Errorf("status %d, want 404", status)
	}
	if status, _ := post(t, url, nil, initializeBody); status != http.StatusUnauthorized {
		t.Errorf("without token: status %d, want 401", status)
	}
}

// TestHostBodyLimit checks that a write of a few MiB works and that a body
// over the limit is refused with 413 before any tool runs, leaving the
// file untouched.
func TestHostBodyLimit(t *testing.T) {
	t.Parallel()
	h := newTestHost(t, nil)
	token, rec, mem := newSession(t, h, "/w/big.txt", "small\n")
	cs := dialHTTP(t, h.URL(), token)

	big := strings.Repeat("0123456789abcdef\n", 3<<20/17) // ~3 MiB
	res, sc := call(t, cs, fsops.ToolWriteTextFile, map[string]any{"path": "/w/big.txt", "content": big})
	if res.IsError || sc["bytes_written"].(float64) != float64(len(big)) {
		t.Fatalf("3 MiB write: %v", sc)
	}

	tooBig := strings.Repeat("x", DefaultMaxRequestBodyBytes)
	_, err := cs.CallTool(context.Background(), &mcpsdk.CallToolParams{Name: fsops.ToolWriteTextFile,
		Arguments: map[string]any{"path": "/w/big.txt", "content": tooBig}})
	if err == nil || !strings.Contains(err.Error(), "Request Entity Too Large") {
		t.Fatalf("write over the body limit: err = %v, want 413", err)
	}
	if got, _ := getFile(mem, "/w/big.txt"); got != big {
		t.Errorf("file changed by the refused write (len %d)", len(got))
	}
	for _, e := range rec.snapshot() {
		if e.kind == "started" && strings.Contains(string(e.call.Arguments), "xxxx") {
			t.Error("the refused request reached the tool")
		}
	}

	// The go-sdk client gives up on its session after the 413; the server
	// is fine: a new session works, and a raw request over the limit on
	// that session gets 413 without ending the session.
	cs2 := dialHTTP(t, h.URL(), token)
	status, body := post(t, h.URL(), map[string]string{"Authorization": "Bearer " + token, "Mcp-Session-Id": cs2.ID(), "Mcp-Protocol-Version": "2025-06-18"},
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"write_text_file","arguments":{"path":"/w/big.txt","content":"`+tooBig+`"}}}`)
	if status != http.StatusRequestEntityTooLarge || !strings.Contains(body, "request body exceeds 8388608 bytes: write a large file in parts") {
		t.Errorf("status %d (%.100s), want 413 with advice", status, body)
	}
	// Without a Content-Length (chunked), the go-sdk's own limit applies.
	req, _ := http.NewRequest(http.MethodPost, h.URL(), io.MultiReader(strings.NewReader(
		`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"write_text_file","arguments":{"path":"/w/big.txt","content":"`+tooBig+`"}}}`)))
	req.Header = http.Header{"Authorization": {"Bearer " + token}, "Mcp-Session-Id": {cs2.ID()}, "Mcp-Protocol-Version": {"2025-06-18"},
		"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("chunked: status %d, want 413", resp.StatusCode)
	}
	if _, sc := call(t, cs2, fsops.ToolReadTextFile, map[string]any{"path": "/w/big.txt", "limit": 1}); sc["total_lines"] != float64(strings.Count(big, "\n")) {
		t.Errorf("read after 413: %v", sc)
	}
}

func TestHostCustomBodyLimit(t *testing.T) {
	t.Parallel()
	h := newTestHost(t, &HostOptions{MaxRequestBodyBytes: 4096})
	token, _, _ := newSession(t, h, "/w/a.txt", "a\n")
	status, _ := post(t, h.URL(), map[string]string{"Authorization": "Bearer " + token},
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"`+strings.Repeat("n", 5000)+`","version":"1"}}}`)
	if status != http.StatusRequestEntityTooLarge {
		t.Errorf("status %d, want 413", status)
	}
}

func TestHostClose(t *testing.T) {
	t.Parallel()
	h, err := NewHost(nil)
	if err != nil {
		t.Fatal(err)
	}
	mem := fsopstest.NewMemFiles()
	setFile(mem, "/w/a.txt", "a\n")
	token, unregister := h.Register(NewServer(fsops.NewEngine(mem), nil))
	cs := dialHTTP(t, h.URL(), token) // holds a standalone SSE stream open
	call(t, cs, fsops.ToolReadTextFile, map[string]any{"path": "/w/a.txt"})

	if err := h.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := h.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	unregister() // after Close: harmless
	if _, err := http.Post(h.URL(), "application/json", strings.NewReader(initializeBody)); err == nil {
		t.Error("host still answers after Close")
	}
	// Registering on a closed host yields a token that is never accepted.
	tok, unreg := h.Register(NewServer(fsops.NewEngine(mem), nil))
	defer unreg()
	if h.authenticate(&http.Request{Header: http.Header{"Authorization": {"Bearer " + tok}}}) != nil {
		t.Error("closed host accepted a new token")
	}
}

// TestUnknownTool documents what the model sees for a tool that does not
// exist: the go-sdk answers with a JSON-RPC invalid-params error.
func TestUnknownTool(t *testing.T) {
	t.Parallel()
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			rec := &recorder{}
			cs := tr.connect(t, NewServer(fsops.NewEngine(fsopstest.NewMemFiles()), rec))
			_, err := cs.CallTool(context.Background(), &mcpsdk.CallToolParams{Name: "delete_file", Arguments: map[string]any{}})
			if err == nil || !strings.Contains(err.Error(), `unknown tool "delete_file"`) {
				t.Errorf("err = %v, want unknown tool", err)
			}
			if len(rec.snapshot()) != 0 {
				t.Errorf("observer saw %v", rec.kinds())
			}
		})
	}
}

// failsafe bounds a raw connection's reads in the tests below, so that a
// host that never closes fails the test instead of hanging it. It is far
// longer than any timeout those tests configure.
const failsafe = 10 * time.Second

// rawRequest opens a connection to h and sends req as it is.
func rawRequest(t *testing.T, h *Host, req string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", h.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetReadDeadline(time.Now().Add(failsafe))
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	return c
}

// waitClosed reads c to its end and fails the test unless the host closed
// it (rather than the failsafe expiring).
func waitClosed(t *testing.T, r io.Reader) {
	t.Helper()
	if _, err := io.Copy(io.Discard, r); err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("the host kept the connection open for %v", failsafe)
		}
		// A reset also means closed.
	}
}

// TestHostClosesUnauthenticatedUnread checks that a request without a
// valid token that announces a body and never sends it gets its 401 at
// once and its connection closed, with no read timeout to help: the host
// does not wait for the body (issue 9: such connections piled up until the
// agent ran out of file descriptors).
func TestHostClosesUnauthenticatedUnread(t *testing.T) {
	t.Parallel()
	h := newTestHost(t, &HostOptions{ReadTimeout: time.Hour})
	newSession(t, h, "/w/a.txt", "a\n")
	host := h.ln.Addr().String()
	for _, auth := range []string{"", "Authorization: Bearer " + strings.Repeat("0", 64) + "\r\n"} {
		c := rawRequest(t, h, "POST /mcp HTTP/1.1\r\nHost: "+host+"\r\n"+auth+"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("no response: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || !resp.Close {
			t.Errorf("status %d, close %v: want 401 and Connection: close", resp.StatusCode, resp.Close)
		}
		waitClosed(t, br)
	}
}

// TestHostBoundsRequestReads checks that ReadTimeout ends requests whose
// headers or body never finish, also for a client with a valid token.
func TestHostBoundsRequestReads(t *testing.T) {
	t.Parallel()
	h := newTestHost(t, &HostOptions{ReadTimeout: 100 * time.Millisecond})
	token, rec, _ := newSession(t, h, "/w/a.txt", "a\n")
	host := h.ln.Addr().String()
	for name, req := range map[string]string{
		"headers": "POST /mcp HTTP/1.1\r\nHost: " + host + "\r\nAuthorization: Bearer " + token + "\r\nContent-Le",
		"body": "POST /mcp HTTP/1.1\r\nHost: " + host + "\r\nAuthorization: Bearer " + token + "\r\n" +
			"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\"",
	} {
		t.Run(name, func(t *testing.T) {
			waitClosed(t, rawRequest(t, h, req))
		})
	}
	if ev := rec.snapshot(); len(ev) != 0 {
		t.Errorf("observer saw %v", rec.kinds())
	}
}

// slowFiles delays every read by delay.
type slowFiles struct {
	*fsopstest.MemFiles
	delay time.Duration
}

func (s slowFiles) ReadFile(ctx context.Context, path string) ([]byte, error) {
	select {
	case <-time.After(s.delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return s.MemFiles.ReadFile(ctx, path)
}

// TestHostCallOutlivesReadTimeout checks that ReadTimeout bounds reading
// requests only: a call that takes longer (as one waiting for the user's
// permission does) is answered, and the session's streams survive it.
func TestHostCallOutlivesReadTimeout(t *testing.T) {
	t.Parallel()
	const readTimeout = 100 * time.Millisecond
	h := newTestHost(t, &HostOptions{ReadTimeout: readTimeout})
	mem := fsopstest.NewMemFiles()
	setFile(mem, "/w/a.txt", "slow\n")
	token, unregister := h.Register(NewServer(fsops.NewEngine(slowFiles{mem, 2 * readTimeout}), nil))
	t.Cleanup(unregister)
	cs := dialHTTP(t, h.URL(), token)
	for range 2 {
		if _, sc := call(t, cs, fsops.ToolReadTextFile, map[string]any{"path": "/w/a.txt"}); sc["content"] != "slow\n" {
			t.Fatalf("read: %v", sc)
		}
	}
}

// TestToolPanicLogsToHostLogger checks that a tool's panic is logged
// through the logger of the host serving it, not the global one.
func TestToolPanicLogsToHostLogger(t *testing.T) {
	var hostLog, globalLog syncbuf.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&globalLog, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })

	h := newTestHost(t, &HostOptions{Logger: slog.New(slog.NewTextHandler(&hostLog, nil))})
	token, unregister := h.Register(NewServer(fsops.NewEngine(panicFiles{fsopstest.NewMemFiles()}), nil))
	t.Cleanup(unregister)
	res, sc := call(t, dialHTTP(t, h.URL(), token), fsops.ToolReadTextFile, map[string]any{"path": "/w/a.txt"})
	if code, _, _ := toolErr(t, res, sc); code != fsops.CodeInternal {
		t.Errorf("code %d, want internal error", code)
	}
	if got := hostLog.String(); !strings.Contains(got, "recovered from a panic") || !strings.Contains(got, "boom") {
		t.Errorf("host log = %.200q, want the panic", got)
	}
	if got := globalLog.String(); strings.Contains(got, "boom") {
		t.Errorf("global log has the panic: %.200s", got)
	}
}
