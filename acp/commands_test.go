package acp

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/backend/appserver"
	"github.com/codexacp/codexacp/backend/codexexec"
	"github.com/codexacp/codexacp/codex"
	codexapp "github.com/codexacp/codexacp/codex/appserver"
	"github.com/codexacp/codexacp/events"
	"github.com/codexacp/codexacp/internal/fakeeditor"
)

func TestParseCommand(t *testing.T) {
	t.Parallel()
	cases := []struct {
		text, name, args string
		ok               bool
	}{
		{"/status", "status", "", true},
		{"  /review focus on the parser \n", "review", "focus on the parser", true},
		{"/review-branch main", "review-branch", "main", true},
		{"/init\nmention the Makefile", "init", "mention the Makefile", true},
		{"/foo bar baz", "foo", "bar baz", true},
		{"/", "", "", false},
		{"/ status", "", "", false},
		{"/usr/bin/env is odd", "", "", false},
		{"status", "", "", false},
		{"please /review", "", "", false},
		{"$greet", "", "", false},
	}
	for _, tc := range cases {
		name, args, ok := parseCommand(tc.text)
		if name != tc.name || args != tc.args || ok != tc.ok {
			t.Errorf("parseCommand(%q) = %q, %q, %v; want %q, %q, %v", tc.text, name, args, ok, tc.name, tc.args, tc.ok)
		}
	}
}

func commandNames(cmds []command) string {
	var names []string
	for _, c := range cmds {
		names = append(names, c.name)
	}
	return strings.Join(names, " ")
}

// Each backend offers what it can run, and skills follow the builtin
// commands, less one that has a builtin's name.
func TestSessionCommandsPerBackend(t *testing.T) {
	t.Parallel()
	skills := []backend.Skill{{Name: "greet", Description: "Say hello", Scope: "repo"}, {Name: "review", Scope: "user"}}
	cases := []struct {
		name    string
		backend backend.Backend
		want    string
	}{
		{"exec", &codexexec.Backend{}, "status init review review-branch review-commit rename"},
		{"exec listing skills", &codexexec.Backend{ListSkills: func(context.Context, string) ([]backend.Skill, error) { return nil, nil }},
			"status init review review-branch review-commit skills rename greet"},
		{"app-server", appserver.New(codexapp.Options{}), "status init review review-branch review-commit compact goal skills mcp hooks plan undo rename greet"},
		{"exec that can cut threads", &codexexec.Backend{Revert: func(context.Context, string, []string) error { return nil }},
			"status init review review-branch review-commit undo rename"},
		{"plain backend", &fakeBackend{}, "status init rename"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := NewAgent(Options{Backend: tc.backend, Logger: discardLogger()})
			s := newSession("sess_1", t.TempDir(), nil, nil, events.Options{})
			s.skills = skills
			if got := commandNames(a.sessionCommands(s)); got != tc.want {
				t.Errorf("commands = %s\nwant       %s", got, tc.want)
			}
			for _, c := range a.sessionCommands(s) {
				if (c.local == nil) == (c.turn == nil) || c.description == "" {
					t.Errorf("command %s: want a description and exactly one of local and turn", c.name)
				}
			}
		})
	}
}

// cmdBackend is a backend with commands that records the turns and thread
// operations it gets; each turn completes at once.
type cmdBackend struct {
	backend.Unsupported
	feats     backend.Capabilities
	skillList []backend.Skill

	mu       sync.Mutex
	turns    []backend.Turn
	requests []string
	changed  func()
}

func (b *cmdBackend) Name() string { return "unknown" }

func (b *cmdBackend) Run(ctx context.Context, t backend.Turn, out backend.Output) error {
	b.mu.Lock()
	b.turns = append(b.turns, t)
	b.mu.Unlock()
	return playEvents(out,
		`{"type":"thread.started","thread_id":"th-1"}`,
		`{"type":"turn.started"}`,
		`{"type":"item.completed","item":{"id":"i0","type":"agent_message","text":"done"}}`,
		`{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":0,"output_tokens":2}}`)
}

// playEvents hands out the events of the given codex exec JSONL lines.
func playEvents(out backend.Output, lines ...string) error {
	for _, l := range lines {
		ev, err := events.Parse([]byte(l))
		if err != nil {
			return err
		}
		out.Event(ev)
	}
	return nil
}

func (b *cmdBackend) Capabilities() backend.Capabilities { return b.feats }

func (b *cmdBackend) Skills(context.Context, backend.Turn) ([]backend.Skill, error) {
	if !b.feats.Has(backend.Skills) {
		return nil, backend.ErrUnsupported
	}
	return b.skillList, nil
}

// request records a thread operation.
func (b *cmdBackend) request(op string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.requests = append(b.requests, op)
}

// threadOp records a thread operation, or answers ErrUnsupported without
// ThreadCommands, as a backend must.
func (b *cmdBackend) threadOp(op string) error {
	if !b.feats.Has(backend.ThreadCommands) {
		return backend.ErrUnsupported
	}
	b.request(op)
	return nil
}

func (b *cmdBackend) Goal(context.Context, backend.Turn) (*backend.Goal, error) {
	if err := b.threadOp("goal"); err != nil {
		return nil, err
	}
	return &backend.Goal{Objective: "ship it", Status: "active", TokensUsed: 7}, nil
}

func (b *cmdBackend) SetGoal(_ context.Context, _ backend.Turn, objective string) (*backend.Goal, error) {
	if err := b.threadOp("set goal " + objective); err != nil {
		return nil, err
	}
	return &backend.Goal{Objective: objective, Status: "active"}, nil
}

func (b *cmdBackend) ClearGoal(context.Context, backend.Turn) error { return b.threadOp("clear goal") }

func (b *cmdBackend) RenameThread(_ context.Context, _ backend.Turn, name string) error {
	return b.threadOp("rename " + name)
}

func (b *cmdBackend) MCPServerStatus(context.Context, backend.Turn) ([]backend.MCPServerStatus, error) {
	return nil, b.threadOp("mcp")
}

func (b *cmdBackend) WatchSkills(f func()) {
	b.mu.Lock()
	b.changed = f
	b.mu.Unlock()
}

func (b *cmdBackend) lastTurn(t *testing.T) backend.Turn {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.turns) == 0 {
		t.Fatal("no turn ran")
	}
	return b.turns[len(b.turns)-1]
}

func (b *cmdBackend) turnCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.turns)
}

// On exec a skill is listed for the session's cwd with ListSkills and runs
// as a codex exec whose prompt mentions it: codex exec gives the model the
// skill's instructions for the mention.
func TestExecSkillCommand(t *testing.T) {
	t.Parallel()
	var listedFor []string
	var mu sync.Mutex
	fake := &fakeBackend{script: playLines(`{"type":"thread.started","thread_id":"th_1"}`, `{"type":"turn.completed","usage":{}}`)}
	be := &codexexec.Backend{Runner: lineRunnerFunc(fake.runLines), Logger: discardLogger(),
		ListSkills: func(_ context.Context, cwd string) ([]backend.Skill, error) {
			mu.Lock()
			listedFor = append(listedFor, cwd)
			mu.Unlock()
			return []backend.Skill{{Name: "greet", Description: "Say hello", Path: cwd + "/.agents/skills/greet/SKILL.md", Scope: "repo"}}, nil
		}}
	h := startAgent(t, be, fakeeditor.Options{})
	cwd := t.TempDir()
	sid := h.newSession(t, cwd)
	if err := h.editor.WaitForUpdate(h.ctx, func(u acpsdk.SessionUpdate) bool { return u.AvailableCommandsUpdate != nil }); err != nil {
		t.Fatal(err)
	}
	cmds, _ := h.editor.Commands(sid)
	if got := commandNamesOf(cmds); got != "status init review review-branch review-commit skills rename greet" {
		t.Errorf("available commands = %s", got)
	}
	mu.Lock()
	if !slices.Equal(listedFor, []string{cwd}) {
		t.Errorf("skills listed for %q, want once for the session's cwd", listedFor)
	}
	mu.Unlock()
	if _, err := h.prompt(sid, "/greet the team"); err != nil {
		t.Fatal(err)
	}
	invs := fake.invocations()
	if len(invs) != 1 || invs[0].Prompt != "$greet the team" || invs[0].Cwd != cwd {
		t.Fatalf("codex exec runs = %+v, want one with the prompt $greet the team", invs)
	}
}

// commandNamesOf is the names of an available_commands_update's commands.
func commandNamesOf(cmds []acpsdk.AvailableCommand) string {
	names := make([]string, 0, len(cmds))
	for _, c := range cmds {
		names = append(names, c.Name)
	}
	return strings.Join(names, " ")
}

func TestCommandDispatch(t *testing.T) {
	t.Parallel()
	be := &cmdBackend{feats: backend.Review | backend.Compact | backend.Skills | backend.ThreadCommands | backend.Plan,
		skillList: []backend.Skill{{Name: "greet", Description: "Say hello", Path: "/w/.agents/skills/greet/SKILL.md", Scope: "repo"}}}
	h := startAgent(t, be, fakeeditor.Options{})
	sid := h.newSession(t, t.TempDir())

	// The commands arrive after the answer to session/new, skills included.
	if err := h.editor.WaitForUpdate(h.ctx, func(u acpsdk.SessionUpdate) bool { return u.AvailableCommandsUpdate != nil }); err != nil {
		t.Fatal(err)
	}
	cmds, _ := h.editor.Commands(sid)
	if got := commandNamesOf(cmds); got != "status init review review-branch review-commit compact goal skills mcp plan rename greet" {
		t.Errorf("available commands = %s", got)
	}

	cases := []struct {
		prompt  string
		turn    bool // a codex turn runs
		check   func(t *testing.T, tr backend.Turn)
		message string // in the agent's answer of a local command
		errCode int
	}{
		{prompt: "/status", message: "Backend: unknown"},
		{prompt: "/foo bar", turn: true, check: func(t *testing.T, tr backend.Turn) {
			if tr.Prompt != "/foo bar" || tr.Review != nil || tr.Skill != nil {
				t.Errorf("unknown command reached codex as %+v", tr)
			}
		}},
		{prompt: "/init mention the Makefile", turn: true, check: func(t *testing.T, tr backend.Turn) {
			if !strings.Contains(tr.Prompt, "write_text_file") || !strings.HasSuffix(tr.Prompt, "The user adds: mention the Makefile") {
				t.Errorf("init prompt = %q", tr.Prompt)
			}
		}},
		{prompt: "/review", turn: true, check: func(t *testing.T, tr backend.Turn) {
			if tr.Review == nil || *tr.Review != (backend.ReviewTarget{}) || tr.Prompt != "" {
				t.Errorf("review turn = %+v", tr)
			}
		}},
		{prompt: "/review only the parser", turn: true, check: func(t *testing.T, tr backend.Turn) {
			if tr.Review == nil || tr.Prompt != "only the parser" {
				t.Errorf("review turn = %+v", tr)
			}
		}},
		{prompt: "/review-branch main", turn: true, check: func(t *testing.T, tr backend.Turn) {
			if tr.Review == nil || tr.Review.Branch != "main" {
				t.Errorf("review turn = %+v", tr)
			}
		}},
		{prompt: "/review-commit HEAD~1", turn: true, check: func(t *testing.T, tr backend.Turn) {
			if tr.Review == nil || tr.Review.Commit != "HEAD~1" {
				t.Errorf("review turn = %+v", tr)
			}
		}},
		{prompt: "/review-branch", errCode: -32602},
		{prompt: "/review-commit --all", errCode: -32602},
		{prompt: "/compact", turn: true, check: func(t *testing.T, tr backend.Turn) {
			if !tr.Compact {
				t.Errorf("compact turn = %+v", tr)
			}
		}},
		{prompt: "/greet the team", turn: true, check: func(t *testing.T, tr backend.Turn) {
			if tr.Skill == nil || tr.Skill.Path != "/w/.agents/skills/greet/SKILL.md" || tr.Prompt != "$greet the team" {
				t.Errorf("skill turn = %+v", tr)
			}
		}},
		{prompt: "/goal", message: "Goal (active): ship it"},
		{prompt: "/skills", message: "/greet (repo): Say hello"},
		{prompt: "/rename", errCode: -32602},
		{prompt: "/rename Parser work", message: "Renamed the session to “Parser work”"},
	}
	for _, tc := range cases {
		t.Run(tc.prompt, func(t *testing.T) {
			before := be.turnCount()
			nUpdates := len(h.editor.Updates())
			resp, err := h.prompt(sid, tc.prompt)
			if tc.errCode != 0 {
				var rerr *acpsdk.RequestError
				if !errors.As(err, &rerr) || rerr.Code != tc.errCode {
					t.Fatalf("err = %v, want code %d", err, tc.errCode)
				}
				if be.turnCount() != before {
					t.Errorf("a turn ran")
				}
				return
			}
			if err != nil || resp.StopReason != acpsdk.StopReasonEndTurn {
				t.Fatalf("prompt: %+v, %v", resp, err)
			}
			if ran := be.turnCount() > before; ran != tc.turn {
				t.Fatalf("turn ran = %v, want %v", ran, tc.turn)
			}
			if tc.turn {
				tc.check(t, be.lastTurn(t))
				return
			}
			var text string
			for _, u := range h.editor.Updates()[nUpdates:] {
				if c := u.Update.AgentMessageChunk; c != nil && c.Content.Text != nil {
					text += c.Content.Text.Text
				}
			}
			if !strings.Contains(text, tc.message) {
				t.Errorf("answer = %q, want it to contain %q", text, tc.message)
			}
		})
	}

	be.mu.Lock()
	requests := strings.Join(be.requests, " ")
	be.mu.Unlock()
	if requests != "goal rename Parser work" {
		t.Errorf("thread requests = %s", requests)
	}
	var title string
	for _, u := range h.editor.Updates() {
		if i := u.Update.SessionInfoUpdate; i != nil && i.Title != nil {
			title = *i.Title
		}
	}
	if title != "Parser work" {
		t.Errorf("session_info_update title = %q", title)
	}

	// Codex reports changed skills: the session gets its commands again.
	be.mu.Lock()
	be.skillList = append(be.skillList, backend.Skill{Name: "lint", Description: "Lint it", Scope: "user"})
	changed := be.changed
	be.mu.Unlock()
	changed()
	err := h.editor.WaitForUpdate(h.ctx, func(u acpsdk.SessionUpdate) bool {
		c := u.AvailableCommandsUpdate
		return c != nil && slices.ContainsFunc(c.AvailableCommands, func(c acpsdk.AvailableCommand) bool {
			return c.Name == "lint" && c.Description == "Lint it (user skill)"
		})
	})
	if err != nil {
		t.Errorf("no update with the new skill: %v", err)
	}
}

// /status answers from what the agent knows, without codex.
func TestStatusCommand(t *testing.T) {
	t.Parallel()
	be := &fakeBackend{script: playLines(fixtureLines(t, "agent_message_reasoning.jsonl")...)}
	h := startAgentWith(t, Options{Backend: be, ModelInfo: func() ModelInfo {
		return ModelInfo{ContextWindow: 272000,
			Models: []codex.Model{{Slug: "gpt-5.5", Name: "GPT-5.5", Efforts: []string{"low", "medium"}, DefaultEffort: "medium"}}}
	}, CodexVersion: func() string { return codex.NewestTested }}, fakeeditor.Options{})
	sid := h.newSession(t, t.TempDir())
	if _, err := h.prompt(sid, "hello"); err != nil {
		t.Fatal(err)
	}
	n := len(h.editor.Updates())
	if _, err := h.prompt(sid, "/status"); err != nil {
		t.Fatal(err)
	}
	if len(be.invocations()) != 1 {
		t.Errorf("/status ran codex")
	}
	var text string
	for _, u := range h.editor.Updates()[n:] {
		if c := u.Update.AgentMessageChunk; c != nil && c.Content.Text != nil {
			text += c.Content.Text.Text
		}
	}
	for _, want := range []string{"Model: gpt-5.5", "Reasoning effort: medium", "Mode: ask", "Backend: unknown",
		"Codex thread: 01a20593-b01a-7803-bc79-f76fd9913eae", "100 input (20 cached), 10 output (3 reasoning); context window 272000",
		"Codex version: " + codex.NewestTested + "\n- Workspace"} { // no note for a tested codex
		if !strings.Contains(text, want) {
			t.Errorf("/status lacks %q:\n%s", want, text)
		}
	}
}

// /status says when codex is outside the tested range, and how to report
// for a newer one.
func TestStatusCommandUntestedCodex(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ version, want string }{
		{"0.99.1", "- Codex version: 0.99.1\n  - codex 0.99.1 is older than any codex codexacp was tested with (" + codex.TestedRange() + "): app-server features may be missing"},
		{"99.0.0", "- Codex version: 99.0.0\n  - codex 99.0.0 is newer than any codex codexacp was tested with (" + codex.TestedRange() + "): it is untested; if something goes wrong, please report it (README, \"Reporting a bug\")"},
		{"", "- Codex version: unknown\n- Workspace"},
	} {
		h := startAgentWith(t, Options{Backend: &fakeBackend{}, CodexVersion: func() string { return tt.version }}, fakeeditor.Options{})
		sid := h.newSession(t, t.TempDir())
		if _, err := h.prompt(sid, "/status"); err != nil {
			t.Fatal(err)
		}
		var text string
		for _, u := range h.editor.Updates() {
			if c := u.Update.AgentMessageChunk; c != nil && c.Content.Text != nil {
				text += c.Content.Text.Text
			}
		}
		if !strings.Contains(text, tt.want) {
			t.Errorf("codex %q: /status lacks %q:\n%s", tt.version, tt.want, text)
		}
	}
}

// gatedSkills lists skills as cmdBackend does, except that its second
// listing (the first refresh after codex reported a change) waits for gate
// and answers the list as it was before the change.
type gatedSkills struct {
	*cmdBackend
	before, after []backend.Skill
	calls         atomic.Int32
	started, gate chan struct{}
}

func (b *gatedSkills) Skills(context.Context, backend.Turn) ([]backend.Skill, error) {
	switch b.calls.Add(1) {
	case 1:
		return b.before, nil
	case 2:
		close(b.started)
		<-b.gate
		return b.before, nil
	}
	return b.after, nil
}

// Two refreshes of a session's skills run one after the other: the newer
// list is the one the editor is left with, not the slower older one.
func TestSkillRefreshesSerialized(t *testing.T) {
	t.Parallel()
	greet := backend.Skill{Name: "greet", Scope: "repo"}
	be := &gatedSkills{cmdBackend: &cmdBackend{feats: backend.Skills}, before: []backend.Skill{greet},
		after: []backend.Skill{greet, {Name: "lint", Scope: "user"}}, started: make(chan struct{}), gate: make(chan struct{})}
	h := startAgent(t, be, fakeeditor.Options{})
	sid := h.newSession(t, t.TempDir())
	if _, err := h.editor.WaitForCommands(h.ctx, sid); err != nil {
		t.Fatal(err)
	}
	changed := be.changed
	first := make(chan struct{})
	go func() { defer close(first); changed() }()
	<-be.started
	second := make(chan struct{})
	go func() { defer close(second); changed() }()
	close(be.gate)
	<-first
	<-second
	count := func() int {
		n := 0
		for _, u := range h.editor.AllUpdates() {
			if u.Update.AvailableCommandsUpdate != nil {
				n++
			}
		}
		return n
	}
	if err := h.editor.WaitForUpdate(h.ctx, func(acpsdk.SessionUpdate) bool { return count() == 3 }); err != nil {
		t.Fatal(err)
	}
	cmds, _ := h.editor.Commands(sid)
	if !slices.ContainsFunc(cmds, func(c acpsdk.AvailableCommand) bool { return c.Name == "lint" }) {
		t.Errorf("the editor was left with the older skills: %+v", cmds)
	}
	s, err := h.agent.session(sid)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	n := len(s.skills)
	s.mu.Unlock()
	if n != 2 {
		t.Errorf("the session keeps %d skills, want the newer 2", n)
	}
}

// Skills changing while a session is being opened wait for its
// announcement: nothing about it reaches the editor before the answer to
// session/new, and the session is not refreshed a second time needlessly.
func TestSkillsChangedBeforeAnnouncement(t *testing.T) {
	t.Parallel()
	be := &gatedSkills{cmdBackend: &cmdBackend{feats: backend.Skills}}
	h := startAgent(t, be, fakeeditor.Options{})
	s := newSession(newSessionID(), t.TempDir(), nil, nil, events.Options{})
	h.agent.addSession(s) // live, but its session/new not answered yet
	be.changed()
	// Refreshing would have listed the skills, then sent them.
	if n := be.calls.Load(); n != 0 {
		t.Errorf("skills listed %d times for a session not announced yet", n)
	}
}

// slowSkills lists skills as cmdBackend does once gate is closed.
type slowSkills struct {
	*cmdBackend
	gate chan struct{}
}

func (b *slowSkills) Skills(ctx context.Context, t backend.Turn) ([]backend.Skill, error) {
	<-b.gate
	return b.cmdBackend.Skills(ctx, t)
}

// The SDK cancels a session/prompt's context when another session/prompt
// for the session arrives. A slash command waiting for the session's
// commands (its skills still being listed) must not take that for the end
// of the wait and go to codex as text: only session/cancel cancels it.
func TestSlashCommandSurvivesAnotherPrompt(t *testing.T) {
	// Not parallel: waitingForCommands counts the whole process's goroutines.
	be := &slowSkills{gate: make(chan struct{}), cmdBackend: &cmdBackend{feats: backend.Skills,
		skillList: []backend.Skill{{Name: "greet", Description: "Say hello", Path: "/w/.agents/skills/greet/SKILL.md", Scope: "repo"}}}}
	h := startAgent(t, be, fakeeditor.Options{})
	sid := h.newSession(t, t.TempDir())
	skill := h.promptInBackground(sid, "/greet Ada")
	for waitingForCommands() != 1 {
		runtime.Gosched()
	}
	// Another prompt: the SDK cancels the first one's context before it
	// hands this one to the agent, which refuses it (audio) at once. The
	// cancel wakes a wait that heeds it synchronously, so by the answer a
	// wait that still blocks ignored it.
	_, err := h.editor.Conn.Prompt(h.ctx, acpsdk.PromptRequest{SessionId: sid,
		Prompt: []acpsdk.ContentBlock{acpsdk.AudioBlock("AAAA", "audio/wav")}})
	if err == nil {
		t.Fatal("an audio prompt was accepted")
	}
	if n := waitingForCommands(); n != 1 {
		t.Errorf("the slash command stopped waiting for the session's commands when another prompt came (%d waiting)", n)
	}
	close(be.gate)
	if a := <-skill; a.err != nil || a.resp.StopReason != acpsdk.StopReasonEndTurn {
		t.Errorf("the slash command answered %+v, %v; want end_turn", a.resp, a.err)
	}
	tr := be.lastTurn(t)
	if tr.Skill == nil || tr.Prompt != "$greet Ada" {
		t.Errorf("the skill did not run; codex got %+v", tr)
	}
}

// waitingForCommands counts the goroutines blocked waiting for a session's
// commands announcement (session.commandsAnnounced): a goroutine woken
// from that wait is runnable, not blocked, from the moment it is woken.
func waitingForCommands() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		header, _, _ := strings.Cut(g, "\n")
		if strings.Contains(header, "[select") && strings.Contains(g, "acp.(*session).commandsAnnounced(") {
			count++
		}
	}
	return count
}
