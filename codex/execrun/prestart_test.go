//go:build unix

package execrun

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/codexacp/codexacp/codex"
	"github.com/codexacp/codexacp/codex/proc/proctest"
	"github.com/codexacp/codexacp/internal/goroutines"
)

// prestartCodex is a fake codex that leaves $OUT/started-PID when it starts
// (before reading stdin), exits at once when $OUT/die exists, and prints
// its pid and prompt.
func prestartCodex(t *testing.T) (r *Runner, out string) {
	t.Helper()
	out = t.TempDir()
	r = &Runner{
		Path: fakeCodex(t, `
[ -e "$OUT/die" ] && exit 3
: > "$OUT/started-$$"
prompt=$(cat)
echo "{\"pid\":$$,\"prompt\":\"$prompt\"}"
`),
		Env: []string{"PATH=" + os.Getenv("PATH"), "OUT=" + out},
	}
	t.Cleanup(r.Close)
	return r, out
}

// startedPids lists the pids the fake codex reported starting.
func startedPids(t *testing.T, out string) []int {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(out, "started-*"))
	var pids []int
	for _, n := range names {
		pid, _ := strconv.Atoi(strings.TrimPrefix(filepath.Base(n), "started-"))
		pids = append(pids, pid)
	}
	return pids
}

// awaitStarted waits until n fake codex processes have started.
func awaitStarted(t *testing.T, out string, n int) []int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if pids := startedPids(t, out); len(pids) >= n {
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d fake codex processes started, want %d", len(startedPids(t, out)), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestPrestartedProcessTakesThePrompt(t *testing.T) {
	r, out := prestartCodex(t)
	inv := Invocation{Cwd: out, Sandbox: codex.SandboxReadOnly, Env: []string{"CODEXACP_MCP_TOKEN=tok"}}
	if err := r.Prestart(inv, 0); err != nil {
		t.Fatal(err)
	}
	if err := r.Prestart(inv, 0); err != nil { // already waiting: nothing new
		t.Fatal(err)
	}
	waiting := awaitStarted(t, out, 1)[0]

	inv.Prompt = "hello"
	lines, err := collect(context.Background(), r, inv)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"pid":` + strconv.Itoa(waiting) + `,"prompt":"hello"}`
	if len(lines) != 1 || lines[0] != want {
		t.Errorf("lines = %q, want [%s]", lines, want)
	}
	if pids := startedPids(t, out); len(pids) != 1 {
		t.Errorf("%d processes started, want the one that waited", len(pids))
	}
	// It was used once: the next Run starts its own.
	if _, err := collect(context.Background(), r, inv); err != nil {
		t.Fatal(err)
	}
	if pids := startedPids(t, out); len(pids) != 2 {
		t.Errorf("%d processes started, want 2", len(pids))
	}
}

func TestPrestartOtherInvocationIsNotUsed(t *testing.T) {
	r, out := prestartCodex(t)
	inv := Invocation{Cwd: out, Sandbox: codex.SandboxReadOnly}
	if err := r.Prestart(inv, 0); err != nil {
		t.Fatal(err)
	}
	waiting := awaitStarted(t, out, 1)[0]
	other := inv
	other.Sandbox, other.Prompt = codex.SandboxWorkspaceWrite, "x"
	lines, err := collect(context.Background(), r, other)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 1 || strings.Contains(lines[0], strconv.Itoa(waiting)) {
		t.Errorf("a run with another sandbox used the waiting process: %q", lines)
	}
	if !proctest.Alive(waiting) {
		t.Fatal("the waiting process ended")
	}
	r.Discard(inv)
	proctest.WaitGone(t, waiting)
}

func TestPrestartIdleBound(t *testing.T) {
	r, out := prestartCodex(t)
	inv := Invocation{Cwd: out}
	if err := r.Prestart(inv, 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	proctest.WaitGone(t, awaitStarted(t, out, 1)[0])
	inv.Prompt = "p"
	lines, err := collect(context.Background(), r, inv)
	if err != nil || len(lines) != 1 {
		t.Fatalf("Run after the idle end = %q, %v", lines, err)
	}
	if pids := startedPids(t, out); len(pids) != 2 {
		t.Errorf("%d processes started, want 2 (the idle one, then the run's)", len(pids))
	}
}

func TestPrestartedProcessThatDiedIsReplaced(t *testing.T) {
	r, out := prestartCodex(t)
	if err := os.WriteFile(filepath.Join(out, "die"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	inv := Invocation{Cwd: out}
	if err := r.Prestart(inv, 0); err != nil {
		t.Fatal(err)
	}
	// It exits at once; once reaped it is forgotten, pipes closed.
	deadline := time.Now().Add(10 * time.Second)
	for {
		r.mu.Lock()
		n := len(r.waiting)
		r.mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the dead waiting process was not forgotten")
		}
		time.Sleep(5 * time.Millisecond)
	}
	os.Remove(filepath.Join(out, "die"))
	inv.Prompt = "again"
	lines, err := collect(context.Background(), r, inv)
	if err != nil || len(lines) != 1 || !strings.Contains(lines[0], `"prompt":"again"`) {
		t.Fatalf("Run = %q, %v; want a fresh process's answer", lines, err)
	}
}

func TestPrestartCloseEndsWaitingProcesses(t *testing.T) {
	before := goroutines.Take()
	r, out := prestartCodex(t)
	for _, sb := range []string{codex.SandboxReadOnly, codex.SandboxWorkspaceWrite} {
		if err := r.Prestart(Invocation{Cwd: out, Sandbox: sb}, 0); err != nil {
			t.Fatal(err)
		}
	}
	pids := awaitStarted(t, out, 2)
	r.Close()
	for _, pid := range pids {
		proctest.WaitGone(t, pid)
	}
	if err := r.Prestart(Invocation{Cwd: out}, 0); err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	n := len(r.waiting)
	r.mu.Unlock()
	if n != 0 {
		t.Errorf("%d processes wait after Close", n)
	}
	if left := before.Leaked("github.com/codexacp/codexacp/codex"); len(left) > 0 { // codex and its packages
		t.Errorf("goroutines left:\n%s", goroutines.Stacks(left))
	}
}

func TestPrestartErrors(t *testing.T) {
	r := &Runner{Path: filepath.Join(t.TempDir(), "missing")}
	if err := r.Prestart(Invocation{Cwd: t.TempDir()}, 0); err == nil {
		t.Error("Prestart of a missing codex succeeded")
	}
	if err := r.Prestart(Invocation{Cwd: "relative"}, 0); err == nil {
		t.Error("Prestart with a relative cwd succeeded")
	}
}
