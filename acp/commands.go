package acp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/codex"
	"github.com/codexacp/codexacp/internal/recovery"
)

// command is a slash command the agent offers in available_commands_update.
// Adding a command is adding one entry to builtinCommands.
type command struct {
	name        string
	description string
	hint        string               // what to type after the name; "": it takes nothing
	needs       backend.Capabilities // what the backend must offer; 0: nothing
	// Exactly one of local and turn is set. local answers at once, without
	// a model request and without disturbing a running turn: its text is
	// shown as the agent's message. turn makes the codex turn the command
	// runs, shown like any prompt's.
	local func(a *Agent, ctx context.Context, s *session, args string) (string, error)
	turn  func(s *session, args string) (turnSpec, error)
	// listing: its answer shows the skills listing, so it waits for it
	// (awaitSkills) as an unknown name does.
	listing bool
}

// turnSpec is what a command's turn runs.
type turnSpec struct {
	prompt  string // what codex reads (review: extra instructions)
	review  *backend.ReviewTarget
	compact bool
	skill   *backend.Skill
	plan    bool // enter plan mode first (planCommand)
}

// apply makes t the command's turn.
func (c turnSpec) apply(t *backend.Turn) {
	t.Prompt, t.Review, t.Compact, t.Skill = c.prompt, c.review, c.compact, c.skill
}

// builtinCommands are the agent's own commands, in the order the editor
// lists them. Skills follow them (skillCommand).
var builtinCommands = []command{
	{name: "status", description: "Show the model, reasoning effort, mode, backend, codex thread, token usage and codex version (no model request)",
		local: (*Agent).statusCommand},
	{name: "init", description: "Create an AGENTS.md for this repository, written through the editor as an edit you review",
		hint: "what else AGENTS.md should cover (optional)", turn: initTurn},
	{name: "review", description: "Ask codex to review the working tree (staged, unstaged and untracked changes); with text, review what it says",
		hint: "what to review (optional)", needs: backend.Review, turn: reviewTurn},
	{name: "review-branch", description: "Ask codex to review the changes of this branch against a base branch",
		hint: "base branch", needs: backend.Review, turn: reviewBranchTurn},
	{name: "review-commit", description: "Ask codex to review the changes a commit introduced",
		hint: "commit", needs: backend.Review, turn: reviewCommitTurn},
	{name: "compact", description: "Summarise the conversation so far to free codex's context window",
		needs: backend.Compact, turn: func(*session, string) (turnSpec, error) { return turnSpec{compact: true}, nil }},
	{name: "goal", description: "Show the thread's goal; with text, set it as the goal codex works towards; `clear` removes it",
		hint: "objective, or clear (empty: show)", needs: backend.ThreadCommands, local: (*Agent).goalCommand},
	{name: "skills", description: "List the skills codex has for this workspace (each is a command too)",
		needs: backend.Skills, local: (*Agent).skillsCommand, listing: true},
	{name: "mcp", description: "List the MCP servers codex uses in this session and their status; `login <server>` signs in to one that needs it",
		hint: "login <server> (empty: list)", needs: backend.ThreadCommands, local: (*Agent).mcpCommand},
	{name: "hooks", description: "List the codex hooks of this workspace and whether they are trusted; `trust` asks you about each untrusted one",
		hint: "trust, or trust <number> (empty: list)", needs: backend.Hooks, local: (*Agent).hooksCommand},
	{name: "plan", description: "Switch to plan mode: codex explores and proposes a plan, then asks before implementing it; with text, plan that task now",
		hint: "task to plan (optional)", needs: backend.Plan, turn: planTurn},
	{name: "undo", description: "Take back the last turn (with a number, the last N): its edits, the shell's too, are restored through the editor, and codex forgets the turn",
		hint: "number of turns (optional, default 1)", needs: backend.Undo, local: (*Agent).undoCommand},
	{name: "rename", description: "Rename this session",
		hint: "new title", local: (*Agent).renameCommand},
}

// parseCommand splits "/name args" off a prompt's text. ok is false for
// text that is not a slash command.
func parseCommand(text string) (name, args string, ok bool) {
	rest, found := strings.CutPrefix(strings.TrimLeftFunc(text, unicode.IsSpace), "/")
	if !found {
		return "", "", false
	}
	end := strings.IndexFunc(rest, unicode.IsSpace)
	if end < 0 {
		end = len(rest)
	}
	name, args = rest[:end], strings.TrimSpace(rest[end:])
	if name == "" || strings.Contains(name, "/") {
		return "", "", false // "/ x", "/usr/bin/env": not a command
	}
	return name, args, true
}

// sessionCommands are the commands offered in the session: the builtin
// ones the backend supports, then the session's skills.
func (a *Agent) sessionCommands(s *session) []command {
	var cmds []command
	for _, c := range builtinCommands {
		if a.can(c.needs) {
			cmds = append(cmds, c)
		}
	}
	if !a.can(backend.Skills) {
		return cmds
	}
	s.mu.Lock()
	skills := s.skills
	s.mu.Unlock()
	for _, sk := range skills {
		if slices.ContainsFunc(cmds, func(c command) bool { return c.name == sk.Name }) {
			a.log.Debug("skill not offered as a command: a command has its name", "skill", sk.Name)
			continue
		}
		cmds = append(cmds, skillCommand(sk))
	}
	return cmds
}

// skillCommand runs a skill the way codex does when the user names it: the
// text mentions it ($name) and the input carries the skill item.
func skillCommand(sk backend.Skill) command {
	desc := sk.Description
	if desc == "" {
		desc = "Run the " + sk.Name + " skill"
	}
	if sk.Scope != "" {
		desc += " (" + sk.Scope + " skill)"
	}
	return command{name: sk.Name, description: desc, hint: "what the skill should work on (optional)",
		turn: func(_ *session, args string) (turnSpec, error) {
			return turnSpec{prompt: strings.TrimSpace("$" + sk.Name + " " + args), skill: &sk}, nil
		}}
}

// findCommand is the session's command named name.
func (a *Agent) findCommand(s *session, name string) (command, bool) {
	for _, c := range a.sessionCommands(s) {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// availableCommands is the session's commands as ACP lists them.
func (a *Agent) availableCommands(s *session) []acpsdk.AvailableCommand {
	list := []acpsdk.AvailableCommand{}
	for _, c := range a.sessionCommands(s) {
		ac := acpsdk.AvailableCommand{Name: c.name, Description: c.description}
		if c.hint != "" {
			ac.Input = &acpsdk.AvailableCommandInput{Unstructured: &acpsdk.UnstructuredCommandInput{Hint: c.hint}}
		}
		list = append(list, ac)
	}
	return list
}

// skillsTimeout bounds listing a session's skills, and how long a "/name"
// prompt waits for the listing (awaitSkills).
const skillsTimeout = 30 * time.Second

// announceCommands sends the session's commands once the answer to the
// request that made it live (ctx's: session/new, load or resume) has been
// written — an update before it would name a session the editor does not
// know yet; the SDK ends a request's context right after writing its
// answer. Nothing else waits for it: a turn needs its thread, not the
// skills, so the announcement may come before, among or after a turn's
// updates (ACP lets available_commands_update come at any time: a client
// keeps the latest list); only a "/name" prompt whose name is not known
// yet, and /skills, wait for it (awaitSkills).
func (a *Agent) announceCommands(ctx context.Context, s *session) {
	ready := make(chan struct{})
	s.mu.Lock()
	s.commandsReady = ready
	s.mu.Unlock()
	go func() {
		defer close(ready)
		defer recovery.Recover(a.log, "listing the session's commands", nil)
		<-ctx.Done()
		a.refreshCommands(context.WithoutCancel(ctx), s)
	}()
}

// awaitSkills waits, for a prompt "/name" whose name the session does not
// offer (yet), until the session's skills have been listed and its commands
// sent: the name may be a skill's; likewise for /skills, which shows the
// listing. It returns at once when the name is another known command's,
// when the backend has no skills, or when the listing is over; otherwise
// when ctx ends (a session/cancel) or after skillsTimeout.
func (a *Agent) awaitSkills(ctx context.Context, s *session, name string) {
	if !a.can(backend.Skills) {
		return
	}
	if c, ok := a.findCommand(s, name); ok && !c.listing {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, skillsTimeout)
	defer cancel()
	s.commandsAnnounced(ctx)
}

// refreshCommands lists the session's skills again, where the backend has
// them, and sends the session's commands; one at a time per session.
func (a *Agent) refreshCommands(ctx context.Context, s *session) {
	s.refreshing.Lock()
	defer s.refreshing.Unlock()
	if a.can(backend.Skills) {
		ctx, cancel := context.WithTimeout(ctx, skillsTimeout)
		t, _ := a.turn(ctx, s, "")
		skills, err := a.opts.Backend.Skills(ctx, t)
		cancel()
		if err != nil {
			a.log.Warn("cannot list codex's skills; they are not offered as commands", "session", s.id, "err", err)
		} else {
			s.mu.Lock()
			s.skills = skills
			s.mu.Unlock()
		}
	}
	a.sendUpdate(ctx, s.id, acpsdk.SessionUpdate{AvailableCommandsUpdate: &acpsdk.SessionAvailableCommandsUpdate{
		SessionUpdate:     "available_commands_update",
		AvailableCommands: a.availableCommands(s),
	}})
}

// skillsChanged is codex saying skills changed on disk: every session
// gets its commands again, after its first announcement — never before the
// answer that made it live. A session not announcing yet is left alone: its
// announcement lists the skills as they are now.
func (a *Agent) skillsChanged() {
	a.mu.Lock()
	all := make([]*session, 0, len(a.sessions))
	for _, s := range a.sessions {
		all = append(all, s)
	}
	a.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range all {
		s.mu.Lock()
		announcing := s.commandsReady != nil
		s.mu.Unlock()
		if !announcing {
			continue
		}
		wg.Go(func() {
			defer recovery.Recover(a.log, "refreshing the session's commands", nil)
			ctx, cancel := context.WithTimeout(context.Background(), skillsTimeout)
			s.commandsAnnounced(ctx)
			err := ctx.Err()
			cancel()
			if err != nil {
				a.log.Warn("skills changed, but the session's commands were never sent; not refreshed", "session", s.id)
				return
			}
			a.refreshCommands(context.Background(), s)
		})
	}
	wg.Wait()
}

// commandsAnnounced waits until the session's commands have been sent.
func (s *session) commandsAnnounced(ctx context.Context) {
	s.mu.Lock()
	ready := s.commandsReady
	s.mu.Unlock()
	awaitClosed(ctx, ready)
}

// awaitClosed waits until ready is closed (at once when it is nil: nothing
// to wait for) or ctx ends.
func awaitClosed(ctx context.Context, ready <-chan struct{}) {
	if ready == nil {
		return
	}
	select {
	case <-ready:
	case <-ctx.Done():
	}
}

// runLocal answers a local command: its text as the agent's message.
func (a *Agent) runLocal(ctx context.Context, s *session, c command, args string) (acpsdk.PromptResponse, error) {
	text, err := c.local(a, ctx, s, args)
	if err != nil && ctx.Err() != nil {
		// session/cancel stopped the command (a sign-in it waited for).
		a.log.Info("command cancelled", "session", s.id, "command", c.name)
		return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonCancelled}, nil
	}
	if err != nil {
		var rerr *acpsdk.RequestError
		if errors.As(err, &rerr) {
			return acpsdk.PromptResponse{}, rerr
		}
		return acpsdk.PromptResponse{}, turnError(fmt.Sprintf("/%s: %v", c.name, err))
	}
	a.log.Info("command answered", "session", s.id, "command", c.name)
	a.sendUpdate(ctx, s.id, acpsdk.UpdateAgentMessageText(text))
	return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonEndTurn}, nil
}

// initPrompt asks codex for AGENTS.md through the file tools, so that the
// editor shows it as an edit to review (codex's own /init writes it with
// its patch tool, which codexacp does not offer).
const initPrompt = `Generate a file named AGENTS.md in the workspace root that serves as a contributor guide for this repository: ` +
	`project structure and module organisation, build, test and development commands, coding style and naming ` +
	`conventions, testing guidelines, commit and pull request guidelines, and anything else an agent working here must know. ` +
	`Look at the repository first (its files, build scripts, README, existing docs). Keep it concise (200–400 words), ` +
	`with short sections and concrete commands and paths from this repository. ` +
	`Write the file with the write_text_file tool (create it; if AGENTS.md exists already, read it and improve it with edit_text_file instead), ` +
	`never with a shell command.`

func initTurn(_ *session, args string) (turnSpec, error) {
	p := initPrompt
	if args != "" {
		p += "\n\nThe user adds: " + args
	}
	return turnSpec{prompt: p}, nil
}

func reviewTurn(_ *session, args string) (turnSpec, error) {
	return turnSpec{prompt: args, review: &backend.ReviewTarget{}}, nil
}

func reviewBranchTurn(_ *session, args string) (turnSpec, error) {
	branch, ok := oneWord(args)
	if !ok {
		return turnSpec{}, invalidParams("/review-branch needs the base branch to compare with, e.g. /review-branch main")
	}
	return turnSpec{review: &backend.ReviewTarget{Branch: branch}}, nil
}

func reviewCommitTurn(_ *session, args string) (turnSpec, error) {
	sha, ok := oneWord(args)
	if !ok {
		return turnSpec{}, invalidParams("/review-commit needs the commit to review (a hash or a ref such as HEAD~1), e.g. /review-commit HEAD")
	}
	return turnSpec{review: &backend.ReviewTarget{Commit: sha}}, nil
}

// oneWord is args when it is one word that is not an option.
func oneWord(args string) (string, bool) {
	if args == "" || strings.ContainsFunc(args, unicode.IsSpace) || strings.HasPrefix(args, "-") {
		return "", false
	}
	return args, true
}

// statusCommand describes the session without a model request (the usage
// limits are asked of a running app-server).
func (a *Agent) statusCommand(ctx context.Context, s *session, _ string) (string, error) {
	var b strings.Builder
	model, effort := "codex's default", "the model's default"
	m, ok := a.sessionModel(s)
	if ok {
		model = m.Slug
		if e := a.sessionEffort(s, m); e != "" {
			effort = e
		}
	} else if d := firstNonEmpty(a.opts.DefaultModel, s.user.Model); d != "" {
		model = d
	}
	if d := firstNonEmpty(a.opts.DefaultEffort, s.user.ReasoningEffort); d != "" && effort == "the model's default" {
		effort = d
	}
	window := a.contextWindow(m, ok)
	s.mu.Lock()
	mode, thread, usage, title := s.mode, s.threadID, s.threadUsage, s.title
	s.mu.Unlock()
	fmt.Fprintf(&b, "**Session status**\n\n")
	fmt.Fprintf(&b, "- Model: %s\n- Reasoning effort: %s\n- Mode: %s\n", model, effort, mode)
	fmt.Fprintf(&b, "- Backend: %s\n", a.opts.Backend.Name())
	if thread == "" {
		thread = "none yet (starts with the first prompt)"
	}
	fmt.Fprintf(&b, "- Codex thread: %s\n", thread)
	if title != "" {
		fmt.Fprintf(&b, "- Title: %s\n", title)
	}
	tokens := fmt.Sprintf("%d input (%d cached), %d output (%d reasoning)",
		usage.InputTokens, usage.CachedInputTokens, usage.OutputTokens, usage.ReasoningOutputTokens)
	if window > 0 {
		tokens += fmt.Sprintf("; context window %d", window)
	}
	fmt.Fprintf(&b, "- Tokens used in this thread: %s\n", tokens)
	if a.can(backend.Undo) {
		s.undoSettled()
		fmt.Fprintf(&b, "- Turns /undo can take back: %d\n", s.undo.Len())
	}
	b.WriteString(a.rateLimitLines(ctx))
	version := ""
	if a.opts.CodexVersion != nil {
		version = a.opts.CodexVersion()
	}
	if version == "" {
		version = "unknown"
	}
	fmt.Fprintf(&b, "- Codex version: %s\n", version)
	if note := codex.VersionNote(version); note != "" {
		fmt.Fprintf(&b, "  - %s\n", note)
	}
	fmt.Fprintf(&b, "- Workspace: %s\n", s.cwd)
	return b.String(), nil
}

// renameCommand sets the session's title: ours (session/list), the
// editor's (session_info_update) and, where the backend has threads, the
// codex thread's name.
func (a *Agent) renameCommand(ctx context.Context, s *session, args string) (string, error) {
	title := sessionTitle(args)
	if title == "" {
		return "", invalidParams("/rename needs the new title, e.g. /rename Fix the login bug")
	}
	if a.can(backend.ThreadCommands) && s.thread() != "" {
		t, _ := a.turn(ctx, s, "")
		if err := a.opts.Backend.RenameThread(ctx, t, title); err != nil {
			return "", err
		}
	}
	s.mu.Lock()
	s.title = title
	s.mu.Unlock()
	a.persist(s)
	a.sendUpdate(ctx, s.id, titleUpdate(title))
	return "Renamed the session to “" + title + "”.", nil
}

// goalText shows a thread's goal (nil: none is set).
func goalText(g *backend.Goal) string {
	if g == nil {
		return "No goal is set. Set one with /goal followed by the objective."
	}
	s := fmt.Sprintf("Goal (%s): %s\n\nTokens used towards it: %d; time: %ds", g.Status, g.Objective, g.TokensUsed, g.TimeUsedSeconds)
	if g.TokenBudget != nil {
		s += fmt.Sprintf("; token budget: %d", *g.TokenBudget)
	}
	return s
}

// goalCommand shows, sets or clears the thread's goal.
func (a *Agent) goalCommand(ctx context.Context, s *session, args string) (string, error) {
	t, _ := a.turn(ctx, s, "")
	switch args {
	case "":
		g, err := a.opts.Backend.Goal(ctx, t)
		if err != nil {
			return "", err
		}
		return goalText(g), nil
	case "clear":
		if err := a.opts.Backend.ClearGoal(ctx, t); err != nil {
			return "", err
		}
		return "Goal cleared.", nil
	}
	g, err := a.opts.Backend.SetGoal(ctx, t, args)
	if err != nil {
		return "", err
	}
	return "Goal set. " + goalText(g), nil
}

// skillsCommand lists the session's skills.
func (a *Agent) skillsCommand(_ context.Context, s *session, _ string) (string, error) {
	s.mu.Lock()
	skills := s.skills
	s.mu.Unlock()
	if len(skills) == 0 {
		return "Codex has no skills for this workspace. Add one in .agents/skills/<name>/SKILL.md.", nil
	}
	var b strings.Builder
	b.WriteString("**Skills** (run one with /name, or mention it as $name in a prompt)\n\n")
	for _, sk := range skills {
		fmt.Fprintf(&b, "- /%s (%s): %s\n", sk.Name, sk.Scope, sk.Description)
	}
	return b.String(), nil
}

// mcpCommand lists the MCP servers codex has for the session's thread, or
// signs in to one (mcpauth.go).
func (a *Agent) mcpCommand(ctx context.Context, s *session, args string) (string, error) {
	if sub, rest, _ := strings.Cut(args, " "); sub == "login" {
		return a.mcpLoginCommand(ctx, s, strings.TrimSpace(rest))
	} else if args != "" {
		return "", invalidParams("/mcp takes nothing (list the servers) or login <server>, e.g. /mcp login docs")
	}
	t, _ := a.turn(ctx, s, "")
	servers, err := a.opts.Backend.MCPServerStatus(ctx, t)
	if err != nil {
		return "", err
	}
	if len(servers) == 0 {
		return "Codex uses no MCP servers in this session.", nil
	}
	var b strings.Builder
	b.WriteString("**MCP servers**\n\n")
	for _, m := range servers {
		status := firstNonEmpty(m.RuntimeStatus, "unknown")
		name := m.Name
		if name == backend.OwnServerName {
			name += " (codexacp's file tools)"
		}
		fmt.Fprintf(&b, "- %s: %s, auth %s, %d tools", name, status, firstNonEmpty(m.AuthStatus, "unknown"), len(m.Tools))
		if len(m.Tools) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(m.Tools, ", "))
		}
		if needsSignIn(m) {
			fmt.Fprintf(&b, "; needs you to sign in: /mcp login %s", m.Name)
		} else if m.ToolsError != "" {
			fmt.Fprintf(&b, "; tool discovery failed: %s", m.ToolsError)
		}
		b.WriteString("\n")
	}
	return b.String(), nil
}
