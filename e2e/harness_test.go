package e2e_test

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/codex/appserver"
	"github.com/codexacp/codexacp/e2e/codextest"
	"github.com/codexacp/codexacp/e2e/mockapi"
	"github.com/codexacp/codexacp/internal/acpschema"
	"github.com/codexacp/codexacp/internal/fakeeditor"
	"github.com/codexacp/codexacp/internal/recovery"
	"github.com/codexacp/codexacp/internal/syncbuf"
	"github.com/codexacp/codexacp/internal/testkit"
)

// binDir holds the commands the tests build, removed by TestMain.
var binDir string

// builtAgent builds codexacp once, for the first test that runs it: without
// the pinned codex most tests skip, and a run filtered to tests that need
// no agent builds nothing.
var builtAgent = sync.OnceValues(func() (string, error) {
	bins, err := testkit.BuildCommands(binDir, "github.com/codexacp/codexacp/cmd/codexacp")
	if err != nil {
		return "", fmt.Errorf("building codexacp: %w", err)
	}
	return bins[0], nil
})

// agentOverride, when set, is the binary agentBin gives instead
// (BenchmarkColdPrompt's candidates).
var agentOverride string

// agentBin is the codexacp binary under test.
func agentBin(t testing.TB) string {
	t.Helper()
	if agentOverride != "" {
		return agentOverride
	}
	bin, err := builtAgent()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "codexacp-e2e-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type setup struct {
	backend string // --backend: app-server or exec; "": no flag, the agent's default (defaultBackend)
	fs      bool
	// writeThrough makes the editor's fs/write_text_file save to disk
	// too, as acpx and Zed do (fakeeditor.Options.WriteThrough).
	writeThrough bool
	permission   func(acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse
	// elicitation, when set, makes the editor declare form elicitation and
	// answer elicitation/create with it.
	elicitation func(context.Context, acpsdk.UnstableCreateElicitationRequest) (acpsdk.UnstableCreateElicitationResponse, error)
	// elicitationURL makes an editor with elicitation declare URL
	// elicitation too.
	elicitationURL bool
	// beforeFS runs before the editor answers each fs request
	// (fakeeditor.Options.BeforeFS): a test can hold the answer back.
	beforeFS  func(ctx context.Context, method, path string)
	codexPath string // default: the pinned codex
	mode      string // default: the agent's default (ask)
	args      []string
	env       []string // added to the agent's isolated environment (a later entry wins)
}

// env is one codexacp process driven by a fake editor, with real codex
// talking to a mock model.
type env struct {
	t         testing.TB
	ctx       context.Context
	mock      *mockapi.Server
	editor    *fakeeditor.Editor
	cwd       string
	codexHome string
	session   acpsdk.SessionId
	stderr    *syncbuf.Buffer
	agentPID  int
	args      []string // the agent's command line (without recording)
	baseEnv   []string // the agent's environment
	backend   string
	stop      func() // ends the agent (closes its stdin, waits); safe to call again
}

// backends are the agent's codex backends; tests that hold for both run
// once per backend (eachBackend).
var backends = []string{"exec", "app-server"}

// defaultBackend is the agent's backend when no --backend is given: a test
// that names none runs on it.
const defaultBackend = "app-server"

// codexCommand tells each backend's codex process by its command line.
var codexCommand = map[string]string{"exec": " exec ", "app-server": " app-server"}

// eachBackend runs f as a subtest per backend.
func eachBackend(t *testing.T, f func(t *testing.T, backend string)) {
	for _, b := range backends {
		t.Run(b, func(t *testing.T) { f(t, b) })
	}
}

func start(t testing.TB, s setup) *env {
	t.Helper()
	codexPath := s.codexPath
	if codexPath == "" {
		codexPath = codextest.Binary(t)
	}
	mock := mockapi.New(t)
	baseEnv, home := codextest.Env(t)
	baseEnv = append(baseEnv, s.env...)
	cwd, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}

	args := []string{"--codex-path", codexPath, "--log-level", "debug", "-c", `model="gpt-5.5"`}
	for _, c := range mockapi.CodexConfig(mock.URL()) {
		args = append(args, "-c", c)
	}
	if s.backend != "" {
		args = append(args, "--backend", s.backend)
	}
	args = append(args, s.args...)
	e := &env{t: t, mock: mock, cwd: cwd, codexHome: home, args: args, baseEnv: baseEnv, backend: cmp.Or(s.backend, defaultBackend)}
	// The test's temporary directory holds the workspace and codex's home.
	e.launch(s, recordCorpus(t, filepath.Dir(cwd), false))
	e.session = e.newSession()
	if s.mode != "" {
		if _, err := e.editor.Conn.SetSessionMode(e.ctx, acpsdk.SetSessionModeRequest{SessionId: e.session, ModeId: acpsdk.SessionModeId(s.mode)}); err != nil {
			t.Fatalf("set mode: %v", err)
		}
	}
	return e
}

// restart starts a second codexacp process on the same workspace, codex
// home, state directory and mock model (the first keeps running), as an
// editor does after a restart. No session is opened. It is the process a
// restartCorpusTests test records.
func (e *env) restart(s setup) *env {
	e.t.Helper()
	e2 := &env{t: e.t, mock: e.mock, cwd: e.cwd, codexHome: e.codexHome, args: e.args, baseEnv: e.baseEnv, backend: e.backend}
	e2.launch(s, recordCorpus(e.t, filepath.Dir(e.cwd), true))
	return e2
}

// launch starts the agent process, connects the fake editor and initializes.
func (e *env) launch(s setup, extraArgs []string) {
	t := e.t
	t.Helper()
	cmd := exec.Command(agentBin(t), append(append([]string(nil), e.args...), extraArgs...)...)
	cmd.Env = e.baseEnv
	stderr := &syncbuf.Buffer{}
	cmd.Stderr = stderr
	stdin, stdout := startPiped(t, cmd)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	e.ctx, e.stderr, e.agentPID = ctx, stderr, cmd.Process.Pid
	e.editor = fakeeditor.Connect(stdin, stdout, fakeeditor.Options{FS: s.fs, WriteThrough: s.writeThrough, Permission: s.permission, Elicitation: s.elicitation, ElicitationURL: s.elicitationURL, BeforeFS: s.beforeFS})
	e.stop = sync.OnceFunc(func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			t.Error("codexacp did not exit after its stdin closed")
		}
	})
	t.Cleanup(func() {
		cancel()
		e.stop()
		e.checkSchema()
		if strings.Contains(stderr.String(), recovery.LogPrefix) {
			t.Error("codexacp recovered from a panic: a bug (internal/recovery), see its stderr")
		}
		if t.Failed() {
			t.Logf("codexacp stderr:\n%s", stderr.String())
		}
	})
	if _, err := e.editor.Initialize(ctx); err != nil {
		t.Fatalf("initialize: %v", err)
	}
}

// newSession opens another session in the workspace.
func (e *env) newSession() acpsdk.SessionId {
	e.t.Helper()
	resp, err := e.editor.Conn.NewSession(e.ctx, acpsdk.NewSessionRequest{Cwd: e.cwd, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		e.t.Fatalf("session/new: %v", err)
	}
	return resp.SessionId
}

// startPiped starts cmd (an agent process) with its stdin and stdout piped,
// for fakeeditor.Connect.
func startPiped(t testing.TB, cmd *exec.Cmd) (io.WriteCloser, io.ReadCloser) {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return stdin, stdout
}

// checkSchema validates every message the agent sent against the ACP schema.
func (e *env) checkSchema() { checkSchema(e.t, e.editor) }

// checkSchema validates every message ed received against the ACP schema.
func checkSchema(t testing.TB, ed *fakeeditor.Editor) {
	for _, raw := range ed.Raw() {
		if err := acpschema.ValidateMessage(raw); err != nil {
			t.Errorf("agent message violates the ACP schema: %v\n%s", err, raw)
		}
	}
}

func (e *env) prompt(text string) (acpsdk.PromptResponse, error) {
	return e.editor.Conn.Prompt(e.ctx, acpsdk.PromptRequest{SessionId: e.session, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock(text)}})
}

func (e *env) mustPrompt(text string) acpsdk.PromptResponse {
	e.t.Helper()
	resp, err := e.prompt(text)
	if err != nil {
		e.t.Fatalf("prompt %q: %v", text, err)
	}
	return resp
}

// writeFile creates a file in the workspace (on disk) and returns its path.
func (e *env) writeFile(name, content string) string {
	e.t.Helper()
	p := filepath.Join(e.cwd, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

func readDisk(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// processesMatching lists live processes whose command line contains s.
func processesMatching(s string) []string {
	var found []string
	entries, _ := os.ReadDir("/proc")
	for _, ent := range entries {
		if ent.Name()[0] < '0' || ent.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", ent.Name(), "cmdline"))
		if err != nil || len(b) == 0 {
			continue
		}
		cmdline := strings.ReplaceAll(string(b), "\x00", " ")
		if strings.Contains(cmdline, s) {
			found = append(found, ent.Name()+": "+cmdline)
		}
	}
	return found
}

// codexProcesses lists live processes of this test's codex (found by their
// CODEX_HOME), other than the agent itself.
func (e *env) codexProcesses() []string {
	return processesWithEnv("CODEX_HOME="+e.codexHome, e.agentPID)
}

// sessionProcesses is codexProcesses without the agent's configuration
// server (appserver.ConfigServer, marked by appserver.ConfigReadEnv), which answers
// config/read and skills/list for as long as the agent wants it.
func (e *env) sessionProcesses() []string {
	var found []string
	for _, p := range e.codexProcesses() {
		if pid, _, _ := strings.Cut(p, ": "); !hasEnv(pid, appserver.ConfigReadEnv+"=1") {
			found = append(found, p)
		}
	}
	return found
}

// turnProcesses lists what a turn left running: with exec every codex
// process but the one waiting for the session's next prompt, with the
// app-server everything but the app-server itself (it lives as long as the
// agent); the configuration server aside.
func (e *env) turnProcesses() []string {
	waiting := e.waitingCodex()
	var left []string
	for _, p := range e.sessionProcesses() {
		if e.backend == "app-server" && strings.Contains(p, " app-server") {
			continue
		}
		if pid, _, _ := strings.Cut(p, ": "); waitingOrItsChild(waiting, pid) {
			continue // the waiting codex, or what it runs as it starts (lsb_release and its subshells)
		}
		left = append(left, p)
	}
	return left
}

// waitingOrItsChild says whether pid is a waiting codex or a descendant of
// one (a few levels: lsb_release is a shell script that forks).
func waitingOrItsChild(waiting map[string]bool, pid string) bool {
	for range 5 {
		if pid == "" || pid == "1" {
			return false
		}
		if waiting[pid] {
			return true
		}
		pid = parentPID(pid)
	}
	return false
}

// parentPID is the parent of process pid, from /proc ("" once it is gone).
func parentPID(pid string) string {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return ""
	}
	// "pid (comm) state ppid …": comm may hold spaces and parentheses.
	end := bytes.LastIndexByte(b, ')')
	if end < 0 {
		return ""
	}
	f := strings.Fields(string(b[end+1:]))
	if len(f) < 2 {
		return ""
	}
	return f[1]
}

// waitingCodex is the pids of the exec codex processes the agent started
// ahead of a prompt and has neither given a prompt nor ended, as its debug
// log tells.
func (e *env) waitingCodex() map[string]bool {
	waiting := map[string]bool{}
	for _, line := range strings.Split(e.stderr.String(), "\n") {
		_, pid, ok := strings.Cut(line, " pid=")
		if !ok {
			continue
		}
		pid, _, _ = strings.Cut(pid, " ")
		switch {
		case strings.Contains(line, `msg="codex waiting for its prompt"`):
			waiting[pid] = true
		case strings.Contains(line, `msg="waiting codex takes its prompt"`),
			strings.Contains(line, `msg="waiting codex ended"`):
			delete(waiting, pid)
		}
	}
	return waiting
}

// processesWithEnv lists live processes whose environment contains kv,
// except the one with pid except.
func processesWithEnv(kv string, except int) []string {
	var found []string
	entries, _ := os.ReadDir("/proc")
	for _, ent := range entries {
		if ent.Name()[0] < '0' || ent.Name()[0] > '9' || ent.Name() == strconv.Itoa(except) {
			continue
		}
		if hasEnv(ent.Name(), kv) {
			cmd, _ := os.ReadFile(filepath.Join("/proc", ent.Name(), "cmdline"))
			found = append(found, ent.Name()+": "+strings.ReplaceAll(string(cmd), "\x00", " "))
		}
	}
	return found
}

// hasEnv reports whether the process pid has kv in its environment.
func hasEnv(pid, kv string) bool {
	b, err := os.ReadFile(filepath.Join("/proc", pid, "environ"))
	if err != nil {
		return false
	}
	for _, v := range bytes.Split(b, []byte{0}) {
		if string(v) == kv {
			return true
		}
	}
	return false
}

// eventually polls cond for up to d; processes take a moment to be reaped.
func eventually(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// toolUpdates returns the tool_call and tool_call_update updates, in order.
func toolUpdates(e *env) []acpsdk.SessionUpdate {
	var out []acpsdk.SessionUpdate
	for _, n := range e.editor.Updates() {
		if n.Update.ToolCall != nil || n.Update.ToolCallUpdate != nil {
			out = append(out, n.Update)
		}
	}
	return out
}

// collapse drops repeats of the previous element (a message streamed in
// several chunks counts once).
func collapse(kinds []string) []string {
	var out []string
	for _, k := range kinds {
		if len(out) == 0 || out[len(out)-1] != k {
			out = append(out, k)
		}
	}
	return out
}

func agentText(e *env) string {
	var b strings.Builder
	for _, n := range e.editor.Updates() {
		if c := n.Update.AgentMessageChunk; c != nil && c.Content.Text != nil {
			b.WriteString(c.Content.Text.Text)
		}
	}
	return b.String()
}
