package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/codexacp/codexacp/e2e/replay/gates"
	"github.com/codexacp/codexacp/fsops"
	"github.com/codexacp/codexacp/internal/syncbuf"
	"github.com/codexacp/codexacp/mcp"
	"github.com/codexacp/codexacp/record"
)

// as is an appserver entry of run 1: dir out (agent → codex) or in.
func as(dir, msg string) record.Entry {
	return record.Entry{Kind: record.KindAppServer, Run: 1, Dir: dir, Msg: json.RawMessage(msg)}
}

func asEOF(dir string) record.Entry {
	return record.Entry{Kind: record.KindAppServer, Run: 1, Dir: dir, EOF: true}
}

var asStart = record.Entry{Kind: record.KindAppServerStart, Run: 1, Args: []string{"app-server"}}

// handshake is the start of every recorded app-server conversation.
var handshake = []record.Entry{
	asStart,
	as("out", `{"id":1,"method":"initialize","params":{"clientInfo":{"name":"codexacp","version":"0"}}}`),
	as("in", `{"id":1,"result":{"userAgent":"codex"}}`),
	as("out", `{"method":"initialized"}`),
}

// asConn is a fake app-server running in the test, spoken to as the agent
// does.
type asConn struct {
	t      *testing.T
	in     *io.PipeWriter
	lines  chan string
	stderr *syncbuf.Buffer
	done   chan int
	sigs   chan os.Signal
}

func (f *fake) startAppServer() *asConn {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &asConn{t: f.t, in: inW, lines: make(chan string, 100), stderr: &syncbuf.Buffer{}, done: make(chan int, 1), sigs: make(chan os.Signal, 1)}
	go func() {
		code := run([]string{"app-server", "-c", "model=x"}, func(k string) string { return f.env[k] }, inR, outW, c.stderr, c.sigs)
		outW.Close()
		inR.Close()
		c.done <- code
	}()
	go func() {
		defer close(c.lines)
		br := bufio.NewReader(outR)
		for {
			l, err := br.ReadString('\n')
			if l != "" {
				c.lines <- strings.TrimSuffix(l, "\n")
			}
			if err != nil {
				return
			}
		}
	}()
	f.t.Cleanup(func() { inW.Close() })
	return c
}

func (c *asConn) send(s string) {
	c.t.Helper()
	if _, err := c.in.Write([]byte(s + "\n")); err != nil {
		c.t.Fatalf("writing to the fake: %v", err)
	}
}

// expect reads the fake's next line, which must equal want (compared as
// JSON).
// initialize is the agent's side of the app-server handshake, as every
// recording starts (id 11).
func (c *asConn) initialize() {
	c.send(`{"id":11,"method":"initialize","params":{"clientInfo":{"name":"codexacp","version":"0"}}}`)
	c.expect(`{"id":11,"result":{"userAgent":"codex"}}`)
	c.send(`{"method":"initialized"}`)
}

func (c *asConn) expect(want string) {
	c.t.Helper()
	select {
	case got, ok := <-c.lines:
		if !ok {
			c.t.Fatalf("the fake's stdout ended; want %s\nstderr: %s", want, c.stderr)
		}
		if canonical(json.RawMessage(got)) != canonical(json.RawMessage(want)) {
			c.t.Fatalf("the fake wrote %s\nwant           %s\nstderr: %s", got, want, c.stderr)
		}
	case <-time.After(10 * time.Second):
		c.t.Fatalf("the fake wrote nothing; want %s\nstderr: %s", want, c.stderr)
	}
}

// exit closes stdin (unless already closed) and returns the exit status.
func (c *asConn) exit(closeStdin bool) int {
	c.t.Helper()
	if closeStdin {
		c.in.Close()
	}
	select {
	case code := <-c.done:
		return code
	case <-time.After(10 * time.Second):
		c.t.Fatalf("the fake did not exit\nstderr: %s", c.stderr)
		return 0
	}
}

// TestAppServerReplaysConversation plays a turn with an approval: the
// agent's requests get the recorded answers under their live ids, the
// notifications and codex's own request come in order, each after what
// the agent said before them in the recording, and every line written is
// marked for the replay harness.
func TestAppServerReplaysConversation(t *testing.T) {
	entries := append(append([]record.Entry(nil), handshake...),
		as("out", `{"id":2,"method":"thread/start","params":{"cwd":"/w","sandbox":"read-only","approvalPolicy":"on-request","config":{"mcp_servers.acp":{"http_headers":{"Authorization":"[REDACTED]"}}}}}`),
		as("in", `{"method":"configWarning","params":{"summary":"no bubblewrap"}}`),
		as("in", `{"id":2,"result":{"thread":{"id":"th1"}}}`),
		as("out", `{"id":3,"method":"turn/start","params":{"threadId":"th1","input":[{"type":"text","text":"touch it"}],"cwd":"/w"}}`),
		as("in", `{"id":3,"result":{"turn":{"id":"tu1"}}}`),
		as("in", `{"method":"turn/started","params":{"threadId":"th1"}}`),
		as("in", `{"id":0,"method":"item/commandExecution/requestApproval","params":{"threadId":"th1","itemId":"call_1"}}`),
		as("out", `{"id":0,"result":{"decision":"accept"}}`),
		as("in", `{"method":"turn/completed","params":{"threadId":"th1","turn":{"id":"tu1","status":"completed"}}}`),
		asEOF("out"),
		asEOF("in"),
	)
	f := newFake(t, entries...)
	gs := harnessGates(t, f)
	c := f.startAppServer()
	c.initialize()
	c.send(`{"id":12,"method":"thread/start","params":{"cwd":"/w","sandbox":"read-only","approvalPolicy":"on-request","config":{"mcp_servers.acp":{"url":"http://127.0.0.1:1/mcp","http_headers":{"Authorization":"Bearer live"}}}}}`)
	c.expect(`{"method":"configWarning","params":{"summary":"no bubblewrap"}}`)
	c.expect(`{"id":12,"result":{"thread":{"id":"th1"}}}`)
	c.send(`{"id":13,"method":"turn/start","params":{"threadId":"th1","input":[{"type":"text","text":"touch it"}],"cwd":"/w"}}`)
	c.expect(`{"id":13,"result":{"turn":{"id":"tu1"}}}`)
	c.expect(`{"method":"turn/started","params":{"threadId":"th1"}}`)
	c.expect(`{"id":0,"method":"item/commandExecution/requestApproval","params":{"threadId":"th1","itemId":"call_1"}}`)
	select {
	case l := <-c.lines:
		t.Fatalf("the fake went on before the approval was answered: %s", l)
	case <-time.After(20 * time.Millisecond):
	}
	c.send(`{"id":0,"result":{"decision":"accept"}}`)
	c.expect(`{"method":"turn/completed","params":{"threadId":"th1","turn":{"id":"tu1","status":"completed"}}}`)
	if code := c.exit(true); code != 0 {
		t.Errorf("exit %d at the end of stdin, want 0; stderr %s", code, c.stderr)
	}
	if c.stderr.String() != "" {
		t.Errorf("stderr = %q", c.stderr)
	}
	for i, e := range entries {
		if e.Kind != record.KindAppServer || e.Dir != record.DirIn || e.EOF {
			continue
		}
		// newFake puts a start entry first: entry i is at transcript position i+1.
		// Marks arrive on their own connection: waited for, bounded.
		waitMark(t, gs, "line-"+itoa(i+1))
	}
	waitMark(t, gs, "run-1")
	if _, err := os.Stat(filepath.Join(f.state, "run-1")); err != nil {
		t.Errorf("the process did not claim run 1: %v", err)
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// TestAppServerMismatches: the agent going another way than the recording
// gets a clear answer, never a hang.
func TestAppServerMismatches(t *testing.T) {
	turn := []record.Entry{
		as("out", `{"id":2,"method":"turn/start","params":{"threadId":"th1","input":[{"type":"text","text":"hi"}],"sandboxPolicy":{"type":"readOnly"},"approvalPolicy":"on-request"}}`),
		as("in", `{"id":2,"result":{"turn":{"id":"tu1"}}}`),
		as("in", `{"id":5,"method":"item/commandExecution/requestApproval","params":{"threadId":"th1"}}`),
		as("out", `{"id":5,"result":{"decision":"decline"}}`),
		as("in", `{"method":"turn/completed","params":{"threadId":"th1"}}`),
	}
	const goodTurn = `{"id":2,"method":"turn/start","params":{"threadId":"th1","input":[{"type":"text","text":"hi"}],"sandboxPolicy":{"type":"readOnly"},"approvalPolicy":"on-request"}}`
	tests := []struct {
		name    string
		entries []record.Entry
		talk    []string // after the handshake: "> " what the agent sends, "< " what the fake must write
		closeIn bool     // close stdin, then expect exit
		code    int
		stderr  string
	}{
		{
			name:    "another prompt",
			entries: turn,
			talk: []string{"> " + strings.Replace(goodTurn, `"hi"`, `"hello"`, 1),
				`< {"id":2,"error":{"code":-32600,"message":"fakecodex: app-server run 1: turn/start #1: recorded input [{\"text\":\"hi\",\"type\":\"text\"}], got [{\"text\":\"hello\",\"type\":\"text\"}]"}}`},
			closeIn: true, code: 0,
			stderr: `turn/start #1: recorded input`,
		},
		{
			name:    "another sandbox",
			entries: turn,
			talk: []string{"> " + strings.Replace(goodTurn, `readOnly`, `workspaceWrite`, 1),
				`< {"id":2,"error":{"code":-32600,"message":"fakecodex: app-server run 1: turn/start #1: recorded sandboxPolicy {\"type\":\"readOnly\"}, got {\"type\":\"workspaceWrite\"}"}}`},
			closeIn: true, code: 0,
			stderr: `recorded sandboxPolicy`,
		},
		{
			name: "another steer",
			entries: append(turn[:2:2],
				as("out", `{"id":3,"method":"turn/steer","params":{"threadId":"th1","expectedTurnId":"tu1","input":[{"type":"text","text":"and the tests"}]}}`),
				as("in", `{"id":3,"result":{}}`)),
			talk: []string{"> " + goodTurn,
				`< {"id":2,"result":{"turn":{"id":"tu1"}}}`,
				`> {"id":3,"method":"turn/steer","params":{"threadId":"th1","expectedTurnId":"tu1","input":[{"type":"text","text":"and the docs"}]}}`,
				`< {"id":3,"error":{"code":-32600,"message":"fakecodex: app-server run 1: turn/steer #1: recorded input [{\"text\":\"and the tests\",\"type\":\"text\"}], got [{\"text\":\"and the docs\",\"type\":\"text\"}]"}}`},
			closeIn: true, code: 0,
			stderr: `turn/steer #1: recorded input`,
		},
		{
			name: "a fork of another thread",
			entries: []record.Entry{
				as("out", `{"id":2,"method":"thread/fork","params":{"threadId":"th1","cwd":"/w","excludeTurns":true}}`),
				as("in", `{"id":2,"result":{"thread":{"id":"th2"}}}`)},
			talk: []string{`> {"id":2,"method":"thread/fork","params":{"threadId":"th9","cwd":"/w","excludeTurns":true}}`,
				`< {"id":2,"error":{"code":-32600,"message":"fakecodex: app-server run 1: thread/fork #1: recorded threadId \"th1\", got \"th9\""}}`},
			closeIn: true, code: 0,
			stderr: `thread/fork #1: recorded threadId`,
		},
		{
			name:    "a request never recorded",
			entries: turn,
			talk: []string{`> {"id":9,"method":"thread/delete","params":{}}`,
				`< {"id":9,"error":{"code":-32600,"message":"fakecodex: app-server run 1: thread/delete #1: the recording has 0 of them from the agent; this is one more"}}`},
			closeIn: true, code: 0,
			stderr: `thread/delete #1`,
		},
		{
			name:    "another approval",
			entries: turn,
			talk: []string{"> " + goodTurn,
				`< {"id":2,"result":{"turn":{"id":"tu1"}}}`,
				`< {"id":5,"method":"item/commandExecution/requestApproval","params":{"threadId":"th1"}}`,
				`> {"id":5,"result":{"decision":"accept"}}`},
			code:   exitMismatch,
			stderr: `the agent answered item/commandExecution/requestApproval (transcript line 8) with {"decision":"accept"}, recorded {"decision":"decline"}`,
		},
		{
			name:    "an answer to nothing",
			entries: turn,
			talk:    []string{`> {"id":5,"result":{"decision":"decline"}}`},
			closeIn: true, code: 0,
			stderr: "an answer to no request of codex sent or recorded (id 5)",
		},
		{
			name:    "the recorded process died",
			entries: []record.Entry{as("in", `{"method":"warning","params":{}}`), asEOF("in")},
			talk:    []string{`< {"method":"warning","params":{}}`},
			code:    1,
			stderr:  "app-server run 1 ended here in the recording",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, append(append([]record.Entry(nil), handshake...), tt.entries...)...)
			c := f.startAppServer()
			c.send(`{"id":1,"method":"initialize","params":{}}`)
			c.expect(`{"id":1,"result":{"userAgent":"codex"}}`)
			c.send(`{"method":"initialized"}`)
			for _, s := range tt.talk {
				if msg, ok := strings.CutPrefix(s, "> "); ok {
					c.send(msg)
				} else {
					c.expect(strings.TrimPrefix(s, "< "))
				}
			}
			if code := c.exit(tt.closeIn); code != tt.code {
				t.Errorf("exit %d, want %d; stderr %s", code, tt.code, c.stderr)
			}
			if !strings.Contains(c.stderr.String(), tt.stderr) {
				t.Errorf("stderr = %q, want it to say %q", c.stderr, tt.stderr)
			}
		})
	}
}

// TestAppServerWithoutARecordedProcess: a process the recording does not
// have fails at once.
func TestAppServerWithoutARecordedProcess(t *testing.T) {
	f := newFake(t, line(1, `{"type":"turn.started"}`))
	c := f.startAppServer()
	if code := c.exit(false); code != exitMismatch || !strings.Contains(c.stderr.String(), "no app-server run 1") {
		t.Errorf("exit %d, stderr %q", code, c.stderr)
	}
}

// TestAppServerToolCalls: the recorded tool calls go to the tool server the
// live thread/start named, with the live token, in the recorded session's
// thread; files are recreated first; codex's next line waits for the
// call's result.
func TestAppServerToolCalls(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "a.txt")
	content := "alpha\n"
	host, err := mcp.NewHost(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { host.Close() })
	var tokens [2]string
	var observers [2]*recordingObserver
	for i := range tokens {
		observers[i] = &recordingObserver{}
		var unregister func()
		tokens[i], unregister = host.Register(mcp.NewServer(fsops.NewEngine(fsops.NewLocalFiles()), observers[i]))
		t.Cleanup(unregister)
	}
	threadStart := func(id int, session, auth string) string {
		return `{"id":` + itoa(id) + `,"method":"thread/start","params":{"cwd":"/w","config":{"mcp_servers.acp":{"url":"` + host.URL() + `","http_headers":{"Authorization":"` + auth + `"}},"` + sessionTagKey + `":"` + session + `"}}}`
	}
	f := newFake(t, append(append([]record.Entry(nil), handshake...),
		as("out", threadStart(2, "sess_a", "[REDACTED]")),
		as("in", `{"id":2,"result":{"thread":{"id":"th_a"}}}`),
		as("out", threadStart(3, "sess_b", "[REDACTED]")),
		as("in", `{"id":3,"result":{"thread":{"id":"th_b"}}}`),
		as("in", `{"method":"item/started","params":{"threadId":"th_b"}}`),
		record.Entry{Kind: record.KindFile, Run: 1, Path: file, Exists: true, ParentExists: true, Mode: 0o644, Content: &content},
		record.Entry{Kind: record.KindMCPCall, Run: 1, Session: "sess_b", Call: "c1", Tool: "read_text_file", Arguments: json.RawMessage(`{"path":"` + file + `"}`)},
		record.Entry{Kind: record.KindMCPResult, Run: 1, Session: "sess_b", Call: "c1", Tool: "read_text_file"},
		as("in", `{"method":"item/completed","params":{"threadId":"th_b"}}`),
	)...)
	f.env[EnvRoot] = root
	c := f.startAppServer()
	c.send(`{"id":1,"method":"initialize","params":{}}`)
	c.expect(`{"id":1,"result":{"userAgent":"codex"}}`)
	c.send(`{"method":"initialized"}`)
	c.send(threadStart(2, "sess_live_a", "Bearer "+tokens[0]))
	c.expect(`{"id":2,"result":{"thread":{"id":"th_a"}}}`)
	c.send(threadStart(3, "sess_live_b", "Bearer "+tokens[1]))
	c.expect(`{"id":3,"result":{"thread":{"id":"th_b"}}}`)
	c.expect(`{"method":"item/started","params":{"threadId":"th_b"}}`)
	c.expect(`{"method":"item/completed","params":{"threadId":"th_b"}}`)
	if got := observers[1].seen(); len(got) != 1 || got[0] != "read_text_file "+file {
		t.Errorf("session b's server saw %q", got)
	}
	if got := observers[0].seen(); len(got) != 0 {
		t.Errorf("session a's server saw %q", got)
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != content {
		t.Errorf("recreated file = %q, %v", b, err)
	}
	if code := c.exit(true); code != 0 || c.stderr.String() != "" {
		t.Errorf("exit %d, stderr %q", code, c.stderr)
	}
}

// TestAppServerSIGINT: an interrupt ends a waiting process like codex.
func TestAppServerSIGINT(t *testing.T) {
	f := newFake(t, handshake...)
	c := f.startAppServer()
	c.sigs <- os.Interrupt
	if code := c.exit(false); code != exitInterrupted {
		t.Errorf("exit %d, want %d", code, exitInterrupted)
	}
}

func TestThreadServer(t *testing.T) {
	tests := []struct {
		params string
		want   mcpServer
		ok     bool
	}{
		{`{"config":{"mcp_servers.acp":{"url":"http://h/mcp","http_headers":{"Authorization":"Bearer t0k"}}}}`, mcpServer{url: "http://h/mcp", token: "t0k"}, true},
		{`{"config":{"mcp_servers":{"acp":{"url":"http://h/mcp","http_headers":{"authorization":"bearer  t0k"}}}}}`, mcpServer{url: "http://h/mcp", token: "t0k"}, true},
		{`{"config":{"mcp_servers.acp":{"url":"http://h/mcp"}}}`, mcpServer{url: "http://h/mcp", token: ""}, true},
		{`{"config":{"mcp_servers.acp":{"command":"/bin/codexacp","args":["mcp-relay"],"env":{"S":"/tmp/s","T":"t0k"}}}}`,
			stdioServer("/bin/codexacp", []string{"mcp-relay"}, map[string]string{"T": "t0k", "S": "/tmp/s"}), true},
		{`{"config":{"mcp_servers.other":{"url":"http://h/mcp"}}}`, mcpServer{}, false},
		{`{"cwd":"/w"}`, mcpServer{}, false},
		{`[]`, mcpServer{}, false},
	}
	for _, tt := range tests {
		got, ok := threadServer(json.RawMessage(tt.params))
		if got != tt.want || ok != tt.ok {
			t.Errorf("threadServer(%s) = %+v, %v; want %+v, %v", tt.params, got, ok, tt.want, tt.ok)
		}
	}
}

func TestPlanAppServerRejects(t *testing.T) {
	tests := map[string][]record.Entry{
		"an answer to no request of codex": {asStart, as("out", `{"id":4,"result":{}}`)},
		"codex answers no request":         {asStart, as("in", `{"id":4,"result":{}}`)},
	}
	for want, entries := range tests {
		if _, err := planAppServer(entries, 1); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("planAppServer = %v, want %q", err, want)
		}
	}
}

// config/read, which the agent's trace leaves out (a session's project
// settings asked of the turns' app-server), is answered with the settings
// the recorded agent read at start, wherever it comes in the conversation.
func TestAppServerAnswersUnrecordedConfigRead(t *testing.T) {
	entries := append(append([]record.Entry(nil), handshake...),
		record.Entry{Kind: record.KindUserConfig, Result: json.RawMessage(`{"config":{"approval_policy":"never"}}`)},
		asEOF("out"),
		asEOF("in"),
	)
	c := newFake(t, entries...).startAppServer()
	c.initialize()
	c.send(`{"id":12,"method":"config/read","params":{"includeLayers":false,"cwd":"/w"}}`)
	c.expect(`{"id":12,"result":{"config":{"approval_policy":"never"}}}`)
	if code := c.exit(true); code != 0 {
		t.Errorf("exit %d, want 0; stderr %s", code, c.stderr)
	}
	if c.stderr.String() != "" {
		t.Errorf("stderr = %q", c.stderr)
	}
}

// TestAppServerSkillsListFloats: the agent lists skills whenever its
// listing goroutine runs. A recording that caught skills/list before
// thread/start was answered replays when the live agent lists them only
// after: codex's lines do not wait for it, its answer does.
func TestAppServerSkillsListFloats(t *testing.T) {
	entries := append(append([]record.Entry(nil), handshake...),
		as("out", `{"id":2,"method":"thread/start","params":{"cwd":"/w"}}`),
		as("out", `{"id":3,"method":"skills/list","params":{"cwds":["/w"]}}`),
		as("in", `{"method":"mcpServer/startupStatus/updated","params":{"name":"acp","status":"ready"}}`),
		as("in", `{"id":2,"result":{"thread":{"id":"th1"}}}`),
		as("in", `{"id":3,"result":{"data":[]}}`),
		asEOF("out"),
		asEOF("in"),
	)
	f := newFake(t, entries...)
	c := f.startAppServer()
	c.initialize()
	c.send(`{"id":12,"method":"thread/start","params":{"cwd":"/w"}}`)
	c.expect(`{"method":"mcpServer/startupStatus/updated","params":{"name":"acp","status":"ready"}}`)
	c.expect(`{"id":12,"result":{"thread":{"id":"th1"}}}`)
	select {
	case l := <-c.lines:
		t.Fatalf("the fake answered skills/list before the agent sent it: %s", l)
	case <-time.After(20 * time.Millisecond):
	}
	c.send(`{"id":13,"method":"skills/list","params":{"cwds":["/w"]}}`)
	c.expect(`{"id":13,"result":{"data":[]}}`)
	if code := c.exit(true); code != 0 {
		t.Errorf("exit %d, want 0; stderr %s", code, c.stderr)
	}
}

// TestAppServerSkillsListAnsweredAfterMismatch: a request the fake refused
// (it differs from the recording) takes the recorded one's place, so the
// script goes on past it: the skills listing recorded after it is
// answered, whether the agent sent it before or after. Before, the script
// waited at the refused request for good, the listing stayed unanswered,
// and the agent's exit (which waits for the listing it started, so that
// its commands go out first) waited until it was killed.
func TestAppServerSkillsListAnsweredAfterMismatch(t *testing.T) {
	entries := turnThenListing()
	for _, listFirst := range []bool{false, true} {
		name := "listed after the mismatch"
		if listFirst {
			name = "listed before the mismatch"
		}
		t.Run(name, func(t *testing.T) {
			f := newFake(t, entries...)
			c := f.startAppServer()
			c.initialize()
			if listFirst {
				c.send(`{"id":13,"method":"skills/list","params":{"cwds":["/w"]}}`)
			}
			c.send(`{"id":12,"method":"turn/start","params":{"threadId":"th1","input":[{"type":"text","text":"bye"}]}}`)
			c.expect(`{"id":12,"error":{"code":-32600,"message":"fakecodex: app-server run 1: turn/start #1: recorded input [{\"text\":\"hi\",\"type\":\"text\"}], got [{\"text\":\"bye\",\"type\":\"text\"}]"}}`)
			if !listFirst {
				c.send(`{"id":13,"method":"skills/list","params":{"cwds":["/w"]}}`)
			}
			c.expect(`{"id":13,"result":{"data":[]}}`)
			if code := c.exit(true); code != 0 {
				t.Errorf("exit %d, want 0; stderr %s", code, c.stderr)
			}
		})
	}
}

// TestAppServerSkillsListAnsweredOnceTheReplayWentAnotherWay: the harness
// opens gates.AnotherWay once the agent's messages to the editor differ
// from the recording; the script then waits for requests that are not
// coming (here a prompt the editor never sends), and the fake answers the
// agent's skills listing at once, as codex would, instead of at its
// recorded place: the agent waits for it before it closes codex's stdin
// at its exit.
func TestAppServerSkillsListAnsweredOnceTheReplayWentAnotherWay(t *testing.T) {
	entries := turnThenListing()
	f := newFake(t, entries...)
	gs := harnessGates(t, f)
	c := f.startAppServer()
	c.initialize()
	c.send(`{"id":13,"method":"skills/list","params":{"cwds":["/w"]}}`)
	select {
	case l := <-c.lines:
		t.Fatalf("the fake answered before the replay went another way: %s", l)
	case <-time.After(20 * time.Millisecond):
	}
	gs.Open(gates.AnotherWay)
	c.expect(`{"id":13,"result":{"data":[]}}`)
	if code := c.exit(true); code != 0 {
		t.Errorf("exit %d, want 0; stderr %s", code, c.stderr)
	}
}

// turnThenListing is a recording of the handshake, a turn "hi" and a
// skills listing sent after it.
func turnThenListing() []record.Entry {
	return append(append([]record.Entry(nil), handshake...),
		as("out", `{"id":2,"method":"turn/start","params":{"threadId":"th1","input":[{"type":"text","text":"hi"}]}}`),
		as("out", `{"id":3,"method":"skills/list","params":{"cwds":["/w"]}}`),
		as("in", `{"id":2,"result":{"turn":{"id":"tu1"}}}`),
		as("in", `{"id":3,"result":{"data":[]}}`),
		asEOF("out"),
		asEOF("in"),
	)
}
