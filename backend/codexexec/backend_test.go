package codexexec

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/backend/backendtest"
	"github.com/codexacp/codexacp/codex/execrun"
	"github.com/codexacp/codexacp/internal/testkit"
)

// waitPrestarts waits until the exec backend's prestarter has nothing left
// to do: every wanted codex started, every retired one ended.
func waitPrestarts(t testing.TB, b *Backend) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b.mu.Lock()
		busy := len(b.ending) > 0
		for _, w := range b.waiting {
			busy = busy || w.state != warmStarted
		}
		b.mu.Unlock()
		if !busy {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the prestarter is still busy after 10 s")
		}
		time.Sleep(time.Millisecond)
	}
}

// liveRunner is a Prestarter that keeps the processes it would have
// waiting (by session, read from the invocation's thread id) and the most
// it ever had at once. Its first Prestart closes reached and blocks until
// release is closed, when release is set.
type liveRunner struct {
	release, reached chan struct{}

	mu        sync.Mutex
	live      map[string]bool
	most      int
	prestarts []string
	closed    bool
}

func (r *liveRunner) Run(context.Context, execrun.Invocation, func([]byte)) error { return nil }

func (r *liveRunner) Prestart(inv execrun.Invocation, _ time.Duration) error {
	r.mu.Lock()
	first := len(r.prestarts) == 0
	r.prestarts = append(r.prestarts, inv.ThreadID)
	if r.live == nil {
		r.live = map[string]bool{}
	}
	r.live[inv.ThreadID] = true
	r.most = max(r.most, len(r.live))
	r.mu.Unlock()
	if first && r.release != nil {
		close(r.reached)
		<-r.release
	}
	return nil
}

func (r *liveRunner) Discard(inv execrun.Invocation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.live, inv.ThreadID)
}

func (r *liveRunner) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.live, r.closed = nil, true
}

func (r *liveRunner) started() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.prestarts)
}

func (r *liveRunner) mostAtOnce() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.most
}

func (r *liveRunner) waiting() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ids []string
	for id := range r.live {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// sessionTurn is a turn of session id whose thread is named like it, so
// that a liveRunner tells the sessions' invocations apart.
func sessionTurn(cwd string, id int) backend.Turn {
	name := fmt.Sprintf("s%02d", id)
	return backend.Turn{SessionID: name, Cwd: cwd, ThreadID: name, Mode: backend.ModeAsk}
}

// A burst of sessions has at most MaxWarm codex processes waiting, the
// most recently used sessions', and starts only theirs: the ones asked
// for while a start was under way and pushed out since are never started.
func TestExecWaitingCodexBounded(t *testing.T) {
	r := &liveRunner{release: make(chan struct{}), reached: make(chan struct{})}
	b := &Backend{Runner: r, Logger: testkit.DiscardLogger(), MaxWarm: 3}
	cwd := t.TempDir()
	b.Prepare(sessionTurn(cwd, 1))
	testkit.WaitFor(t, r.reached, "the first start never began")
	for i := 2; i <= 50; i++ {
		b.Prepare(sessionTurn(cwd, i))
	}
	close(r.release)
	waitPrestarts(t, b)
	if got, want := r.waiting(), []string{"s48", "s49", "s50"}; !slices.Equal(got, want) {
		t.Errorf("waiting after 50 sessions: %v, want the newest %v", got, want)
	}
	if r.mostAtOnce() > 3 {
		t.Errorf("%d codex processes waited at once, want at most MaxWarm = 3", r.mostAtOnce())
	}
	if n := r.started(); n != 4 {
		t.Errorf("%d codex processes started for a burst of 50 sessions (%v), want the first and the 3 newest", n, r.prestarts)
	}

	// Used again, s48 is kept; the next new session pushes out s49.
	b.Prepare(sessionTurn(cwd, 48))
	b.Prepare(sessionTurn(cwd, 51))
	waitPrestarts(t, b)
	if got, want := r.waiting(), []string{"s48", "s50", "s51"}; !slices.Equal(got, want) {
		t.Errorf("waiting: %v, want %v", got, want)
	}
	// A session pushed out starts its next turn cold (the others' waiting
	// codex yield to it), then has its codex started again when it is
	// prepared after the turn.
	if err := b.Run(context.Background(), sessionTurn(cwd, 49), backendtest.NopOutput{}); err != nil {
		t.Fatal(err)
	}
	b.Prepare(sessionTurn(cwd, 49))
	b.Prepare(sessionTurn(cwd, 48))
	waitPrestarts(t, b)
	if got, want := r.waiting(), []string{"s48", "s49"}; !slices.Equal(got, want) {
		t.Errorf("waiting: %v, want %v", got, want)
	}
	if r.mostAtOnce() > 3 {
		t.Errorf("%d codex processes waited at once, want at most 3", r.mostAtOnce())
	}

	b.Forget("s48")
	waitPrestarts(t, b)
	if got, want := r.waiting(), []string{"s49"}; !slices.Equal(got, want) {
		t.Errorf("waiting after the session closed: %v, want %v", got, want)
	}
	started := r.started()
	b.Close()
	if !r.closed || len(r.waiting()) != 0 {
		t.Errorf("after Close: runner closed %v, waiting %v", r.closed, r.waiting())
	}
	b.Prepare(sessionTurn(cwd, 52))
	if n := r.started(); n != started {
		t.Errorf("%d prestarts after Close, want %d: a Prepare after Close started one", n, started)
	}
}

// Sessions prepared from many goroutines at once never have more than
// MaxWarm codex processes waiting, and Close waits for the prestarter.
func TestExecWaitingCodexBoundedConcurrently(t *testing.T) {
	r := &liveRunner{}
	b := &Backend{Runner: r, Logger: testkit.DiscardLogger(), MaxWarm: 2}
	cwd := t.TempDir()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 25 {
				b.Prepare(sessionTurn(cwd, g*25+i))
				if i%5 == 0 {
					b.Forget(fmt.Sprintf("s%02d", g*25+i))
				}
			}
		})
	}
	wg.Wait()
	waitPrestarts(t, b)
	if r.mostAtOnce() > 2 {
		t.Errorf("%d codex processes waited at once, want at most MaxWarm = 2", r.mostAtOnce())
	}
	if n := len(r.waiting()); n == 0 || n > 2 {
		t.Errorf("%d waiting at the end, want 1 or 2", n)
	}
	b.Close()
	if len(r.waiting()) != 0 {
		t.Errorf("waiting after Close: %v", r.waiting())
	}
}

// A negative MaxWarm starts nothing ahead.
func TestExecMaxWarmNegative(t *testing.T) {
	r := &liveRunner{}
	b := &Backend{Runner: r, Logger: testkit.DiscardLogger(), MaxWarm: -1}
	b.Prepare(sessionTurn(t.TempDir(), 1))
	b.Close()
	if n := r.started(); n != 0 {
		t.Errorf("%d prestarts, want none", n)
	}
}

// The editor's MCP servers as codex exec's -c overrides: header values
// travel in codex's environment, never on its command line.
func TestEditorMCPConfig(t *testing.T) {
	servers := []backend.MCPServer{
		{Name: "my_tools", Command: "/bin/tool", Args: []string{"--x", `a"b`}, Env: []backend.KeyValue{{Name: "K", Value: "v\\1"}}},
		{Name: "acp_2", URL: "http://127.0.0.1:9/mcp", Headers: []backend.KeyValue{{Name: "Authorization", Value: "Bearer x"}}},
		{Name: "acp_3", URL: "http://127.0.0.1:10/mcp"},
	}
	config, env := editorMCPConfig(servers, backend.ModeReadOnly)
	want := []string{
		`mcp_servers.my_tools={command="/bin/tool", args=["--x", "a\"b"], env={"K"="v\\1"}}`,
		`mcp_servers.acp_2={url="http://127.0.0.1:9/mcp", env_http_headers={"Authorization"="CODEXACP_MCP_HEADER_1_0"}}`,
		`mcp_servers.acp_3={url="http://127.0.0.1:10/mcp", env_http_headers={}}`,
	}
	if strings.Join(config, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(config, "\n"), strings.Join(want, "\n"))
	}
	if strings.Join(env, "|") != "CODEXACP_MCP_HEADER_1_0=Bearer x" {
		t.Errorf("env = %q", env)
	}
}

// On exec the editor's servers run as configured in auto and full-access;
// in read-only and ask mode only their read-only tools run (codex's
// default): codex exec cannot ask, and ask mode must not do less asking
// than its name says. In ask mode the model is told why.
func TestExecConfigApprovalMode(t *testing.T) {
	servers := []backend.MCPServer{{Name: "x", Command: "/bin/x"}}
	for _, tc := range []struct {
		mode backend.Mode
		want string
	}{
		{backend.ModeReadOnly, `mcp_servers.x={command="/bin/x", args=[], env={}}`},
		{backend.ModeAsk, `mcp_servers.x={command="/bin/x", args=[], env={}}`},
		{backend.ModeAuto, `mcp_servers.x={command="/bin/x", args=[], env={}, default_tools_approval_mode="approve"}`},
		{backend.ModeFullAccess, `mcp_servers.x={command="/bin/x", args=[], env={}, default_tools_approval_mode="approve"}`},
	} {
		got, _ := editorMCPConfig(servers, tc.mode)
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("%s: %q, want %q", tc.mode, got, tc.want)
		}
		inv := execInvocation(backend.Turn{Mode: tc.mode, EditorMCP: servers, Tools: &backend.TurnTools{URL: "http://127.0.0.1:1/mcp"}})
		config := strings.Join(inv.Config, "\n")
		if !strings.Contains(config, tc.want) {
			t.Errorf("%s: exec invocation config %q lacks %q", tc.mode, inv.Config, tc.want)
		}
		if told := strings.Contains(config, "codex exec cannot ask"); told != (tc.mode == backend.ModeAsk) {
			t.Errorf("%s: the model is told why the editor's tools are refused: %v", tc.mode, told)
		}
	}
}

// TestExecToolsRoute: our tool server as exec's -c, over HTTP or through
// the relay; either way the token is only in codex's environment.
func TestExecToolsRoute(t *testing.T) {
	relay := &backend.ToolsRelay{Command: "/a b/codexacp", Args: []string{"mcp-relay"},
		Env: map[string]string{"SOCK": "/tmp/d/s", "MAX": "8"}, TokenEnv: "TOKVAR"}
	for _, tc := range []struct {
		relay *backend.ToolsRelay
		want  string
		env   string
	}{
		{nil, `mcp_servers.acp={url="http://127.0.0.1:1/mcp", bearer_token_env_var="CODEXACP_MCP_TOKEN", required=true, default_tools_approval_mode="approve", tool_timeout_sec=86400}`,
			"CODEXACP_MCP_TOKEN=tok"},
		{relay, `mcp_servers.acp={command="/a b/codexacp", args=["mcp-relay"], env={"MAX"="8", "SOCK"="/tmp/d/s"}, env_vars=["TOKVAR"], required=true, default_tools_approval_mode="approve", tool_timeout_sec=86400}`,
			"TOKVAR=tok"},
	} {
		inv := execInvocation(backend.Turn{Mode: backend.ModeAuto, Tools: &backend.TurnTools{URL: "http://127.0.0.1:1/mcp", Token: "tok", Relay: tc.relay}})
		if !slices.Contains(inv.Config, tc.want) {
			t.Errorf("relay %v: config %q lacks %q", tc.relay != nil, inv.Config, tc.want)
		}
		if !slices.Contains(inv.Env, tc.env) {
			t.Errorf("relay %v: env %q lacks %q", tc.relay != nil, inv.Env, tc.env)
		}
		if strings.Contains(strings.Join(inv.Config, " "), "tok\"") {
			t.Errorf("relay %v: the token is on the command line: %q", tc.relay != nil, inv.Config)
		}
	}
}

// ForgetTurns cuts the thread with Revert (offered only with it), and the
// thread's rollout is looked for anew: its next turn writes a revision.
func TestExecForgetTurns(t *testing.T) {
	if (&Backend{}).Capabilities().Has(backend.Undo) {
		t.Error("Undo offered without Revert")
	}
	var got []string
	b := &Backend{Logger: testkit.DiscardLogger(), Revert: func(_ context.Context, thread string, ids []string) error {
		got = append(got, thread+":"+strings.Join(ids, ","))
		return nil
	}}
	if !b.Capabilities().Has(backend.Undo) {
		t.Error("Undo not offered with Revert")
	}
	if err := b.ForgetTurns(context.Background(), backend.Turn{SessionID: "s"}, []string{"tu-1"}); err == nil {
		t.Error("a session without a thread was cut")
	}
	b.rollouts.found.Store("th", "/old/rollout.jsonl")
	if err := b.ForgetTurns(context.Background(), backend.Turn{SessionID: "s", ThreadID: "th"}, []string{"tu-1", "tu-2"}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[th:tu-1,tu-2]" {
		t.Errorf("Revert got %q", got)
	}
	if _, ok := b.rollouts.found.Load("th"); ok {
		t.Error("the thread's old rollout is still remembered after the revert")
	}
}

// procRunner is a Prestarter that behaves like execrun.Runner as far as
// processes go: Prestart makes a process wait (by thread id), Run takes
// the waiting one of its invocation or starts one, Discard ends a waiting
// one. It counts the processes alive, running or waiting. While
// hold is set, Run closes running (once) and waits for hold to close.
//
// With gate set, the first Prestart closes prestarting and waits for gate
// before its process counts as waiting (a start under way).
type procRunner struct {
	hold, running     chan struct{}
	gate, prestarting chan struct{}

	mu        sync.Mutex
	waiting   map[string]bool
	turns     int // Runs in progress
	taken     int // Runs that took a waiting process
	fresh     int // Runs that started their own
	prestarts int
}

func (r *procRunner) alive() int { return len(r.waiting) + r.turns } // r.mu held

func (r *procRunner) Run(ctx context.Context, inv execrun.Invocation, _ func([]byte)) error {
	if ctx.Err() != nil { // as execrun.Runner: a cancelled turn takes nothing
		return ctx.Err()
	}
	r.mu.Lock()
	if r.waiting[inv.ThreadID] {
		delete(r.waiting, inv.ThreadID)
		r.taken++
	} else {
		r.fresh++
	}
	r.turns++
	hold, running := r.hold, r.running
	r.mu.Unlock()
	if hold != nil {
		close(running)
		<-hold
	}
	r.mu.Lock()
	r.turns--
	r.mu.Unlock()
	return nil
}

func (r *procRunner) Prestart(inv execrun.Invocation, _ time.Duration) error {
	r.mu.Lock()
	r.prestarts++
	gated := r.gate != nil && r.prestarts == 1
	r.mu.Unlock()
	if gated {
		close(r.prestarting)
		<-r.gate
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.waiting == nil {
		r.waiting = map[string]bool{}
	}
	r.waiting[inv.ThreadID] = true
	return nil
}

func (r *procRunner) Discard(inv execrun.Invocation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.waiting, inv.ThreadID)
}

func (r *procRunner) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.waiting = nil
}

func (r *procRunner) aliveNow() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.alive()
}

func (r *procRunner) takenCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.taken
}

func (r *procRunner) freshCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fresh
}

// A turn runs beside no waiting codex: the user who prompts in one session
// has left the others, whose waiting codex is ended when the turn starts
// (their next turn starts cold and prepares the one after). The session's
// own next codex starts once its turn has ended, and its next prompt takes
// it (the warm start a user typing after the answer gets).
func TestExecTurnRunsBesideNoWaitingCodex(t *testing.T) {
	r := &procRunner{}
	b := &Backend{Runner: r, Logger: testkit.DiscardLogger()}
	defer b.Close()
	cwd := t.TempDir()
	s1, s2 := sessionTurn(cwd, 1), sessionTurn(cwd, 2)

	// Session 1: prepared at session/new, a turn, its next prepared.
	b.Prepare(s1)
	waitPrestarts(t, b)
	if err := b.Run(context.Background(), s1, backendtest.NopOutput{}); err != nil {
		t.Fatal(err)
	}
	b.Prepare(s1)
	// Session 2 opens (as the bench's second session, in a large
	// repository): both wait until a turn starts.
	b.Prepare(s2)
	waitPrestarts(t, b)
	if n := r.aliveNow(); n != 2 {
		t.Fatalf("%d codex processes alive before session 2's turn, want its and session 1's waiting ones", n)
	}

	// Session 2's turn: once the prestarter has done what the turn's start
	// asked, only the turn's codex is alive.
	hold, running := make(chan struct{}), make(chan struct{})
	r.mu.Lock()
	r.hold, r.running = hold, running
	r.mu.Unlock()
	done := make(chan error, 1)
	go func() { done <- b.Run(context.Background(), s2, backendtest.NopOutput{}) }()
	testkit.WaitFor(t, running, "session 2's turn never ran")
	waitPrestarts(t, b)
	if n := r.aliveNow(); n != 1 {
		t.Errorf("%d codex processes alive while session 2's turn runs, want 1: another session's waiting codex stayed beside it", n)
	}
	r.mu.Lock()
	r.hold = nil
	r.mu.Unlock()
	close(hold)
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	// After the turn its next codex waits, and the next prompt takes it.
	b.Prepare(s2)
	waitPrestarts(t, b)
	if err := b.Run(context.Background(), s2, backendtest.NopOutput{}); err != nil {
		t.Fatal(err)
	}
	if taken := r.takenCount(); taken != 3 {
		t.Errorf("%d turns took a waiting codex, want 3 (session 1's first, session 2's two)", taken)
	}
}

// A prompt that comes while the session's codex is being started ahead (a
// scripted client's first prompt right after session/new) waits for that
// start and takes the process, rather than starting a second codex beside
// it (which the prestarter then ended).
func TestExecPromptTakesTheCodexBeingStarted(t *testing.T) {
	r, b, release, waits, s1 := codexBeingStarted(t)

	done := make(chan error, 1)
	go func() { done <- b.Run(context.Background(), s1, backendtest.NopOutput{}) }()
	select {
	case <-waits:
	case err := <-done:
		t.Fatalf("the turn ran (%v) without waiting for the codex being started for it", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the turn neither ran nor waited")
	}
	release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	waitPrestarts(t, b)
	if taken, fresh := r.takenCount(), r.freshCount(); taken != 1 || fresh != 0 {
		t.Errorf("the turn took %d waiting codex and started %d of its own, want 1 and 0", taken, fresh)
	}
	if n := r.aliveNow(); n != 0 {
		t.Errorf("%d codex processes alive after the turn, want none (nothing prepared since)", n)
	}
}

// A prompt cancelled while it waits for the codex being started for it
// ends that codex: the turn took it from the session's waiting one, so
// nothing else would (the runner would keep it for its idle time, 10
// minutes, beside every later turn).
func TestExecCancelledPromptEndsTheCodexBeingStarted(t *testing.T) {
	r, b, release, waits, s1 := codexBeingStarted(t)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx, s1, backendtest.NopOutput{}) }()
	testkit.WaitFor(t, waits, "the turn never waited for the codex being started for it")
	cancel() // session/cancel while codex starts
	release()
	if err := <-done; err == nil {
		t.Fatal("the cancelled turn ran")
	}
	waitPrestarts(t, b)
	if n := r.aliveNow(); n != 0 {
		t.Errorf("%d codex processes alive after the cancelled turn, want none", n)
	}
}

// codexBeingStarted is a backend whose session s1 was prepared and whose
// prestarter is starting the session's codex, held until release; waits
// closes when a turn waits for that start. Cleanup releases the start,
// then closes the backend (which waits for the prestarter).
func codexBeingStarted(t *testing.T) (r *procRunner, b *Backend, release func(), waits chan struct{}, s1 backend.Turn) {
	t.Helper()
	dir := t.TempDir() // removed after the cleanups below
	r = &procRunner{gate: make(chan struct{}), prestarting: make(chan struct{})}
	b = &Backend{Runner: r, Logger: testkit.DiscardLogger()}
	t.Cleanup(b.Close)
	release = sync.OnceFunc(func() { close(r.gate) })
	t.Cleanup(release) // runs before Close
	waits = make(chan struct{})
	b.onWaitForStart = func() { close(waits) }
	s1 = sessionTurn(dir, 1)
	b.Prepare(s1)
	testkit.WaitFor(t, r.prestarting, "the prestarter never started the session's codex")
	return r, b, release, waits, s1
}
