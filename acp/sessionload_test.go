package acp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/codex/execrun"
	"github.com/codexacp/codexacp/events"
	"github.com/codexacp/codexacp/internal/acpschema"
	"github.com/codexacp/codexacp/internal/fakeeditor"
	"github.com/codexacp/codexacp/internal/sessionstore"
)

const loadThreadID = "01a20602-22f9-7a33-a8c4-4064f84c2b10"

// Session ids of newSessionID's form that no test agent issues.
const (
	sidUnknown   = "sess_00000000000000000000000000000000"
	sidGone      = "sess_00000000000000000000000000000001"
	sidHere      = "sess_00000000000000000000000000000002"
	sidElsewhere = "sess_00000000000000000000000000000003"
)

// malformedSessionIDs are ids newSessionID cannot make, some shaped to
// reach outside the state directory.
var malformedSessionIDs = []acpsdk.SessionId{
	"", "../../x", "sess_../../etc/passwd", "/etc/passwd", ".json", "sess_unknown",
	"sess_0000000000000000000000000000000", "sess_0000000000000000000000000000000A",
	"sess_00000000000000000000000000000000/..", "sess_00000000000000000000000000000000\x00",
}

func requireCode(t *testing.T, what string, err error, code int) {
	t.Helper()
	var re *acpsdk.RequestError
	if !errors.As(err, &re) || re.Code != code {
		t.Errorf("%s: err = %v, want code %d", what, err, code)
	}
}

// codexHomeWithRollout makes a CODEX_HOME holding the rollout of
// loadThreadID (a real codex 0.169 rollout from events' test data).
func codexHomeWithRollout(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	dir := filepath.Join(home, "sessions", "2026", "11", "23")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join("..", "events", "testdata", "rollout", "edit_command_resume.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rollout-2026-11-23T01-25-33-"+loadThreadID+".jsonl"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CODEX_HOME", home)
	return home
}

func TestSessionsPersistListAndLoad(t *testing.T) {
	codexHomeWithRollout(t)
	state := t.TempDir()
	be := &fakeBackend{script: playLines(
		`{"type":"thread.started","thread_id":"`+loadThreadID+`"}`, `{"type":"turn.started"}`,
		`{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"hi"}}`,
		`{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":0,"output_tokens":10,"reasoning_output_tokens":0}}`)}
	cwd := t.TempDir()

	// First agent process: one session, one turn, a mode change.
	h1 := startAgentWith(t, Options{Backend: be, StateDir: state}, fakeeditor.Options{})
	init, err := h1.editor.Initialize(h1.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !init.AgentCapabilities.LoadSession || init.AgentCapabilities.SessionCapabilities.List == nil {
		t.Errorf("load/list not advertised with a state dir: %+v", init.AgentCapabilities)
	}
	resp, err := h1.editor.Conn.NewSession(h1.ctx, acpsdk.NewSessionRequest{Cwd: cwd, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	sid := resp.SessionId
	if _, err := h1.prompt(sid, "Please edit the file\nwith details"); err != nil {
		t.Fatal(err)
	}
	if _, err := h1.editor.Conn.SetSessionMode(h1.ctx, acpsdk.SetSessionModeRequest{SessionId: sid, ModeId: "auto"}); err != nil {
		t.Fatal(err)
	}

	// Second agent process on the same state: list and load.
	h2 := startAgentWith(t, Options{Backend: be, StateDir: state}, fakeeditor.Options{})
	if _, err := h2.editor.Initialize(h2.ctx); err != nil {
		t.Fatal(err)
	}
	list, err := h2.editor.Conn.ListSessions(h2.ctx, acpsdk.ListSessionsRequest{Cwd: &cwd})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Sessions) != 1 || list.Sessions[0].SessionId != sid || list.Sessions[0].Title == nil ||
		*list.Sessions[0].Title != "Please edit the file" || list.Sessions[0].UpdatedAt == nil {
		t.Fatalf("session/list = %+v", list.Sessions)
	}
	other := t.TempDir()
	if l, _ := h2.editor.Conn.ListSessions(h2.ctx, acpsdk.ListSessionsRequest{Cwd: &other}); len(l.Sessions) != 0 {
		t.Errorf("cwd filter: %+v", l.Sessions)
	}

	load, err := h2.editor.Conn.LoadSession(h2.ctx, acpsdk.LoadSessionRequest{SessionId: sid, Cwd: cwd, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if load.Modes == nil || load.Modes.CurrentModeId != "auto" {
		t.Errorf("restored mode = %+v", load.Modes)
	}
	kinds := strings.Join(fakeeditor.UpdateKinds(h2.editor.Updates()), ",")
	if kinds != "user_message_chunk,agent_thought_chunk,tool_call,tool_call,agent_message_chunk,user_message_chunk,agent_message_chunk" {
		t.Errorf("history replay = %s", kinds)
	}

	// The loaded session resumes the stored thread.
	if _, err := h2.prompt(sid, "continue"); err != nil {
		t.Fatal(err)
	}
	runs := be.invocations()
	if last := runs[len(runs)-1]; last.ThreadID != loadThreadID || last.Sandbox != "workspace-write" {
		t.Errorf("after load: run = %+v", last)
	}
}

func TestLoadSessionErrors(t *testing.T) {
	codexHomeWithRollout(t)
	state := t.TempDir()
	h := startAgentWith(t, Options{Backend: &fakeBackend{}, StateDir: state}, fakeeditor.Options{})
	if _, err := h.editor.Initialize(h.ctx); err != nil {
		t.Fatal(err)
	}
	cwd := t.TempDir()
	_, err := h.editor.Conn.LoadSession(h.ctx, acpsdk.LoadSessionRequest{SessionId: sidUnknown, Cwd: cwd, McpServers: []acpsdk.McpServer{}})
	var re *acpsdk.RequestError
	if !errors.As(err, &re) || re.Code != -32002 || !strings.Contains(re.Message, "unknown session") {
		t.Errorf("unknown session: %v", err)
	}
	_, err = h.editor.Conn.LoadSession(h.ctx, acpsdk.LoadSessionRequest{SessionId: "../../etc/passwd", Cwd: cwd, McpServers: []acpsdk.McpServer{}})
	requireCode(t, "a path as session id", err, -32602)

	// A stored session whose codex thread is gone cannot be loaded.
	st := sessionstore.New(state, nil)
	if err := st.Save(sessionstore.Record{SessionID: sidGone, ThreadID: "no-such-thread", Cwd: cwd, Mode: string(backend.ModeAsk)}); err != nil {
		t.Fatal(err)
	}
	_, err = h.editor.Conn.LoadSession(h.ctx, acpsdk.LoadSessionRequest{SessionId: sidGone, Cwd: cwd, McpServers: []acpsdk.McpServer{}})
	if !errors.As(err, &re) || !strings.Contains(re.Message, "no rollout") {
		t.Errorf("missing rollout: %v", err)
	}
}

// TestObserveStoredSeesWhatListAndLoadRead checks the hook the transcript
// recorder copies stored files through: a list reports the records it
// returns (not those of other workspaces), a load the record and the
// rollout, and a failed load nothing it did not read.
func TestObserveStoredSeesWhatListAndLoadRead(t *testing.T) {
	home := codexHomeWithRollout(t)
	rollout := filepath.Join(home, "sessions", "2026", "11", "23", "rollout-2026-11-23T01-25-33-"+loadThreadID+".jsonl")
	state := t.TempDir()
	cwd, other := t.TempDir(), t.TempDir()
	st := sessionstore.New(state, nil)
	for _, rec := range []sessionstore.Record{
		{SessionID: sidHere, ThreadID: loadThreadID, Cwd: cwd, Mode: string(backend.ModeAsk)},
		{SessionID: sidElsewhere, ThreadID: loadThreadID, Cwd: other, Mode: string(backend.ModeAsk)},
		{SessionID: sidGone, ThreadID: "no-such-thread", Cwd: cwd, Mode: string(backend.ModeAsk)},
	} {
		if err := st.Save(rec); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var seen []string
	observe := func(path string) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, path)
	}
	h := startAgentWith(t, Options{Backend: &fakeBackend{}, StateDir: state, ObserveStored: observe}, fakeeditor.Options{})
	if _, err := h.editor.Initialize(h.ctx); err != nil {
		t.Fatal(err)
	}
	record := func(id string) string { return filepath.Join(state, id+".json") }
	tests := []struct {
		name string
		call func() error
		want []string
	}{
		{"list of a workspace", func() error {
			_, err := h.editor.Conn.ListSessions(h.ctx, acpsdk.ListSessionsRequest{Cwd: &other})
			return err
		}, []string{record(sidElsewhere)}},
		{"load", func() error {
			_, err := h.editor.Conn.LoadSession(h.ctx, acpsdk.LoadSessionRequest{SessionId: sidHere, Cwd: cwd, McpServers: []acpsdk.McpServer{}})
			return err
		}, []string{record(sidHere), rollout, sessionstore.WriteLogPath(record(sidHere))}},
		{"load without a rollout", func() error {
			_, err := h.editor.Conn.LoadSession(h.ctx, acpsdk.LoadSessionRequest{SessionId: sidGone, Cwd: cwd, McpServers: []acpsdk.McpServer{}})
			if err == nil {
				return errors.New("loaded a session without a rollout")
			}
			return nil
		}, []string{record(sidGone)}},
		{"load of an unknown session", func() error {
			_, err := h.editor.Conn.LoadSession(h.ctx, acpsdk.LoadSessionRequest{SessionId: sidUnknown, Cwd: cwd, McpServers: []acpsdk.McpServer{}})
			if err == nil {
				return errors.New("loaded an unknown session")
			}
			return nil
		}, nil},
	}
	for _, tt := range tests {
		mu.Lock()
		seen = nil
		mu.Unlock()
		if err := tt.call(); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		mu.Lock()
		got := seen
		mu.Unlock()
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: observed %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestNoStateDirNoLoad(t *testing.T) {
	t.Parallel()
	h := startAgent(t, &fakeBackend{}, fakeeditor.Options{})
	init, err := h.editor.Initialize(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if caps := init.AgentCapabilities; caps.LoadSession || caps.SessionCapabilities.List != nil || caps.SessionCapabilities.Resume != nil {
		t.Errorf("load/list/resume advertised without a state dir")
	}
	_, err = h.editor.Conn.ListSessions(h.ctx, acpsdk.ListSessionsRequest{})
	requireCode(t, "session/list", err, -32601)
	_, err = h.editor.Conn.ResumeSession(h.ctx, acpsdk.ResumeSessionRequest{SessionId: sidUnknown, Cwd: t.TempDir()})
	requireCode(t, "session/resume", err, -32601)
}

func TestSessionTitle(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"fix the bug":            "fix the bug",
		"  first line\nsecond":   "first line",
		strings.Repeat("é", 100): strings.Repeat("é", 79) + "…",
		"":                       "",
	} {
		if got := sessionTitle(in); got != want {
			t.Errorf("sessionTitle(%q) = %q, want %q", in, got, want)
		}
	}
}

// oneTurn is a codex run that starts (or continues) thread loadThreadID.
var oneTurn = playLines(
	`{"type":"thread.started","thread_id":"`+loadThreadID+`"}`, `{"type":"turn.started"}`,
	`{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"hi"}}`,
	`{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":0,"output_tokens":10,"reasoning_output_tokens":0}}`)

// TestSessionStoredFromNew is acpx's session flow: session/new in one agent
// process, each prompt in another that loads the session first. A session
// is stored from session/new on; loaded before its first turn it replays
// nothing and its first prompt starts a codex thread, which the next
// process continues.
func TestSessionStoredFromNew(t *testing.T) {
	codexHomeWithRollout(t)
	state := t.TempDir()
	be := &fakeBackend{script: oneTurn}
	cwd := t.TempDir()
	h1 := startAgentWith(t, Options{Backend: be, StateDir: state}, fakeeditor.Options{})
	sid := h1.newSession(t, cwd)

	h2 := startAgentWith(t, Options{Backend: be, StateDir: state}, fakeeditor.Options{})
	if _, err := h2.editor.Initialize(h2.ctx); err != nil {
		t.Fatal(err)
	}
	list, err := h2.editor.Conn.ListSessions(h2.ctx, acpsdk.ListSessionsRequest{Cwd: &cwd})
	if err != nil || len(list.Sessions) != 0 {
		t.Errorf("session/list offers a session without a turn: %+v, %v", list.Sessions, err)
	}
	load, err := h2.editor.Conn.LoadSession(h2.ctx, acpsdk.LoadSessionRequest{SessionId: sid, Cwd: cwd, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatalf("loading a session without a turn: %v", err)
	}
	if load.Modes == nil || load.Modes.CurrentModeId != acpsdk.SessionModeId(DefaultMode) {
		t.Errorf("modes = %+v", load.Modes)
	}
	if n := len(h2.editor.Updates()); n != 0 {
		t.Errorf("load of a session without a turn sent %d updates", n)
	}
	if _, err := h2.prompt(sid, "first"); err != nil {
		t.Fatal(err)
	}
	if runs := be.invocations(); len(runs) != 1 || runs[0].ThreadID != "" {
		t.Fatalf("first prompt: runs = %+v, want one new thread", runs)
	}

	h3 := startAgentWith(t, Options{Backend: be, StateDir: state}, fakeeditor.Options{})
	if _, err := h3.editor.Initialize(h3.ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := h3.editor.Conn.LoadSession(h3.ctx, acpsdk.LoadSessionRequest{SessionId: sid, Cwd: cwd, McpServers: []acpsdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	if _, err := h3.prompt(sid, "second"); err != nil {
		t.Fatal(err)
	}
	if runs := be.invocations(); len(runs) != 2 || runs[1].ThreadID != loadThreadID {
		t.Errorf("second prompt: runs = %+v, want the thread of the first continued", runs)
	}
}

// TestResumeSessionRestoresWithoutHistory: session/resume restores a stored
// session (thread, mode) as session/load does, but replays nothing.
func TestResumeSessionRestoresWithoutHistory(t *testing.T) {
	codexHomeWithRollout(t)
	state := t.TempDir()
	cwd := t.TempDir()
	st := sessionstore.New(state, nil)
	for _, rec := range []sessionstore.Record{
		{SessionID: sidHere, ThreadID: loadThreadID, Cwd: cwd, Mode: string(backend.ModeAuto), Title: "earlier"},
		{SessionID: sidGone, ThreadID: "no-such-thread", Cwd: cwd, Mode: string(backend.ModeAsk)},
	} {
		if err := st.Save(rec); err != nil {
			t.Fatal(err)
		}
	}
	be := &fakeBackend{script: oneTurn}
	h := startAgentWith(t, Options{Backend: be, StateDir: state}, fakeeditor.Options{})
	init, err := h.editor.Initialize(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if init.AgentCapabilities.SessionCapabilities.Resume == nil {
		t.Errorf("resume not advertised with a state dir")
	}
	resp, err := h.editor.Conn.ResumeSession(h.ctx, acpsdk.ResumeSessionRequest{SessionId: sidHere, Cwd: cwd})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Modes == nil || resp.Modes.CurrentModeId != acpsdk.SessionModeId(backend.ModeAuto) {
		t.Errorf("restored mode = %+v", resp.Modes)
	}
	if n := len(h.editor.Updates()); n != 0 {
		t.Errorf("resume sent %d updates, want no history", n)
	}
	if _, err := h.prompt(sidHere, "continue"); err != nil {
		t.Fatal(err)
	}
	if runs := be.invocations(); len(runs) != 1 || runs[0].ThreadID != loadThreadID || runs[0].Sandbox != "workspace-write" {
		t.Errorf("after resume: runs = %+v", runs)
	}

	// A session whose codex thread is gone fails now, not at its next prompt.
	_, err = h.editor.Conn.ResumeSession(h.ctx, acpsdk.ResumeSessionRequest{SessionId: sidGone, Cwd: cwd})
	var re *acpsdk.RequestError
	if !errors.As(err, &re) || re.Code != -32603 || !strings.Contains(re.Message, "no rollout") {
		t.Errorf("resume without a rollout: %v", err)
	}
}

// TestUnknownSessionIsResourceNotFound: every method that takes a session
// id answers ACP's -32002 for a well-formed id the agent does not have,
// which acpx answers by starting a new session; a closed session is one.
func TestUnknownSessionIsResourceNotFound(t *testing.T) {
	codexHomeWithRollout(t)
	h := startAgentWith(t, Options{Backend: &fakeBackend{script: oneTurn}, StateDir: t.TempDir()}, fakeeditor.Options{})
	cwd := t.TempDir()
	closed := h.newSession(t, cwd)
	if _, err := h.editor.Conn.CloseSession(h.ctx, acpsdk.CloseSessionRequest{SessionId: closed}); err != nil {
		t.Fatal(err)
	}
	check := func(id acpsdk.SessionId, errs map[string]error) {
		for method, err := range errs {
			var re *acpsdk.RequestError
			if !errors.As(err, &re) || re.Code != -32002 || !strings.HasPrefix(re.Message, "Resource not found") {
				t.Errorf("%s of %s: err = %v, want -32002 Resource not found", method, id, err)
			}
		}
	}
	check(sidUnknown, sessionMethods(h, sidUnknown, cwd))
	check(closed, liveSessionMethods(h, closed))
	// The closed session is still stored.
	if _, err := h.editor.Conn.LoadSession(h.ctx, acpsdk.LoadSessionRequest{SessionId: closed, Cwd: cwd, McpServers: []acpsdk.McpServer{}}); err != nil {
		t.Errorf("load of a closed session: %v", err)
	}
	for _, raw := range h.editor.Raw() {
		if err := acpschema.ValidateMessage(raw); err != nil {
			t.Errorf("agent message violates the ACP schema: %v\n%s", err, raw)
		}
	}
}

// TestMalformedSessionIDIsInvalidParams: an id newSessionID cannot have made
// is -32602 in every method (never a file-system error), and no file is
// read or written for it.
func TestMalformedSessionIDIsInvalidParams(t *testing.T) {
	codexHomeWithRollout(t)
	root := t.TempDir()
	state := filepath.Join(root, "a", "b", "state")
	var mu sync.Mutex
	var observed []string
	h := startAgentWith(t, Options{Backend: &fakeBackend{script: oneTurn}, StateDir: state, ObserveStored: func(p string) {
		mu.Lock()
		defer mu.Unlock()
		observed = append(observed, p)
	}}, fakeeditor.Options{})
	cwd := t.TempDir()
	h.newSession(t, cwd)
	for _, id := range malformedSessionIDs {
		for method, err := range sessionMethods(h, id, cwd) {
			var re *acpsdk.RequestError
			if !errors.As(err, &re) || re.Code != -32602 {
				t.Errorf("%s of %q: err = %v, want -32602", method, id, err)
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(observed) != 0 {
		t.Errorf("stored files read: %q", observed)
	}
	var files []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	})
	if len(files) != 1 || filepath.Dir(files[0]) != state {
		t.Errorf("files under the state dir's parents: %q, want only the new session's record", files)
	}
}

// sessionMethods calls every request that takes a session id with id and
// returns each method's error.
func sessionMethods(h *harness, id acpsdk.SessionId, cwd string) map[string]error {
	out := liveSessionMethods(h, id)
	_, out["session/resume"] = h.editor.Conn.ResumeSession(h.ctx, acpsdk.ResumeSessionRequest{SessionId: id, Cwd: cwd})
	_, out["session/load"] = h.editor.Conn.LoadSession(h.ctx, acpsdk.LoadSessionRequest{SessionId: id, Cwd: cwd, McpServers: []acpsdk.McpServer{}})
	return out
}

// liveSessionMethods calls the requests that need the session live.
func liveSessionMethods(h *harness, id acpsdk.SessionId) map[string]error {
	out := map[string]error{}
	_, out["session/prompt"] = h.prompt(id, "x")
	_, out["session/set_mode"] = h.editor.Conn.SetSessionMode(h.ctx, acpsdk.SetSessionModeRequest{SessionId: id, ModeId: "auto"})
	_, out["session/close"] = h.editor.Conn.CloseSession(h.ctx, acpsdk.CloseSessionRequest{SessionId: id})
	return out
}

// TestCancelOfUnknownSessionIsIgnored: session/cancel is a notification;
// for a session the agent does not have there is nothing to do or answer.
func TestCancelOfUnknownSessionIsIgnored(t *testing.T) {
	t.Parallel()
	a := NewAgent(Options{Backend: &fakeBackend{}, Logger: discardLogger()})
	for _, id := range []acpsdk.SessionId{sidUnknown, "../../x"} {
		if err := a.Cancel(context.Background(), acpsdk.CancelNotification{SessionId: id}); err != nil {
			t.Errorf("cancel of %q: %v", id, err)
		}
	}
}

// A turn that changes only the token totals is stored after its answer
// (persistSoon): what reads the store waits for that save, and so does the
// end of Serve; the first turn, which gives the session its thread and
// title, is stored before its answer.
func TestWarmTurnStoredAfterAnswer(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	be := &fakeBackend{script: func(_ context.Context, n int, _ execrun.Invocation, onLine func([]byte)) error {
		for _, l := range []string{
			`{"type":"thread.started","thread_id":"` + loadThreadID + `"}`, `{"type":"turn.started"}`,
			`{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"hi"}}`,
			fmt.Sprintf(`{"type":"turn.completed","usage":{"input_tokens":%d,"cached_input_tokens":0,"output_tokens":10,"reasoning_output_tokens":0}}`, 100*(n+1)),
		} {
			onLine([]byte(l))
		}
		return nil
	}}
	h := startAgentWith(t, Options{Backend: be, StateDir: state}, fakeeditor.Options{})
	sid := h.newSession(t, t.TempDir())
	store := sessionstore.New(state, nil)
	stored := func() sessionstore.Record {
		t.Helper()
		rec, err := store.Load(string(sid))
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	live := func() events.Usage {
		s, err := h.agent.session(sid)
		if err != nil {
			t.Fatal(err)
		}
		return s.record().ThreadUsage
	}

	if _, err := h.prompt(sid, "first"); err != nil {
		t.Fatal(err)
	}
	// Stored before the answer: no flush.
	first := stored()
	if first.ThreadID != loadThreadID || first.Title != "first" || first.ThreadUsage != live() {
		t.Fatalf("after the first turn: %+v (live usage %+v)", first, live())
	}
	for i := 0; i < 3; i++ {
		if _, err := h.prompt(sid, "again"); err != nil {
			t.Fatal(err)
		}
		h.agent.flushSaves()
		if rec := stored(); rec.ThreadUsage != live() || rec.ThreadUsage == first.ThreadUsage || rec.Title != "first" || rec.UpdatedAt.Before(first.UpdatedAt) {
			t.Fatalf("after warm turn %d: stored %+v, live usage %+v", i+1, rec, live())
		}
	}
	// Session/list reads what the last save wrote.
	if _, err := h.prompt(sid, "last"); err != nil {
		t.Fatal(err)
	}
	want := live()
	if _, err := h.editor.Conn.ListSessions(h.ctx, acpsdk.ListSessionsRequest{}); err != nil {
		t.Fatal(err)
	}
	if got := stored().ThreadUsage; got != want {
		t.Errorf("after session/list: stored usage %+v, want %+v", got, want)
	}

	// Once Serve is ending, saves are synchronous.
	h.agent.stopSaves()
	s, _ := h.agent.session(sid)
	s.mu.Lock()
	s.threadUsage.InputTokens++
	s.mu.Unlock()
	h.agent.persistSoon(s)
	if got := stored().ThreadUsage; got != live() {
		t.Errorf("save after stop: stored %+v, want %+v", got, live())
	}
}

func TestTurnEndedReportsNewThreadOrTitle(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		thread, title string // before the turn
		outThread     string
		want          bool
	}{
		{"first turn", "", "", "th1", true},
		{"first turn without a thread", "", "", "", true},
		{"warm turn", "th1", "t", "th1", false},
		{"warm turn, thread not repeated", "th1", "t", "", false},
		{"new thread", "th1", "t", "th2", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSession("sess_1", "/ws", nil, nil, events.Options{})
			s.threadID, s.title = tc.thread, tc.title
			if got, _ := s.turnEnded("prompt", events.Outcome{ThreadID: tc.outThread}); got != tc.want {
				t.Errorf("changed = %v, want %v", got, tc.want)
			}
		})
	}
}

// A delete right after a warm turn waits for that turn's record save, which
// would otherwise bring the deleted record back.
func TestDeleteWaitsForTheLastTurnsSave(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	be := &fakeBackend{script: playLines(
		`{"type":"thread.started","thread_id":"`+loadThreadID+`"}`, `{"type":"turn.started"}`,
		`{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"hi"}}`,
		`{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":0,"output_tokens":10,"reasoning_output_tokens":0}}`)}
	h := startAgentWith(t, Options{Backend: be, StateDir: state}, fakeeditor.Options{})
	sid := h.newSession(t, t.TempDir())
	if _, err := h.prompt(sid, "first"); err != nil {
		t.Fatal(err)
	}
	reached, release, waiting := make(chan struct{}), make(chan struct{}), make(chan struct{})
	h.agent.saves.mu.Lock()
	h.agent.saves.beforeSave = func() { close(reached); <-release }
	h.agent.saves.beforeWait = sync.OnceFunc(func() { close(waiting) })
	h.agent.saves.mu.Unlock()
	if _, err := h.prompt(sid, "again"); err != nil {
		t.Fatal(err)
	}
	<-reached // the warm turn's save is pending
	deleted := make(chan error, 1)
	go func() { deleted <- h.agent.DeleteSession(h.ctx, sid) }()
	select {
	case err := <-deleted:
		close(release)
		h.agent.flushSaves()
		t.Fatalf("delete returned (%v) while the turn's save was pending", err)
	case <-waiting:
	}
	close(release)
	if err := <-deleted; err != nil {
		t.Fatal(err)
	}
	h.agent.flushSaves()
	if _, err := sessionstore.New(state, nil).Load(string(sid)); !errors.Is(err, sessionstore.ErrNoSession) {
		t.Errorf("after delete: load = %v, want no session", err)
	}
}

// A save that races session/delete (a /rename, a mode change or /plan that
// held the session when the delete came, or a late turn save) does not
// bring the deleted record back; a save that began before the delete is
// removed with the record.
func TestDeletedSessionIsNotSavedAgain(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		save func(a *Agent, s *session)
	}{
		{"persist", func(a *Agent, s *session) { a.persist(s) }},
		{"persistSoon", func(a *Agent, s *session) { a.persistSoon(s); a.flushSaves() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state := t.TempDir()
			h := startAgentWith(t, Options{Backend: &fakeBackend{}, StateDir: state}, fakeeditor.Options{})
			sid := h.newSession(t, t.TempDir())
			s, err := h.agent.session(sid)
			if err != nil {
				t.Fatal(err)
			}
			s.mu.Lock()
			s.threadID, s.title = loadThreadID, "renamed"
			s.mu.Unlock()
			if err := h.agent.DeleteSession(h.ctx, sid); err != nil {
				t.Fatal(err)
			}
			tc.save(h.agent, s) // the racing request saves after the delete
			if _, err := sessionstore.New(state, nil).Load(string(sid)); !errors.Is(err, sessionstore.ErrNoSession) {
				t.Errorf("after delete and a late save: load = %v, want no session", err)
			}
		})
	}
}
