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
	"github.com/codexacp/codexacp/internal/images"
	"github.com/codexacp/codexacp/internal/recovery"
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
// When Runner can prestart (codex.Runner), a session's next turn has its
// codex started ahead, waiting on stdin: after session/new or load, after
// each turn, and again whenever the session's settings change the command
// line. A prompt then only writes to it. At most MaxWarm sessions have one
// at a time, the most recently used (see prestarter).
type ExecBackend struct {
	Runner LineRunner
	Logger *slog.Logger // nil: slog.Default()
	// Idle ends a session's waiting codex after this long without a prompt;
	// 0 means DefaultPrestartIdle, negative never.
	Idle time.Duration
	// MaxWarm bounds the codex processes waiting for a prompt, all
	// sessions together: a session that needs one beyond it takes the
	// least recently used session's, which starts its next turn cold.
	// 0 means DefaultMaxWarm, negative none.
	MaxWarm int
	// ImageDir is where a turn's inline images are written for codex's
	// --image, each turn in a private directory removed when it ends;
	// empty: the system's temporary directory.
	ImageDir string
	// ListSkills lists the skills codex has for a workspace
	// (codex.ConfigServer.ListSkills: codex exec cannot list them, an app-server
	// started for the question can). Nil: no skill commands.
	ListSkills func(ctx context.Context, cwd string) ([]Skill, error)
	// FindRollout finds a thread's rollout, where a turn looks for the
	// commands codex refused (execrefusals.go). Nil: under codex's home.
	FindRollout func(threadID string) (string, error)
	// ObserveRollout, when set, is given each rollout record a turn read
	// that shows or may show a refused command (a shell call, a refusal):
	// a recording keeps them, and a replay's fake codex writes them again
	// (record.Recorder.Rollout).
	ObserveRollout func(threadID, path string, record []byte)
	rollouts       rolloutFinder

	listings skillListings // ListSkills calls in flight, by cwd

	mu      sync.Mutex
	waiting map[string]*warmCodex // by session id: at most maxWarm
	ending  []codex.Invocation    // waiting processes to end before another starts
	uses    uint64                // counts Prepare calls: warmCodex.used
	closed  bool
	wake    chan struct{} // capacity 1: the prestarter has work
	stopped chan struct{} // closed when the prestarter has returned; nil until it starts
}

// warmCodex is a session's codex started (or to be started) ahead of its
// next turn.
type warmCodex struct {
	inv   codex.Invocation
	used  uint64 // ExecBackend.uses when the session last asked for it
	state warmState
}

type warmState int

const (
	warmWanted   warmState = iota // not started yet
	warmStarting                  // the prestarter is starting it
	warmStarted                   // started: waiting in the runner, unless it died or idled out
)

// DefaultPrestartIdle bounds how long a session's codex waits for its next
// prompt. A waiting codex costs ~10 MB of private memory (59 MB resident,
// most of it the binary's pages shared by every codex) and saves ~45–75
// ms per turn: worth it while the user reads and types, not for a session
// left alone.
const DefaultPrestartIdle = 10 * time.Minute

// DefaultMaxWarm is how many sessions at most are kept ready for their
// next prompt ahead of it, on either backend: waiting `codex exec`
// processes (~64 MB resident each), or app-server threads started before
// the session's first prompt. An editor works in a few sessions at a
// time; a burst of hundreds (an editor restoring them, a script) must not
// start hundreds of codex processes or threads.
const DefaultMaxWarm = 4

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
		w := b.waiting[t.SessionID]
		same := w != nil && sameCommand(w.inv, inv)
		keep := same && len(t.Images) > 0
		if !keep {
			delete(b.waiting, t.SessionID)
		}
		// One still starting is ended by the prestarter, which finds it
		// gone from waiting.
		stale := w != nil && !same && w.state == warmStarted
		b.mu.Unlock()
		if stale {
			p.Discard(w.inv)
		}
	}
	if len(t.Images) > 0 {
		files, err := images.WriteFiles(ctx, b.ImageDir, t.Images)
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
	find := b.FindRollout
	if find == nil {
		find = b.rollouts.find
	}
	refused := newRefusalTail(find, inv.ThreadID, log, b.ObserveRollout)
	defer refused.close()
	err := b.Runner.Run(ctx, inv, func(line []byte) {
		ev, err := events.Parse(line)
		if err != nil {
			log.Warn("unreadable codex output line", "session", t.SessionID, "err", err, "bytes", len(line))
			return
		}
		if t.Review != nil && ev.Type == events.TypeThreadStarted {
			// The review's own thread: the session keeps its thread.
			return
		}
		if t.Review == nil {
			if ev.Type == events.TypeThreadStarted {
				refused.started(ev.ThreadID)
			}
			refused.poll(out.Event, false)
		}
		out.Event(ev)
	})
	if t.Review == nil {
		refused.poll(out.Event, true)
	}
	return err
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

// skills implements commander with ListSkills, one call for sessions in
// one cwd that ask at once. A skill's turn needs nothing more: its prompt
// mentions the skill ($name), and codex exec gives the model the skill's
// instructions for it.
func (b *ExecBackend) skills(ctx context.Context, t Turn) ([]Skill, error) {
	if b.ListSkills == nil {
		return nil, errors.ErrUnsupported
	}
	return b.listings.list(ctx, t.Cwd, func(ctx context.Context) ([]Skill, error) { return b.ListSkills(ctx, t.Cwd) })
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

// Prepare has the codex that will run t (its prompt aside) started in the
// background, replacing the session's waiting one when that was started
// for another command line, and makes the session the most recently used:
// beyond MaxWarm sessions, the least recently used one's waiting codex is
// ended. It does nothing when Runner cannot prestart.
func (b *ExecBackend) Prepare(t Turn) {
	if _, ok := b.Runner.(Prestarter); !ok || b.maxWarm() <= 0 {
		return
	}
	t.Prompt, t.Images = "", nil
	inv := execInvocation(t)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.uses++
	w := b.waiting[t.SessionID]
	if w != nil && sameCommand(w.inv, inv) {
		w.used = b.uses
		return
	}
	if w != nil {
		b.retire(w)
	}
	if b.waiting == nil {
		b.waiting = make(map[string]*warmCodex)
	}
	b.waiting[t.SessionID] = &warmCodex{inv: inv, used: b.uses}
	for len(b.waiting) > b.maxWarm() {
		id, lru := b.leastRecentlyUsed()
		b.logger().Debug("too many sessions with a waiting codex; the least recently used one's is ended", "session", id, "max", b.maxWarm())
		delete(b.waiting, id)
		b.retire(lru)
	}
	b.kick()
}

// Forget ends the session's waiting codex: the session closed.
func (b *ExecBackend) Forget(sessionID string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if w := b.waiting[sessionID]; w != nil {
		delete(b.waiting, sessionID)
		b.retire(w)
		b.kick()
	}
}

// Close ends every waiting codex, once the prestarter has returned. Turns
// still running are not affected.
func (b *ExecBackend) Close() {
	b.mu.Lock()
	b.closed = true
	b.waiting, b.ending = nil, nil
	stopped := b.stopped
	if stopped != nil {
		b.kick()
	}
	b.mu.Unlock()
	if stopped != nil {
		<-stopped
	}
	if p, ok := b.Runner.(Prestarter); ok {
		p.Close()
	}
}

// retire has w's process ended by the prestarter, when it was started or
// is starting; w has left waiting. Called with b.mu held.
func (b *ExecBackend) retire(w *warmCodex) {
	if w.state != warmWanted {
		b.ending = append(b.ending, w.inv)
	}
}

// leastRecentlyUsed is the session in waiting that asked for its codex
// longest ago. Called with b.mu held.
func (b *ExecBackend) leastRecentlyUsed() (string, *warmCodex) {
	var id string
	var lru *warmCodex
	for sid, w := range b.waiting {
		if lru == nil || w.used < lru.used {
			id, lru = sid, w
		}
	}
	return id, lru
}

// kick tells the prestarter there is work, starting it the first time.
// Called with b.mu held.
func (b *ExecBackend) kick() {
	if b.stopped == nil {
		b.wake = make(chan struct{}, 1)
		b.stopped = make(chan struct{})
		go b.prestarter(b.Runner.(Prestarter))
	}
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// prestarter is the one goroutine that starts and ends waiting codex
// processes (Run takes them, the runner ends idle ones): it ends those
// retired first, then starts the most recently used session's wanted one,
// one at a time, so that no more than MaxWarm wait at any moment and a
// burst of sessions starts only the codex processes of the newest. Prepare
// starts it; it returns once Close has set closed, and Close waits for it.
func (b *ExecBackend) prestarter(p Prestarter) {
	defer close(b.stopped)
	// After a panic, sessions start their codex at their prompt.
	defer recovery.Recover(b.logger(), "starting codex ahead of prompts", nil)
	for {
		b.mu.Lock()
		if b.closed {
			b.mu.Unlock()
			return
		}
		if ending := b.ending; len(ending) > 0 {
			b.ending = nil
			b.mu.Unlock()
			for _, inv := range ending {
				p.Discard(inv)
			}
			continue
		}
		id, w := b.mostRecentlyWanted()
		if w == nil {
			b.mu.Unlock()
			<-b.wake
			continue
		}
		w.state = warmStarting
		b.mu.Unlock()

		err := p.Prestart(w.inv, b.idle())
		if err != nil {
			b.logger().Debug("could not start codex ahead of the prompt; the prompt will", "session", id, "err", err)
		}
		b.mu.Lock()
		current := b.waiting[id] == w
		if current {
			w.state = warmStarted
		}
		b.mu.Unlock()
		if !current && err == nil {
			// Replaced, forgotten or taken by a turn while it started:
			// whoever did so looked before it was there.
			p.Discard(w.inv)
		}
	}
}

// mostRecentlyWanted is the session in waiting whose codex is still to
// start and that asked for it last. Called with b.mu held.
func (b *ExecBackend) mostRecentlyWanted() (string, *warmCodex) {
	var id string
	var mru *warmCodex
	for sid, w := range b.waiting {
		if w.state == warmWanted && (mru == nil || w.used > mru.used) {
			id, mru = sid, w
		}
	}
	return id, mru
}

func (b *ExecBackend) maxWarm() int {
	if b.MaxWarm == 0 {
		return DefaultMaxWarm
	}
	return b.MaxWarm
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
			"developer_instructions="+tomlString(developerInstructions(t.Cwd)+t.editorMCP.execAskNote(p.Tools)),
		)
		if t.Catalog != "" {
			inv.Config = append(inv.Config, "model_catalog_json="+tomlString(t.Catalog))
		}
		inv.Env = append(inv.Env, toolsTokenEnv+"="+t.Tools.Token)
	}
	return inv
}
