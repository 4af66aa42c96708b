package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/backend/codexexec"
	"github.com/codexacp/codexacp/codex"
	"github.com/codexacp/codexacp/codex/execrun"
	"github.com/codexacp/codexacp/codex/proc"
	"github.com/codexacp/codexacp/internal/fakeeditor"
	"github.com/codexacp/codexacp/internal/syncbuf"
	"github.com/codexacp/codexacp/internal/testkit"
	"github.com/codexacp/codexacp/record"
)

// fakeBackend stands in for codex: each run plays a script.
type fakeBackend struct {
	backend.Unsupported
	mu     sync.Mutex
	runs   []execrun.Invocation
	script func(ctx context.Context, n int, inv execrun.Invocation, onLine func([]byte)) error
}

func (b *fakeBackend) Name() string { return "unknown" }

// Run implements Backend the way codexexec.Backend runs codex exec.
func (b *fakeBackend) Run(ctx context.Context, t backend.Turn, out backend.Output) error {
	return (&codexexec.Backend{Runner: lineRunnerFunc(b.runLines), Logger: discardLogger(), FindRollout: noRollout}).Run(ctx, t, out)
}

// noRollout finds no thread's rollout: the tests' threads have none, and
// the machine's codex home is none of theirs.
func noRollout(string) (string, error) { return "", os.ErrNotExist }

type lineRunnerFunc func(ctx context.Context, inv execrun.Invocation, onLine func([]byte)) error

func (f lineRunnerFunc) Run(ctx context.Context, inv execrun.Invocation, onLine func([]byte)) error {
	return f(ctx, inv, onLine)
}

func (b *fakeBackend) runLines(ctx context.Context, inv execrun.Invocation, onLine func([]byte)) error {
	b.mu.Lock()
	n := len(b.runs)
	b.runs = append(b.runs, inv)
	b.mu.Unlock()
	return b.script(ctx, n, inv, onLine)
}

func (b *fakeBackend) invocations() []execrun.Invocation {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]execrun.Invocation(nil), b.runs...)
}

// playLines is a script that prints the given JSONL lines and exits 0.
func playLines(lines ...string) func(context.Context, int, execrun.Invocation, func([]byte)) error {
	return func(_ context.Context, _ int, _ execrun.Invocation, onLine func([]byte)) error {
		for _, l := range lines {
			onLine([]byte(l))
		}
		return nil
	}
}

func fixtureLines(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "events", "testdata", "codex", name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

type harness struct {
	agent   *Agent
	editor  *fakeeditor.Editor
	agentIn *io.PipeWriter // raw access to the agent's stdin
	ctx     context.Context
}

func startAgent(t *testing.T, backend backend.Backend, eopts fakeeditor.Options) *harness {
	t.Helper()
	return startAgentWith(t, Options{Backend: backend, ContextWindow: 272000}, eopts)
}

// startAgentWith serves an in-process agent (Version and Logger filled in)
// to a fake editor over pipes.
func startAgentWith(tb testing.TB, opts Options, eopts fakeeditor.Options) *harness {
	tb.Helper()
	return startAgentTapped(tb, opts, eopts, nil)
}

// startAgentTapped is startAgentWith with the agent's stdin and stdout
// passed through a recorder's taps (nil: none).
func startAgentTapped(tb testing.TB, opts Options, eopts fakeeditor.Options, rec *record.Recorder) *harness {
	tb.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	opts.Version = "test"
	if opts.Logger == nil { // else the test reads the log
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		if testing.Verbose() {
			opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
		}
	}
	agent := NewAgent(opts)
	served := make(chan struct{})
	go func() {
		defer close(served)
		var in io.Reader = inR
		var out io.Writer = outW
		if rec != nil {
			in, out = rec.Input(in), rec.Output(out)
		}
		_ = agent.Serve(context.Background(), in, out)
		outW.Close()
	}()
	ed := fakeeditor.Connect(inW, outR, eopts)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	tb.Cleanup(func() {
		cancel()
		inW.Close()
		select {
		case <-served:
		case <-time.After(10 * time.Second):
			tb.Error("agent did not stop after stdin closed")
		}
	})
	return &harness{agent: agent, editor: ed, agentIn: inW, ctx: ctx}
}

// newSession initializes and opens a session in cwd.
func (h *harness) newSession(t *testing.T, cwd string) acpsdk.SessionId {
	t.Helper()
	return h.openSession(t, cwd).SessionId
}

// openSession is newSession returning session/new's whole answer.
func (h *harness) openSession(t *testing.T, cwd string) acpsdk.NewSessionResponse {
	t.Helper()
	if _, err := h.editor.Initialize(h.ctx); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	resp, err := h.editor.Conn.NewSession(h.ctx, acpsdk.NewSessionRequest{Cwd: cwd, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatalf("session/new: %v", err)
	}
	return resp
}

func (h *harness) prompt(sid acpsdk.SessionId, text string) (acpsdk.PromptResponse, error) {
	return h.editor.Conn.Prompt(h.ctx, acpsdk.PromptRequest{SessionId: sid, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock(text)}})
}

// promptResult is a prompt's answer.
type promptResult struct {
	resp acpsdk.PromptResponse
	err  error
}

// promptInBackground sends a prompt from a goroutine of its own; the
// channel receives its answer.
func (h *harness) promptInBackground(sid acpsdk.SessionId, text string) <-chan promptResult {
	done := make(chan promptResult, 1)
	go func() {
		resp, err := h.prompt(sid, text)
		done <- promptResult{resp, err}
	}()
	return done
}

func TestInitialize(t *testing.T) {
	t.Parallel()
	h := startAgent(t, &fakeBackend{}, fakeeditor.Options{FS: true})
	resp, err := h.editor.Initialize(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ProtocolVersion != 1 || resp.AgentInfo == nil || resp.AgentInfo.Name != "codexacp" || resp.AgentInfo.Version != "test" {
		t.Errorf("initialize response = %+v", resp)
	}
	if resp.AgentCapabilities.LoadSession {
		t.Errorf("advertises loadSession without a session store: %+v", resp.AgentCapabilities)
	}
	if pc := resp.AgentCapabilities.PromptCapabilities; !pc.Image || !pc.EmbeddedContext || pc.Audio {
		t.Errorf("promptCapabilities = %+v, want image and embeddedContext, no audio", pc)
	}
	// authMethods must be an empty array on the wire, not null or missing.
	found := false
	for _, line := range h.editor.Raw() {
		if bytes.Contains(line, []byte(`"agentInfo"`)) {
			found = true
			if !bytes.Contains(line, []byte(`"authMethods":[]`)) {
				t.Errorf("initialize result lacks authMethods:[]: %s", line)
			}
		}
	}
	if !found {
		t.Error("initialize response not seen on the wire")
	}
}

func TestNewSessionValidatesCwd(t *testing.T) {
	t.Parallel()
	h := startAgent(t, &fakeBackend{}, fakeeditor.Options{})
	if _, err := h.editor.Initialize(h.ctx); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ cwd, want string }{
		{"relative/dir", "must be an absolute path"},
		{filepath.Join(t.TempDir(), "missing"), "does not exist"},
		{file, "is not a directory"},
	} {
		_, err := h.editor.Conn.NewSession(h.ctx, acpsdk.NewSessionRequest{Cwd: tc.cwd, McpServers: []acpsdk.McpServer{}})
		var re *acpsdk.RequestError
		if !errors.As(err, &re) || re.Code != -32602 || !strings.Contains(re.Message, tc.want) {
			t.Errorf("cwd %q: err = %v, want -32602 containing %q", tc.cwd, err, tc.want)
		}
	}
}

func TestPromptTurnStreamsAndResumes(t *testing.T) {
	t.Parallel()
	lines := fixtureLines(t, "agent_message_reasoning.jsonl")
	be := &fakeBackend{script: playLines(lines...)}
	h := startAgent(t, be, fakeeditor.Options{FS: true})
	cwd := t.TempDir()
	sid := h.newSession(t, cwd)

	resp, err := h.prompt(sid, "hello")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StopReason != acpsdk.StopReasonEndTurn {
		t.Errorf("stopReason = %q", resp.StopReason)
	}
	kinds := fakeeditor.UpdateKinds(h.editor.Updates())
	// The first turn gives the session its title, which the editor is told.
	want := []string{"agent_thought_chunk", "agent_message_chunk", "usage_update", "session_info_update"}
	if strings.Join(kinds, ",") != strings.Join(want, ",") {
		t.Errorf("updates = %v, want %v", kinds, want)
	}

	if _, err := h.prompt(sid, "again"); err != nil {
		t.Fatal(err)
	}
	runs := be.invocations()
	if len(runs) != 2 {
		t.Fatalf("runs = %d", len(runs))
	}
	if runs[0].ThreadID != "" || runs[0].Prompt != "hello" || runs[0].Cwd != cwd || runs[0].Sandbox != "read-only" {
		t.Errorf("first run = %+v", runs[0])
	}
	if runs[1].ThreadID == "" || !strings.Contains(lines[0], runs[1].ThreadID) {
		t.Errorf("second run does not resume the first thread: %+v", runs[1])
	}
}

func TestPromptCodexExitsWithoutOutput(t *testing.T) {
	t.Parallel()
	be := &fakeBackend{script: func(context.Context, int, execrun.Invocation, func([]byte)) error {
		return &proc.ExitError{Code: 1, Stderr: "Error: MCP server acp failed to start"}
	}}
	h := startAgent(t, be, fakeeditor.Options{})
	sid := h.newSession(t, t.TempDir())
	_, err := h.prompt(sid, "hi")
	var re *acpsdk.RequestError
	if !errors.As(err, &re) || !strings.Contains(re.Message, "MCP server acp failed to start") {
		t.Fatalf("err = %v, want the stderr tail in the message", err)
	}
	// The agent keeps serving.
	if _, err := h.editor.Conn.NewSession(h.ctx, acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}}); err != nil {
		t.Errorf("agent stopped serving: %v", err)
	}
}

// hangAfter prints lines, then blocks until the run is cancelled, like codex
// waiting on the model.
func hangAfter(started chan<- struct{}, lines ...string) func(context.Context, int, execrun.Invocation, func([]byte)) error {
	return func(ctx context.Context, _ int, _ execrun.Invocation, onLine func([]byte)) error {
		for _, l := range lines {
			onLine([]byte(l))
		}
		if started != nil {
			started <- struct{}{}
		}
		<-ctx.Done()
		return context.Cause(ctx)
	}
}

func TestCancelAnswersCancelledAfterUpdates(t *testing.T) {
	t.Parallel()
	started := make(chan struct{}, 1)
	be := &fakeBackend{script: hangAfter(started,
		`{"type":"thread.started","thread_id":"t-1"}`,
		`{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"working"}}`)}
	h := startAgent(t, be, fakeeditor.Options{})
	sid := h.newSession(t, t.TempDir())

	done := h.promptInBackground(sid, "long task")
	<-started
	if err := h.editor.Conn.Cancel(h.ctx, acpsdk.CancelNotification{SessionId: sid}); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || r.resp.StopReason != acpsdk.StopReasonCancelled {
		t.Fatalf("prompt = %+v, %v; want stopReason cancelled", r.resp, r.err)
	}
	// The session's title came with the first turn.
	if kinds := fakeeditor.UpdateKinds(h.editor.Updates()); strings.Join(kinds, ",") != "agent_message_chunk,session_info_update" {
		t.Errorf("updates before the response = %v", kinds)
	}
}

func TestMalformedInputGetsErrorAndAgentKeepsServing(t *testing.T) {
	t.Parallel()
	h := startAgent(t, &fakeBackend{}, fakeeditor.Options{})
	for _, line := range []string{
		"this is not json",
		`[1,2,3]`,
		`{"jsonrpc":"2.0","id":7}`,
		`{"jsonrpc":"2.0","id":{"x":1},"method":"initialize"}`,
	} {
		if _, err := io.WriteString(h.agentIn, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	// An unknown method answers method-not-found.
	if _, err := io.WriteString(h.agentIn, `{"jsonrpc":"2.0","id":99,"method":"no/such_method","params":{}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.editor.Initialize(h.ctx); err != nil {
		t.Fatalf("agent stopped serving after bad input: %v", err)
	}
	// Requests are handled concurrently: the answer to request 99 may come
	// after initialize's, so wait for all five errors.
	var codes []int
	deadline := time.Now().Add(10 * time.Second)
	for len(codes) < 5 && time.Now().Before(deadline) {
		codes = errorCodes(h.editor.Raw())
		time.Sleep(10 * time.Millisecond)
	}
	want := []int{-32700, -32600, -32600, -32600, -32601}
	if len(codes) != len(want) {
		t.Fatalf("error codes = %v, want %v", codes, want)
	}
	for i := range want {
		if codes[i] != want[i] {
			t.Errorf("error %d = %d, want %d (all: %v)", i, codes[i], want[i], codes)
		}
	}
}

func errorCodes(raw [][]byte) []int {
	var codes []int
	for _, line := range raw {
		var m struct {
			Error *struct{ Code int } `json:"error"`
		}
		if json.Unmarshal(line, &m) == nil && m.Error != nil {
			codes = append(codes, m.Error.Code)
		}
	}
	return codes
}

func TestSetModeChangesSandboxAndNotifies(t *testing.T) {
	t.Parallel()
	be := &fakeBackend{script: playLines(`{"type":"thread.started","thread_id":"t"}`, `{"type":"turn.started"}`,
		`{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":0,"output_tokens":1,"reasoning_output_tokens":0}}`)}
	h := startAgent(t, be, fakeeditor.Options{})
	sid := h.newSession(t, t.TempDir())
	for _, tc := range []struct{ mode, sandbox string }{
		{"read-only", "read-only"}, {"ask", "read-only"}, {"auto", "workspace-write"}, {"full-access", "danger-full-access"},
	} {
		if _, err := h.editor.Conn.SetSessionMode(h.ctx, acpsdk.SetSessionModeRequest{SessionId: sid, ModeId: acpsdk.SessionModeId(tc.mode)}); err != nil {
			t.Fatal(err)
		}
		if _, err := h.prompt(sid, "x"); err != nil {
			t.Fatal(err)
		}
		runs := be.invocations()
		if got := runs[len(runs)-1].Sandbox; got != tc.sandbox {
			t.Errorf("mode %s: sandbox = %q, want %q", tc.mode, got, tc.sandbox)
		}
	}
	modeUpdates := 0
	for _, u := range h.editor.Updates() {
		if u.Update.CurrentModeUpdate != nil {
			modeUpdates++
		}
	}
	if modeUpdates != 4 {
		t.Errorf("current_mode_update count = %d, want 4", modeUpdates)
	}
	_, err := h.editor.Conn.SetSessionMode(h.ctx, acpsdk.SetSessionModeRequest{SessionId: sid, ModeId: "yolo"})
	var re *acpsdk.RequestError
	if !errors.As(err, &re) || re.Code != -32602 {
		t.Errorf("unknown mode: err = %v", err)
	}
}

func TestUnknownSession(t *testing.T) {
	t.Parallel()
	h := startAgent(t, &fakeBackend{}, fakeeditor.Options{})
	if _, err := h.editor.Initialize(h.ctx); err != nil {
		t.Fatal(err)
	}
	_, err := h.prompt(sidUnknown, "x")
	var re *acpsdk.RequestError
	if !errors.As(err, &re) || re.Code != -32002 || !strings.Contains(re.Message, "unknown session") {
		t.Errorf("err = %v", err)
	}
}

func TestPromptText(t *testing.T) {
	t.Parallel()
	res := acpsdk.ContentBlock{Resource: &acpsdk.ContentBlockResource{Type: "resource", Resource: acpsdk.EmbeddedResourceResource{
		TextResourceContents: &acpsdk.TextResourceContents{Uri: "file:///w/a.go", Text: "package a"},
	}}}
	for _, tc := range []struct {
		name    string
		blocks  []acpsdk.ContentBlock
		want    string
		wantErr string
	}{
		{"text", []acpsdk.ContentBlock{acpsdk.TextBlock("fix it")}, "fix it", ""},
		{"link", []acpsdk.ContentBlock{acpsdk.TextBlock("look at"), acpsdk.ResourceLinkBlock("a.go", "file:///w/a.go")}, "look at\n[@a.go](file:///w/a.go)", ""},
		{"embedded", []acpsdk.ContentBlock{acpsdk.TextBlock("see"), res}, "see\n<context ref=\"file:///w/a.go\">\npackage a\n</context>", ""},
		{"image only", []acpsdk.ContentBlock{acpsdk.ImageBlock(testkit.PNGBase64, "image/png")}, "", "only images"},
		{"bad image", []acpsdk.ContentBlock{acpsdk.TextBlock("see"), acpsdk.ImageBlock("AAAA", "image/png")}, "", "prompt block 1: the image data is not a PNG"},
		{"empty", []acpsdk.ContentBlock{acpsdk.TextBlock("  ")}, "", "empty"},
		{"none", nil, "", "empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := promptContent(tc.blocks)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestClientMCPConfig(t *testing.T) {
	t.Parallel()
	servers := []acpsdk.McpServer{
		{Stdio: &acpsdk.McpServerStdio{Name: "my tools", Command: "/bin/tool", Args: []string{"--x", `a"b`}, Env: []acpsdk.EnvVariable{{Name: "K", Value: "v\\1"}}}},
		{Http: &acpsdk.McpServerHttpInline{Type: "http", Name: "acp", Url: "http://127.0.0.1:9/mcp", Headers: []acpsdk.HttpHeader{{Name: "Authorization", Value: "Bearer x"}}}},
		{Http: &acpsdk.McpServerHttpInline{Type: "http", Name: "acp", Url: "http://127.0.0.1:10/mcp", Headers: []acpsdk.HttpHeader{}}},
	}
	got, err := clientMCPConfig(servers)
	if err != nil {
		t.Fatal(err)
	}
	// Names become TOML bare keys, never ours, never twice.
	want := []backend.MCPServer{
		{Name: "my_tools", Command: "/bin/tool", Args: []string{"--x", `a"b`}, Env: []backend.KeyValue{{Name: "K", Value: "v\\1"}}},
		{Name: "acp_2", URL: "http://127.0.0.1:9/mcp", Headers: []backend.KeyValue{{Name: "Authorization", Value: "Bearer x"}}},
		{Name: "acp_3", URL: "http://127.0.0.1:10/mcp"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%+v\nwant\n%+v", got, want)
	}
	if _, err := clientMCPConfig([]acpsdk.McpServer{{Stdio: &acpsdk.McpServerStdio{Name: "x"}}}); err == nil {
		t.Error("empty command accepted")
	}
}

// The editor's MCP servers reach every codex run: config as -c (without
// an approval mode in the default ask mode, so that codex exec, which
// cannot ask, refuses their tools that are not read-only), header values
// only in the environment.
func TestEditorMCPServersReachCodex(t *testing.T) {
	t.Parallel()
	be := &fakeBackend{script: playLines(`{"type":"thread.started","thread_id":"t"}`, `{"type":"turn.started"}`,
		`{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":0,"output_tokens":1,"reasoning_output_tokens":0}}`)}
	h := startAgent(t, be, fakeeditor.Options{})
	if _, err := h.editor.Initialize(h.ctx); err != nil {
		t.Fatal(err)
	}
	resp, err := h.editor.Conn.NewSession(h.ctx, acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{
		{Http: &acpsdk.McpServerHttpInline{Type: "http", Name: "docs", Url: "http://127.0.0.1:9/mcp", Headers: []acpsdk.HttpHeader{{Name: "Authorization", Value: "Bearer s3cret"}}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ { // first turn and resumed turn alike
		if _, err := h.prompt(resp.SessionId, "hi"); err != nil {
			t.Fatal(err)
		}
	}
	for _, run := range be.invocations() {
		cfg := strings.Join(run.Config, " ")
		if !strings.Contains(cfg, `mcp_servers.docs={url="http://127.0.0.1:9/mcp", env_http_headers={"Authorization"="CODEXACP_MCP_HEADER_0_0"}}`) || strings.Contains(cfg, "s3cret") {
			t.Errorf("config = %s", cfg)
		}
		if !slices.Contains(run.Env, "CODEXACP_MCP_HEADER_0_0=Bearer s3cret") {
			t.Errorf("env = %q", run.Env)
		}
	}
}

// A session/cancel that arrives while a newer prompt waits for the running
// turn to stop cancels that prompt too: it answers cancelled and never runs.
func TestCancelReachesWaitingPrompt(t *testing.T) {
	t.Parallel()
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	be := &fakeBackend{script: func(ctx context.Context, n int, inv execrun.Invocation, onLine func([]byte)) error {
		started <- struct{}{}
		<-release // codex takes its time to stop
		return ctx.Err()
	}}
	h := startAgent(t, be, fakeeditor.Options{})
	sid := h.newSession(t, t.TempDir())
	go h.prompt(sid, "first")
	<-started
	second := make(chan acpsdk.PromptResponse, 1)
	go func() {
		r, _ := h.prompt(sid, "second")
		second <- r
	}()
	s, err := h.agent.session(sid)
	if err != nil {
		t.Fatal(err)
	}
	for { // the second prompt has registered and waits for the first turn
		s.mu.Lock()
		waiting := s.latest == 2
		s.mu.Unlock()
		if waiting {
			break
		}
		runtime.Gosched()
	}
	if err := h.editor.Conn.Cancel(h.ctx, acpsdk.CancelNotification{SessionId: sid}); err != nil {
		t.Fatal(err)
	}
	// The guard handles session/cancel synchronously; a request after it is
	// read after it.
	if _, err := h.editor.Conn.SetSessionMode(h.ctx, acpsdk.SetSessionModeRequest{SessionId: sid, ModeId: acpsdk.SessionModeId(backend.ModeAsk)}); err != nil {
		t.Fatal(err)
	}
	close(release)
	if r := <-second; r.StopReason != acpsdk.StopReasonCancelled {
		t.Errorf("waiting prompt stopReason = %q, want cancelled", r.StopReason)
	}
	if n := len(be.invocations()); n != 1 {
		t.Errorf("codex ran %d times, want 1", n)
	}
}

// awaitSession returns once cond, evaluated under s.mu, holds.
func awaitSession(s *session, cond func() bool) {
	for {
		s.mu.Lock()
		ok := cond()
		s.mu.Unlock()
		if ok {
			return
		}
		runtime.Gosched()
	}
}

// session/new waits for the user's codex settings only as long as its
// request lasts: with codex hung, a request the client gives up on
// answers at once; the next one gets the settings once they are there.
func TestNewSessionStopsWaitingForSettings(t *testing.T) {
	t.Parallel()
	called, release := make(chan struct{}), make(chan struct{})
	user := codex.UserConfig{ApprovalPolicy: codex.ApprovalNever}
	h := startAgentWith(t, Options{Backend: &fakeBackend{}, UserConfig: func() codex.UserConfig {
		close(called)
		<-release // codex hangs
		return user
	}}, fakeeditor.Options{})
	// A round trip first: NewSession is called directly below, and the
	// commands it announces go out through the connection Serve sets up.
	if _, err := h.editor.Conn.Initialize(h.ctx, acpsdk.InitializeRequest{ProtocolVersion: acpsdk.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(h.ctx)
	go func() {
		<-called
		cancel() // the client gives up
	}()
	_, err := h.agent.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("session/new with codex hung: err = %v, want the request's cancellation", err)
	}
	close(release)
	resp, err := h.agent.NewSession(h.ctx, acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := h.agent.session(resp.SessionId)
	if err != nil {
		t.Fatal(err)
	}
	if s.user.ApprovalPolicy != codex.ApprovalNever {
		t.Errorf("the next session's settings: %+v", s.user)
	}
}

// The first turn's prompt gives the session its title (as session/list
// shows it), which the editor is told once with session_info_update.
func TestFirstTurnAnnouncesTitle(t *testing.T) {
	t.Parallel()
	be := &fakeBackend{script: playLines(
		`{"type":"thread.started","thread_id":"t"}`,
		`{"type":"turn.started"}`,
		`{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":0,"output_tokens":1,"reasoning_output_tokens":0}}`)}
	h := startAgent(t, be, fakeeditor.Options{})
	sid := h.newSession(t, t.TempDir())
	titles := func() []string {
		var out []string
		for _, n := range h.editor.Updates() {
			if u := n.Update.SessionInfoUpdate; u != nil && u.Title != nil {
				out = append(out, *u.Title)
			}
		}
		return out
	}
	for _, p := range []string{"Fix the login bug\nIt fails on Safari.", "and add a test"} {
		if _, err := h.prompt(sid, p); err != nil {
			t.Fatal(err)
		}
	}
	if got := titles(); !slices.Equal(got, []string{"Fix the login bug"}) {
		t.Errorf("titles sent = %q, want the first prompt's first line, once", got)
	}
}

// A session's settings are its project's where the project has its own
// (Options.ProjectUserConfig, asked with the session's cwd), else the
// user's; a project whose settings cannot be read leaves the user's.
func TestSessionUsesProjectSettings(t *testing.T) {
	t.Parallel()
	project, plain, broken := t.TempDir(), t.TempDir(), t.TempDir()
	user := codex.UserConfig{ApprovalPolicy: codex.ApprovalOnRequest}
	projectUser := codex.UserConfig{ApprovalPolicy: codex.ApprovalNever, SandboxMode: codex.SandboxWorkspaceWrite,
		WorkspaceWrite: &codex.WorkspaceWrite{WritableRoots: []string{"/project-root"}}}
	h := startAgentWith(t, Options{Backend: &fakeBackend{},
		UserConfig: func() codex.UserConfig { return user },
		ProjectUserConfig: func(_ context.Context, cwd string) (codex.UserConfig, bool, error) {
			switch cwd {
			case project:
				return projectUser, true, nil
			case broken:
				return codex.UserConfig{}, false, errors.New("codex failed")
			}
			return codex.UserConfig{}, false, nil
		}}, fakeeditor.Options{})
	for _, tc := range []struct {
		cwd  string
		want codex.UserConfig
	}{{project, projectUser}, {plain, user}, {broken, user}} {
		resp := h.openSession(t, tc.cwd)
		s, err := h.agent.session(resp.SessionId)
		if err != nil {
			t.Fatal(err)
		}
		if s.user.ApprovalPolicy != tc.want.ApprovalPolicy || s.user.SandboxMode != tc.want.SandboxMode {
			t.Errorf("%s: settings %+v, want %+v", tc.cwd, s.user, tc.want)
		}
		if resp.Modes.CurrentModeId != "custom" {
			t.Errorf("%s: mode %s, want the settings' own", tc.cwd, resp.Modes.CurrentModeId)
		}
		p := backend.ModePolicy(backend.ModeAuto, s.user, nil)
		if tc.cwd == project && !slices.Contains(p.WorkspaceWrite.WritableRoots, "/project-root") {
			t.Errorf("auto dropped the project's writable root: %+v", p)
		}
	}
}

// "project codex settings" is logged only where codex's answer for the cwd
// differs from the user's: codex is asked wherever a project file names a
// setting, and ignores an untrusted project's file.
func TestSessionUserConfigLogsAppliedProjectSettings(t *testing.T) {
	t.Parallel()
	user := codex.UserConfig{ApprovalPolicy: codex.ApprovalOnRequest}
	for _, tc := range []struct {
		name    string
		project codex.UserConfig
		logged  bool
	}{
		{"untrusted: the user's", user, false},
		{"trusted", codex.UserConfig{ApprovalPolicy: codex.ApprovalNever}, true},
		{"trusted, a writable root", codex.UserConfig{ApprovalPolicy: codex.ApprovalOnRequest,
			WorkspaceWrite: &codex.WorkspaceWrite{WritableRoots: []string{"/r"}}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := &syncbuf.Buffer{}
			a := NewAgent(Options{Backend: &fakeBackend{}, Logger: slog.New(slog.NewTextHandler(logs, nil)),
				UserConfig: func() codex.UserConfig { return user },
				ProjectUserConfig: func(context.Context, string) (codex.UserConfig, bool, error) {
					return tc.project, true, nil
				}})
			got := a.sessionUserConfig(context.Background(), t.TempDir())
			if !reflect.DeepEqual(got, tc.project) {
				t.Errorf("settings %+v, want codex's answer %+v", got, tc.project)
			}
			if logged := strings.Contains(logs.String(), "project codex settings"); logged != tc.logged {
				t.Errorf("logged %v, want %v:\n%s", logged, tc.logged, logs)
			}
		})
	}
}

// forgettingBackend warms sessions (like the app-server backend) and
// records what it was told to forget.
type forgettingBackend struct {
	fakeBackend
	mu     sync.Mutex
	forgot []string
}

func (b *forgettingBackend) Capabilities() backend.Capabilities { return backend.Warm }

func (b *forgettingBackend) Warm(backend.Turn) {}

func (b *forgettingBackend) Forget(id string) {
	b.mu.Lock()
	b.forgot = append(b.forgot, id)
	b.mu.Unlock()
}

// session/close tells a backend that warms threads to forget the session's.
func TestCloseForgetsWarmedSession(t *testing.T) {
	t.Parallel()
	be := &forgettingBackend{}
	h := startAgent(t, be, fakeeditor.Options{})
	id := h.newSession(t, t.TempDir())
	if _, err := h.editor.Conn.CloseSession(h.ctx, acpsdk.CloseSessionRequest{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	be.mu.Lock()
	defer be.mu.Unlock()
	if len(be.forgot) != 1 || be.forgot[0] != string(id) {
		t.Errorf("forgot %v, want [%s]", be.forgot, id)
	}
}
