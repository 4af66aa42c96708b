package acp

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/codex/execrun"
	"github.com/codexacp/codexacp/internal/fakeeditor"
	"github.com/codexacp/codexacp/internal/recovery"
	"github.com/codexacp/codexacp/internal/shelledits"
	"github.com/codexacp/codexacp/internal/syncbuf"
)

// panickyBackend is the exec fake whose session/new (Warm) panics for
// sessions in warmPanicsIn, and whose turns in turnPanicsIn panic once:
// bugs in a request handler and in a turn.
type panickyBackend struct {
	fakeBackend
	warmPanicsIn string
	turnPanicsIn string
	turnPanicked atomic.Bool
}

func (b *panickyBackend) Capabilities() backend.Capabilities { return backend.Warm }

func (b *panickyBackend) Warm(t backend.Turn) {
	if t.Cwd == b.warmPanicsIn {
		panic(recovery.Injected("warm"))
	}
}

// okTurn is a turn that answers "ok".
func okTurn(onLine func([]byte)) {
	for _, l := range []string{
		`{"type":"thread.started","thread_id":"t"}`,
		`{"type":"turn.started"}`,
		`{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"ok"}}`,
		`{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":0,"output_tokens":1,"reasoning_output_tokens":0}}`,
	} {
		onLine([]byte(l))
	}
}

func newPanickyBackend() *panickyBackend {
	b := &panickyBackend{}
	b.script = func(_ context.Context, _ int, inv execrun.Invocation, onLine func([]byte)) error {
		if inv.Cwd == b.turnPanicsIn && b.turnPanicked.CompareAndSwap(false, true) {
			onLine([]byte(`{"type":"thread.started","thread_id":"t"}`))
			panic(recovery.Injected("turn"))
		}
		okTurn(onLine)
		return nil
	}
	return b
}

// wantInternalError checks that err is a -32603 naming what panicked.
func wantInternalError(t *testing.T, err error, what string) {
	t.Helper()
	var re *acpsdk.RequestError
	if !errors.As(err, &re) || re.Code != -32603 || !strings.Contains(re.Message, what+" panicked") {
		t.Fatalf("err = %v, want -32603 saying %s panicked", err, what)
	}
}

// wantEndTurn checks that a prompt of sid completes.
func wantEndTurn(t *testing.T, h *harness, sid acpsdk.SessionId) {
	t.Helper()
	resp, err := h.prompt(sid, "hello")
	if err != nil || resp.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("prompt of %s = %+v, %v; want end_turn", sid, resp, err)
	}
}

// wantLogged checks that the panic was logged once, with the stack of the
// function that panicked.
func wantLogged(t *testing.T, log *syncbuf.Buffer, frame string) {
	t.Helper()
	got := log.String()
	if n := strings.Count(got, "recovered from a panic"); n != 1 || !strings.Contains(got, frame) {
		t.Fatalf("log has %d panics, stack with %q wanted:\n%s", n, frame, got)
	}
}

// A panic in a request handler answers that request -32603, is logged with
// its stack, and every session goes on.
func TestPanicInARequestHandler(t *testing.T) {
	t.Parallel()
	var log syncbuf.Buffer
	be := newPanickyBackend()
	be.warmPanicsIn = t.TempDir()
	h := startAgentWith(t, Options{Backend: be, ContextWindow: 272000, Logger: slog.New(slog.NewTextHandler(&log, nil))}, fakeeditor.Options{})
	other := h.newSession(t, t.TempDir())

	_, err := h.editor.Conn.NewSession(h.ctx, acpsdk.NewSessionRequest{Cwd: be.warmPanicsIn, McpServers: []acpsdk.McpServer{}})
	wantInternalError(t, err, "session/new")
	wantLogged(t, &log, "panickyBackend).Warm")
	wantEndTurn(t, h, other)
	wantEndTurn(t, h, h.newSession(t, t.TempDir()))
}

// A panic in a turn (here the exec backend's reading of codex, on the
// prompt's goroutine) ends that turn with -32603; the session's next
// prompt and the other sessions' prompts work.
func TestPanicInATurn(t *testing.T) {
	t.Parallel()
	var log syncbuf.Buffer
	be := newPanickyBackend()
	be.turnPanicsIn = t.TempDir()
	h := startAgentWith(t, Options{Backend: be, ContextWindow: 272000, Logger: slog.New(slog.NewTextHandler(&log, nil))}, fakeeditor.Options{})
	other := h.newSession(t, t.TempDir())
	sid := h.newSession(t, be.turnPanicsIn)

	_, err := h.prompt(sid, "hello")
	wantInternalError(t, err, "prompt turn")
	wantLogged(t, &log, "newPanickyBackend.func1")
	wantEndTurn(t, h, other)
	wantEndTurn(t, h, sid)
}

// A panic while a turn's event is handled (on the backend's goroutine;
// here the shell-edits baseline taken at the first event, where an
// untracked symlink used to end the process) ends that turn with -32603.
func TestPanicInATurnEvent(t *testing.T) {
	t.Parallel()
	var log syncbuf.Buffer
	var panicked atomic.Bool
	opts := Options{Backend: &fakeBackend{script: shellTurn(func() {})}, ContextWindow: 272000,
		Logger: slog.New(slog.NewTextHandler(&log, nil)),
		newShellTracker: func(roots []string, lim shelledits.Limits) *shelledits.Tracker {
			if panicked.CompareAndSwap(false, true) {
				panic(recovery.Injected("baseline"))
			}
			return shelledits.New(roots, lim)
		},
		noShellWarm: true, // the turn makes the tracker (TestPanicWhileWarmingShellEdits: the session)
	}
	h := startAgentWith(t, opts, fakeeditor.Options{})
	other := h.newSession(t, t.TempDir())
	sid := h.newSession(t, t.TempDir())
	setMode(t, h, sid, backend.ModeAuto)

	_, err := h.prompt(sid, "hello")
	wantInternalError(t, err, "codex event thread.started")
	wantLogged(t, &log, "TestPanicInATurnEvent.func")
	wantEndTurn(t, h, other)
	wantEndTurn(t, h, sid)
}

// A panic while a session's shell-edits baseline is started ahead of its
// first turn (at session/new) is logged; session/new answers, and the
// turn takes its own baseline and shows the command's edits.
func TestPanicWhileWarmingShellEdits(t *testing.T) {
	if !shelledits.Watches() {
		t.Skip("no baseline ahead of the turn where the roots cannot be watched")
	}
	var log syncbuf.Buffer
	var panicked atomic.Bool
	cwd := t.TempDir()
	a := filepath.Join(cwd, "a.txt")
	writeTestFile(t, a, "alpha\n")
	opts := Options{Backend: &fakeBackend{script: shellTurn(func() { writeTestFile(t, a, "ALPHA\n") })}, ContextWindow: 272000,
		Logger: slog.New(slog.NewTextHandler(&log, nil)),
		newShellTracker: func(roots []string, lim shelledits.Limits) *shelledits.Tracker {
			if panicked.CompareAndSwap(false, true) {
				panic(recovery.Injected("baseline"))
			}
			return shelledits.New(roots, lim)
		}}
	h := startAgentWith(t, opts, fakeeditor.Options{FS: true})
	sid := h.newSession(t, cwd)
	wantLogged(t, &log, "TestPanicWhileWarmingShellEdits.func")
	setMode(t, h, sid, backend.ModeAuto)
	wantEndTurn(t, h, sid)
	if findToolCall(h, "shell-edits-t1-item_0") == nil {
		t.Error("no shell edits shown")
	}
}

// A panic in a background goroutine (the model list loaded once) is logged;
// nothing waits forever for it, and sessions work.
func TestPanicInTheBackground(t *testing.T) {
	t.Parallel()
	var log syncbuf.Buffer
	h := startAgentWith(t, Options{Backend: newPanickyBackend(), ContextWindow: 272000, Logger: slog.New(slog.NewTextHandler(&log, nil)),
		ModelInfo: func() ModelInfo { panic(recovery.Injected("model list")) }}, fakeeditor.Options{})
	sid := h.newSession(t, t.TempDir())
	wantEndTurn(t, h, sid)
	if got := log.String(); !strings.Contains(got, "recovered from a panic") || !strings.Contains(got, "TestPanicInTheBackground.func") {
		t.Fatalf("log:\n%s", got)
	}
}

// Issue 22: in auto mode, a git workspace holding Emacs's lock link for an
// unsaved buffer (an untracked dangling symlink, .#name) took the agent
// down at the first prompt. The prompt completes, and the command's edit
// is shown.
func TestShellEditsWithAnUntrackedLockLink(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	cwd := t.TempDir()
	a := filepath.Join(cwd, "a.txt")
	writeTestFile(t, a, "alpha\n")
	for _, args := range [][]string{{"init", "-q"}, {"add", "a.txt"}, {"commit", "-q", "-m", "init"}} {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = cwd
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if err := os.Symlink("user@host.4242:1700000000", filepath.Join(cwd, ".#notes.txt")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	be := &fakeBackend{script: shellTurn(func() { writeTestFile(t, a, "ALPHA\n") })}
	h := startAgent(t, be, fakeeditor.Options{FS: true})
	sid := h.newSession(t, cwd)
	setMode(t, h, sid, backend.ModeAuto)
	resp, err := h.prompt(sid, "go")
	if err != nil || resp.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("prompt = %+v, %v", resp, err)
	}
	tc := findToolCall(h, "shell-edits-t1-item_0")
	if tc == nil || len(tc.Content) != 1 || tc.Content[0].Diff == nil || tc.Content[0].Diff.NewText != "ALPHA\n" {
		t.Fatalf("shell edits = %+v", tc)
	}
}

// Every request handler the SDK may call is guarded: each exported method
// of *Agent that takes a context (a handler's shape) is overridden by
// rescued, or is known not to be a handler.
func TestEveryHandlerIsRescued(t *testing.T) {
	t.Parallel()
	f, err := parser.ParseFile(token.NewFileSet(), "recover.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	overridden := map[string]bool{}
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv != nil {
			if id, ok := fn.Recv.List[0].Type.(*ast.Ident); ok && id.Name == "rescued" {
				overridden[fn.Name.Name] = true
			}
		}
	}
	notHandlers := map[string]bool{"Serve": true, "DeleteSession": true}
	ctxType := reflect.TypeFor[context.Context]()
	at := reflect.TypeFor[*Agent]()
	for i := range at.NumMethod() {
		m := at.Method(i)
		if m.Type.NumIn() > 1 && m.Type.In(1) == ctxType && !overridden[m.Name] && !notHandlers[m.Name] {
			t.Errorf("(*Agent).%s takes a context but rescued does not guard it: add it to recover.go (or to notHandlers here)", m.Name)
		}
	}
}
