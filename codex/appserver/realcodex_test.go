package appserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/codexacp/codexacp/codex/appserver"
	"github.com/codexacp/codexacp/codex/proc"
	"github.com/codexacp/codexacp/e2e/codextest"
	"github.com/codexacp/codexacp/e2e/mockapi"
)

// startRealAppServer starts the pinned codex app-server against mock.
func startRealAppServer(t *testing.T, mock *mockapi.Server) (*appserver.Server, time.Duration) {
	t.Helper()
	path := codextest.Binary(t)
	env, _ := codextest.Env(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	c, err := appserver.Start(ctx, appserver.Options{
		Path:       path,
		Env:        env,
		Config:     append(mockapi.CodexConfig(mock.URL()), codextest.OfflineConfig...),
		ClientName: "codexacp-test", ClientVersion: "0",
	})
	if err != nil {
		t.Fatal(err)
	}
	handshake := time.Since(start)
	t.Cleanup(func() { c.Close() })
	return c, handshake
}

// turnWatcher is a thread's handler: it keeps the methods it was sent and
// signals each turn/completed.
type turnWatcher struct {
	mu        sync.Mutex
	methods   []string
	deltas    strings.Builder
	completed chan json.RawMessage
}

func newTurnWatcher() *turnWatcher { return &turnWatcher{completed: make(chan json.RawMessage, 10)} }

func (w *turnWatcher) Notify(method string, params json.RawMessage) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.methods = append(w.methods, method)
	switch method {
	case "item/agentMessage/delta":
		var p struct{ Delta string }
		json.Unmarshal(params, &p)
		w.deltas.WriteString(p.Delta)
	case "turn/completed":
		w.completed <- params
	}
}

func (w *turnWatcher) Request(ctx context.Context, method string, params json.RawMessage) (any, error) {
	return nil, &appserver.RPCError{Code: -32601, Message: "not in this test"}
}

func (w *turnWatcher) wait(t *testing.T) (status string) {
	t.Helper()
	select {
	case p := <-w.completed:
		var c struct{ Turn struct{ Status string } }
		json.Unmarshal(p, &c)
		return c.Turn.Status
	case <-time.After(30 * time.Second):
		w.mu.Lock()
		defer w.mu.Unlock()
		t.Fatalf("no turn/completed; got %q", w.methods)
		return ""
	}
}

func call(t *testing.T, c *appserver.Server, method string, params, result any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Call(ctx, method, params, result); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
}

func startThread(t *testing.T, c *appserver.Server, params map[string]any) string {
	t.Helper()
	var res struct{ Thread struct{ ID string } }
	call(t, c, "thread/start", params, &res)
	if res.Thread.ID == "" {
		t.Fatal("thread/start: no thread id")
	}
	return res.Thread.ID
}

func startTurn(t *testing.T, c *appserver.Server, thread, text string) string {
	t.Helper()
	var res struct{ Turn struct{ ID string } }
	call(t, c, "turn/start", map[string]any{"threadId": thread, "input": []any{map[string]any{"type": "text", "text": text}}}, &res)
	return res.Turn.ID
}

func TestAppServerRealTurns(t *testing.T) {
	mock := mockapi.New(t)
	c, handshake := startRealAppServer(t, mock)
	t.Logf("handshake (spawn → initialize answered): %v", handshake)

	thread := startThread(t, c, map[string]any{"cwd": t.TempDir(), "sandbox": "read-only", "approvalPolicy": "never"})
	t.Logf("app-server after thread/start: %s", vmRSS(c.Pid()))
	w := newTurnWatcher()
	defer c.Route(thread, w)()
	for i, text := range []string{"first answer", "second answer"} {
		mock.Enqueue(mockapi.Reply(mockapi.Message(text)))
		start := time.Now()
		startTurn(t, c, thread, "hi")
		if status := w.wait(t); status != "completed" {
			t.Errorf("turn %d: status %q", i, status)
		}
		t.Logf("turn %d (turn/start → turn/completed): %v", i, time.Since(start))
		if i == 0 {
			t.Logf("app-server after the first turn: %s", vmRSS(c.Pid()))
		}
	}
	w.mu.Lock()
	if got := w.deltas.String(); got != "first answersecond answer" {
		t.Errorf("deltas %q", got)
	}
	for _, m := range []string{"turn/started", "item/completed", "thread/status/changed"} {
		if !slices.Contains(w.methods, m) {
			t.Errorf("no %s routed: %q", m, w.methods)
		}
	}
	w.mu.Unlock()
	pid := c.Pid()
	if err := c.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
	if below := processesBelow(pid); len(below) > 0 || alive(pid) {
		t.Errorf("left behind: %v", below)
	}
}

func TestAppServerRealKillTagged(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("KillTagged needs /proc")
	}
	mock := mockapi.New(t)
	c, _ := startRealAppServer(t, mock)
	ws := t.TempDir()
	type run struct {
		tag, thread, turn string
		w                 *turnWatcher
	}
	var runs []*run
	for _, tag := range []string{"t1", "t2"} {
		r := &run{tag: "CODEXACP_TAG=" + tag, w: newTurnWatcher()}
		r.thread = startThread(t, c, map[string]any{"cwd": ws, "sandbox": "danger-full-access", "approvalPolicy": "never",
			"config": map[string]any{"shell_environment_policy.set": map[string]string{"CODEXACP_TAG": tag}}})
		defer c.Route(r.thread, r.w)()
		// One at a time: the mock answers requests in order.
		mock.Enqueue(mockapi.Reply(mockapi.ExecCommand("c-"+tag, "sleep 30")))
		r.turn = startTurn(t, c, r.thread, "sleep")
		// Not the shell that sources codex's shell snapshot first.
		waitFor(t, func() bool { return len(taggedSleeps(c.Pid(), r.tag)) > 0 }, "the tagged sleep of "+tag)
		runs = append(runs, r)
	}
	// Interrupted within its first ~250ms, a command is killed by codex; later
	// (measured: 500ms) it is left running.
	time.Sleep(time.Second)

	r1, r2 := runs[0], runs[1]
	call(t, c, "turn/interrupt", map[string]any{"threadId": r1.thread, "turnId": r1.turn}, nil)
	if status := r1.w.wait(t); status != "interrupted" {
		t.Errorf("interrupted turn: status %q", status)
	}
	time.Sleep(300 * time.Millisecond)
	if len(taggedSleeps(c.Pid(), r1.tag)) == 0 {
		t.Log("codex 0.169 ended the interrupted turn's command itself")
	}
	n, err := proc.KillTagged(c.Pid(), r1.tag)
	if err != nil || n == 0 {
		t.Errorf("KillTagged = %d, %v; want the interrupted turn's command", n, err)
	}
	waitFor(t, func() bool { return len(tagged(c.Pid(), r1.tag)) == 0 }, "no process tagged "+r1.tag)
	if len(taggedSleeps(c.Pid(), r2.tag)) == 0 {
		t.Errorf("the other thread's command was killed too")
	}

	// Close while the other command runs: nothing of the tree is left.
	pid := c.Pid()
	below := processesBelow(pid)
	start := time.Now()
	if err := c.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
	t.Logf("Close with a running command: %v", time.Since(start))
	for _, p := range append(below, pid) {
		if alive(p) {
			t.Errorf("process %d outlived Close", p)
		}
	}
	if left := taggedAnywhere(r2.tag); len(left) > 0 {
		t.Errorf("tagged processes left after Close: %v", left)
	}
}

// TestAppServerRealSIGTERM: the parent-death signal of the app-server is
// SIGTERM because on it codex 0.169 ends the commands of its threads, even
// those ignoring SIGTERM (on SIGINT or SIGHUP it dies leaving them).
func TestAppServerRealSIGTERM(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs /proc")
	}
	mock := mockapi.New(t)
	c, _ := startRealAppServer(t, mock)
	const tag = "CODEXACP_TAG=term"
	thread := startThread(t, c, map[string]any{"cwd": t.TempDir(), "sandbox": "danger-full-access", "approvalPolicy": "never",
		"config": map[string]any{"shell_environment_policy.set": map[string]string{"CODEXACP_TAG": "term"}}})
	mock.Enqueue(mockapi.Reply(mockapi.ExecCommand("c1", `sh -c 'trap "" TERM INT HUP; sleep 30 & wait'`)))
	startTurn(t, c, thread, "go")
	waitFor(t, func() bool { return len(tagged(c.Pid(), tag)) >= 2 }, "the command and its child")
	if p, err := os.FindProcess(c.Pid()); err == nil {
		p.Signal(syscall.SIGTERM)
	}
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the app-server did not end on SIGTERM")
	}
	waitFor(t, func() bool { return len(taggedAnywhere(tag)) == 0 }, "its commands to end")
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stat is what the test needs of /proc/PID/stat.
type stat struct {
	ppid   int
	zombie bool
}

func readStat(pid int) (stat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return stat{}, false
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	ppid, _ := strconv.Atoi(f[1])
	return stat{ppid: ppid, zombie: f[0] == "Z"}, true
}

func alive(pid int) bool {
	s, ok := readStat(pid)
	return ok && !s.zombie
}

func allPids() []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// processesBelow lists the live descendants of root.
func processesBelow(root int) []int {
	parent := map[int]int{}
	for _, pid := range allPids() {
		if s, ok := readStat(pid); ok && !s.zombie {
			parent[pid] = s.ppid
		}
	}
	var out []int
	for pid := range parent {
		for p := parent[pid]; p > 1; p = parent[p] {
			if p == root {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

func hasEnv(pid int, kv string) bool {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	return slices.Contains(strings.Split(string(b), "\x00"), kv)
}

func tagged(root int, kv string) []int {
	var out []int
	for _, pid := range processesBelow(root) {
		if hasEnv(pid, kv) {
			out = append(out, pid)
		}
	}
	return out
}

// taggedSleeps lists the tagged `sleep 30` processes below root.
func taggedSleeps(root int, kv string) []int {
	var out []int
	for _, pid := range tagged(root, kv) {
		if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); string(b) == "sleep\x0030\x00" {
			out = append(out, pid)
		}
	}
	return out
}

func taggedAnywhere(kv string) []int {
	var out []int
	for _, pid := range allPids() {
		if alive(pid) && hasEnv(pid, kv) {
			out = append(out, pid)
		}
	}
	return out
}

// vmRSS is the VmRSS line of pid's status.
func vmRSS(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for line := range strings.SplitSeq(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			return strings.Join(strings.Fields(line), " ")
		}
	}
	return "VmRSS unknown"
}
