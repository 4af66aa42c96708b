package codexexec_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/codexacp/codexacp/codex"
	"github.com/codexacp/codexacp/codex/execrun"
	"github.com/codexacp/codexacp/codex/proc"
	"github.com/codexacp/codexacp/e2e/codextest"
	"github.com/codexacp/codexacp/e2e/mockapi"
)

// runTimeout bounds one codex run, so that a wedged process fails the test
// instead of hanging it.
const runTimeout = 60 * time.Second

// event is the part of a codex JSONL event the tests look at.
type event struct {
	Type     string `json:"type"`
	ThreadID string `json:"thread_id"`
	Item     *struct {
		ID   string `json:"id"`
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"item"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
	Usage map[string]int `json:"usage"`
}

// fixture is one test's mock model and codex runner in an isolated CODEX_HOME.
type fixture struct {
	mock   *mockapi.Server
	runner *execrun.Runner
	home   string
	cwd    string
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	mock := mockapi.New(t)
	runner, home := codextest.Runner(t, mock)
	runner.Logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
	cwd, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{mock: mock, runner: runner, home: home, cwd: cwd}
}

// invocation is a turn in the fixture's workspace on a model with direct tools.
func (f *fixture) invocation(prompt string) execrun.Invocation {
	return execrun.Invocation{Cwd: f.cwd, Prompt: prompt, Sandbox: codex.SandboxReadOnly, Model: "gpt-5.5"}
}

// run runs one turn and returns its parsed events.
func (f *fixture) run(t testing.TB, ctx context.Context, inv execrun.Invocation) ([]event, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, runTimeout)
	defer cancel()
	var events []event
	err := f.runner.Run(ctx, inv, func(line []byte) {
		var e event
		if err := json.Unmarshal(line, &e); err != nil {
			t.Errorf("codex printed a line that is not JSON: %q", line)
			return
		}
		events = append(events, e)
	})
	return events, err
}

func types(events []event) []string {
	var out []string
	for _, e := range events {
		s := e.Type
		if e.Item != nil {
			s += ":" + e.Item.Type
		}
		out = append(out, s)
	}
	return out
}

func TestHelloTurn(t *testing.T) {
	f := newFixture(t)
	f.mock.Enqueue(mockapi.Reply(mockapi.Reasoning("Thinking about a greeting"), mockapi.Message("Hello from the mock model!")))
	prompt := "say hello\nwith a second line and \"quotes\""
	events, err := f.run(t, context.Background(), f.invocation(prompt))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := []string{"thread.started", "turn.started", "item.completed:reasoning", "item.completed:agent_message", "turn.completed"}
	if got := types(events); !slices.Equal(got, want) {
		t.Fatalf("events = %q, want %q", got, want)
	}
	if events[0].ThreadID == "" {
		t.Error("thread.started has no thread_id")
	}
	if events[2].Item.Text != "Thinking about a greeting" || events[3].Item.Text != "Hello from the mock model!" {
		t.Errorf("items = %q, %q", events[2].Item.Text, events[3].Item.Text)
	}
	if u := events[4].Usage; u["input_tokens"] != mockapi.DefaultUsage.InputTokens || u["output_tokens"] != mockapi.DefaultUsage.OutputTokens {
		t.Errorf("usage = %v", u)
	}
	reqs := f.mock.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests, want 1", len(reqs))
	}
	if user := reqs[0].Texts("user"); len(user) == 0 || user[len(user)-1] != prompt {
		t.Errorf("the prompt did not reach the model intact through stdin: %q", user)
	}
	if reqs[0].Body["model"] != "gpt-5.5" {
		t.Errorf("model = %v", reqs[0].Body["model"])
	}
}

func TestResumeTurn(t *testing.T) {
	f := newFixture(t)
	f.mock.Enqueue(mockapi.Reply(mockapi.Message("first answer")), mockapi.Reply(mockapi.Message("second answer")))
	first, err := f.run(t, context.Background(), f.invocation("first question"))
	if err != nil {
		t.Fatalf("first turn: %v", err)
	}
	thread := first[0].ThreadID

	inv := f.invocation("second question")
	inv.ThreadID = thread
	inv.Sandbox = codex.SandboxWorkspaceWrite // a mode change between turns must reach codex
	second, err := f.run(t, context.Background(), inv)
	if err != nil {
		t.Fatalf("resumed turn: %v", err)
	}
	if second[0].Type != "thread.started" || second[0].ThreadID != thread {
		t.Errorf("resumed turn started thread %q, want %q", second[0].ThreadID, thread)
	}
	last := second[len(second)-1]
	if last.Type != "turn.completed" || last.Usage["input_tokens"] != 2*mockapi.DefaultUsage.InputTokens {
		t.Errorf("last event %+v; usage should be the thread's running total", last)
	}

	reqs := f.mock.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	user := strings.Join(reqs[1].Texts("user"), "\n")
	assistant := strings.Join(reqs[1].Texts("assistant"), "\n")
	if !strings.Contains(user, "first question") || !strings.Contains(user, "second question") {
		t.Errorf("resumed request lacks the user messages: %q", user)
	}
	if !strings.Contains(assistant, "first answer") {
		t.Errorf("resumed request lacks the first answer: %q", assistant)
	}
	if dev := strings.Join(reqs[1].Texts("developer"), "\n"); !strings.Contains(dev, "`sandbox_mode` is `workspace-write`") {
		t.Errorf("resumed turn did not switch to workspace-write")
	}
}

func TestResumeUnknownThread(t *testing.T) {
	f := newFixture(t)
	inv := f.invocation("hello")
	inv.ThreadID = "01a20598-0000-7000-8000-000000000000"
	_, err := f.run(t, context.Background(), inv)
	var exitErr *proc.ExitError
	if !errors.As(err, &exitErr) || exitErr.Code != 1 || !strings.Contains(exitErr.Stderr, "no rollout found") {
		t.Fatalf("Run = %v, want exit 1 saying no rollout found", err)
	}
	if strings.Contains(exitErr.Stderr, "backtrace") {
		t.Errorf("stderr keeps a backtrace: %q", exitErr.Stderr)
	}
}

func TestHTTPErrorFailsTurn(t *testing.T) {
	f := newFixture(t)
	f.mock.Enqueue(mockapi.HTTPError(400, "Invalid 'input': mock bad request"))
	events, err := f.run(t, context.Background(), f.invocation("hello"))
	var exitErr *proc.ExitError
	if !errors.As(err, &exitErr) || exitErr.Code != 1 {
		t.Fatalf("Run = %v, want exit status 1", err)
	}
	last := events[len(events)-1]
	if last.Type != "turn.failed" || last.Error == nil || !strings.Contains(last.Error.Message, "mock bad request") {
		t.Errorf("last event = %+v, want turn.failed with the API message", last)
	}
}

func TestCancelMidStream(t *testing.T) {
	f := newFixture(t)
	resp, hold := mockapi.Hang(mockapi.Message("partial text before a stall"))
	f.mock.Enqueue(resp)
	defer hold.Release()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var cancelledAt time.Time
	go func() {
		<-hold.Reached()
		cancelledAt = time.Now()
		cancel()
	}()
	events, err := f.run(t, ctx, f.invocation("talk slowly"))
	t.Logf("Run returned %v after cancel", time.Since(cancelledAt))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
	if got := types(events); len(got) < 2 || got[0] != "thread.started" || slices.Contains(got, "turn.completed") {
		t.Errorf("events = %q", got)
	}
	// Codex and its process group are gone when Run returns. Codex also runs
	// a shell-environment snapshot (bash -lc sourcing ~/.bashrc) in a session
	// of its own, which no group kill reaches; it ends by itself, so wait for it.
	if pids := codexProcesses(t, f.home); len(pids) > 0 {
		t.Logf("just after Run: %s", describe(pids))
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		pids := codexProcesses(t, f.home)
		if len(pids) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes left after cancel: %s", describe(pids))
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("all codex processes gone %v after cancel", time.Since(cancelledAt))
}

func describe(pids []string) string {
	var b strings.Builder
	for _, p := range pids {
		cmd, _ := os.ReadFile("/proc/" + p + "/cmdline")
		if len(cmd) > 80 {
			cmd = cmd[:80]
		}
		fmt.Fprintf(&b, "\n  %s %q", p, cmd)
	}
	return b.String()
}

// codexProcesses lists live processes whose environment has this test's
// CODEX_HOME: codex and anything it started.
func codexProcesses(t *testing.T, home string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc to look for processes in")
	}
	marker := []byte("CODEX_HOME=" + home + "\x00")
	var pids []string
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && strings.Contains(string(env), string(marker)) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

func TestModelCatalogRemovesApplyPatch(t *testing.T) {
	f := newFixture(t)
	catalog, err := codex.ModelCatalog(context.Background(), f.runner.Path, t.TempDir())
	if err != nil {
		t.Fatalf("ModelCatalog: %v", err)
	}
	if want := "model-catalog-" + codextest.PinnedVersion + ".json"; filepath.Base(catalog) != want {
		t.Logf("catalog file %s (not %s: another codex version?)", filepath.Base(catalog), want)
	}
	f.mock.Enqueue(mockapi.Reply(mockapi.Message("without")), mockapi.Reply(mockapi.Message("with")))

	if _, err := f.run(t, context.Background(), f.invocation("default catalog")); err != nil {
		t.Fatalf("Run: %v", err)
	}
	inv := f.invocation("our catalog")
	inv.Config = []string{`model_catalog_json="` + catalog + `"`}
	if _, err := f.run(t, context.Background(), inv); err != nil {
		t.Fatalf("Run with catalog: %v", err)
	}

	reqs := f.mock.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	if !reqs[0].HasTool("apply_patch") {
		t.Fatalf("control run lacks apply_patch (%q): this test would prove nothing", reqs[0].ToolNames())
	}
	if reqs[1].HasTool("apply_patch") {
		t.Errorf("apply_patch still offered with the catalog: %q", reqs[1].ToolNames())
	}
	if !reqs[1].HasTool("exec_command") {
		t.Errorf("the catalog removed more than apply_patch: %q", reqs[1].ToolNames())
	}
}

// TestFindPrefersNative: the npm shim of the pinned install resolves to the
// native binary of that install (whatever codex CODEXACP_CODEX_PATH names
// for the other tests).
func TestFindPrefersNative(t *testing.T) {
	codextest.Binary(t)
	modules, err := filepath.Abs(filepath.Join("..", "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	shim := filepath.Join(modules, ".bin", "codex")
	native, ok := codex.NativeBinary(modules)
	if _, err := os.Lstat(shim); err != nil || !ok {
		t.Skipf("no npm install of codex in %s (codex from %s)", modules, codextest.EnvCodexPath)
	}
	got, err := codex.Find(shim)
	if err != nil {
		t.Fatalf("Find(%s): %v", shim, err)
	}
	gotInfo, err1 := os.Stat(got)
	wantInfo, err2 := os.Stat(native)
	if err1 != nil || err2 != nil || !os.SameFile(gotInfo, wantInfo) {
		t.Errorf("Find(%s) = %q; want the install's native binary %q", shim, got, native)
	}
}

// BenchmarkRawCodexTurn times one scripted text turn (new thread) through
// execrun.Runner: process start, one model request, exit. Compare with the same
// turn through the whole agent.
func BenchmarkRawCodexTurn(b *testing.B) {
	f := newFixture(b)
	f.runner.Logger = slog.New(slog.DiscardHandler)
	inv := f.invocation("say hi")
	for b.Loop() {
		f.mock.Enqueue(mockapi.Reply(mockapi.Message("hi")))
		events, err := f.run(b, context.Background(), inv)
		if err != nil || len(events) == 0 || events[len(events)-1].Type != "turn.completed" {
			b.Fatalf("turn: %v, events %q", err, types(events))
		}
	}
}

// BenchmarkRawCodexResumeTurn times a text turn that resumes an existing
// thread (codex loads the rollout before the model request).
func BenchmarkRawCodexResumeTurn(b *testing.B) {
	f := newFixture(b)
	f.runner.Logger = slog.New(slog.DiscardHandler)
	f.mock.Enqueue(mockapi.Reply(mockapi.Message("hi")))
	first, err := f.run(b, context.Background(), f.invocation("say hi"))
	if err != nil || len(first) == 0 {
		b.Fatalf("first turn: %v", err)
	}
	inv := f.invocation("again")
	inv.ThreadID = first[0].ThreadID
	for b.Loop() {
		f.mock.Enqueue(mockapi.Reply(mockapi.Message("hi again")))
		events, err := f.run(b, context.Background(), inv)
		if err != nil || len(events) == 0 || events[len(events)-1].Type != "turn.completed" {
			b.Fatalf("turn: %v, events %q", err, types(events))
		}
	}
}
