package acp

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"sync"
	"time"

	"github.com/codexacp/codexacp/codex"
	"github.com/codexacp/codexacp/events"
)

// LineRunner runs one `codex exec --json` process and hands each line it
// prints to onLine, in order, before returning. codex.Runner implements it.
type LineRunner interface {
	Run(ctx context.Context, inv codex.Invocation, onLine func(line []byte)) error
}

// ExecBackend runs each turn as one `codex exec` process (`… resume THREAD`
// after the first). Codex asks no questions there: the sandbox decides what
// a command may do.
//
// When Runner can prestart (codex.Runner), each session's next turn has its
// codex started ahead, waiting on stdin: after session/new or load, after
// each turn, and again whenever the session's settings change the command
// line. A prompt then only writes to it.
type ExecBackend struct {
	Runner LineRunner
	Logger *slog.Logger // nil: slog.Default()
	// Idle ends a session's waiting codex after this long without a prompt;
	// 0 means DefaultPrestartIdle, negative never.
	Idle time.Duration
	// ImageDir is where a turn's inline images are written for codex's
	// --image, each turn in a private directory removed when it ends;
	// empty: the system's temporary directory.
	ImageDir string
	// ListSkills lists the skills codex has for a workspace
	// (codex.ConfigServer.ListSkills: codex exec cannot list them, an app-server
	// started for the question can). Nil: no skill commands.
	ListSkills func(ctx context.Context, cwd string) ([]Skill, error)

	mu      sync.Mutex
	waiting map[string]codex.Invocation // by session id: what was prestarted
	closed  bool
	work    sync.WaitGroup // prestarts in flight
}

// DefaultPrestartIdle bounds how long a session's codex waits for its next
// prompt. A waiting codex costs ~10 MB of private memory (59 MB resident,
// most of it the binary's pages shared by every codex) and saves ~45–75
// ms per turn: worth it while the user reads and types, not for a session
// left alone.
const DefaultPrestartIdle = 10 * time.Minute

// Prestarter is a LineRunner that can start a turn's codex before its
// prompt: codex.Runner.
type Prestarter interface {
	LineRunner
	Prestart(inv codex.Invocation, idle time.Duration) error
	Discard(inv codex.Invocation)
	Close()
}

var (
	_ Backend      = (*ExecBackend)(nil)
	_ warmer       = (*ExecBackend)(nil)
	_ turnPreparer = (*ExecBackend)(nil)
	_ commander    = (*ExecBackend)(nil)
	_ Prestarter   = (*codex.Runner)(nil)
)

// Run implements Backend.
func (b *ExecBackend) Run(ctx context.Context, t Turn, out TurnOutput) error {
	log := b.logger()
	inv := execInvocation(t)
	if p, ok := b.Runner.(Prestarter); ok {
		// The waiting codex is this turn's if nothing changed since it was
		// started (the runner matches it); else it is of no use any more.
		// A turn with images runs its own (they are on its command line,
		// which the runner matches): the waiting one, started for the same
		// command without them, stays for the next turn.
		b.mu.Lock()
		prev, had := b.waiting[t.SessionID]
		same := had && sameCommand(prev, inv)
		keep := same && len(t.Images) > 0
		if !keep {
			delete(b.waiting, t.SessionID)
		}
		b.mu.Unlock()
		if had && !same {
			p.Discard(prev)
		}
	}
	if len(t.Images) > 0 {
		files, err := writeImageFiles(ctx, b.ImageDir, t.Images)
		if err != nil {
			return err
		}
		// Deferred: gone however the turn ends (cancelled, failed, codex
		// crashed); codex has read them when the turn started.
		defer func() {
			if err := files.Remove(); err != nil {
				log.Warn("could not remove the prompt's image files", "session", t.SessionID, "err", err)
			}
		}()
		inv.Images = files.Paths
	}
	return b.Runner.Run(ctx, inv, func(line []byte) {
		ev, err := events.Parse(line)
		if err != nil {
			log.Warn("unreadable codex output line", "session", t.SessionID, "err", err, "bytes", len(line))
			return
		}
		if t.Review != nil && ev.Type == events.TypeThreadStarted {
			// The review's own thread: the session keeps its thread.
			return
		}
		out.Event(ev)
	})
}

// commandFeatures implements commander: `codex exec review` runs reviews,
// and codex exec runs a skill the prompt mentions ($name) — listing them
// takes ListSkills. Exec has no way to act on a thread between turns.
func (b *ExecBackend) commandFeatures() commandFeature {
	if b.ListSkills != nil {
		return featReview | featSkills
	}
	return featReview
}

// skills implements commander with ListSkills. A skill's turn needs
// nothing more: its prompt mentions the skill ($name), and codex exec
// gives the model the skill's instructions for it.
func (b *ExecBackend) skills(ctx context.Context, t Turn) ([]Skill, error) {
	if b.ListSkills == nil {
		return nil, errors.ErrUnsupported
	}
	return b.ListSkills(ctx, t.Cwd)
}

func (b *ExecBackend) threadRequest(context.Context, Turn, string, map[string]any, any) error {
	return errors.ErrUnsupported
}

// watchSkills implements commander: nothing to watch, no codex runs
// between turns. The skills are listed again at each session/new, load and
// resume.
func (b *ExecBackend) watchSkills(func()) {}

// Warm implements warmer: the session's first turn gets its codex now.
func (b *ExecBackend) Warm(t Turn) { b.Prepare(t) }

// Prepare starts, in the background, the codex that will run t (its prompt
// aside), replacing the session's waiting one when that was started for
// another command line. It does nothing when Runner cannot prestart.
func (b *ExecBackend) Prepare(t Turn) {
	p, ok := b.Runner.(Prestarter)
	if !ok {
		return
	}
	t.Prompt, t.Images = "", nil
	inv := execInvocation(t)
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	prev, had := b.waiting[t.SessionID]
	if had && sameCommand(prev, inv) {
		b.mu.Unlock()
		return
	}
	if b.waiting == nil {
		b.waiting = make(map[string]codex.Invocation)
	}
	b.waiting[t.SessionID] = inv
	b.work.Add(1) // under b.mu: Close sets closed under it before it waits
	b.mu.Unlock()
	go func() {
		defer b.work.Done()
		if had {
			p.Discard(prev)
		}
		if err := p.Prestart(inv, b.idle()); err != nil {
			b.logger().Debug("could not start codex ahead of the prompt; the prompt will", "session", t.SessionID, "err", err)
			return
		}
		// Replaced or forgotten while it started: whoever did so may have
		// looked before it was there.
		b.mu.Lock()
		cur, ok := b.waiting[t.SessionID]
		stale := !ok || !sameCommand(cur, inv)
		b.mu.Unlock()
		if stale {
			p.Discard(inv)
		}
	}()
}

// Forget ends the session's waiting codex: the session closed.
func (b *ExecBackend) Forget(sessionID string) {
	p, ok := b.Runner.(Prestarter)
	if !ok {
		return
	}
	b.mu.Lock()
	prev, had := b.waiting[sessionID]
	delete(b.waiting, sessionID)
	b.mu.Unlock()
	if had {
		p.Discard(prev)
	}
}

// Close ends every waiting codex and waits for prestarts in flight. Turns
// still running are not affected.
func (b *ExecBackend) Close() {
	b.mu.Lock()
	b.closed = true
	b.waiting = nil
	b.mu.Unlock()
	b.work.Wait()
	if p, ok := b.Runner.(Prestarter); ok {
		p.Close()
	}
}

func (b *ExecBackend) idle() time.Duration {
	switch {
	case b.Idle == 0:
		return DefaultPrestartIdle
	case b.Idle < 0:
		return 0
	}
	return b.Idle
}

func (b *ExecBackend) logger() *slog.Logger {
	if b.Logger != nil {
		return b.Logger
	}
	return slog.Default()
}

// sameCommand reports whether two invocations start the same codex command
// (prompts aside).
func sameCommand(a, b codex.Invocation) bool {
	a.Prompt, b.Prompt = "", ""
	return reflect.DeepEqual(a, b)
}

// toolsTokenEnv carries the session's token to codex, which sends it as a
// bearer token; it never appears on a command line.
const toolsTokenEnv = "CODEXACP_MCP_TOKEN"

// execInvocation is the turn as a codex exec command: every setting is a -c
// override (codex does not store them with the thread), secrets travel in
// the environment.
//
// The mode's sandbox level is `-s`; the rest of the user's sandbox settings
// (writable roots, network access) stay codex's configuration, except that
// the session's additional directories join the writable roots — a -c of
// the list replaces it, so it carries the user's roots too. Approvals are
// not passed: codex exec asks nothing.
func execInvocation(t Turn) codex.Invocation {
	p := modePolicy(t.Mode, t.User, t.Dirs)
	inv := codex.Invocation{
		Cwd:      t.Cwd,
		ThreadID: t.ThreadID,
		Prompt:   t.Prompt,
		Sandbox:  p.Sandbox,
		Model:    t.Model,
		Config:   t.editorMCP.execConfig(p.Tools), // custom: as the preset it amounts to
		Env:      append([]string(nil), t.editorMCP.env...),
	}
	if t.Review != nil {
		inv.Review = &codex.Review{Branch: t.Review.Branch, Commit: t.Review.Commit}
	}
	if t.Effort != "" {
		inv.Config = append(inv.Config, "model_reasoning_effort="+tomlString(t.Effort))
	}
	if p.Sandbox == codex.SandboxWorkspaceWrite && len(t.Dirs) > 0 {
		inv.Config = append(inv.Config, "sandbox_workspace_write.writable_roots="+tomlStringArray(p.WorkspaceWrite.WritableRoots))
	}
	if t.Tools != nil {
		inv.Config = append(inv.Config,
			"mcp_servers."+ownServerName+"={url="+tomlString(t.Tools.URL)+
				", bearer_token_env_var="+tomlString(toolsTokenEnv)+
				", required=true, default_tools_approval_mode=\"approve\""+
				// A permission prompt waits for the user; codex must not time out first.
				", tool_timeout_sec=86400}",
			"developer_instructions="+tomlString(developerInstructions(t.Cwd)),
		)
		if t.Catalog != "" {
			inv.Config = append(inv.Config, "model_catalog_json="+tomlString(t.Catalog))
		}
		inv.Env = append(inv.Env, toolsTokenEnv+"="+t.Tools.Token)
	}
	return inv
}
