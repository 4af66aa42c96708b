package acp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/codex/execrun"
	"github.com/codexacp/codexacp/internal/fakeeditor"
	"github.com/codexacp/codexacp/internal/shelledits"
)

// inotifyInstances counts the process's inotify descriptors.
func inotifyInstances(t testing.TB) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Error(err)
		return 0
	}
	n := 0
	for _, e := range ents {
		if l, _ := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); l == "anon_inode:inotify" {
			n++
		}
	}
	return n
}

// waitInstances waits (30 s at most) until ok holds of the number of
// inotify descriptors.
func waitInstances(t testing.TB, what string, ok func(int) bool) {
	for deadline := time.Now().Add(30 * time.Second); !ok(inotifyInstances(t)); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("gave up waiting for %s (%d inotify instances)", what, inotifyInstances(t))
			return
		}
	}
}

// A command cancelled with its turn completes after the turn's context
// ended, when the tracker's watches were closed; its comparison then
// watches nothing anew (it would stay open for the life of the process).
func TestShellEditsOfCancelledTurnsLeaveNoInotify(t *testing.T) {
	cwd := t.TempDir()
	a := filepath.Join(cwd, "a.txt")
	writeTestFile(t, a, "alpha\n")
	var h *harness
	var sid acpsdk.SessionId
	var start int // before the session: its first turn's tracker was made at session/new
	be := &fakeBackend{script: func(ctx context.Context, _ int, _ execrun.Invocation, onLine func([]byte)) error {
		for _, l := range []string{`{"type":"thread.started","thread_id":"t"}`, `{"type":"turn.started"}`,
			`{"type":"item.started","item":{"id":"item_0","type":"command_execution","command":"sed","aggregated_output":"","exit_code":null,"status":"in_progress"}}`} {
			onLine([]byte(l))
		}
		waitInstances(t, "the baseline's watches", func(n int) bool { return n > start })
		writeTestFile(t, a, "ALPHA\n")
		h.editor.Conn.Cancel(context.Background(), acpsdk.CancelNotification{SessionId: sid})
		<-ctx.Done()
		waitInstances(t, "the end of the turn's watches", func(n int) bool { return n <= start })
		onLine([]byte(`{"type":"item.completed","item":{"id":"item_0","type":"command_execution","command":"sed","aggregated_output":"","exit_code":130,"status":"failed"}}`))
		return ctx.Err()
	}}
	h = startAgent(t, be, fakeeditor.Options{FS: true})
	start = inotifyInstances(t)
	sid = h.newSession(t, cwd)
	setMode(t, h, sid, backend.ModeAuto)
	before := start
	for range 5 {
		resp, err := h.prompt(sid, "go")
		if err != nil {
			t.Fatal(err)
		}
		if resp.StopReason != acpsdk.StopReasonCancelled {
			t.Fatalf("stop reason %q, want cancelled", resp.StopReason)
		}
	}
	if after := inotifyInstances(t); after > before {
		t.Errorf("inotify instances open: %d before five cancelled turns, %d after", before, after)
	}
}

// A session keeps its tracker's watches between turns, and no longer than
// it may: they end when the session closes, or after Options.shellIdle
// without a turn.
func TestShellEditsKeptWatchesEnd(t *testing.T) {
	for _, tc := range []struct {
		name string
		idle time.Duration
	}{{"session closed", time.Hour}, {"idle", 50 * time.Millisecond}} {
		t.Run(tc.name, func(t *testing.T) {
			cwd := t.TempDir()
			a := filepath.Join(cwd, "a.txt")
			writeTestFile(t, a, "alpha\n")
			be := &fakeBackend{script: shellTurn(func() { writeTestFile(t, a, "ALPHA\n") })}
			h := startAgentWith(t, Options{Backend: be, ContextWindow: 272000, shellIdle: tc.idle}, fakeeditor.Options{FS: true})
			before := inotifyInstances(t) // the session's tracker is made at session/new
			sid := h.newSession(t, cwd)
			setMode(t, h, sid, backend.ModeAuto)
			if _, err := h.prompt(sid, "go"); err != nil {
				t.Fatal(err)
			}
			if findToolCall(h, "shell-edits-t1-item_0") == nil {
				t.Fatal("no shell edits shown")
			}
			if tc.idle == time.Hour {
				if n := inotifyInstances(t); n != before+1 {
					t.Errorf("after the turn: %d inotify instances, want the session's one more than %d", n, before)
				}
				if _, err := h.editor.Conn.CloseSession(h.ctx, acpsdk.CloseSessionRequest{SessionId: sid}); err != nil {
					t.Fatal(err)
				}
			}
			waitInstances(t, "the session's watches to end", func(n int) bool { return n <= before })
		})
	}
}

// Idle sessions' kept trackers give way to active ones: a turn whose
// tracker the watch budget refuses (an instance: a budget of one injected)
// closes the least recently kept one instead of comparing whole roots, and
// the kept trackers of all sessions together keep at most
// Options.shellIdleBytes of contents (the least recently kept closed past
// it). Two sessions take turns A, B, B, A: B's second turn moves its
// tracker on, A's second needs a new one.
func TestShellEditsIdleTrackersGiveWay(t *testing.T) {
	pad := strings.Repeat("p", 100) + "\n" // kept by each session's baseline
	for _, tc := range []struct {
		name      string
		instances int
		idleBytes int64
	}{
		{"watch budget", 1, 0},
		{"kept bytes", 10, 150},
	} {
		t.Run(tc.name, func(t *testing.T) {
			budget := shelledits.NewWatchBudget(tc.instances, 1000)
			var mu sync.Mutex
			made := map[string]int{} // trackers by root
			turns := 0
			be := &fakeBackend{script: func(ctx context.Context, n int, inv execrun.Invocation, onLine func([]byte)) error {
				mu.Lock()
				turns++
				content := fmt.Sprintf("turn %d\n", turns)
				mu.Unlock()
				return shellTurn(func() { writeTestFile(t, filepath.Join(inv.Cwd, "a.txt"), content) })(ctx, n, inv, onLine)
			}}
			// What turns do; the sessions' baselines taken ahead of the
			// turns are TestShellEditsBaselineTakenAtSessionNew's.
			h := startAgentWith(t, Options{Backend: be, ContextWindow: 272000, shellIdleBytes: tc.idleBytes, noShellWarm: true,
				newShellTracker: func(roots []string, lim shelledits.Limits) *shelledits.Tracker {
					mu.Lock()
					made[filepath.Base(roots[0])]++
					mu.Unlock()
					tr := shelledits.New(roots, lim)
					tr.SetWatchBudget(budget)
					return tr
				}}, fakeeditor.Options{FS: true})
			sids := map[string]acpsdk.SessionId{}
			for _, name := range []string{"A", "B"} {
				cwd := filepath.Join(t.TempDir(), name)
				if err := os.Mkdir(cwd, 0o755); err != nil {
					t.Fatal(err)
				}
				writeTestFile(t, filepath.Join(cwd, "a.txt"), "alpha\n")
				writeTestFile(t, filepath.Join(cwd, "pad.txt"), pad)
				sids[name] = h.newSession(t, cwd)
				setMode(t, h, sids[name], backend.ModeAuto)
			}
			for _, name := range []string{"A", "B", "B", "A"} {
				if _, err := h.prompt(sids[name], "go"); err != nil {
					t.Fatal(err)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if made["A"] != 2 || made["B"] != 1 {
				t.Errorf("trackers made: A %d, B %d; want A 2 (its kept one gave way to B's), B 1 (moved on)", made["A"], made["B"])
			}
			if i, _ := budget.Left(); i != tc.instances-1 {
				t.Errorf("instances taken after the turns: %d, want 1 (A's; B's gave way)", tc.instances-i)
			}
		})
	}
}

// A session's first baseline is taken ahead of its first turn, at
// session/new (while the user types), and the turn moves it on: one tracker,
// its watches set before any prompt, and a file saved between session/new
// and the turn is not the command's.
func TestShellEditsBaselineTakenAtSessionNew(t *testing.T) {
	cwd := t.TempDir()
	a, b := filepath.Join(cwd, "a.txt"), filepath.Join(cwd, "b.txt")
	writeTestFile(t, a, "alpha\n")
	writeTestFile(t, b, "bravo\n")
	var made atomic.Int32
	be := &fakeBackend{script: shellTurn(func() { writeTestFile(t, a, "ALPHA\n") })}
	h := startAgentWith(t, Options{Backend: be, ContextWindow: 272000,
		newShellTracker: func(roots []string, lim shelledits.Limits) *shelledits.Tracker {
			made.Add(1)
			return shelledits.New(roots, lim)
		}}, fakeeditor.Options{FS: true})
	before := inotifyInstances(t)
	sid := h.newSession(t, cwd)
	waitInstances(t, "the session's watches", func(n int) bool { return n > before })
	if got := made.Load(); got != 1 {
		t.Fatalf("trackers made at session/new: %d, want 1", got)
	}
	writeTestFile(t, b, "saved before the prompt\n")
	setMode(t, h, sid, backend.ModeAuto)
	if _, err := h.prompt(sid, "go"); err != nil {
		t.Fatal(err)
	}
	tc := findToolCall(h, "shell-edits-t1-item_0")
	if tc == nil || tc.Title != "Shell edits: a.txt" || len(tc.Content) != 1 || tc.Content[0].Diff == nil {
		t.Fatalf("shell edits = %+v", tc)
	}
	if d := tc.Content[0].Diff; d.OldText == nil || *d.OldText != "alpha\n" || d.NewText != "ALPHA\n" {
		t.Errorf("a.txt diff = %+v", d)
	}
	if got := made.Load(); got != 1 {
		t.Errorf("trackers made: %d, want 1 (the turn moved the session's on)", got)
	}
	if _, err := h.editor.Conn.CloseSession(h.ctx, acpsdk.CloseSessionRequest{SessionId: sid}); err != nil {
		t.Fatal(err)
	}
	waitInstances(t, "the session's watches to end", func(n int) bool { return n <= before })
}

// Sessions' baselines ahead of their turns are taken one at a time: a
// burst of session/new starts no tracker while another session's is being
// taken (each would run a git status and a walk of the workspace at once),
// and a session/new after it is there warms its own.
func TestShellEditsWarmOneAtATime(t *testing.T) {
	cwd := t.TempDir()
	writeTestFile(t, filepath.Join(cwd, "a.txt"), "alpha\n")
	var made atomic.Int32
	h := startAgentWith(t, Options{Backend: &fakeBackend{}, ContextWindow: 272000,
		newShellTracker: func(roots []string, lim shelledits.Limits) *shelledits.Tracker {
			made.Add(1)
			return shelledits.New(roots, lim)
		}}, fakeeditor.Options{FS: true})
	h.agent.warming <- struct{}{} // another session's baseline is being taken
	for range 5 {
		h.newSession(t, cwd)
	}
	if got := made.Load(); got != 0 {
		t.Fatalf("trackers warmed beside another session's: %d, want 0", got)
	}
	<-h.agent.warming
	h.newSession(t, cwd)
	if got := made.Load(); got != 1 {
		t.Fatalf("trackers warmed once none was: %d, want 1", got)
	}
	for deadline := time.Now().Add(30 * time.Second); len(h.agent.warming) > 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the warmed baseline never gave its turn back")
		}
	}
	h.newSession(t, cwd)
	if got := made.Load(); got != 2 {
		t.Errorf("trackers warmed after the first was there: %d, want 2", got)
	}
}
