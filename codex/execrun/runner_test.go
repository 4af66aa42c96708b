package execrun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/codexacp/codexacp/codex"
	"github.com/codexacp/codexacp/codex/proc"
	"github.com/codexacp/codexacp/codex/proc/proctest"
	"github.com/codexacp/codexacp/internal/goroutines"
	"github.com/codexacp/codexacp/internal/testkit"
)

func TestCommand(t *testing.T) {
	r := &Runner{
		Config: []string{"model_provider=mock", `model_providers.mock={name="mock"}`},
		Env:    []string{"HOME=/home/u", "RUST_BACKTRACE=1", "PATH=/bin", "RUST_LIB_BACKTRACE=full"},
	}
	tests := []struct {
		name     string
		inv      Invocation
		wantArgs []string
		wantEnv  []string
	}{
		{
			name: "first turn",
			inv:  Invocation{Cwd: "/ws", Sandbox: codex.SandboxReadOnly, Prompt: "hi"},
			wantArgs: []string{"exec", "--json", "--skip-git-repo-check", "-C", "/ws", "-s", "read-only",
				"-c", "model_provider=mock", "-c", `model_providers.mock={name="mock"}`, "-"},
			wantEnv: []string{"HOME=/home/u", "PATH=/bin"},
		},
		{
			name: "first turn with model and run config",
			inv: Invocation{Cwd: "/ws", Sandbox: codex.SandboxWorkspaceWrite, Model: "gpt-5.5",
				Config: []string{`model_catalog_json="/c.json"`, `developer_instructions="x"`}},
			wantArgs: []string{"exec", "--json", "--skip-git-repo-check", "-C", "/ws", "-s", "workspace-write",
				"-m", "gpt-5.5", "-c", "model_provider=mock", "-c", `model_providers.mock={name="mock"}`,
				"-c", `model_catalog_json="/c.json"`, "-c", `developer_instructions="x"`, "-"},
			wantEnv: []string{"HOME=/home/u", "PATH=/bin"},
		},
		{
			name: "resume puts exec options before resume",
			inv: Invocation{Cwd: "/ws", ThreadID: "01a2-thread", Sandbox: codex.SandboxDangerFullAccess, Model: "gpt-5.5",
				Config: []string{"a=1"}},
			wantArgs: []string{"exec", "-C", "/ws", "-s", "danger-full-access",
				"-c", "model_provider=mock", "-c", `model_providers.mock={name="mock"}`, "-c", "a=1",
				"resume", "--json", "--skip-git-repo-check", "-m", "gpt-5.5", "01a2-thread", "-"},
			wantEnv: []string{"HOME=/home/u", "PATH=/bin"},
		},
		{
			name: "images on a first turn come before the prompt's -",
			inv:  Invocation{Cwd: "/ws", Sandbox: codex.SandboxReadOnly, Images: []string{"/tmp/i/image-1.png", "/ws/shot.jpg"}},
			wantArgs: []string{"exec", "--json", "--skip-git-repo-check", "-C", "/ws", "-s", "read-only",
				"-c", "model_provider=mock", "-c", `model_providers.mock={name="mock"}`,
				"--image=/tmp/i/image-1.png", "--image=/ws/shot.jpg", "-"},
			wantEnv: []string{"HOME=/home/u", "PATH=/bin"},
		},
		{
			name: "images on a resumed turn are resume's",
			inv:  Invocation{Cwd: "/ws", ThreadID: "t1", Model: "gpt-5.5", Images: []string{"/tmp/i/image-1.png"}},
			wantArgs: []string{"exec", "-C", "/ws",
				"-c", "model_provider=mock", "-c", `model_providers.mock={name="mock"}`,
				"resume", "--json", "--skip-git-repo-check", "-m", "gpt-5.5", "--image=/tmp/i/image-1.png", "t1", "-"},
			wantEnv: []string{"HOME=/home/u", "PATH=/bin"},
		},
		{
			name: "no sandbox leaves codex's default",
			inv:  Invocation{Cwd: "/ws", ThreadID: "t1"},
			wantArgs: []string{"exec", "-C", "/ws",
				"-c", "model_provider=mock", "-c", `model_providers.mock={name="mock"}`,
				"resume", "--json", "--skip-git-repo-check", "t1", "-"},
			wantEnv: []string{"HOME=/home/u", "PATH=/bin"},
		},
		{
			name: "extra env added, overrides in place, cannot bring backtraces back",
			inv: Invocation{Cwd: "/ws", Sandbox: codex.SandboxReadOnly,
				Env: []string{"CODEXACP_MCP_TOKEN=secret", "PATH=/usr/bin", "RUST_BACKTRACE=full"}},
			wantArgs: []string{"exec", "--json", "--skip-git-repo-check", "-C", "/ws", "-s", "read-only",
				"-c", "model_provider=mock", "-c", `model_providers.mock={name="mock"}`, "-"},
			wantEnv: []string{"HOME=/home/u", "PATH=/usr/bin", "CODEXACP_MCP_TOKEN=secret"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args, env := r.Command(tt.inv)
			if !slices.Equal(args, tt.wantArgs) {
				t.Errorf("args\n got %q\nwant %q", args, tt.wantArgs)
			}
			if !slices.Equal(env, tt.wantEnv) {
				t.Errorf("env\n got %q\nwant %q", env, tt.wantEnv)
			}
			if slices.Contains(args, tt.inv.Prompt) && tt.inv.Prompt != "" {
				t.Errorf("prompt %q is in argv", tt.inv.Prompt)
			}
		})
	}
}

func TestCommandDefaultEnvIsProcessEnv(t *testing.T) {
	t.Setenv("RUST_BACKTRACE", "1")
	t.Setenv("CODEXACP_TEST_MARKER", "yes")
	_, env := (&Runner{}).Command(Invocation{Cwd: "/ws"})
	if !slices.Contains(env, "CODEXACP_TEST_MARKER=yes") {
		t.Errorf("env lacks the process environment: %q", env)
	}
	for _, kv := range env {
		if strings.HasPrefix(kv, "RUST_BACKTRACE=") {
			t.Errorf("env keeps %q", kv)
		}
	}
}

func TestRunRejectsBadInvocation(t *testing.T) {
	r := &Runner{Path: "/bin/true"}
	for _, inv := range []Invocation{
		{Cwd: "relative", Sandbox: codex.SandboxReadOnly},
		{Cwd: "/ws", Sandbox: "yolo"},
		{Cwd: "/", ThreadID: "--last"},
		{Cwd: "/nonexistent-dir/ws"},
		{Cwd: "/ws", Images: []string{"image.png"}},
		{Cwd: "/ws", Images: []string{"/ws/a,b.png"}},
	} {
		err := r.Run(context.Background(), inv, func([]byte) {})
		if err == nil || errors.Is(err, proc.ErrNotFound) {
			t.Errorf("Run(%+v) = %v, want an error about the invocation", inv, err)
		}
	}
}

// fakeCodex writes an executable shell script standing in for codex.
func fakeCodex(t *testing.T, body string) string {
	t.Helper()
	return testkit.Script(t, "codex", body)
}

// collect runs r and returns the lines it printed.
func collect(ctx context.Context, r *Runner, inv Invocation) ([]string, error) {
	var lines []string
	err := r.Run(ctx, inv, func(line []byte) { lines = append(lines, string(line)) })
	return lines, err
}

func TestRunDeliversLinesArgsStdinAndEnv(t *testing.T) {
	dir := t.TempDir()
	script := fakeCodex(t, `
printf '%s\n' "$@" > "$OUT/args"
cat > "$OUT/stdin"
pwd > "$OUT/pwd"
echo "{\"type\":\"thread.started\",\"backtrace\":\"${RUST_BACKTRACE-unset}\",\"token\":\"$CODEXACP_MCP_TOKEN\"}"
echo
head -c 1200000 /dev/zero | tr '\0' a | sed 's/^/{"big":"/; s/$/"}/'
echo
printf '{"type":"turn.completed"}\r\n'
printf '{"type":"unterminated"}'
`)
	r := &Runner{Path: script, Env: []string{"PATH=" + os.Getenv("PATH"), "RUST_BACKTRACE=1", "OUT=" + dir}}
	prompt := strings.Repeat("a long prompt ", 20000)
	lines, err := collect(context.Background(), r, Invocation{
		Cwd: dir, Prompt: prompt, Sandbox: codex.SandboxReadOnly, Env: []string{"CODEXACP_MCP_TOKEN=tok"},
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(lines) != 4 {
		t.Fatalf("got %d lines, want 4", len(lines))
	}
	if want := `{"type":"thread.started","backtrace":"unset","token":"tok"}`; lines[0] != want {
		t.Errorf("line 0 = %q, want %q", lines[0], want)
	}
	if want := 1200000 + len(`{"big":""}`); len(lines[1]) != want || !strings.HasSuffix(lines[1], `aaa"}`) {
		t.Errorf("big line has %d bytes, want %d", len(lines[1]), want)
	}
	if lines[2] != `{"type":"turn.completed"}` || lines[3] != `{"type":"unterminated"}` {
		t.Errorf("last lines = %q", lines[2:])
	}
	gotStdin, _ := os.ReadFile(filepath.Join(dir, "stdin"))
	if string(gotStdin) != prompt {
		t.Errorf("stdin has %d bytes, want the %d-byte prompt", len(gotStdin), len(prompt))
	}
	gotArgs, _ := os.ReadFile(filepath.Join(dir, "args"))
	wantArgs, _ := r.Command(Invocation{Cwd: dir, Sandbox: codex.SandboxReadOnly})
	if string(gotArgs) != strings.Join(wantArgs, "\n")+"\n" {
		t.Errorf("argv = %q, want %q", gotArgs, wantArgs)
	}
	gotPwd, _ := os.ReadFile(filepath.Join(dir, "pwd"))
	if strings.TrimSpace(string(gotPwd)) != dir {
		t.Errorf("working dir = %q, want %q", gotPwd, dir)
	}
}

func TestRunExitError(t *testing.T) {
	codex := fakeCodex(t, `
echo '{"type":"turn.failed"}'
echo "Error: thread/resume failed: no rollout found" >&2
printf '\nStack backtrace:\n   0: <unknown>\n   1: main\n             at src/main.rs:1\n' >&2
echo "after the trace" >&2
exit 3
`)
	lines, err := collect(context.Background(), &Runner{Path: codex}, Invocation{Cwd: t.TempDir()})
	var exitErr *proc.ExitError
	if !errors.As(err, &exitErr) {
		t.Fatalf("Run = %v, want *proc.ExitError", err)
	}
	if exitErr.Code != 3 {
		t.Errorf("Code = %d, want 3", exitErr.Code)
	}
	want := "Error: thread/resume failed: no rollout found\nafter the trace"
	if exitErr.Stderr != want {
		t.Errorf("Stderr = %q, want %q", exitErr.Stderr, want)
	}
	if !strings.Contains(err.Error(), "no rollout found") || !strings.Contains(err.Error(), "status 3") {
		t.Errorf("message %q lacks the status or the stderr tail", err)
	}
	if len(lines) != 1 {
		t.Errorf("lines = %q", lines)
	}
}

// TestRunKilledBySignal: codex killed from outside (the OOM killer, a user)
// is reported as killed, not with the warning it last printed; for a crash
// signal, stderr may tell why and is kept.
func TestRunKilledBySignal(t *testing.T) {
	tests := []struct{ sig, want string }{
		{"KILL", "codex exited with status 137 (killed by signal SIGKILL)"},
		{"TERM", "codex exited with status 143 (killed by signal SIGTERM)"},
		{"ABRT", "codex exited with status 134 (killed by signal SIGABRT): warning: config key deprecated"},
	}
	for _, tt := range tests {
		t.Run(tt.sig, func(t *testing.T) {
			codex := fakeCodex(t, `
echo '{"type":"thread.started"}'
echo "warning: config key deprecated" >&2
kill -`+tt.sig+` $$
`)
			_, err := collect(context.Background(), &Runner{Path: codex}, Invocation{Cwd: t.TempDir()})
			var exitErr *proc.ExitError
			if !errors.As(err, &exitErr) {
				t.Fatalf("Run = %v, want *proc.ExitError", err)
			}
			if err.Error() != tt.want {
				t.Errorf("message = %q, want %q", err, tt.want)
			}
			if exitErr.Stderr != "warning: config key deprecated" {
				t.Errorf("Stderr = %q; it is kept for logs and transcripts", exitErr.Stderr)
			}
		})
	}
}

func TestRunStderrTailIsBounded(t *testing.T) {
	codex := fakeCodex(t, `
i=0
while [ $i -lt 2000 ]; do echo "stderr line $i with some padding to make it longer" >&2; i=$((i+1)); done
exit 1
`)
	_, err := collect(context.Background(), &Runner{Path: codex}, Invocation{Cwd: t.TempDir()})
	var exitErr *proc.ExitError
	if !errors.As(err, &exitErr) {
		t.Fatalf("Run = %v, want *proc.ExitError", err)
	}
	if len(exitErr.Stderr) > proc.StderrTailSize {
		t.Errorf("Stderr has %d bytes, want at most %d", len(exitErr.Stderr), proc.StderrTailSize)
	}
	if !strings.HasPrefix(exitErr.Stderr, "stderr line ") || !strings.HasSuffix(exitErr.Stderr, "line 1999 with some padding to make it longer") {
		t.Errorf("Stderr tail is not cut at a line start or lacks the last line: %q...%q",
			exitErr.Stderr[:40], exitErr.Stderr[len(exitErr.Stderr)-40:])
	}
}

func TestRunMissingBinary(t *testing.T) {
	for _, path := range []string{"", filepath.Join(t.TempDir(), "no-codex")} {
		err := (&Runner{Path: path}).Run(context.Background(), Invocation{Cwd: "/"}, func([]byte) {})
		if !errors.Is(err, proc.ErrNotFound) || !strings.Contains(err.Error(), "npm i -g @openai/codex") {
			t.Errorf("Path %q: Run = %v, want ErrNotFound with the install hint", path, err)
		}
	}
}

func TestRunAlreadyCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := t.TempDir()
	codex := fakeCodex(t, `touch "$OUT/started"`)
	err := (&Runner{Path: codex, Env: []string{"OUT=" + dir}}).Run(ctx, Invocation{Cwd: dir}, func([]byte) {})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Run = %v, want context.Canceled", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "started")); err == nil {
		t.Error("codex was started for a cancelled context")
	}
}

func TestRunCancel(t *testing.T) {
	tests := []struct {
		name      string
		script    string
		wantLines []string
		killed    bool // codex ignores SIGINT and must be killed after the grace period
	}{
		{
			name:      "exits on SIGINT",
			script:    `echo '{"n":1}'; exec sleep 60`,
			wantLines: []string{`{"n":1}`},
		},
		{
			name: "prints on SIGINT before exiting",
			script: `trap 'echo "{\"n\":\"bye\"}"; exit 1' INT
echo '{"n":1}'
while :; do sleep 0.02; done`,
			wantLines: []string{`{"n":1}`, `{"n":"bye"}`},
		},
		{
			name:      "ignores SIGINT",
			script:    `trap '' INT; echo '{"n":1}'; exec sleep 60`,
			wantLines: []string{`{"n":1}`},
			killed:    true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Short only where the kill is the point; elsewhere long enough
			// that a loaded machine still runs the trap before any kill.
			grace := 10 * time.Second
			if tt.killed {
				grace = 100 * time.Millisecond
			}
			r := &Runner{Path: fakeCodex(t, tt.script), Grace: grace}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var lines []string
			var cancelledAt time.Time
			err := r.Run(ctx, Invocation{Cwd: t.TempDir()}, func(line []byte) {
				lines = append(lines, string(line))
				if len(lines) == 1 {
					cancelledAt = time.Now()
					cancel()
				}
			})
			took := time.Since(cancelledAt)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Run = %v, want context.Canceled", err)
			}
			if !slices.Equal(lines, tt.wantLines) {
				t.Errorf("lines = %q, want %q", lines, tt.wantLines)
			}
			// Only the order matters here, not speed: a process that ignores
			// SIGINT cannot be gone before the grace period.
			if tt.killed && took < grace {
				t.Errorf("Run returned %v after cancel, before the %v grace period", took, grace)
			}
		})
	}
}

func TestRunCancelCause(t *testing.T) {
	cause := errors.New("user pressed stop")
	ctx, cancel := context.WithCancelCause(context.Background())
	r := &Runner{Path: fakeCodex(t, `echo '{"n":1}'; exec sleep 60`)}
	err := r.Run(ctx, Invocation{Cwd: t.TempDir()}, func([]byte) { cancel(cause) })
	if !errors.Is(err, context.Canceled) || !errors.Is(err, cause) {
		t.Errorf("Run = %v, want context.Canceled and the cause", err)
	}
}

// TestRunCancelLeavesNoOrphans: a command codex started (in its process
// group) dies with it, although it ignores SIGINT.
func TestRunCancelLeavesNoOrphans(t *testing.T) {
	r := &Runner{Path: fakeCodex(t, `
(trap '' INT; exec sleep 60) &
echo "{\"child\":$!}"
exec sleep 60
`), Grace: 5 * time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	child := 0
	err := r.Run(ctx, Invocation{Cwd: t.TempDir()}, func(line []byte) {
		fmt.Sscanf(string(line), `{"child":%d}`, &child)
		cancel()
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
	if child == 0 {
		t.Fatal("no child pid reported")
	}
	proctest.WaitGone(t, child)
}

// TestRunLeftoverHoldingStdout: codex exits but something it started keeps
// stdout open; Run must not wait for that process.
func TestRunLeftoverHoldingStdout(t *testing.T) {
	r := &Runner{Path: fakeCodex(t, `
sleep 60 &
echo "{\"child\":$!}"
exit 0
`), Drain: 50 * time.Millisecond}
	child := 0
	err := r.Run(context.Background(), Invocation{Cwd: t.TempDir()}, func(line []byte) {
		fmt.Sscanf(string(line), `{"child":%d}`, &child)
	})
	if child != 0 {
		defer killPid(child)
	}
	if err != nil {
		t.Fatalf("Run = %v", err)
	}
	if child == 0 {
		t.Fatal("no child pid reported")
	}
}

// TestRunSlowConsumerGetsEverything: output codex printed before exiting is
// delivered even when onLine takes longer than the drain timeout.
func TestRunSlowConsumerGetsEverything(t *testing.T) {
	r := &Runner{Path: fakeCodex(t, `echo 1; echo 2; echo 3; exit 0`), Drain: 50 * time.Millisecond}
	var lines []string
	err := r.Run(context.Background(), Invocation{Cwd: t.TempDir()}, func(line []byte) {
		lines = append(lines, string(line))
		time.Sleep(2 * r.Drain)
	})
	if err != nil || !slices.Equal(lines, []string{"1", "2", "3"}) {
		t.Errorf("Run = %v, lines %q; want nil, [1 2 3]", err, lines)
	}
}

func TestRunPanicInOnLineKillsCodex(t *testing.T) {
	r := &Runner{Path: fakeCodex(t, `echo "{\"pid\":$$}"; exec sleep 60`)}
	pid := 0
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the panic did not propagate")
			}
		}()
		r.Run(context.Background(), Invocation{Cwd: t.TempDir()}, func(line []byte) {
			fmt.Sscanf(string(line), `{"pid":%d}`, &pid)
			panic("consumer bug")
		})
	}()
	proctest.WaitGone(t, pid)
}

func TestRunLeaksNoGoroutines(t *testing.T) {
	r := &Runner{Path: fakeCodex(t, `echo '{"n":1}'; exit 0`)}
	before := goroutines.Take()
	for range 10 {
		if _, err := collect(context.Background(), r, Invocation{Cwd: t.TempDir()}); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r.Run(ctx, Invocation{Cwd: "/"}, func([]byte) {})
	if left := before.Leaked("github.com/codexacp/codexacp/codex"); len(left) > 0 { // codex and its packages
		t.Errorf("Run left %d goroutines behind:\n%s", len(left), goroutines.Stacks(left))
	}
}
