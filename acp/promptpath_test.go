package acp

import (
	"context"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/internal/fakeeditor"
)

// What a prompt waits for (issue 24, point 1): a turn needs its thread,
// not the skills listing, so only a "/name" prompt whose name is unknown
// waits for the listing, and no session waits for another's.

// blockedSkills starts an agent whose backend's skills listing blocks until
// the returned release is called (at the latest when the test ends, before
// the agent stops: Serve waits for the announcements in progress).
func blockedSkills(t *testing.T) (*harness, *slowSkills, func()) {
	t.Helper()
	be := &slowSkills{gate: make(chan struct{}), cmdBackend: &cmdBackend{feats: backend.Skills,
		skillList: []backend.Skill{{Name: "greet", Description: "Say hello", Path: "/w/.agents/skills/greet/SKILL.md", Scope: "repo"}}}}
	h := startAgent(t, be, fakeeditor.Options{})
	released := false
	release := func() {
		if !released {
			released = true
			close(be.gate)
		}
	}
	t.Cleanup(release) // runs before startAgent's: the agent can stop
	return h, be, release
}

// awaitWaiting returns once one prompt waits for the session's commands,
// or fails the test after a generous bound (no prompt waits).
func awaitWaiting(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for waitingForCommands() != 1 {
		if time.Now().After(deadline) {
			t.Fatal("no prompt waits for the skills listing after 30 s")
		}
		runtime.Gosched()
	}
}

// awaitAnswer is a prompt's answer, or a test failure after a generous
// bound (the prompt hung).
func awaitAnswer(t *testing.T, ch <-chan promptResult, what string) promptResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: no answer after 30 s", what)
		return promptResult{}
	}
}

// A prompt that is not a slash command runs its turn while the session's
// skills are still being listed; the commands go out once they are.
func TestPlainPromptDoesNotWaitForSkills(t *testing.T) {
	t.Parallel()
	h, be, release := blockedSkills(t)
	sid := h.newSession(t, t.TempDir())
	r := awaitAnswer(t, h.promptInBackground(sid, "hello"), "a plain prompt while the skills are listed")
	if r.err != nil || r.resp.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("the prompt answered %+v, %v; want end_turn", r.resp, r.err)
	}
	if tr := be.lastTurn(t); tr.Prompt != "hello" || tr.Skill != nil {
		t.Errorf("codex got %+v, want the prompt as typed", tr)
	}
	if _, ok := h.editor.Commands(sid); ok {
		t.Error("the commands were announced before the skills were listed")
	}
	release()
	cmds, err := h.editor.WaitForCommands(h.ctx, sid)
	if err != nil {
		t.Fatal(err)
	}
	if got := commandNamesOf(cmds); got != "status init skills rename greet" {
		t.Errorf("commands announced after the turn = %q", got)
	}
}

// A "/name" prompt whose name is not known yet waits for the listing, and
// runs the skill once the listing has it; a builtin command does not wait.
func TestSkillPromptWaitsForListing(t *testing.T) {
	// Not parallel: waitingForCommands counts the whole process's goroutines.
	h, be, release := blockedSkills(t)
	sid := h.newSession(t, t.TempDir())
	status := awaitAnswer(t, h.promptInBackground(sid, "/status"), "/status while the skills are listed")
	if status.err != nil || status.resp.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("/status answered %+v, %v", status.resp, status.err)
	}
	skill := h.promptInBackground(sid, "/greet Ada")
	awaitWaiting(t)
	if n := be.turnCount(); n != 0 {
		t.Fatalf("%d turns ran before the skills were listed", n)
	}
	release()
	r := awaitAnswer(t, skill, "/greet after the listing")
	if r.err != nil || r.resp.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("/greet answered %+v, %v; want end_turn", r.resp, r.err)
	}
	if tr := be.lastTurn(t); tr.Skill == nil || tr.Prompt != "$greet Ada" {
		t.Errorf("the skill did not run; codex got %+v", tr)
	}
}

// /skills shows the listing: it waits for it rather than answer that there
// are no skills.
func TestSkillsCommandWaitsForListing(t *testing.T) {
	// Not parallel: waitingForCommands counts the whole process's goroutines.
	h, _, release := blockedSkills(t)
	sid := h.newSession(t, t.TempDir())
	list := h.promptInBackground(sid, "/skills")
	awaitWaiting(t)
	release()
	r := awaitAnswer(t, list, "/skills after the listing")
	if r.err != nil || r.resp.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("/skills answered %+v, %v; want end_turn", r.resp, r.err)
	}
	text := ""
	for _, u := range h.editor.Updates() {
		if c := u.Update.AgentMessageChunk; c != nil && c.Content.Text != nil {
			text += c.Content.Text.Text
		}
	}
	if !strings.Contains(text, "/greet") {
		t.Errorf("/skills answered %q, want the listed skill", text)
	}
}

// A session/cancel ends a "/name" prompt's wait for the listing: it
// answers cancelled and nothing runs.
func TestCancelEndsSkillWait(t *testing.T) {
	// Not parallel: waitingForCommands counts the whole process's goroutines.
	h, be, _ := blockedSkills(t)
	sid := h.newSession(t, t.TempDir())
	skill := h.promptInBackground(sid, "/greet Ada")
	awaitWaiting(t)
	if err := h.editor.Conn.Cancel(h.ctx, acpsdk.CancelNotification{SessionId: sid}); err != nil {
		t.Fatal(err)
	}
	r := awaitAnswer(t, skill, "/greet cancelled while the skills are listed")
	if r.err != nil || r.resp.StopReason != acpsdk.StopReasonCancelled {
		t.Errorf("/greet answered %+v, %v; want cancelled", r.resp, r.err)
	}
	if n := be.turnCount(); n != 0 {
		t.Errorf("codex ran %d times, want 0", n)
	}
}

// Opening a session, and setting its mode, waits for no other session's
// commands announcement (nor its own).
func TestSessionsDoNotWaitForAnnouncements(t *testing.T) {
	t.Parallel()
	h, _, release := blockedSkills(t)
	first := h.newSession(t, t.TempDir())
	ctx, cancel := context.WithTimeout(h.ctx, 30*time.Second)
	defer cancel()
	second, err := h.editor.Conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatalf("the second session/new, while the first session's skills are listed: %v", err)
	}
	if _, err := h.editor.Conn.SetSessionMode(ctx, acpsdk.SetSessionModeRequest{SessionId: second.SessionId, ModeId: "read-only"}); err != nil {
		t.Errorf("session/set_mode while the skills are listed: %v", err)
	}
	release()
	for _, sid := range []acpsdk.SessionId{first, second.SessionId} {
		if _, err := h.editor.WaitForCommands(h.ctx, sid); err != nil {
			t.Errorf("session %s: %v", sid, err)
		}
	}
}

// startCounting counts Start calls.
type startCounting struct {
	*cmdBackend
	starts atomic.Int32
}

func (b *startCounting) Start() { b.starts.Add(1) }

// The backend starts what every session needs when the editor first opens
// a session, once: not for an editor that only initializes (or lists
// sessions).
func TestBackendStartsWithFirstSession(t *testing.T) {
	t.Parallel()
	be := &startCounting{cmdBackend: &cmdBackend{}}
	h := startAgentWith(t, Options{Backend: be, StateDir: t.TempDir()}, fakeeditor.Options{})
	if _, err := h.editor.Initialize(h.ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := h.editor.Conn.ListSessions(h.ctx, acpsdk.ListSessionsRequest{}); err != nil {
		t.Fatal(err)
	}
	if n := be.starts.Load(); n != 0 {
		t.Errorf("started %d times before any session", n)
	}
	h.newSession(t, t.TempDir())
	h.newSession(t, t.TempDir())
	if n := be.starts.Load(); n != 1 {
		t.Errorf("started %d times for two sessions, want once", n)
	}
}
