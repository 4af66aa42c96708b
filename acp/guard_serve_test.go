package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/internal/stress"
	"github.com/codexacp/codexacp/internal/testkit"
)

// rawEditor drives Agent.Serve line by line, for input an SDK client would
// never send.
type rawEditor struct {
	agent *Agent
	out   chan []byte // to the agent's stdin, in order
	lines chan []byte // the agent's output; closed once Serve has returned
}

func serveRaw(tb testing.TB, opts Options) *rawEditor {
	tb.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	if opts.Logger == nil {
		opts.Logger = discardLogger()
	}
	e := &rawEditor{agent: NewAgent(opts), out: make(chan []byte, 16), lines: make(chan []byte, 16)}
	// One writer keeps the order; writing from the test's goroutine could
	// block it on an agent that stopped reading, instead of failing in next.
	go func() {
		for b := range e.out {
			_, _ = inW.Write(b)
		}
	}()
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = e.agent.Serve(context.Background(), inR, outW)
		outW.Close()
	}()
	go func() {
		defer close(e.lines)
		r := bufio.NewReader(outR)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				e.lines <- line
			}
			if err != nil {
				return
			}
		}
	}()
	tb.Cleanup(func() {
		close(e.out)
		inW.Close()
		go func() {
			for range e.lines {
			}
		}()
		<-served
	})
	return e
}

// send queues lines for the agent's stdin.
func (e *rawEditor) send(lines ...string) {
	e.out <- []byte(strings.Join(lines, "\n") + "\n")
}

// next is the agent's next output line; the test fails if the agent has
// stopped serving.
func (e *rawEditor) next(tb testing.TB) rawMessage {
	tb.Helper()
	line, ok := <-e.lines
	if !ok {
		tb.Fatal("the agent stopped serving")
	}
	var m rawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		tb.Fatalf("agent wrote %q: %v", line, err)
	}
	m.line = line
	return m
}

type rawMessage struct {
	ID     json.RawMessage      `json:"id"`
	Method string               `json:"method"`
	Result json.RawMessage      `json:"result"`
	Error  *acpsdk.RequestError `json:"error"`
	line   []byte
}

func (e *rawEditor) initialize(tb testing.TB) {
	tb.Helper()
	e.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":1}}`)
	if m := e.next(tb); string(m.ID) != `"init"` || m.Error != nil {
		tb.Fatalf("initialize: %s", m.line)
	}
}

// gatedLogger blocks the SDK's notification loop in its first "failed to
// handle notification" log until release is closed: a notification handler
// slower than the editor sends, so that a queue in the SDK would fill up.
func gatedLogger(release <-chan struct{}) *slog.Logger {
	return slog.New(&gate{Handler: slog.NewTextHandler(io.Discard, nil), release: release})
}

type gate struct {
	slog.Handler
	release <-chan struct{}
}

func (g *gate) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "failed to handle notification" {
		<-g.release
	}
	return g.Handler.Handle(ctx, r)
}

func (g *gate) WithAttrs(as []slog.Attr) slog.Handler {
	return &gate{Handler: g.Handler.WithAttrs(as), release: g.release}
}

func (g *gate) WithGroup(name string) slog.Handler {
	return &gate{Handler: g.Handler.WithGroup(name), release: g.release}
}

// 100,000 notifications of every kind (20,000 in the quick loop: still
// 4,000 of each kind, past the SDK's queue of 1,024), sent at once while
// notifications are handled slowly, leave the agent serving:
// every request among them is answered and the session they cancel still
// works.
func TestServeSurvivesNotificationBurst(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	e := serveRaw(t, Options{Backend: &fakeBackend{}, Logger: gatedLogger(release)})
	e.initialize(t)
	e.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"new","method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, t.TempDir()))
	var session struct{ SessionID string }
	if m := e.next(t); m.Error != nil || json.Unmarshal(m.Result, &session) != nil {
		t.Fatalf("session/new: %s", m.line)
	}

	burst, requests := testkit.NotificationBurst(stress.Size(t, 20_000, 100_000), session.SessionID)
	e.out <- burst
	answered := map[string]bool{}
	for n := 0; n < requests; {
		m := e.next(t)
		if m.Method == "session/update" {
			continue // the session's commands
		}
		n++
		if m.Error != nil || !strings.HasPrefix(string(m.ID), `"burst-`) {
			t.Fatalf("unexpected answer during the burst: %s", m.line)
		}
		answered[string(m.ID)] = true
	}
	if len(answered) != requests {
		t.Errorf("%d distinct requests answered, want %d", len(answered), requests)
	}

	e.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"mode","method":"session/set_mode","params":{"sessionId":%q,"modeId":"read-only"}}`, session.SessionID))
	for {
		m := e.next(t)
		if m.Method == "session/update" {
			continue
		}
		if string(m.ID) != `"mode"` || m.Error != nil {
			t.Fatalf("session/set_mode after the burst: %s", m.line)
		}
		break
	}
}

// A request with "id": null is answered with Invalid Request, id null: the
// SDK would take it for a notification and never answer.
func TestServeNullIDAnswered(t *testing.T) {
	t.Parallel()
	e := serveRaw(t, Options{Backend: &fakeBackend{}})
	e.send(`{"jsonrpc":"2.0","id":null,"method":"initialize","params":{"protocolVersion":1}}`,
		`{"jsonrpc":"2.0","id":"next","method":"initialize","params":{"protocolVersion":1}}`)
	// The guard answers before it reads on, so the error comes first.
	if m := e.next(t); string(m.ID) != "null" || m.Error == nil || m.Error.Code != -32600 {
		t.Fatalf("answer %s, want Invalid Request with id null", m.line)
	}
	if m := e.next(t); string(m.ID) != `"next"` || m.Error != nil {
		t.Fatalf("answer %s, want the next request's", m.line)
	}
}

// An initialize whose protocolVersion is a decimal string is taken as the
// number; other strings are still refused.
func TestServeStringProtocolVersion(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		version string
		code    int // 0: answered with protocolVersion 1
	}{
		{`1`, 0},
		{`"1"`, 0},
		{`"2"`, 0},
		{`"one"`, -32602},
		{`"1.5"`, -32602},
	} {
		t.Run(tc.version, func(t *testing.T) {
			e := serveRaw(t, Options{Backend: &fakeBackend{}})
			e.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":` + tc.version + `,"clientCapabilities":{}}}`)
			m := e.next(t)
			var resp acpsdk.InitializeResponse
			switch {
			case string(m.ID) != "1":
				t.Fatalf("answer %s", m.line)
			case tc.code != 0 && (m.Error == nil || m.Error.Code != tc.code):
				t.Errorf("answer %s, want error %d", m.line, tc.code)
			case tc.code == 0 && (m.Error != nil || json.Unmarshal(m.Result, &resp) != nil || resp.ProtocolVersion != 1):
				t.Errorf("answer %s, want protocolVersion 1", m.line)
			}
		})
	}
}

// The editor answering one of our requests with more than 10 MiB fails
// that request at once instead of leaving it waiting forever, and the editor
// gets no error for its response.
func TestServeOversizedResponseFailsRequest(t *testing.T) {
	t.Parallel()
	e := serveRaw(t, Options{Backend: &fakeBackend{}})
	e.initialize(t) // also orders Serve's setup of the connection before its use here

	type result struct {
		resp acpsdk.ReadTextFileResponse
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := e.agent.conn.ReadTextFile(context.Background(), acpsdk.ReadTextFileRequest{SessionId: "s", Path: "/big.txt"})
		done <- result{resp, err}
	}()
	req := e.next(t)
	if req.Method != "fs/read_text_file" {
		t.Fatalf("agent sent %s", req.line)
	}
	e.send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"content":"` + strings.Repeat("a", 12<<20) + `"}}`)
	e.send(`{"jsonrpc":"2.0","id":"after","method":"initialize","params":{"protocolVersion":1}}`)
	if m := e.next(t); string(m.ID) != `"after"` {
		t.Fatalf("the editor got %.300s, want only the answer to the next request", m.line)
	}
	r := <-done
	if r.err == nil || !strings.Contains(r.err.Error(), "larger than 10 MiB") {
		t.Errorf("fs/read_text_file = %d bytes, %v; want the too-large error", len(r.resp.Content), r.err)
	}
}

// discardLogger is testkit.DiscardLogger, under the name these tests use.
var discardLogger = testkit.DiscardLogger
