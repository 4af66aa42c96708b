package record

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/iotest"

	"github.com/codexacp/codexacp/codex"
	"github.com/codexacp/codexacp/codex/appserver"
	"github.com/codexacp/codexacp/codex/execrun"
	"github.com/codexacp/codexacp/codex/proc"
	"github.com/codexacp/codexacp/fsops"
	"github.com/codexacp/codexacp/mcp"
)

// fakeRunner prints lines and returns err, like a codex run.
type fakeRunner struct {
	lines []string
	err   error
}

func (f *fakeRunner) Run(ctx context.Context, inv execrun.Invocation, onLine func([]byte)) error {
	for _, l := range f.lines {
		onLine([]byte(l))
	}
	return f.err
}

// fakeObserver remembers what it was told.
type fakeObserver struct{ events []string }

func (o *fakeObserver) CallStarted(ctx context.Context, c *mcp.Call) context.Context {
	o.events = append(o.events, "started "+c.Tool)
	return ctx
}

func (o *fakeObserver) BeforeWrite(ctx context.Context, c *mcp.Call, ch *fsops.Change) error {
	o.events = append(o.events, "before "+c.Tool)
	return errors.New("vetoed")
}

func (o *fakeObserver) CallFinished(ctx context.Context, c *mcp.Call, result any, err *fsops.Error) {
	o.events = append(o.events, "finished "+c.Tool)
}

func readAll(t *testing.T, b []byte) []Entry {
	t.Helper()
	entries, err := Read(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	return entries
}

func kinds(entries []Entry) string {
	var k []string
	for _, e := range entries {
		s := e.Kind
		if e.Dir != "" {
			s += ":" + e.Dir
		}
		if e.EOF {
			s += ":eof"
		}
		k = append(k, s)
	}
	return strings.Join(k, ",")
}

func TestACPStreams(t *testing.T) {
	var buf bytes.Buffer
	r := New(&buf)
	r.Start("codexacp test", 1000)

	// Input arrives in odd pieces; the last line has no newline.
	in := "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}\n\nnot json\n{\"jsonrpc\":\"2.0\",\"method\":\"session/cancel\"}"
	got, err := io.ReadAll(r.Input(iotest.OneByteReader(strings.NewReader(in))))
	if err != nil || string(got) != in {
		t.Fatalf("input passed through = %q, %v", got, err)
	}
	var out bytes.Buffer
	w := r.Output(&out)
	fmt.Fprint(w, "{\"jsonrpc\":\"2.0\",\"id\":1,")
	fmt.Fprint(w, "\"result\":{}}\n")
	if out.String() != "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n" {
		t.Errorf("output passed through = %q", out.String())
	}

	entries := readAll(t, buf.Bytes())
	if got, want := kinds(entries), "start,acp:in,acp:in,acp:in,acp:in:eof,acp:out"; got != want {
		t.Fatalf("entries = %s, want %s", got, want)
	}
	if h := entries[0]; h.Format != FormatVersion || h.Agent != "codexacp test" || h.ContextWindow != 1000 {
		t.Errorf("header = %+v", h)
	}
	if string(entries[1].Msg) != `{"jsonrpc":"2.0","id":1,"method":"initialize"}` {
		t.Errorf("first message = %s", entries[1].Msg)
	}
	if entries[2].Text != "not json" || entries[2].Msg != nil {
		t.Errorf("invalid JSON entry = %+v", entries[2])
	}
	if !strings.Contains(string(entries[3].Msg), "session/cancel") {
		t.Errorf("unterminated last line = %+v", entries[3])
	}
	if string(entries[5].Msg) != `{"jsonrpc":"2.0","id":1,"result":{}}` {
		t.Errorf("output entry = %s", entries[5].Msg)
	}
	for i := 1; i < len(entries); i++ {
		if entries[i].T < entries[i-1].T {
			t.Errorf("time goes backwards at entry %d: %v < %v", i, entries[i].T, entries[i-1].T)
		}
	}
}

func TestBackendRecordsRuns(t *testing.T) {
	inv := execrun.Invocation{Cwd: "/w", Prompt: "hi", Env: []string{"CODEXACP_MCP_TOKEN=0123456789abcdef"}}
	command := func(inv execrun.Invocation) ([]string, []string) {
		return []string{"exec", "--json", "-C", inv.Cwd, "-"}, []string{"PATH=/bin", "HOME=/h", "PATH=/usr/bin"}
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name   string
		ctx    context.Context
		runner *fakeRunner
		check  func(t *testing.T, exit Entry)
	}{
		{"ok", context.Background(), &fakeRunner{lines: []string{`{"type":"turn.started"}`, "garbage"}}, func(t *testing.T, exit Entry) {
			if exit.Code == nil || *exit.Code != 0 || exit.Cancelled || exit.Error != "" {
				t.Errorf("exit = %+v", exit)
			}
		}},
		{"exit status", context.Background(), &fakeRunner{err: &proc.ExitError{Code: 3, Stderr: "boom"}}, func(t *testing.T, exit Entry) {
			if exit.Code == nil || *exit.Code != 3 || exit.Stderr != "boom" {
				t.Errorf("exit = %+v", exit)
			}
		}},
		{"cancelled", cancelled, &fakeRunner{err: fmt.Errorf("codex run cancelled: %w", context.Canceled)}, func(t *testing.T, exit Entry) {
			if !exit.Cancelled || exit.Code != nil {
				t.Errorf("exit = %+v", exit)
			}
		}},
		{"not started", context.Background(), &fakeRunner{err: codex.ErrNotFound}, func(t *testing.T, exit Entry) {
			if exit.Error != codex.ErrNotFound.Error() || exit.Code != nil {
				t.Errorf("exit = %+v", exit)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			r := New(&buf)
			r.Start("codexacp test", 0)
			var seen []string
			err := r.Backend(tt.runner, command).Run(tt.ctx, inv, func(l []byte) { seen = append(seen, string(l)) })
			if err != tt.runner.err {
				t.Errorf("Run returned %v, want the inner error %v", err, tt.runner.err)
			}
			if len(seen) != len(tt.runner.lines) {
				t.Errorf("lines passed on = %q", seen)
			}
			entries := readAll(t, buf.Bytes())
			want := "start,codex_start" + strings.Repeat(",codex_line", len(tt.runner.lines)) + ",codex_exit"
			if got := kinds(entries); got != want {
				t.Fatalf("entries = %s, want %s", got, want)
			}
			start := entries[1]
			if start.Run != 1 || start.Cwd != "/w" || start.Prompt != "hi" || strings.Join(start.Args, " ") != "exec --json -C /w -" {
				t.Errorf("codex_start = %+v", start)
			}
			if got := strings.Join(start.Env, ","); got != "CODEXACP_MCP_TOKEN" { // HOME, PATH: not codex's own
				t.Errorf("env names = %s", got)
			}
			if len(tt.runner.lines) > 0 {
				if string(entries[2].Line) != `{"type":"turn.started"}` || entries[3].Text != "garbage" {
					t.Errorf("lines = %+v, %+v", entries[2], entries[3])
				}
			}
			tt.check(t, entries[len(entries)-1])
			if strings.Contains(buf.String(), "0123456789abcdef") {
				t.Errorf("the token is in the transcript:\n%s", buf.String())
			}
		})
	}
}

func TestToolObserverRecordsCallsAndFiles(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "a.txt")
	if err := os.WriteFile(existing, []byte("one\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	binary := filepath.Join(dir, "b.bin")
	if err := os.WriteFile(binary, []byte{0xff, 0, 1}, 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "sub", "new.txt")

	var buf bytes.Buffer
	r := New(&buf)
	r.Start("codexacp test", 0)
	inner := &fakeObserver{}
	obs := r.ToolObserver("sess_1", []string{dir}, inner)
	ctx := context.Background()

	call := func(id, tool, path string, result any, terr *fsops.Error) {
		args, _ := json.Marshal(map[string]string{"path": path})
		c := &mcp.Call{ID: id, Tool: tool, Arguments: args, Path: path}
		obs.CallStarted(ctx, c)
		if err := obs.BeforeWrite(ctx, c, &fsops.Change{}); err == nil || err.Error() != "vetoed" {
			t.Errorf("BeforeWrite = %v, want the inner veto", err)
		}
		obs.CallFinished(ctx, c, result, terr)
	}
	call("c1", "read_text_file", existing, map[string]any{"hash": "h"}, nil)
	call("c2", "edit_text_file", existing, nil, &fsops.Error{Code: -32010, Message: "String not found in file: x", Hint: "read it"})
	call("c3", "write_text_file", missing, map[string]any{"created": true}, nil)
	call("c4", "read_text_file", binary, nil, &fsops.Error{Code: -32004, Message: "binary"})
	call("c5", "read_text_file", dir, nil, &fsops.Error{Code: -32003, Message: "dir"})

	if got := strings.Join(inner.events, ","); !strings.HasPrefix(got, "started read_text_file,before read_text_file,finished read_text_file,started edit_text_file") {
		t.Errorf("inner observer saw %s", got)
	}
	entries := readAll(t, buf.Bytes())
	want := "start,file,mcp_call,mcp_result,mcp_call,mcp_result,file,mcp_call,mcp_result,file,mcp_call,mcp_result,file,mcp_call,mcp_result"
	if got := kinds(entries); got != want {
		t.Fatalf("entries = %s\nwant      %s", got, want)
	}
	if f := entries[1]; !f.Exists || f.Mode != 0o600 || f.Content == nil || *f.Content != "one\n" || f.Path != existing {
		t.Errorf("existing file = %+v", f)
	}
	if c := entries[2]; c.Session != "sess_1" || c.Call != "c1" || c.Tool != "read_text_file" || !strings.Contains(string(c.Arguments), "a.txt") {
		t.Errorf("mcp_call = %+v", c)
	}
	if res := entries[3]; string(res.Result) != `{"hash":"h"}` || res.ToolError != nil {
		t.Errorf("mcp_result = %+v", res)
	}
	if res := entries[5]; res.ToolError == nil || res.ToolError.Code != -32010 || res.ToolError.Hint != "read it" || res.Result != nil {
		t.Errorf("error result = %+v", res)
	}
	if f := entries[6]; f.Exists || f.ParentExists || f.Path != missing {
		t.Errorf("missing file in a missing directory = %+v", f)
	}
	if f := entries[9]; f.Base64 != "/wAB" || f.Content != nil {
		t.Errorf("binary file = %+v", f)
	}
	if f := entries[12]; !f.IsDir || f.Content != nil {
		t.Errorf("directory = %+v", f)
	}
}

func TestRecordsOnlyFirstTouchOfAPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.txt")
	var buf bytes.Buffer
	r := New(&buf)
	r.Start("codexacp test", 0)
	obs := r.ToolObserver("s", []string{filepath.Dir(path)}, nil) // a nil inner observer is allowed
	for i := 0; i < 3; i++ {
		c := &mcp.Call{ID: fmt.Sprint(i), Tool: "write_text_file", Path: path, Arguments: json.RawMessage(`{`)}
		obs.CallStarted(context.Background(), c)
		obs.CallFinished(context.Background(), c, struct{}{}, nil)
	}
	entries := readAll(t, buf.Bytes())
	if got := strings.Count(kinds(entries), "file"); got != 1 {
		t.Errorf("%d file entries, want 1: %s", got, kinds(entries))
	}
	if string(entries[2].Arguments) != `"{"` {
		t.Errorf("malformed arguments recorded as %s, want a JSON string", entries[2].Arguments)
	}
}

// TestSecretsNeverReachTheTranscript records a session in which the MCP token
// and an API key appear everywhere they could: the environment, codex
// arguments, ACP messages, codex output, tool arguments and a stored file
// (a rollout session/load read).
func TestSecretsNeverReachTheTranscript(t *testing.T) {
	const (
		token  = "f00dfeedf00dfeedf00dfeedf00dfeedf00dfeedf00dfeedf00dfeedf00dfeed"
		apiKey = "sk-proj-TESTKEYabcdefghijklmnopqrstuvwxyz0123456789"
		header = "hdr-secret-value-42"
		ghTok  = "ghp_testtoken000000000000000000000000"
		// The app-server backend's per-thread MCP token, and the value of an
		// editor MCP server's header whose name does not look secret.
		asTok  = "0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9"
		custom = "custom-header-value-7"
		// An editor MCP server's secret arguments (issue 28): after a
		// flag, in --flag=value and NAME=value form, and an env value
		// under a name that does not look secret.
		argKey  = "trk_live_argvalue0001"
		argTok  = "trk_live_tokvalue0002"
		argPass = "trk_live_passvalue003"
		dbURL   = "postgres://u:pw-db-0004@db/x"
	)
	var buf bytes.Buffer
	r := New(&buf)
	r.AddSecretsFromEnv([]string{"OPENAI_API_KEY=" + apiKey, "GITHUB_TOKEN=" + ghTok, "PATH=/usr/bin"})
	r.Start("codexacp test", 0)

	in := `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/w","mcpServers":[` +
		`{"type":"http","name":"gh","url":"http://127.0.0.1:1/mcp","headers":[{"name":"Authorization","value":"Bearer ` + header + `"},{"name":"X-Api-Key","value":"` + header + `"},{"name":"X-Workspace","value":"` + custom + `"}]},` +
		`{"name":"local","command":"srv","args":[],"env":[{"name":"SERVICE_PASSWORD","value":"` + header + `"}]},` +
		`{"name":"tracker","command":"trk","args":["serve","--api-key","` + argKey + `","--token=` + argTok + `","DB_PASSWORD=` + argPass + `","--verbose"],"env":[{"name":"DATABASE_URL","value":"` + dbURL + `"}]}]}}` + "\n" +
		`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s","_meta":{"apiKey":"` + header + `"},"prompt":[{"type":"text","text":"my key is ` + apiKey + `"}]}}` + "\n"
	io.ReadAll(r.Input(strings.NewReader(in)))

	runner := &fakeRunner{lines: []string{
		`{"type":"item.completed","item":{"type":"agent_message","text":"the token is ` + token + ` and ` + ghTok + `"}}`,
		// Codex (exec) quoting an editor MCP server's header whose name
		// does not look secret: learned from session/new.
		`{"type":"error","message":"MCP server gh rejected X-Workspace: ` + custom + `"}`,
	}}
	command := func(inv execrun.Invocation) ([]string, []string) {
		return []string{"exec",
				"-c", `mcp_servers.gh={url="http://127.0.0.1:1/mcp", http_headers={"Authorization"="Bearer ` + header + `", "X-Api-Key"="` + header + `"}}`,
				"-c", `mcp_servers.local={command="srv", args=[], env={"SERVICE_PASSWORD"="` + header + `"}}`,
				"-c", `mcp_servers.tracker={command="trk", args=["serve", "--api-key", "` + argKey + `", "--token=` + argTok + `", "DB_PASSWORD=` + argPass + `", "--verbose"], env={"DATABASE_URL"="` + dbURL + `"}}`,
				// The user's own -c, in its dotted forms.
				"-c", `mcp_servers.other.args=["--password", "` + argPass + `"]`,
				"-c", `mcp_servers.other.env.DATABASE_URL="` + dbURL + `"`,
				"-c", `model_providers.p={base_url="http://127.0.0.1:2/v1", env_key="MOCK_API_KEY"}`,
				"-"},
			[]string{"OPENAI_API_KEY=" + apiKey}
	}
	inv := execrun.Invocation{Cwd: "/w", Prompt: "use " + apiKey, Env: []string{"CODEXACP_MCP_TOKEN=" + token}}
	r.Backend(runner, command).Run(context.Background(), inv, func([]byte) {})

	obs := r.ToolObserver("s", []string{"/w"}, nil)
	c := &mcp.Call{ID: "c1", Tool: "write_text_file", Arguments: json.RawMessage(`{"path":"/w/.env","content":"KEY=` + apiKey + `\nTOKEN=` + token + `"}`)}
	obs.CallStarted(context.Background(), c)
	obs.CallFinished(context.Background(), c, map[string]string{"echo": token}, nil)
	fmt.Fprintf(r.Output(io.Discard), `{"jsonrpc":"2.0","method":"session/update","params":{"update":{"text":"Authorization: Bearer %s"}}}`+"\n", header)
	rollout := filepath.Join(t.TempDir(), "rollout.jsonl")
	os.WriteFile(rollout, []byte(`{"type":"response_item","payload":{"output":"OPENAI_API_KEY=`+apiKey+` token `+token+` -H 'Authorization: Bearer `+header+`'"}}`+"\n"), 0o600)
	r.Stored(rollout)

	// The app-server backend: thread/start carries our token and the
	// editor's headers in its config; codex quotes them back.
	trace := r.AppServerTrace(appserver.Options{Config: []string{`model_providers.p.experimental_bearer_token="` + header + `"`}, Env: []string{"OPENAI_API_KEY=" + apiKey}})
	trace(true, []byte(`{"id":1,"method":"initialize","params":{"clientInfo":{"name":"codexacp","version":"0"}}}`))
	trace(true, []byte(`{"id":2,"method":"thread/start","params":{"cwd":"/w","config":{`+
		`"mcp_servers.acp":{"url":"http://127.0.0.1:3/mcp","http_headers":{"Authorization":"Bearer `+asTok+`"},"required":true},`+
		`"mcp_servers.gh":{"url":"http://127.0.0.1:1/mcp","http_headers":{"X-Workspace":"`+custom+`","X-Api-Key":"`+header+`"}},`+
		`"mcp_servers.local":{"command":"srv","args":[],"env":{"SERVICE_PASSWORD":"`+header+`"}},`+
		`"mcp_servers.tracker":{"command":"trk","args":["serve","--api-key","`+argKey+`","--token=`+argTok+`","DB_PASSWORD=`+argPass+`"],"env":{"DATABASE_URL":"`+dbURL+`"}},`+
		`"shell_environment_policy.set.CODEXACP_SESSION":"s"}}}`))
	trace(false, []byte(`{"id":2,"error":{"code":-32600,"message":"Invalid request: token `+asTok+`, header `+custom+`"}}`))
	trace(false, []byte(`{"method":"item/agentMessage/delta","params":{"delta":"your key: `+apiKey+`"}}`))
	trace(false, []byte(`not json: `+asTok))
	// Codex quoting a flag's value back (learned from session/new).
	trace(false, []byte(`{"method":"mcpServer/startupStatus/updated","params":{"name":"tracker","error":"bad key `+argKey+`"}}`))
	trace(true, nil)
	trace(false, nil)

	out := buf.String()
	for _, secret := range []string{token, apiKey, header, ghTok, asTok, custom, argKey, argTok, argPass, dbURL} {
		if strings.Contains(out, secret) {
			t.Errorf("secret %q is in the transcript:\n%s", secret, out)
		}
	}
	entries := readAll(t, buf.Bytes()) // still valid NDJSON after redaction
	if !strings.Contains(out, Redacted) {
		t.Errorf("nothing was marked redacted")
	}
	// What is not secret survives: names of variables, the provider's
	// env_key (a variable name), ordinary text.
	for _, keep := range []string{`"OPENAI_API_KEY"`, `env_key=\"MOCK_API_KEY\"`, `"name":"Authorization"`, "my key is", "SERVICE_PASSWORD",
		`"name":"X-Workspace"`, `"X-Workspace":"[REDACTED]"`, `"Authorization":"[REDACTED]"`, "CODEXACP_SESSION", "http://127.0.0.1:3/mcp", "Invalid request: token [REDACTED]",
		// The servers' arguments other than secrets, and their variables' names.
		`"args":["serve","--api-key","[REDACTED]","--token=[REDACTED]","DB_PASSWORD=[REDACTED]","--verbose"]`,
		`args=[\"serve\", \"--api-key\", \"[REDACTED]\", \"--token=[REDACTED]\", \"DB_PASSWORD=[REDACTED]\", \"--verbose\"]`,
		`{"name":"DATABASE_URL","value":"[REDACTED]"}`, `"DATABASE_URL":"[REDACTED]"`, `env={\"DATABASE_URL\"=\"[REDACTED]\"}`,
		`mcp_servers.other.args=[\"--password\", \"[REDACTED]\"]`, `mcp_servers.other.env.DATABASE_URL=\"[REDACTED]\"`} {
		if !strings.Contains(out, keep) {
			t.Errorf("transcript lost %s:\n%s", keep, out)
		}
	}
	if len(entries) < 9 {
		t.Errorf("only %d entries", len(entries))
	}
}

func TestRedactMessageKeepsCleanMessagesByteForByte(t *testing.T) {
	clean := json.RawMessage(`{"jsonrpc":"2.0","id":1,"result":{"usage":{"totalTokens":5},"b":1,"a":2}}`)
	if got := redactMessage(clean); string(got) != string(clean) {
		t.Errorf("a message without secrets was rewritten: %s", got)
	}
}

func TestCreate(t *testing.T) {
	dir := t.TempDir()
	r, err := Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	r.Start("codexacp test", 0)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(r.Path()) != dir || !strings.HasPrefix(filepath.Base(r.Path()), "codexacp-") || filepath.Ext(r.Path()) != ".ndjson" {
		t.Errorf("file in a directory = %s", r.Path())
	}
	fi, err := os.Stat(r.Path())
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("transcript mode = %v, %v; want 0600", fi.Mode(), err)
	}
	// Entries after Close are dropped quietly.
	r.Start("late", 0)
	if err := r.Err(); err != nil {
		t.Errorf("Err after Close = %v", err)
	}
	b, _ := os.ReadFile(r.Path())
	if n := bytes.Count(b, []byte("\n")); n != 1 {
		t.Errorf("%d lines after a write past Close, want 1", n)
	}

	file := filepath.Join(dir, "named.ndjson")
	r2, err := Create(file)
	if err != nil || r2.Path() != file {
		t.Fatalf("Create(%s) = %v, %v", file, r2.Path(), err)
	}
	r2.Close()
	if _, err := Create(""); err == nil {
		t.Errorf("Create with no path succeeded")
	}
	if _, err := Create(filepath.Join(dir, "missing", "x.ndjson")); err == nil {
		t.Errorf("Create in a missing directory succeeded")
	}
}

func TestWriteErrorStopsRecording(t *testing.T) {
	r := New(failingWriter{})
	r.Start("codexacp test", 0)
	if err := r.Err(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Err = %v", err)
	}
	if err := r.Close(); err == nil {
		t.Errorf("Close did not report the write error")
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestReadRejects(t *testing.T) {
	for name, in := range map[string]string{
		"empty":        "",
		"no header":    `{"t":0,"kind":"acp","dir":"in","msg":{}}` + "\n",
		"newer format": `{"t":0,"kind":"start","format":99}` + "\n",
		"not JSON":     `{"t":0,"kind":"start","format":1}` + "\nnope\n",
	} {
		if _, err := Read(strings.NewReader(in)); err == nil {
			t.Errorf("%s: Read succeeded", name)
		}
	}
}

// TestConcurrentRecording writes from many goroutines at once, as the agent
// does (ACP writers, codex runs, tool calls): every entry arrives whole.
func TestConcurrentRecording(t *testing.T) {
	var buf bytes.Buffer
	r := New(&buf)
	r.Start("codexacp test", 0)
	out := r.Output(io.Discard)
	obs := r.ToolObserver("s", nil, nil)
	backend := r.Backend(&fakeRunner{lines: []string{`{"type":"turn.started"}`, `{"type":"turn.completed"}`}}, nil)
	var wg sync.WaitGroup
	const workers, each = 8, 50
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				fmt.Fprintf(out, `{"jsonrpc":"2.0","method":"session/update","params":{"n":%d}}`+"\n", i)
				c := &mcp.Call{ID: fmt.Sprint(w, i), Tool: "read_text_file", Arguments: json.RawMessage(`{}`)}
				obs.CallStarted(context.Background(), c)
				obs.CallFinished(context.Background(), c, struct{}{}, nil)
				backend.Run(context.Background(), execrun.Invocation{}, func([]byte) {})
			}
		}()
	}
	wg.Wait()
	entries := readAll(t, buf.Bytes())
	// Per iteration: 1 acp, 2 tool entries, 4 run entries.
	if want := 1 + workers*each*7; len(entries) != want {
		t.Errorf("%d entries, want %d", len(entries), want)
	}
	runs := map[int]bool{}
	for _, e := range entries {
		if e.Kind == KindCodexStart {
			if runs[e.Run] {
				t.Errorf("run %d started twice", e.Run)
			}
			runs[e.Run] = true
		}
	}
	if len(runs) != workers*each {
		t.Errorf("%d distinct runs, want %d", len(runs), workers*each)
	}
}

// Files outside the workspace are recorded by existence only, and special
// files are never opened.
func TestFileContentsOnlyInsideWorkspace(t *testing.T) {
	work, outside := t.TempDir(), t.TempDir()
	secret := filepath.Join(outside, "authorized_keys")
	inside := filepath.Join(work, "a.txt")
	fifo := filepath.Join(work, "fifo")
	for p, content := range map[string]string{secret: "ssh-ed25519 AAAAsecret\n", inside: "inside\n"} {
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mkfifo(t, fifo)
	var buf bytes.Buffer
	r := New(&buf)
	r.Start("codexacp test", 0)
	obs := r.ToolObserver("s", []string{work}, nil)
	for i, p := range []string{secret, inside, fifo} {
		c := &mcp.Call{ID: fmt.Sprint(i), Tool: "read_text_file", Path: p, Arguments: json.RawMessage(`{}`)}
		obs.CallStarted(context.Background(), c) // a FIFO would block here if opened
		obs.CallFinished(context.Background(), c, struct{}{}, nil)
	}
	if strings.Contains(buf.String(), "AAAAsecret") {
		t.Errorf("a file outside the workspace was copied into the transcript")
	}
	if !strings.Contains(buf.String(), "inside\\n") {
		t.Errorf("the workspace file's content is missing: %s", buf.String())
	}
}
