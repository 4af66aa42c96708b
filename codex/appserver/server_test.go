package appserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codexacp/codexacp/codex/proc"
	"github.com/codexacp/codexacp/codex/proc/proctest"
	"github.com/codexacp/codexacp/internal/recovery"
	"github.com/codexacp/codexacp/internal/stress"
)

// fakeAppServerEnv makes the test binary a fake `codex app-server` (see
// TestMain); its value is the mode.
const fakeAppServerEnv = "CODEXACP_TEST_FAKE_APPSERVER"

// appServerAgentEnv makes the test binary an agent that starts the fake
// app-server in the mode given and waits to be killed.
const appServerAgentEnv = "CODEXACP_TEST_APPSERVER_AGENT"

func TestMain(m *testing.M) {
	if mode, ok := os.LookupEnv(fakeAppServerEnv); ok {
		os.Exit(fakeAppServer(mode))
	}
	if mode, ok := os.LookupEnv(appServerAgentEnv); ok {
		c, err := Start(context.Background(), Options{Path: os.Args[0],
			Env: append(os.Environ(), fakeAppServerEnv+"="+mode), Logger: slogDiscard})
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		fmt.Printf("app-server %d\n", c.Pid())
		time.Sleep(time.Hour)
	}
	os.Exit(recovery.Main(m)) // a recovered panic fails the tests too (internal/recovery)
}

// fakeAppServer speaks enough of the app-server protocol for the client's
// tests. Modes: "" (normal: exits 0 at the end of stdin), "ignore-eof"
// (stays after it, ignoring SIGINT), "fail-init" (exits 2 with a message at
// once), "mute" (never answers).
func fakeAppServer(mode string) int {
	switch mode {
	case "fail-init":
		fmt.Fprintln(os.Stderr, "\x1b[31mERROR\x1b[0m error: bad config")
		return 2
	case "ignore-eof":
		signal.Ignore(os.Interrupt)
	}
	f := &fake{out: bufio.NewWriter(os.Stdout), in: bufio.NewReaderSize(os.Stdin, 1<<20),
		turns: []string{"turn-1", "turn-2", "turn-3", "turn-4", "turn-5"}}
	for {
		line, err := f.in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 && mode != "mute" {
			if code, exit := f.handle(line); exit {
				return code
			}
		}
		if err != nil {
			break
		}
	}
	if mode == "ignore-eof" {
		time.Sleep(time.Hour)
	}
	return 0
}

type fake struct {
	mu          sync.Mutex
	out         *bufio.Writer
	in          *bufio.Reader
	clientInfo  json.RawMessage
	initialized bool
	children    []*exec.Cmd
	// A stored thread of 5 turns, turn-1 … turn-5, for the revert tests:
	// loaded by thread/resume, cut by thread/revert.
	loaded bool
	turns  []string
	held   []func() // the answers to "late" calls, sent at "release"
}

func (f *fake) write(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.out.Write(append(b, '\n'))
	f.out.Flush()
}

func (f *fake) writeRaw(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.out.WriteString(s + "\n")
	f.out.Flush()
}

type fakeParams struct {
	ThreadID string          `json:"threadId,omitempty"`
	Thread   json.RawMessage `json:"thread,omitempty"`
	ConvID   string          `json:"conversationId,omitempty"`
	Method   string          `json:"method,omitempty"`
	Count    int             `json:"count,omitempty"`
	Size     int             `json:"size,omitempty"`
	Tag      string          `json:"tag,omitempty"`
}

// handle answers one message; exit says the fake ends with code.
func (f *fake) handle(line []byte) (code int, exit bool) {
	var m struct {
		JSONRPC *string         `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(line, &m); err != nil {
		fmt.Fprintf(os.Stderr, "fake: bad line %q\n", line)
		return 1, true
	}
	var p fakeParams
	json.Unmarshal(m.Params, &p)
	reply := func(result any) { f.write(map[string]any{"id": m.ID, "result": result}) }
	switch m.Method {
	case "initialize":
		var ip struct{ ClientInfo json.RawMessage }
		json.Unmarshal(m.Params, &ip)
		f.clientInfo = ip.ClientInfo
		reply(map[string]any{"userAgent": "fake/0"})
		f.write(map[string]any{"method": "configWarning", "params": map[string]any{"summary": "unrouted"}})
	case "initialized":
		f.initialized = true
	case "config/read":
		// A project's settings where the question names a cwd.
		var cp struct{ Cwd string }
		json.Unmarshal(m.Params, &cp)
		mode := any(nil)
		if cp.Cwd != "" {
			mode = "workspace-write"
		}
		reply(map[string]any{"config": map[string]any{"sandbox_mode": mode, "approval_policy": "never"}})
	case "skills/list":
		var sp struct{ Cwds []string }
		json.Unmarshal(m.Params, &sp)
		reply(map[string]any{"data": []any{map[string]any{"cwd": sp.Cwds[0], "skills": []any{
			map[string]any{"name": "greet", "description": "Say hello", "path": sp.Cwds[0] + "/.agents/skills/greet/SKILL.md", "scope": "repo", "enabled": true},
			map[string]any{"name": "off", "scope": "user", "enabled": false},
		}}}})
	case "whoami":
		_, backtrace := os.LookupEnv("RUST_BACKTRACE")
		reply(map[string]any{"args": os.Args[1:], "backtrace": backtrace, "clientInfo": f.clientInfo,
			"initialized": f.initialized, "jsonrpc": m.JSONRPC != nil})
	case "echo":
		reply(m.Params)
	case "thread/turns/list":
		// Pages of limit turns, newest first, as codex lists them.
		var lp struct {
			Limit         int
			Cursor        string
			SortDirection string
		}
		json.Unmarshal(m.Params, &lp)
		start := 0
		fmt.Sscan(lp.Cursor, &start)
		var data []any
		next := any(nil)
		for i := start; i < len(f.turns); i++ {
			if len(data) == lp.Limit {
				next = fmt.Sprint(i)
				break
			}
			data = append(data, map[string]any{"id": f.turns[len(f.turns)-1-i]})
		}
		if lp.SortDirection != "desc" {
			data = nil
		}
		reply(map[string]any{"data": data, "nextCursor": next})
	case "thread/resume":
		f.loaded = true
		reply(map[string]any{"thread": map[string]any{"id": p.ThreadID}})
	case "thread/revert":
		var rp struct{ BeforeTurnID string }
		json.Unmarshal(m.Params, &rp)
		i := slices.Index(f.turns, rp.BeforeTurnID)
		if !f.loaded || i < 0 {
			f.write(map[string]any{"id": m.ID, "error": map[string]any{"code": -32600, "message": "thread not found: " + p.ThreadID}})
			break
		}
		f.turns = f.turns[:i]
		reply(map[string]any{"thread": map[string]any{"id": p.ThreadID, "turns": []any{}}})
	case "fail":
		f.write(map[string]any{"id": m.ID, "error": map[string]any{"code": 4242, "message": "nope", "data": map[string]int{"x": 1}}})
	case "reject":
		// As codex's parse errors do, quoting what it got.
		f.write(map[string]any{"id": m.ID, "error": map[string]any{"code": -32600, "message": "Invalid request: " + string(m.Params)}})
	case "notify":
		// count notifications naming the thread the way params do.
		for i := range p.Count {
			params := map[string]any{"seq": i}
			if p.ThreadID != "" {
				params["threadId"] = p.ThreadID
			}
			if p.Thread != nil {
				params["thread"] = p.Thread
			}
			if p.ConvID != "" {
				params["conversationId"] = p.ConvID
			}
			f.write(map[string]any{"method": p.Method, "params": params})
		}
		reply(map[string]any{})
	case "ask":
		// count notifications, then a request of the thread; the answer
		// to that request is the result.
		for i := range p.Count {
			f.write(map[string]any{"method": "item/agentMessage/delta", "params": map[string]any{"threadId": p.ThreadID, "seq": i}})
		}
		f.write(map[string]any{"id": "srv-1", "method": p.Method, "params": map[string]any{"threadId": p.ThreadID}})
		for {
			l, err := f.in.ReadBytes('\n')
			if err != nil {
				return 1, true
			}
			var a struct{ ID json.RawMessage }
			if json.Unmarshal(l, &a) == nil && string(a.ID) == `"srv-1"` {
				reply(json.RawMessage(l))
				break
			}
		}
	case "huge":
		// Written raw: encoding 12 MiB under the race detector takes seconds.
		text := strings.Repeat("x", p.Size)
		f.writeRaw(`{"method":"item/agentMessage/delta","params":{"threadId":"` + p.ThreadID + `","delta":"` + text + `"}}`)
		f.writeRaw(`{"id":` + string(m.ID) + `,"result":{"text":"` + text + `"}}`)
	case "garbage":
		f.writeRaw(`{not json`)
		f.writeRaw(`[1,2,3]`)
		f.writeRaw(`{}`)
		f.writeRaw(`"` + strings.Repeat("z", 100<<10))
		f.writeRaw(`{"id":999999,"result":{}}`)
		f.writeRaw(`{"id":"abc","result":{}}`)
		reply(map[string]any{"ok": true})
	case "crash":
		fmt.Fprintln(os.Stderr, "thread 'main' panicked: boom")
		return 3, true
	case "hang":
	case "late":
		// Answered when "release" comes: after the caller gave up.
		f.held = append(f.held, func() { reply(map[string]any{"late": true}) })
	case "release":
		for _, r := range f.held {
			r()
		}
		f.held = nil
		reply(map[string]any{})
	case "spawn":
		// A child in the fake's group and one in a group of its own, as
		// codex starts commands; both tagged.
		var pids []int
		for _, own := range []bool{false, true} {
			cmd := exec.Command("sleep", "60")
			cmd.Env = append(os.Environ(), "CODEXACP_TAG="+p.Tag)
			cmd.SysProcAttr = groupAttr(own)
			if err := cmd.Start(); err != nil {
				f.write(map[string]any{"id": m.ID, "error": map[string]any{"code": 1, "message": err.Error()}})
				return 0, false
			}
			f.children = append(f.children, cmd)
			pids = append(pids, cmd.Process.Pid)
		}
		reply(map[string]any{"pids": pids})
	default:
		if len(m.ID) > 0 {
			f.write(map[string]any{"id": m.ID, "error": map[string]any{"code": -32600, "message": "unknown " + m.Method}})
		}
	}
	return 0, false
}

// syncBuf is a log sink for concurrent writers.
type syncBuf struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuf) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuf) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startFake starts the fake app-server in mode; edit adjusts the options.
func startFake(t *testing.T, mode string, edit func(*Options)) (*Server, *syncBuf) {
	t.Helper()
	logs := &syncBuf{}
	opts := Options{
		Path:   os.Args[0],
		Env:    append(os.Environ(), fakeAppServerEnv+"="+mode, "GORACE=atexit_sleep_ms=0"),
		Grace:  500 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if edit != nil {
		edit(&opts)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Start(ctx, opts)
	if err != nil {
		t.Fatalf("Start: %v\nlogs:\n%s", err, logs)
	}
	t.Cleanup(func() { c.Close() })
	return c, logs
}

func call(t *testing.T, c *Server, method string, params, result any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Call(ctx, method, params, result); err != nil {
		t.Fatalf("Call %s: %v", method, err)
	}
}

// recorder is an Handler that keeps what it gets.
type recorder struct {
	mu      sync.Mutex
	methods []string
	params  []json.RawMessage
	request func(ctx context.Context, method string, params json.RawMessage) (any, error)
}

func (r *recorder) Notify(method string, params json.RawMessage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.methods = append(r.methods, method)
	r.params = append(r.params, params)
}

func (r *recorder) Request(ctx context.Context, method string, params json.RawMessage) (any, error) {
	return r.request(ctx, method, params)
}

func (r *recorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.methods)
}

func TestAppServerHandshake(t *testing.T) {
	tests := []struct {
		name           string
		client         [2]string
		wantClientInfo string
	}{
		{"client named", [2]string{"zed-acp", "1.2.3"}, `{"name":"zed-acp","version":"1.2.3"}`},
		{"defaults", [2]string{}, `{"name":"codexacp","version":"0"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := startFake(t, "", func(o *Options) {
				o.Config = []string{"a=1", `b="x y"`}
				o.Env = append(o.Env, "RUST_BACKTRACE=1")
				o.ClientName, o.ClientVersion = tt.client[0], tt.client[1]
			})
			var who struct {
				Args        []string
				Backtrace   bool
				ClientInfo  json.RawMessage
				Initialized bool
				JSONRPC     bool
			}
			call(t, c, "whoami", nil, &who)
			if want := []string{"app-server", "-c", "a=1", "-c", `b="x y"`}; !slices.Equal(who.Args, want) {
				t.Errorf("args %q, want %q", who.Args, want)
			}
			if who.Backtrace || !who.Initialized || string(who.ClientInfo) != tt.wantClientInfo {
				t.Errorf("RUST_BACKTRACE set %v, initialized %v, clientInfo %s; want false, true, %s",
					who.Backtrace, who.Initialized, who.ClientInfo, tt.wantClientInfo)
			}
			if c.Pid() <= 0 {
				t.Errorf("Pid = %d", c.Pid())
			}
		})
	}
}

func TestAppServerCall(t *testing.T) {
	c, _ := startFake(t, "", nil)
	tests := []struct {
		name    string
		method  string
		params  any
		result  any
		want    string // the result as JSON, when no error is wanted
		wantErr *RPCError
	}{
		{name: "result", method: "echo", params: map[string]any{"a": []int{1, 2}}, result: new(map[string]any), want: `{"a":[1,2]}`},
		{name: "nil result", method: "echo", params: map[string]int{"a": 1}},
		{name: "no params", method: "echo", result: new(any), want: `null`},
		{name: "rpc error", method: "fail", params: map[string]any{}, wantErr: &RPCError{Code: 4242, Message: "nope", Data: json.RawMessage(`{"x":1}`)}},
		{name: "unknown method", method: "nope/nope", wantErr: &RPCError{Code: -32600, Message: "unknown nope/nope"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := c.Call(context.Background(), tt.method, tt.params, tt.result)
			if tt.wantErr != nil {
				var rpc *RPCError
				if !errors.As(err, &rpc) || rpc.Code != tt.wantErr.Code || rpc.Message != tt.wantErr.Message ||
					string(rpc.Data) != string(tt.wantErr.Data) {
					t.Fatalf("Call = %v (%#v), want %#v", err, rpc, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.result != nil {
				if b, _ := json.Marshal(tt.result); string(b) != tt.want {
					t.Errorf("result %s, want %s", b, tt.want)
				}
			}
		})
	}
	t.Run("result of the wrong type", func(t *testing.T) {
		var n int
		if err := c.Call(context.Background(), "echo", map[string]int{}, &n); err == nil || !strings.Contains(err.Error(), "result") {
			t.Errorf("Call = %v, want a result decoding error", err)
		}
	})
}

func TestAppServerRoute(t *testing.T) {
	c, logs := startFake(t, "", nil)
	tests := []struct {
		name   string
		params map[string]any // of the "notify" call: names the thread
		method string
		want   bool
	}{
		{"threadId", map[string]any{"threadId": "t1"}, "item/agentMessage/delta", true},
		{"thread.id", map[string]any{"thread": map[string]any{"id": "t1", "cwd": "/"}}, "thread/started", true},
		{"conversationId", map[string]any{"conversationId": "t1"}, "execCommandApproval", true},
		{"another thread", map[string]any{"threadId": "t2"}, "turn/started", false},
		{"no thread", map[string]any{}, "account/rateLimits/updated", false},
		{"thread of another type", map[string]any{"thread": "t1"}, "x/y", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &recorder{}
			remove := c.Route("t1", r)
			defer remove()
			params := map[string]any{"count": 3, "method": tt.method}
			for k, v := range tt.params {
				params[k] = v
			}
			call(t, c, "notify", params, nil)
			want := []string(nil)
			if tt.want {
				want = []string{tt.method, tt.method, tt.method}
			}
			if got := r.got(); !slices.Equal(got, want) {
				t.Errorf("notified %q, want %q", got, want)
			}
			for i, p := range r.params {
				var seq struct{ Seq int }
				if json.Unmarshal(p, &seq); seq.Seq != i {
					t.Errorf("notification %d has seq %d: out of order", i, seq.Seq)
				}
			}
		})
	}
	t.Run("removed and replaced", func(t *testing.T) {
		r1, r2 := &recorder{}, &recorder{}
		remove1 := c.Route("t1", r1)
		remove2 := c.Route("t1", r2)
		remove1() // no longer t1's route: leaves r2 in place
		call(t, c, "notify", map[string]any{"count": 1, "method": "a", "threadId": "t1"}, nil)
		remove2()
		call(t, c, "notify", map[string]any{"count": 1, "method": "b", "threadId": "t1"}, nil)
		if len(r1.got()) != 0 || !slices.Equal(r2.got(), []string{"a"}) {
			t.Errorf("first handler got %q, second %q; want nothing and [a]", r1.got(), r2.got())
		}
	})
	if !strings.Contains(logs.String(), "method=configWarning") {
		t.Errorf("the unrouted notification was not logged:\n%s", logs)
	}
}

func TestAppServerServerRequests(t *testing.T) {
	c, _ := startFake(t, "", nil)
	const notes = 50
	tests := []struct {
		name    string
		thread  string // the request's thread; t1 is routed
		handler func(r *recorder) (any, error)
		want    string // the answer codex gets
	}{
		{
			name:   "answered after earlier notifications",
			thread: "t1",
			handler: func(r *recorder) (any, error) {
				return map[string]any{"decision": "accept", "seen": len(r.got())}, nil
			},
			want: fmt.Sprintf(`{"id":"srv-1","result":{"decision":"accept","seen":%d}}`, notes),
		},
		{
			name:    "nil answer",
			thread:  "t1",
			handler: func(*recorder) (any, error) { return nil, nil },
			want:    `{"id":"srv-1","result":null}`,
		},
		{
			name:    "error",
			thread:  "t1",
			handler: func(*recorder) (any, error) { return nil, errors.New("editor gone") },
			want:    `{"id":"srv-1","error":{"code":-32603,"message":"editor gone"}}`,
		},
		{
			name:    "rpc error keeps its code",
			thread:  "t1",
			handler: func(*recorder) (any, error) { return nil, &RPCError{Code: -32001, Message: "denied"} },
			want:    `{"id":"srv-1","error":{"code":-32001,"message":"denied"}}`,
		},
		{
			name:    "panic",
			thread:  "t1",
			handler: func(*recorder) (any, error) { panic(recovery.Injected("handler bug")) },
			want:    `{"id":"srv-1","error":{"code":-32603,"message":"internal error: codex app-server request item/commandExecution/requestApproval panicked: handler bug (a bug in codexacp; the agent goes on)"}}`,
		},
		{
			name:    "unmarshalable answer",
			thread:  "t1",
			handler: func(*recorder) (any, error) { return func() {}, nil },
			want:    `{"id":"srv-1","error":{"code":-32603,"message":"result: json: unsupported type: func()"}}`,
		},
		{
			name:   "unrouted",
			thread: "t9",
			want:   `{"id":"srv-1","error":{"code":-32601,"message":"no handler for item/commandExecution/requestApproval"}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &recorder{}
			r.request = func(ctx context.Context, method string, params json.RawMessage) (any, error) {
				if method != "item/commandExecution/requestApproval" || !strings.Contains(string(params), `"t1"`) {
					t.Errorf("Request(%s, %s)", method, params)
				}
				return tt.handler(r)
			}
			defer c.Route("t1", r)()
			var answer json.RawMessage
			call(t, c, "ask", map[string]any{"threadId": tt.thread, "count": notes,
				"method": "item/commandExecution/requestApproval"}, &answer)
			if string(answer) != tt.want {
				t.Errorf("codex got %s\nwant %s", answer, tt.want)
			}
		})
	}
}

func TestAppServerHugeLine(t *testing.T) {
	c, _ := startFake(t, "", nil)
	size := stress.Size(t, 2<<20, 12<<20) // 32 to 192 times the read buffer
	r := &recorder{}
	defer c.Route("t1", r)()
	var res struct{ Text string }
	call(t, c, "huge", map[string]any{"threadId": "t1", "size": size}, &res)
	if len(res.Text) != size {
		t.Errorf("result of %d bytes, want %d", len(res.Text), size)
	}
	if len(r.params) != 1 || len(r.params[0]) < size {
		t.Fatalf("notifications %q", r.got())
	}
	var p struct{ Delta string }
	if err := json.Unmarshal(r.params[0], &p); err != nil || len(p.Delta) != size {
		t.Errorf("notification delta of %d bytes (%v), want %d", len(p.Delta), err, size)
	}
}

func TestAppServerMalformedLines(t *testing.T) {
	c, logs := startFake(t, "", nil)
	var res struct{ OK bool }
	call(t, c, "garbage", nil, &res)
	if !res.OK {
		t.Error("the call after malformed lines failed")
	}
	call(t, c, "echo", map[string]int{}, nil) // still in step
	out := logs.String()
	if n := strings.Count(out, "unreadable line skipped"); n != 3 {
		t.Errorf("%d unreadable lines logged, want 3 ({not json, [1,2,3], the long one):\n%s", n, out)
	}
	for line := range strings.SplitSeq(out, "\n") {
		if len(line) > 2*maxLoggedMessage+200 {
			t.Errorf("log line of %d bytes: %.200s…", len(line), line)
		}
	}
}

func TestAppServerCrash(t *testing.T) {
	c, _ := startFake(t, "", nil)
	hung := make(chan error, 1)
	go func() { hung <- c.Call(context.Background(), "hang", nil, nil) }()
	time.Sleep(50 * time.Millisecond) // the hanging call is pending
	err := c.Call(context.Background(), "crash", nil, nil)
	for i, err := range []error{err, <-hung} {
		var exit *proc.ExitError
		if !errors.Is(err, ErrClosed) || !errors.As(err, &exit) || exit.Code != 3 ||
			exit.Stderr != "thread 'main' panicked: boom" {
			t.Errorf("call %d: %v; want ErrClosed with exit status 3 and the stderr tail", i, err)
		}
	}
	select {
	case <-c.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done not closed")
	}
	var exit *proc.ExitError
	if !errors.As(c.Err(), &exit) || exit.Code != 3 {
		t.Errorf("Err = %v, want the exit", c.Err())
	}
	if err := c.Call(context.Background(), "echo", nil, nil); !errors.Is(err, ErrClosed) || !errors.As(err, &exit) {
		t.Errorf("Call after the end = %v, want ErrClosed with the exit", err)
	}
	if err := c.Close(); !errors.As(err, &exit) {
		t.Errorf("Close = %v, want the exit", err)
	}
}

func TestAppServerCallContext(t *testing.T) {
	c, logs := startFake(t, "", nil)
	tests := []struct {
		name   string
		method string
		params any
	}{
		{"never answered", "hang", nil},
		{"answered late", "late", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			start := time.Now()
			err := c.Call(ctx, tt.method, tt.params, nil)
			if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > time.Second {
				t.Errorf("Call = %v after %v, want DeadlineExceeded after 50ms", err, time.Since(start))
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Call(ctx, "echo", nil, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Call with a cancelled ctx = %v", err)
	}
	// The late answer arrives before release's own, and is dropped.
	call(t, c, "release", nil, nil)
	if !strings.Contains(logs.String(), "answer to no pending call dropped") {
		t.Errorf("the late answer was not dropped:\n%s", logs)
	}
}

func TestAppServerClose(t *testing.T) {
	tests := []struct {
		name    string
		mode    string
		minTime time.Duration // Close waited for the grace period
	}{
		{"exits at the end of stdin", "", 0},
		{"ignores the end of stdin", "ignore-eof", 100 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := startFake(t, tt.mode, func(o *Options) {
				if tt.minTime > 0 {
					o.Grace = tt.minTime
				}
			})
			var res struct{ Pids []int }
			call(t, c, "spawn", map[string]string{"tag": "x"}, &res)
			pids := append(res.Pids, c.Pid())
			start := time.Now()
			if err := c.Close(); err != nil {
				t.Errorf("Close = %v, want nil", err)
			}
			elapsed := time.Since(start)
			if elapsed < tt.minTime || elapsed > tt.minTime+2*time.Second {
				t.Errorf("Close took %v, want %v or a little more", elapsed, tt.minTime)
			}
			for _, pid := range pids {
				proctest.WaitGone(t, pid)
			}
			if err := c.Call(context.Background(), "echo", nil, nil); !errors.Is(err, ErrClosed) {
				t.Errorf("Call after Close = %v", err)
			}
			if c.Err() != nil || c.Close() != nil {
				t.Errorf("Err = %v after Close", c.Err())
			}
		})
	}
}

func TestAppServerSurvivesThreadExits(t *testing.T) {
	c, _ := startFake(t, "", nil)
	for range 100 {
		done := make(chan struct{})
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
			close(done)
		}()
		<-done
	}
	call(t, c, "echo", map[string]int{}, nil)
	if !proctest.Alive(c.Pid()) {
		t.Error("the app-server died")
	}
}

func TestAppServerStartFailure(t *testing.T) {
	tests := []struct {
		name    string
		mode    string
		path    string
		timeout time.Duration
		check   func(error) bool
	}{
		{
			name: "exits at once", mode: "fail-init",
			check: func(err error) bool {
				var exit *proc.ExitError
				return errors.Is(err, ErrClosed) && errors.As(err, &exit) && exit.Code == 2 &&
					exit.Stderr == "ERROR error: bad config"
			},
		},
		{
			name: "no answer", mode: "mute", timeout: 200 * time.Millisecond,
			check: func(err error) bool { return errors.Is(err, context.DeadlineExceeded) },
		},
		{
			name: "no executable", path: "/nonexistent/codex",
			check: func(err error) bool { return errors.Is(err, proc.ErrNotFound) },
		},
		{
			name:  "no path",
			path:  "-",
			check: func(err error) bool { return errors.Is(err, proc.ErrNotFound) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := Options{Path: os.Args[0], Env: append(os.Environ(), fakeAppServerEnv+"="+tt.mode),
				Logger: slogDiscard, Grace: 200 * time.Millisecond}
			switch tt.path {
			case "-":
				opts.Path = ""
			case "":
			default:
				opts.Path = tt.path
			}
			timeout := tt.timeout
			if timeout == 0 {
				timeout = 10 * time.Second
			}
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			c, err := Start(ctx, opts)
			if c != nil || !tt.check(err) {
				t.Errorf("Start = %v, %v", c, err)
			}
		})
	}
}

func TestAppServerLogsNoParams(t *testing.T) {
	c, logs := startFake(t, "", func(o *Options) {
		o.Config = []string{`mcp_servers.x.http_headers={Authorization="Bearer cfg-secret"}`}
	})
	params := map[string]any{"cwd": "/", "config": map[string]any{
		"mcp_servers.acp": map[string]any{"http_headers": map[string]string{"Authorization": "Bearer s3cret"}}}}
	call(t, c, "echo", params, nil)
	if err := c.Call(context.Background(), "reject", params, nil); err == nil {
		t.Error("reject did not fail")
	}
	call(t, c, "notify", map[string]any{"count": 1, "method": "x", "threadId": "unrouted", "token": "s3cret"}, nil)
	c.Close()
	out := logs.String()
	if strings.Contains(out, "s3cret") || strings.Contains(out, "cfg-secret") {
		t.Errorf("a secret was logged:\n%s", out)
	}
	if !strings.Contains(out, "method=echo") {
		t.Errorf("calls are not logged by method:\n%s", out)
	}
}

// TestAppServerConcurrentCalls: answers find their calls whatever the order.
func TestAppServerConcurrentCalls(t *testing.T) {
	c, _ := startFake(t, "", nil)
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			var got map[string]int
			if err := c.Call(context.Background(), "echo", map[string]int{"i": i}, &got); err != nil || got["i"] != i {
				t.Errorf("call %d: %v %v", i, got, err)
			}
		})
	}
	wg.Wait()
}

var _ io.Writer = (*syncBuf)(nil)

// slogDiscard drops everything.
var slogDiscard = slog.New(slog.DiscardHandler)
