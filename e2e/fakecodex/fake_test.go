package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codexacp/codexacp/codex"
	"github.com/codexacp/codexacp/codex/appserver"
	"github.com/codexacp/codexacp/e2e/replay/gates"
	"github.com/codexacp/codexacp/fsops"
	"github.com/codexacp/codexacp/internal/syncbuf"
	"github.com/codexacp/codexacp/mcp"
	"github.com/codexacp/codexacp/record"
)

func TestParseExec(t *testing.T) {
	tests := []struct {
		args    string
		want    execArgs
		wantErr bool
	}{
		{"--json --skip-git-repo-check -C /w -s read-only -c a=1 -c b=2 -", execArgs{sandbox: "read-only", config: []string{"a=1", "b=2"}}, false},
		{"--json -C /w -c a=1 resume --json --skip-git-repo-check -m gpt thread-1 -", execArgs{resume: true, threadID: "thread-1", model: "gpt", config: []string{"a=1"}}, false},
		{"--sandbox=workspace-write --model=m -", execArgs{sandbox: "workspace-write", model: "m"}, false},
		{"--config=x=1 say hi", execArgs{}, true},
		{"--config=x=1 hello", execArgs{config: []string{"x=1"}, prompt: "hello"}, false},
		{"-s read-only review --json --base main", execArgs{sandbox: "read-only", prompt: "review"}, false},
		{"review --commit HEAD --title t", execArgs{prompt: "review"}, false},
		{"resume -", execArgs{}, true},
		{"resume", execArgs{}, true},
		{"-C", execArgs{}, true},
		{"--json", execArgs{}, true},
	}
	for _, tt := range tests {
		got, err := parseExec(strings.Fields(tt.args))
		if (err != nil) != tt.wantErr {
			t.Errorf("parseExec(%s) error = %v, want error %v", tt.args, err, tt.wantErr)
			continue
		}
		if err == nil && (got.resume != tt.want.resume || got.threadID != tt.want.threadID || got.prompt != tt.want.prompt ||
			got.sandbox != tt.want.sandbox || got.model != tt.want.model ||
			strings.Join(got.config, "|") != strings.Join(tt.want.config, "|")) {
			t.Errorf("parseExec(%s) = %+v, want %+v", tt.args, got, tt.want)
		}
	}
}

func TestMCPServerFromConfig(t *testing.T) {
	ex := execArgs{config: []string{
		`mcp_servers.other={url="http://127.0.0.1:1/mcp"}`,
		`mcp_servers.acp={url="http://127.0.0.1:2/mcp", bearer_token_env_var="TOK", required=true}`,
	}}
	url, tokenVar := ex.mcpServer()
	if url != "http://127.0.0.1:2/mcp" || tokenVar != "TOK" {
		t.Errorf("mcpServer = %q, %q", url, tokenVar)
	}
	if url, _ := (execArgs{}).mcpServer(); url != "" {
		t.Errorf("no server configured, got %q", url)
	}
}

// TestToolServerFromConfig: exec's -c names the agent's server over HTTP
// or as its relay, a stdio server whose token codex passes from its own
// environment (env_vars).
func TestToolServerFromConfig(t *testing.T) {
	getenv := func(k string) string { return map[string]string{"TOK": "t0k"}[k] }
	for _, tc := range []struct {
		config string
		want   mcpServer
		ok     bool
	}{
		{`mcp_servers.acp={url="http://127.0.0.1:2/mcp", bearer_token_env_var="TOK", required=true}`,
			mcpServer{url: "http://127.0.0.1:2/mcp", token: "t0k"}, true},
		{`mcp_servers.acp={command="/a b/codexacp", args=["mcp-relay"], env={CODEXACP_MCP_SOCKET="/tmp/x/s", "M"="8"}, env_vars=["TOK"], required=true}`,
			stdioServer("/a b/codexacp", []string{"mcp-relay"}, map[string]string{"CODEXACP_MCP_SOCKET": "/tmp/x/s", "M": "8", "TOK": "t0k"}), true},
		{`mcp_servers.other={command="x"}`, mcpServer{}, false},
	} {
		got, ok := execArgs{config: []string{tc.config}}.toolServer(getenv)
		if got != tc.want || ok != tc.ok {
			t.Errorf("toolServer(%s) = %+v, %v; want %+v, %v", tc.config, got, ok, tc.want, tc.ok)
		}
	}
}

// fake is one test's transcript and state directory.
type fake struct {
	t     *testing.T
	path  string
	state string
	env   map[string]string
}

func newFake(t *testing.T, entries ...record.Entry) *fake {
	t.Helper()
	dir := t.TempDir()
	all := append([]record.Entry{{Kind: record.KindStart, Format: record.FormatVersion, ContextWindow: 1234}}, entries...)
	var buf bytes.Buffer
	if err := record.Write(&buf, all); err != nil {
		t.Fatal(err)
	}
	f := &fake{t: t, path: filepath.Join(dir, "t.ndjson"), state: filepath.Join(dir, "state")}
	if err := os.WriteFile(f.path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(f.state, 0o755); err != nil {
		t.Fatal(err)
	}
	f.env = map[string]string{EnvTranscript: f.path, EnvState: f.state}
	return f
}

type outcome struct {
	code           int
	stdout, stderr *syncbuf.Buffer
}

// start runs the fake in the background; sigs delivers SIGINT.
func (f *fake) start(args, prompt string, sigs chan os.Signal) (<-chan int, *syncbuf.Buffer, *syncbuf.Buffer) {
	stdout, stderr := &syncbuf.Buffer{}, &syncbuf.Buffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(strings.Fields(args), func(k string) string { return f.env[k] }, strings.NewReader(prompt), stdout, stderr, sigs)
	}()
	return done, stdout, stderr
}

func (f *fake) run(args, prompt string) outcome {
	done, stdout, stderr := f.start(args, prompt, make(chan os.Signal))
	return outcome{<-done, stdout, stderr}
}

func line(run int, s string) record.Entry {
	return record.Entry{Kind: record.KindCodexLine, Run: run, Line: json.RawMessage(s)}
}

func code(n int) *int { return &n }

func TestVersionAndCatalog(t *testing.T) {
	f := newFake(t)
	if o := f.run("--version", ""); o.code != 0 || o.stdout.String() != versionLine+"\n" {
		t.Errorf("--version = %d %q", o.code, o.stdout)
	}
	o := f.run("debug models --bundled", "")
	var cat struct {
		Models []struct {
			Slug          string `json:"slug"`
			ContextWindow int    `json:"context_window"`
		} `json:"models"`
	}
	if err := json.Unmarshal([]byte(o.stdout.String()), &cat); err != nil || o.code != 0 {
		t.Fatalf("catalog %q: %v (exit %d)", o.stdout, err, o.code)
	}
	if len(cat.Models) != 1 || cat.Models[0].ContextWindow != 1234 {
		t.Errorf("catalog = %+v, want one model with the recorded window", cat)
	}
	if o := f.run("login", ""); o.code != exitMismatch || !strings.Contains(o.stderr.String(), "unsupported") {
		t.Errorf("unknown command: exit %d, stderr %q", o.code, o.stderr)
	}
}

func TestReplaysRunsInOrder(t *testing.T) {
	f := newFake(t,
		record.Entry{Kind: record.KindCodexStart, Run: 1, Args: strings.Fields("exec --json -C /w -"), Prompt: "first"},
		line(1, `{"type":"thread.started","thread_id":"t1"}`),
		record.Entry{Kind: record.KindCodexLine, Run: 1, Text: "not json"},
		line(1, `{"type":"turn.completed"}`),
		record.Entry{Kind: record.KindCodexExit, Run: 1, Code: code(0)},
		record.Entry{Kind: record.KindCodexStart, Run: 2, Args: strings.Fields("exec -C /w resume --json t1 -"), Prompt: "second"},
		line(2, `{"type":"turn.failed","error":{"message":"boom"}}`),
		record.Entry{Kind: record.KindCodexExit, Run: 2, Code: code(1), Stderr: "codex said no"},
	)
	o := f.run("exec --json -C /w -", "first")
	if o.code != 0 || o.stdout.String() != `{"type":"thread.started","thread_id":"t1"}`+"\nnot json\n"+`{"type":"turn.completed"}`+"\n" {
		t.Errorf("run 1: exit %d, stdout %q, stderr %q", o.code, o.stdout, o.stderr)
	}
	o = f.run("exec -C /w resume --json t1 -", "second")
	if o.code != 1 || !strings.Contains(o.stdout.String(), "turn.failed") || strings.TrimSpace(o.stderr.String()) != "codex said no" {
		t.Errorf("run 2: exit %d, stdout %q, stderr %q", o.code, o.stdout, o.stderr)
	}
	if o = f.run("exec -", "third"); o.code != exitMismatch || !strings.Contains(o.stderr.String(), "no codex run 3") {
		t.Errorf("run 3: exit %d, stderr %q", o.code, o.stderr)
	}
}

func TestRunThatWentAnotherWayFails(t *testing.T) {
	start := record.Entry{Kind: record.KindCodexStart, Run: 1, Args: strings.Fields("exec resume --json t1 -"), Prompt: "hi"}
	tests := []struct{ args, prompt, want string }{
		{"exec --json -", "hi", "recorded resume=true, got resume=false"},
		{"exec resume t2 -", "hi", `recorded thread "t1", got "t2"`},
		{"exec resume t1 -", "hello", `recorded prompt "hi", got "hello"`},
	}
	for _, tt := range tests {
		f := newFake(t, start, record.Entry{Kind: record.KindCodexExit, Run: 1, Code: code(0)})
		o := f.run(tt.args, tt.prompt)
		if o.code != exitMismatch || !strings.Contains(o.stderr.String(), tt.want) || o.stdout.String() != "" {
			t.Errorf("%s: exit %d, stderr %q, stdout %q; want %q", tt.args, o.code, o.stderr, o.stdout, tt.want)
		}
	}
}

// recordingObserver counts the tool calls the server saw.
type recordingObserver struct {
	mu    sync.Mutex
	calls []string
}

func (o *recordingObserver) CallStarted(ctx context.Context, c *mcp.Call) context.Context {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.calls = append(o.calls, c.Tool+" "+c.Path)
	return ctx
}

func (o *recordingObserver) BeforeWrite(context.Context, *mcp.Call, *fsops.Change) error { return nil }

func (o *recordingObserver) CallFinished(context.Context, *mcp.Call, any, *fsops.Error) {}

func (o *recordingObserver) seen() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.calls...)
}

// serveTools starts a tool host with one server on the local disk and
// returns the -c argument naming it and the token variable.
func serveTools(t *testing.T, f *fake) (*recordingObserver, string) {
	t.Helper()
	host, err := mcp.NewHost(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { host.Close() })
	obs := &recordingObserver{}
	token, unregister := host.Register(mcp.NewServer(fsops.NewEngine(fsops.NewLocalFiles()), obs))
	t.Cleanup(unregister)
	f.env["TOK"] = token
	return obs, `-c mcp_servers.acp={url="` + host.URL() + `",bearer_token_env_var="TOK"}`
}

func TestToolCallsAndFiles(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "w", "a.txt")
	gone := filepath.Join(root, "w", "gone.txt")
	outside := filepath.Join(t.TempDir(), "outside.txt")
	content := "alpha\n"
	f := newFake(t,
		record.Entry{Kind: record.KindCodexStart, Run: 1, Args: []string{"exec", "-"}},
		line(1, `{"type":"item.started"}`),
		record.Entry{Kind: record.KindFile, Run: 1, Path: file, Exists: true, ParentExists: true, Mode: 0o600, Content: &content},
		record.Entry{Kind: record.KindFile, Run: 1, Path: gone, ParentExists: true},
		record.Entry{Kind: record.KindFile, Run: 1, Path: outside, Exists: true, ParentExists: true, Content: &content},
		record.Entry{Kind: record.KindMCPCall, Run: 1, Tool: "read_text_file", Arguments: json.RawMessage(`{"path":"` + file + `"}`)},
		line(1, `{"type":"item.completed"}`),
		record.Entry{Kind: record.KindCodexExit, Run: 1, Code: code(0)},
	)
	f.env[EnvRoot] = root
	// A file the recording did not find is removed.
	if err := os.MkdirAll(filepath.Dir(gone), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(gone, []byte("left over"), 0o644); err != nil {
		t.Fatal(err)
	}
	obs, cfg := serveTools(t, f)

	o := f.run("exec "+cfg+" -", "")
	if o.code != 0 {
		t.Fatalf("exit %d, stderr %q", o.code, o.stderr)
	}
	if got := obs.seen(); len(got) != 1 || got[0] != "read_text_file "+file {
		t.Errorf("tool calls = %q", got)
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != content {
		t.Errorf("recreated file = %q, %v", b, err)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("recreated mode = %v, %v", fi.Mode(), err)
	}
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Errorf("a file missing in the recording exists: %v", err)
	}
	if _, err := os.Stat(outside); !os.IsNotExist(err) {
		t.Errorf("a file outside the replay root was created")
	}
	if !strings.Contains(o.stderr.String(), "outside the replay root") {
		t.Errorf("stderr = %q", o.stderr)
	}
	if o.stdout.String() != "{\"type\":\"item.started\"}\n{\"type\":\"item.completed\"}\n" {
		t.Errorf("stdout = %q", o.stdout)
	}
}

func TestUnreachableServerExitsLikeCodex(t *testing.T) {
	f := newFake(t,
		record.Entry{Kind: record.KindCodexStart, Run: 1, Args: []string{"exec", "-"}},
		line(1, `{"type":"turn.started"}`),
		record.Entry{Kind: record.KindCodexExit, Run: 1, Code: code(0)},
	)
	// A closed host: nothing listens on its port any more.
	host, err := mcp.NewHost(nil)
	if err != nil {
		t.Fatal(err)
	}
	host.Close()
	o := f.run(`exec -c mcp_servers.acp={url="`+host.URL()+`"} -`, "")
	if o.code != 1 || o.stdout.String() != "" || !strings.Contains(o.stderr.String(), "MCP server acp") {
		t.Errorf("exit %d, stdout %q, stderr %q", o.code, o.stdout, o.stderr)
	}
}

// TestSIGINTStopsAWaitingRun interrupts a run that waits at a closed gate:
// it exits 1 without printing the rest, like codex.
func TestSIGINTStopsAWaitingRun(t *testing.T) {
	f := newFake(t,
		record.Entry{Kind: record.KindCodexStart, Run: 1, Args: []string{"exec", "-"}},
		line(1, `{"type":"turn.started"}`),
		record.Entry{Kind: record.KindMCPCall, Run: 1, Tool: "read_text_file", Arguments: json.RawMessage(`{"path":"/x"}`)},
		line(1, `{"type":"turn.completed"}`),
		record.Entry{Kind: record.KindCodexExit, Run: 1, Code: code(0)},
	)
	gs := harnessGates(t, f)
	obs, cfg := serveTools(t, f)
	sigs := make(chan os.Signal, 1)
	done, stdout, _ := f.start("exec "+cfg+" -", "", sigs)
	waitMark(t, gs, "line-2") // turn.started printed
	sigs <- os.Interrupt
	select {
	case c := <-done:
		if c != exitInterrupted {
			t.Errorf("exit %d, want %d", c, exitInterrupted)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the fake did not exit on SIGINT")
	}
	if stdout.String() != "{\"type\":\"turn.started\"}\n" || len(obs.seen()) != 0 {
		t.Errorf("after SIGINT: stdout %q, tool calls %q", stdout, obs.seen())
	}
}

// TestCancelledRunPrintsAllThenWaits replays a run the agent cancelled: all
// its lines come out, then the fake waits for SIGINT.
func TestCancelledRunPrintsAllThenWaits(t *testing.T) {
	f := newFake(t,
		record.Entry{Kind: record.KindCodexStart, Run: 1, Args: []string{"exec", "-"}},
		line(1, `{"type":"turn.started"}`),
		line(1, `{"type":"item.completed"}`),
		record.Entry{Kind: record.KindCodexExit, Run: 1, Cancelled: true},
	)
	gs := harnessGates(t, f)
	sigs := make(chan os.Signal, 1)
	done, stdout, _ := f.start("exec -", "", sigs)
	waitMark(t, gs, "line-3")
	select {
	case c := <-done:
		t.Fatalf("a cancelled run exited (%d) before SIGINT", c)
	case <-time.After(20 * time.Millisecond):
	}
	sigs <- os.Interrupt
	if c := <-done; c != exitInterrupted {
		t.Errorf("exit %d", c)
	}
	if stdout.String() != "{\"type\":\"turn.started\"}\n{\"type\":\"item.completed\"}\n" {
		t.Errorf("stdout = %q", stdout)
	}
}

// TestSIGINTBeforeACancelledRunPrints: a cancel that reaches the fake
// before it printed anything still lets it print what codex printed.
func TestSIGINTBeforeACancelledRunPrints(t *testing.T) {
	f := newFake(t,
		record.Entry{Kind: record.KindCodexStart, Run: 1, Args: []string{"exec", "-"}},
		line(1, `{"type":"turn.started"}`),
	) // the recording ends mid-run: treated as cancelled
	sigs := make(chan os.Signal, 1)
	sigs <- os.Interrupt
	done, stdout, _ := f.start("exec -", "", sigs)
	if c := <-done; c != exitInterrupted || stdout.String() != "{\"type\":\"turn.started\"}\n" {
		t.Errorf("exit %d, stdout %q", c, stdout)
	}
}

// harnessGates stands in for the replay harness's side of the gates: the
// fake f keeps in step with it.
func harnessGates(t *testing.T, f *fake) *gates.Server {
	t.Helper()
	gs, err := gates.Listen()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gs.Close() })
	f.env[EnvGates] = gs.Addr()
	return gs
}

// waitMark waits for the fake to mark name.
func waitMark(t *testing.T, gs *gates.Server, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if !gs.WaitMark(ctx, name) {
		t.Fatalf("%s never marked", name)
	}
}

func TestClaimRunNumbersConcurrentRuns(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	got := make(chan int, 20)
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := claimRun(dir)
			if err != nil {
				t.Error(err)
			}
			got <- n
		}()
	}
	wg.Wait()
	close(got)
	seen := map[int]bool{}
	for n := range got {
		if seen[n] || n < 1 || n > 20 {
			t.Errorf("run number %d given twice or out of range", n)
		}
		seen[n] = true
	}
}

// A run whose sandbox, sandbox and approval settings or model differ from
// the recording is a mismatch: a mode mapped to the wrong sandbox, or
// writable roots the agent should not have given, must not replay as a
// match.
func TestCheckComparesSandboxAndModel(t *testing.T) {
	const roots = `sandbox_workspace_write.writable_roots=["/w/extra"]`
	p := &plan{start: &record.Entry{Kind: record.KindCodexStart, Args: []string{"exec", "--json", "-s", "read-only", "-m", "gpt-5.5", "-c", "model_provider=a", "-c", roots, "-"}}}
	for _, tc := range []struct {
		args []string
		ok   bool
	}{
		{[]string{"--json", "-s", "read-only", "-m", "gpt-5.5", "-c", "model_provider=a", "-c", roots, "-"}, true},
		{[]string{"--json", "-s", "read-only", "-m", "gpt-5.5", "-c", "model_provider=b", "--config=" + roots, "-"}, true}, // not a policy setting
		{[]string{"--json", "-s", "workspace-write", "-m", "gpt-5.5", "-c", roots, "-"}, false},
		{[]string{"--json", "-s", "read-only", "-c", roots, "-"}, false},
		{[]string{"--json", "-s", "read-only", "-m", "gpt-5.5", "-"}, false},
		{[]string{"--json", "-s", "read-only", "-m", "gpt-5.5", "-c", `sandbox_workspace_write.writable_roots=["/w/other"]`, "-"}, false},
		{[]string{"--json", "-s", "read-only", "-m", "gpt-5.5", "-c", roots, "-c", `approval_policy="never"`, "-"}, false},
	} {
		live, err := parseExec(tc.args)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.check(live, "prompt"); (err == nil) != tc.ok {
			t.Errorf("check(%v) = %v, want ok %v", tc.args, err, tc.ok)
		}
	}
}

// TestCatalogFromRecordedModels: the catalog the fake serves gives the agent
// back the models the recording agent offered, in order, with their
// windows and efforts (codex.Models, codex.ContextWindow read it).
func TestCatalogFromRecordedModels(t *testing.T) {
	start := &record.Entry{Kind: record.KindStart, ContextWindow: 1000, Models: []record.Model{
		{Slug: "m-default", Name: "Default", Description: "the default", ContextWindow: 2000, DefaultEffort: "medium", Efforts: []string{"low", "medium", "high"}},
		{Slug: "m-small", Name: "Small", ContextWindow: 1000},
	}}
	b, err := json.Marshal(catalog(start))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "catalog.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	models, err := codex.Models(path)
	if err != nil {
		t.Fatal(err)
	}
	var got []record.Model
	for _, m := range models {
		got = append(got, record.Model{Slug: m.Slug, Name: m.Name, Description: m.Description, ContextWindow: m.ContextWindow, DefaultEffort: m.DefaultEffort, Efforts: m.Efforts})
	}
	if g, w := fmt.Sprint(got), fmt.Sprint(start.Models); g != w {
		t.Errorf("models = %s\nwant     %s", g, w)
	}
	for model, want := range map[string]int{"": 2000, "m-small": 1000} {
		if n, err := codex.ContextWindow(path, model); err != nil || n != want {
			t.Errorf("ContextWindow(%q) = %d, %v; want %d", model, n, err, want)
		}
	}
}

// The app-server the agent starts only to read the user's settings is
// answered with the settings the recorded agent read (the user_config
// entry), else with nothing configured.
func TestConfigReadAnswersRecordedSettings(t *testing.T) {
	user := codex.UserConfig{ApprovalPolicy: codex.ApprovalNever, SandboxMode: codex.SandboxWorkspaceWrite,
		WorkspaceWrite: &codex.WorkspaceWrite{WritableRoots: []string{"/w/extra"}}}
	for _, tc := range []struct {
		name    string
		entries []record.Entry
		want    codex.UserConfig
	}{
		{"recorded", []record.Entry{{Kind: record.KindUserConfig, Result: user.ConfigRead()}}, user},
		{"none recorded", nil, codex.UserConfig{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, tc.entries...)
			f.env[appserver.ConfigReadEnv] = "1"
			o := f.run("app-server", `{"id":1,"method":"initialize","params":{}}`+"\n"+`{"id":2,"method":"config/read","params":{}}`+"\n")
			if o.code != 0 {
				t.Fatalf("exit %d: %s", o.code, o.stderr)
			}
			lines := strings.Split(strings.TrimSpace(o.stdout.String()), "\n")
			var answer struct {
				Result json.RawMessage `json:"result"`
			}
			if len(lines) != 2 || json.Unmarshal([]byte(lines[1]), &answer) != nil {
				t.Fatalf("answers %q", lines)
			}
			got, err := codex.ParseConfigRead(answer.Result)
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("config/read = %+v (%v), want %+v", got, err, tc.want)
			}
		})
	}
}

// The rollout records the agent read for refused commands are appended to
// the rollout under CODEX_HOME: each before the codex line it was read at
// (codex had written it by then), those read after the exit last; a path
// outside CODEX_HOME is not written.
func TestRolloutRecordsWritten(t *testing.T) {
	home := t.TempDir()
	rollout := filepath.Join(home, "sessions", "2026", "11", "27", "rollout-x-t1.jsonl")
	outside := filepath.Join(t.TempDir(), "rollout-x-t1.jsonl")
	rec := func(s string) record.Entry {
		return record.Entry{Kind: record.KindRollout, Run: 1, Path: rollout, Line: json.RawMessage(s)}
	}
	entries := []record.Entry{
		{Kind: record.KindCodexStart, Run: 1, Args: strings.Fields("exec --json -C /w -"), Prompt: "p"},
		line(1, `{"type":"thread.started","thread_id":"t1"}`),
		line(1, `{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"no"}}`),
		rec(`{"n":1}`),
		rec(`{"n":2}`),
		line(1, `{"type":"turn.completed"}`),
		{Kind: record.KindCodexExit, Run: 1, Code: code(0)},
		rec(`{"n":3}`),
		{Kind: record.KindRollout, Run: 1, Path: outside, Line: json.RawMessage(`{"n":4}`)},
	}
	p, err := planRun(append([]record.Entry{{Kind: record.KindStart}}, entries...), 1)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, s := range p.steps {
		order = append(order, string(s.e.Line)+map[bool]string{true: " (after exit)"}[s.afterExit])
	}
	want := []string{`{"type":"thread.started","thread_id":"t1"}`, `{"n":1}`, `{"n":2}`,
		`{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"no"}}`, `{"type":"turn.completed"}`,
		`{"n":3} (after exit)`, `{"n":4} (after exit)`}
	if strings.Join(order, "\n") != strings.Join(want, "\n") {
		t.Errorf("steps\n%s\nwant\n%s", strings.Join(order, "\n"), strings.Join(want, "\n"))
	}

	f := newFake(t, entries...)
	f.env["CODEX_HOME"] = home
	o := f.run("exec --json -C /w -", "p")
	if o.code != 0 || !strings.Contains(o.stderr.String(), "outside CODEX_HOME") {
		t.Errorf("exit %d, stderr %q; want 0 and the outside path refused", o.code, o.stderr)
	}
	data, err := os.ReadFile(rollout)
	if string(data) != "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n" || err != nil {
		t.Errorf("rollout %q (%v)", data, err)
	}
	if _, err := os.Stat(outside); err == nil {
		t.Errorf("a rollout outside CODEX_HOME was written")
	}
}

// TestCatalogQuestionsReadTheStartEntryAlone: --version, debug models and
// login status need the start entry only (with the blobs right after it,
// where the model catalog is stored), which is all they read: the rest of
// a transcript, here unreadable, plays no part. A fake answering them
// reading a whole transcript in every replay cost a third of their CPU.
func TestCatalogQuestionsReadTheStartEntryAlone(t *testing.T) {
	start := record.Entry{Kind: record.KindStart, Format: record.FormatVersion, ContextWindow: 1000, CodexVersion: "0.171.0"}
	for i := range 40 { // a catalog as codex's: long enough to be stored apart
		start.Models = append(start.Models, record.Model{Slug: fmt.Sprintf("m-%d", i), Name: "Model", Description: strings.Repeat("a long description ", 20), ContextWindow: 2000})
	}
	var buf bytes.Buffer
	if err := record.Write(&buf, []record.Entry{start}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(buf.Bytes(), []byte(`"kind":"blob"`)) {
		t.Fatalf("the start entry's models are not in a blob:\n%s", buf.Bytes())
	}
	buf.WriteString("{not a transcript line\n")
	path := filepath.Join(t.TempDir(), "t.ndjson")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	f := &fake{t: t, path: path, env: map[string]string{EnvTranscript: path}}
	if o := f.run("--version", ""); o.code != 0 || o.stdout.String() != "codex-cli 0.171.0\n" {
		t.Errorf("--version = %d %q %q", o.code, o.stdout, o.stderr)
	}
	if o := f.run("debug models --bundled", ""); o.code != 0 || !strings.Contains(o.stdout.String(), `"slug":"m-39"`) {
		t.Errorf("debug models = %d %q %q", o.code, o.stdout, o.stderr)
	}
	if o := f.run("login status", ""); o.code != 0 {
		t.Errorf("login status = %d %q", o.code, o.stderr)
	}
	// Whatever needs more reads it all, and fails on it.
	if o := f.run("exec --json -C /w -", "hi"); o.code != exitMismatch {
		t.Errorf("exec = %d, want %d (the transcript does not read)", o.code, exitMismatch)
	}
}
