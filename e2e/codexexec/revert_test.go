package codexexec_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codexacp/codexacp/codex"
	"github.com/codexacp/codexacp/codex/appserver"
	"github.com/codexacp/codexacp/e2e/mockapi"
)

// What codex offers /undo for "codex forgets the turn" (issue 26,
// docs/undo.md): the app-server's experimental thread/revert and
// thread/fork's beforeTurnId, for threads of either backend (exec and the
// app-server write the same rollouts under one CODEX_HOME). Each test
// proves it on the next model request: the undone turn's words are gone,
// the earlier turn's are kept.

// appServer starts the pinned codex app-server of the fixture's CODEX_HOME
// and mock model.
func (f *fixture) appServer(t *testing.T) *appserver.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := appserver.Start(ctx, appserver.Options{
		Path: f.runner.Path, Env: f.runner.Env, Config: f.runner.Config,
		ClientName: "codexacp-test", ClientVersion: "0",
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// turns is a thread's handler that signals each turn/completed.
type turns struct {
	mu        sync.Mutex
	methods   []string
	completed chan struct{}
}

func newTurns() *turns { return &turns{completed: make(chan struct{}, 10)} }

func (w *turns) Notify(method string, params json.RawMessage) {
	w.mu.Lock()
	w.methods = append(w.methods, method)
	w.mu.Unlock()
	if method == "turn/completed" {
		w.completed <- struct{}{}
	}
}

func (w *turns) Request(ctx context.Context, method string, params json.RawMessage) (any, error) {
	return nil, &appserver.RPCError{Code: -32601, Message: "not in this test"}
}

func (w *turns) wait(t *testing.T) {
	t.Helper()
	select {
	case <-w.completed:
	case <-time.After(runTimeout):
		w.mu.Lock()
		defer w.mu.Unlock()
		t.Fatalf("no turn/completed; got %q", w.methods)
	}
}

func rpc(t *testing.T, c *appserver.Server, method string, params, result any) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return c.Call(ctx, method, params, result)
}

func mustRPC(t *testing.T, c *appserver.Server, method string, params, result any) {
	t.Helper()
	if err := rpc(t, c, method, params, result); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
}

// appTurn runs one turn of thread on c and returns its id.
func appTurn(t *testing.T, c *appserver.Server, w *turns, thread, text string) string {
	t.Helper()
	var res struct{ Turn struct{ ID string } }
	mustRPC(t, c, "turn/start", map[string]any{"threadId": thread,
		"input": []any{map[string]any{"type": "text", "text": text}}}, &res)
	w.wait(t)
	if res.Turn.ID == "" {
		t.Fatal("turn/start: no turn id")
	}
	return res.Turn.ID
}

// lastRequest is the conversation the model was last sent: its user and
// assistant texts.
func (f *fixture) lastRequest(t *testing.T) string {
	t.Helper()
	reqs := f.mock.Requests()
	if len(reqs) == 0 {
		t.Fatal("no model request")
	}
	r := reqs[len(reqs)-1]
	return strings.Join(append(r.Texts("user"), r.Texts("assistant")...), "\n")
}

// forgotten checks that the conversation carries the kept turn and not the
// undone one (its prompt and its answer).
func forgotten(t *testing.T, conversation string) {
	t.Helper()
	for _, kept := range []string{"remember the word apple", "noted apple"} {
		if !strings.Contains(conversation, kept) {
			t.Errorf("the kept turn's %q is missing from the next request:\n%s", kept, conversation)
		}
	}
	for _, undone := range []string{"now the word banana", "noted banana"} {
		if strings.Contains(conversation, undone) {
			t.Errorf("the undone turn's %q is still in the next request:\n%s", undone, conversation)
		}
	}
	if !strings.Contains(conversation, "which word?") {
		t.Errorf("the new prompt is missing:\n%s", conversation)
	}
}

// twoAppTurns starts a thread on c and runs the kept turn (apple) and the
// turn to undo (banana); it returns the thread and the second turn's id.
func (f *fixture) twoAppTurns(t *testing.T, c *appserver.Server) (thread, undone string, w *turns) {
	t.Helper()
	var res struct{ Thread struct{ ID string } }
	mustRPC(t, c, "thread/start", map[string]any{"cwd": f.cwd, "sandbox": "read-only", "approvalPolicy": "never"}, &res)
	thread = res.Thread.ID
	w = newTurns()
	t.Cleanup(c.Route(thread, w))
	f.mock.Enqueue(mockapi.Reply(mockapi.Message("noted apple")), mockapi.Reply(mockapi.Message("noted banana")))
	appTurn(t, c, w, thread, "remember the word apple")
	undone = appTurn(t, c, w, thread, "now the word banana")
	return thread, undone, w
}

// rolloutText is the thread's rollout file as codex left it.
func (f *fixture) rolloutText(t *testing.T, thread string) string {
	t.Helper()
	p, err := codex.RolloutPath(f.home, thread)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// history is the thread's history as codex.OpenRolloutHistory composes it
// from its rollout files: what session/load is to replay.
func (f *fixture) history(t *testing.T, thread string) string {
	t.Helper()
	h, err := codex.OpenRolloutHistory(f.home, thread)
	if err != nil {
		t.Fatalf("OpenRolloutHistory: %v", err)
	}
	defer h.Close()
	b, err := io.ReadAll(h)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// holds checks which of the texts a history holds.
func holds(t *testing.T, what, history string, want map[string]bool) {
	t.Helper()
	for text, in := range want {
		if strings.Contains(history, text) != in {
			t.Errorf("%s: holds %q: %v, want %v", what, text, !in, in)
		}
	}
}

// thread/revert {threadId, beforeTurnId} on the live app-server thread:
// the next turn's request no longer carries the reverted turn, a restarted
// app-server's thread/resume no longer lists it, and the rollout keeps it
// on disk (codex appends a rollback marker rather than rewriting).
func TestAppServerRevertForgetsTurn(t *testing.T) {
	f := newFixture(t)
	c := f.appServer(t)
	thread, undone, w := f.twoAppTurns(t, c)
	var rev json.RawMessage
	mustRPC(t, c, "thread/revert", map[string]any{"threadId": thread, "beforeTurnId": undone}, &rev)
	t.Logf("thread/revert answered %.300s", rev)
	f.mock.Enqueue(mockapi.Reply(mockapi.Message("apple")))
	appTurn(t, c, w, thread, "which word?")
	forgotten(t, f.lastRequest(t))
	// The rollout file keeps the reverted turn; the turns after the revert
	// go to a revision file next to it, rollout-<time>-<thread>_<id>.jsonl,
	// which holds only them (the kept prefix is referenced in codex's
	// sqlite state): a replay from codex.RolloutPath alone would show the
	// reverted turn and miss the new one.
	original := f.rolloutText(t, thread)
	if !strings.Contains(original, "now the word banana") || strings.Contains(original, "which word?") {
		t.Errorf("the thread's rollout after revert: banana %v, new turn %v; want true, false (codex changed how it keeps a revert)",
			strings.Contains(original, "now the word banana"), strings.Contains(original, "which word?"))
	}
	// Named by the time of the revert, maybe another second or day than
	// the thread's.
	revisions, _ := filepath.Glob(filepath.Join(f.home, "sessions", "*", "*", "*", "rollout-*-"+thread+"_*.jsonl"))
	if len(revisions) != 1 {
		t.Fatalf("revision files %q, want one", revisions)
	}
	if b, err := os.ReadFile(revisions[0]); err != nil || !strings.Contains(string(b), "which word?") || strings.Contains(string(b), "remember the word apple") {
		t.Errorf("the revision file %s (%v): want the new turn only", filepath.Base(revisions[0]), err)
	}

	holds(t, "the composed history after revert", f.history(t, thread),
		map[string]bool{"remember the word apple": true, "now the word banana": false, "which word?": true})

	// A restarted app-server resumes the cut history: what session/load
	// replays (the rollout) and what the model is sent.
	c.Close()
	c2 := f.appServer(t)
	var resumed struct {
		Thread struct {
			Turns []json.RawMessage `json:"turns"`
		} `json:"thread"`
	}
	mustRPC(t, c2, "thread/resume", map[string]any{"threadId": thread}, &resumed)
	all, _ := json.Marshal(resumed.Thread.Turns)
	if strings.Contains(string(all), "now the word banana") || !strings.Contains(string(all), "remember the word apple") {
		t.Errorf("thread/resume after revert lists turns %s", all)
	}
	t.Logf("thread/resume after revert: %d turns", len(resumed.Thread.Turns))
	w2 := newTurns()
	defer c2.Route(thread, w2)()
	f.mock.Enqueue(mockapi.Reply(mockapi.Message("apple")))
	var res struct{ Turn struct{ ID string } }
	mustRPC(t, c2, "turn/start", map[string]any{"threadId": thread,
		"input": []any{map[string]any{"type": "text", "text": "which word? again"}}}, &res)
	w2.wait(t)
	if got := f.lastRequest(t); strings.Contains(got, "now the word banana") {
		t.Errorf("after a restart the request carries the reverted turn:\n%s", got)
	}
	holds(t, "the composed history after a restart", f.history(t, thread),
		map[string]bool{"remember the word apple": true, "now the word banana": false, "which word? again": true})
}

// thread/fork {threadId, beforeTurnId}: a new thread with the history
// before the turn; the source keeps it.
func TestAppServerForkBeforeTurn(t *testing.T) {
	f := newFixture(t)
	c := f.appServer(t)
	thread, undone, _ := f.twoAppTurns(t, c)
	var fork struct{ Thread struct{ ID string } }
	mustRPC(t, c, "thread/fork", map[string]any{"threadId": thread, "beforeTurnId": undone, "excludeTurns": true}, &fork)
	if fork.Thread.ID == "" || fork.Thread.ID == thread {
		t.Fatalf("thread/fork: thread %q", fork.Thread.ID)
	}
	w := newTurns()
	defer c.Route(fork.Thread.ID, w)()
	f.mock.Enqueue(mockapi.Reply(mockapi.Message("apple")))
	appTurn(t, c, w, fork.Thread.ID, "which word?")
	forgotten(t, f.lastRequest(t))
	// The fork's rollout holds its own turns only: the kept prefix is
	// referenced in codex's sqlite state, not copied (codex 0.169).
	rollout := f.rolloutText(t, fork.Thread.ID)
	if strings.Contains(rollout, "remember the word apple") || strings.Contains(rollout, "now the word banana") || !strings.Contains(rollout, "which word?") {
		t.Errorf("the fork's rollout: apple %v, banana %v, which word %v; want false, false, true (codex changed how it keeps a fork)",
			strings.Contains(rollout, "remember the word apple"), strings.Contains(rollout, "now the word banana"), strings.Contains(rollout, "which word?"))
	}
	holds(t, "the fork's composed history", f.history(t, fork.Thread.ID),
		map[string]bool{"remember the word apple": true, "now the word banana": false, "which word?": true})

	// A whole fork (session/fork) is kept the same way: its history is its
	// source's by reference.
	var whole struct{ Thread struct{ ID string } }
	mustRPC(t, c, "thread/fork", map[string]any{"threadId": thread}, &whole)
	if r := f.rolloutText(t, whole.Thread.ID); strings.Contains(r, "remember the word apple") {
		t.Errorf("a whole fork's rollout copies its source's turns (codex changed how it keeps a fork)")
	}
	holds(t, "a whole fork's composed history", f.history(t, whole.Thread.ID),
		map[string]bool{"remember the word apple": true, "now the word banana": true, "which word?": false})

	// A fork's turns keep their source's ids (codex 0.171), so /undo in a
	// forked session finds the turns it recorded before the fork as the
	// fork thread's last (appserver.RevertTurns): a whole fork as
	// session/fork makes it (excludeTurns), and a fork before a turn.
	var session struct{ Thread struct{ ID string } }
	mustRPC(t, c, "thread/fork", map[string]any{"threadId": thread, "excludeTurns": true}, &session)
	source := execTurnIDs(t, c, thread)
	if len(source) != 2 || source[1] != undone {
		t.Fatalf("the source's turns %q, the second %q", source, undone)
	}
	for name, fork := range map[string]string{"whole": whole.Thread.ID, "session/fork": session.Thread.ID} {
		got := execTurnIDs(t, c, fork)
		t.Logf("thread/turns/list of the %s fork %s: %q; of its source %s: %q", name, fork, got, thread, source)
		if strings.Join(got, " ") != strings.Join(source, " ") {
			t.Errorf("the %s fork's turn ids %q, its source's %q", name, got, source)
		}
	}
	if got := execTurnIDs(t, c, fork.Thread.ID); len(got) != 2 || got[0] != source[0] || got[1] == undone {
		t.Errorf("the fork before the turn: turn ids %q (its own last), its source's %q", got, source)
	}
}

// execTwoTurns runs the kept turn and the turn to undo with codex exec and
// returns the thread.
func (f *fixture) execTwoTurns(t *testing.T) string {
	t.Helper()
	f.mock.Enqueue(mockapi.Reply(mockapi.Message("noted apple")), mockapi.Reply(mockapi.Message("noted banana")))
	first, err := f.run(t, context.Background(), f.invocation("remember the word apple"))
	if err != nil {
		t.Fatal(err)
	}
	thread := first[0].ThreadID
	inv := f.invocation("now the word banana")
	inv.ThreadID = thread
	if _, err := f.run(t, context.Background(), inv); err != nil {
		t.Fatal(err)
	}
	return thread
}

// execTurnIDs asks an app-server for the turn ids of a thread codex exec
// wrote (codex exec --json prints none), oldest first.
func execTurnIDs(t *testing.T, c *appserver.Server, thread string) []string {
	t.Helper()
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	mustRPC(t, c, "thread/turns/list", map[string]any{"threadId": thread, "sortDirection": "asc"}, &list)
	var ids []string
	for _, d := range list.Data {
		ids = append(ids, d.ID)
	}
	return ids
}

// An exec thread cut by an app-server (thread/revert), then resumed by
// codex exec: the next request does not carry the undone turn.
func TestExecThreadRevertedByAppServer(t *testing.T) {
	f := newFixture(t)
	thread := f.execTwoTurns(t)
	c := f.appServer(t)
	// thread/turns/list reads the rollout of a thread not loaded; revert
	// needs it loaded ("thread not found" otherwise).
	ids := execTurnIDs(t, c, thread)
	if err := rpc(t, c, "thread/revert", map[string]any{"threadId": thread, "beforeTurnId": ids[len(ids)-1]}, nil); err == nil || !strings.Contains(err.Error(), "thread not found") {
		t.Errorf("thread/revert of a thread not loaded: %v, want thread not found", err)
	}
	mustRPC(t, c, "thread/resume", map[string]any{"threadId": thread, "excludeTurns": true}, nil)
	ids = execTurnIDs(t, c, thread)
	t.Logf("exec thread's turns: %q", ids)
	if len(ids) != 2 {
		t.Fatalf("exec thread has %d turns, want 2", len(ids))
	}
	mustRPC(t, c, "thread/revert", map[string]any{"threadId": thread, "beforeTurnId": ids[1]}, nil)
	c.Close()

	f.mock.Enqueue(mockapi.Reply(mockapi.Message("apple")))
	inv := f.invocation("which word?")
	inv.ThreadID = thread
	if _, err := f.run(t, context.Background(), inv); err != nil {
		t.Fatal(err)
	}
	forgotten(t, f.lastRequest(t))
	// codex exec resume wrote to the revision file.
	head, err := codex.RolloutHead(f.home, thread)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(head); !strings.Contains(string(b), "which word?") || !strings.Contains(head, thread+"_") {
		t.Errorf("the exec turn after the revert is not in the revision file %s", filepath.Base(head))
	}
	holds(t, "the exec thread's composed history", f.history(t, thread),
		map[string]bool{"remember the word apple": true, "now the word banana": false, "which word?": true})
}

// appserver.RevertLast on a live app-server thread, and appserver.RevertStored on
// an exec thread (two turns cut at once): what /undo N will call.
func TestRevertHelpers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	t.Run("app-server", func(t *testing.T) {
		f := newFixture(t)
		c := f.appServer(t)
		thread, undone, w := f.twoAppTurns(t, c)
		ids, err := c.RevertLast(ctx, thread, 1)
		if err != nil || len(ids) != 1 || ids[0] != undone {
			t.Fatalf("RevertLast = %q, %v; want [%s]", ids, err, undone)
		}
		f.mock.Enqueue(mockapi.Reply(mockapi.Message("apple")))
		appTurn(t, c, w, thread, "which word?")
		forgotten(t, f.lastRequest(t))
	})
	t.Run("exec", func(t *testing.T) {
		f := newFixture(t)
		thread := f.execTwoTurns(t)
		f.mock.Enqueue(mockapi.Reply(mockapi.Message("noted banana")))
		inv := f.invocation("now the word banana, again")
		inv.ThreadID = thread
		if _, err := f.run(t, ctx, inv); err != nil {
			t.Fatal(err)
		}
		opts := appserver.Options{Path: f.runner.Path, Env: f.runner.Env, Config: f.runner.Config}
		if _, err := appserver.RevertStored(ctx, opts, thread, 4); !errors.Is(err, appserver.ErrNotEnoughTurns) {
			t.Errorf("RevertStored of 4 of 3 turns: %v, want ErrNotEnoughTurns", err)
		}
		start := time.Now()
		ids, err := appserver.RevertStored(ctx, opts, thread, 2)
		t.Logf("RevertStored (app-server start, resume, list, revert, close): %v", time.Since(start))
		if err != nil || len(ids) != 2 {
			t.Fatalf("RevertStored = %q, %v", ids, err)
		}
		f.mock.Enqueue(mockapi.Reply(mockapi.Message("apple")))
		inv = f.invocation("which word?")
		inv.ThreadID = thread
		if _, err := f.run(t, ctx, inv); err != nil {
			t.Fatal(err)
		}
		forgotten(t, f.lastRequest(t))
	})
}
