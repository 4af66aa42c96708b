// Package codexexec is the backend that runs each turn as one `codex exec
// --json` process (`… resume THREAD` after the first): the default. Codex
// asks no questions there; the sandbox decides what a command may do, and
// the commands codex refused are read from the thread's rollout
// (refusals.go). A session's next codex is started ahead and waits for its
// prompt (Prepare).
//
// Named after the command it runs, not "exec", which would shadow os/exec
// in the files that use both.
package codexexec

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/backend/internal/skillflight"
	"github.com/codexacp/codexacp/codex"
	"github.com/codexacp/codexacp/codex/execrun"
	"github.com/codexacp/codexacp/events"
	"github.com/codexacp/codexacp/internal/images"
	"github.com/codexacp/codexacp/internal/recovery"
)

// LineRunner runs one `codex exec --json` process and hands each line it
// prints to onLine, in order, before returning. execrun.Runner implements it.
type LineRunner interface {
	Run(ctx context.Context, inv execrun.Invocation, onLine func(line []byte)) error
}

// Backend runs each turn as one `codex exec` process (`… resume THREAD`
// after the first). Codex asks no questions there: the sandbox decides what
// a command may do.
//
// When Runner can prestart (execrun.Runner), a session's next turn has its
// codex started ahead, waiting on stdin: after session/new or load, after
// each turn, and again whenever the session's settings change the command
// line. A prompt then only writes to it. At most MaxWarm sessions have one
// at a time, the most recently used (see prestarter).
type Backend struct {
	backend.Unsupported // no steering, forking, fast mode, plan mode or thread commands

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
	// (appserver.ConfigServer.ListSkills: codex exec cannot list them, an app-server
	// started for the question can). Nil: no skill commands.
	ListSkills func(ctx context.Context, cwd string) ([]backend.Skill, error)
	// FindRollout finds a thread's rollout, where a turn looks for the
	// commands codex refused (refusals.go). Nil: under codex's home.
	FindRollout func(threadID string) (string, error)
	// ObserveRollout, when set, is given each rollout record a turn read
	// that shows or may show a refused command (a shell call, a refusal):
	// a recording keeps them, and a replay's fake codex writes them again
	// (record.Recorder.Rollout).
	ObserveRollout func(threadID, path string, record []byte)
	// Revert cuts a stored thread's last turns, turnIDs oldest first, after
	// checking they are its last (appserver.RevertStoredTurns: codex exec
	// cannot, an app-server started on the same codex and CODEX_HOME can,
	// between exec turns). Nil: codex cannot forget turns (no Undo).
	Revert   func(ctx context.Context, threadID string, turnIDs []string) error
	rollouts rolloutFinder

	listings skillflight.Group // ListSkills calls in flight, by cwd

	// onWaitForStart, when set (tests), is called as a turn starts waiting
	// for its codex's start under way.
	onWaitForStart func()

	mu      sync.Mutex
	waiting map[string]*warmCodex // by session id: at most maxWarm
	ending  []execrun.Invocation  // waiting processes to end before another starts
	uses    uint64                // counts Prepare calls: warmCodex.used
	closed  bool
	wake    chan struct{} // capacity 1: the prestarter has work
	stopped chan struct{} // closed when the prestarter has returned; nil until it starts
}

// warmCodex is a session's codex started (or to be started) ahead of its
// next turn.
type warmCodex struct {
	inv   execrun.Invocation
	used  uint64 // Backend.uses when the session last asked for it
	state warmState
	// ready is closed once the prestarter's start of it has returned
	// (made as it begins); taken: a turn took it while it started, and
	// waits on ready to have the runner hand it over.
	ready chan struct{}
	taken bool
}

type warmState int

const (
	warmWanted   warmState = iota // not started yet
	warmStarting                  // the prestarter is starting it
	warmStarted                   // started: waiting in the runner, unless it died or idled out
)

// DefaultPrestartIdle bounds how long a session's codex waits for its next
// prompt. A waiting codex costs memory and saves part of a turn's start
// (measured: docs/codex.md, "Why 10 minutes"): worth it while the user
// reads and types, not for a session left alone.
const DefaultPrestartIdle = 10 * time.Minute

// Prestarter is a LineRunner that can start a turn's codex before its
// prompt: execrun.Runner.
type Prestarter interface {
	LineRunner
	Prestart(inv execrun.Invocation, idle time.Duration) error
	Discard(inv execrun.Invocation)
	Close()
}

var (
	_ backend.Backend = (*Backend)(nil)
	_ Prestarter      = (*execrun.Runner)(nil)
)

// Name implements backend.Backend.
func (b *Backend) Name() string { return "exec" }

// Run implements Backend.
func (b *Backend) Run(ctx context.Context, t backend.Turn, out backend.Output) error {
	log := b.logger()
	inv := execInvocation(t)
	// dropTaken ends the codex this turn took while it was being started,
	// when the turn is cancelled before it runs it (the runner takes
	// nothing for a cancelled turn): it left waiting, so nothing else
	// would end it, and the runner would keep it for its idle time. (A
	// turn with images never takes one being started.)
	dropTaken := func() {}
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
		// gone from waiting, unless it is this turn's: then the turn waits
		// for the start (a process start, a few ms) and takes it, rather
		// than starting a second codex beside it (a prompt right after
		// session/new).
		stale := w != nil && !same && w.state == warmStarted
		var starting chan struct{}
		if same && !keep && w.state == warmStarting {
			w.taken, starting = true, w.ready
		}
		b.yieldTo(t.SessionID)
		b.mu.Unlock()
		if stale {
			p.Discard(w.inv)
		}
		if starting != nil {
			if b.onWaitForStart != nil {
				b.onWaitForStart()
			}
			<-starting
			dropTaken = func() { p.Discard(w.inv) }
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
	if ctx.Err() != nil {
		dropTaken() // the runner takes nothing for a cancelled turn
	}
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

// Capabilities implements backend.Backend: `codex exec review` runs
// reviews, and codex exec runs a skill the prompt mentions ($name) —
// listing them takes ListSkills; a session's next codex starts ahead.
// Exec has no way to act on a thread between turns.
func (b *Backend) Capabilities() backend.Capabilities {
	c := backend.Review | backend.Warm | backend.Prepare
	if b.ListSkills != nil {
		c |= backend.Skills
	}
	if b.Revert != nil {
		c |= backend.Undo
	}
	return c
}

// ForgetTurns implements backend.Backend with Revert, between the
// session's turns. The session's waiting codex is ended first (it would
// resume the thread as it was), and the thread's rollout is looked for
// anew at its next turn: codex writes it to a revision file from now on.
func (b *Backend) ForgetTurns(ctx context.Context, t backend.Turn, turnIDs []string) error {
	if b.Revert == nil {
		return backend.ErrUnsupported
	}
	if t.ThreadID == "" {
		return fmt.Errorf("the session has no codex thread")
	}
	b.Forget(t.SessionID)
	err := b.Revert(ctx, t.ThreadID, turnIDs)
	b.rollouts.reverted(t.ThreadID)
	return err
}

// Skills implements backend.Backend with ListSkills, one call for sessions in
// one cwd that ask at once. A skill's turn needs nothing more: its prompt
// mentions the skill ($name), and codex exec gives the model the skill's
// instructions for it.
func (b *Backend) Skills(ctx context.Context, t backend.Turn) ([]backend.Skill, error) {
	if b.ListSkills == nil {
		return nil, backend.ErrUnsupported
	}
	return b.listings.List(ctx, t.Cwd, func(ctx context.Context) ([]backend.Skill, error) { return b.ListSkills(ctx, t.Cwd) })
}

// Warm implements backend.Backend: the session's first turn gets its
// codex now. (WatchSkills does nothing: no codex runs between turns. The
// skills are listed again at each session/new, load and resume.)
func (b *Backend) Warm(t backend.Turn) { b.Prepare(t) }

// Prepare has the codex that will run t (its prompt aside) started in the
// background, replacing the session's waiting one when that was started
// for another command line, and makes the session the most recently used:
// beyond MaxWarm sessions, the least recently used one's waiting codex is
// ended. It does nothing when Runner cannot prestart.
func (b *Backend) Prepare(t backend.Turn) {
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
func (b *Backend) Forget(sessionID string) {
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
func (b *Backend) Close() {
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

// yieldTo ends the other sessions' waiting codex processes as a turn of
// session id starts: a user who prompts there has left them, and a turn's
// codex grows to twice a waiting one's memory, so a waiting process beside
// it (~100 MiB resident, mostly the codex binary's pages) was the largest
// part of the exec backend's peak after the turn's own. Their sessions'
// next turns start cold and prepare the one after, as when MaxWarm pushed
// them out; a session's own next codex still starts when its turn has
// ended, for the prompt the user types after reading the answer. Called
// with b.mu held.
func (b *Backend) yieldTo(id string) {
	yielded := false
	for sid, w := range b.waiting {
		if sid == id {
			continue
		}
		delete(b.waiting, sid)
		b.retire(w)
		yielded = true
	}
	if yielded {
		b.logger().Debug("a turn started; other sessions' waiting codex ended", "session", id)
		b.kick()
	}
}

// retire has w's process ended by the prestarter, when it was started or
// is starting; w has left waiting. Called with b.mu held.
func (b *Backend) retire(w *warmCodex) {
	if w.state != warmWanted {
		b.ending = append(b.ending, w.inv)
	}
}

// leastRecentlyUsed is the session in waiting that asked for its codex
// longest ago. Called with b.mu held.
func (b *Backend) leastRecentlyUsed() (string, *warmCodex) {
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
func (b *Backend) kick() {
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
func (b *Backend) prestarter(p Prestarter) {
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
		w.state, w.ready = warmStarting, make(chan struct{})
		b.mu.Unlock()

		err := func() error {
			defer close(w.ready) // also after a panic: a turn waits on it
			return p.Prestart(w.inv, b.idle())
		}()
		if err != nil {
			b.logger().Debug("could not start codex ahead of the prompt; the prompt will", "session", id, "err", err)
		}
		b.mu.Lock()
		current := b.waiting[id] == w
		if current {
			w.state = warmStarted
		}
		taken := w.taken
		b.mu.Unlock()
		if !current && !taken && err == nil {
			// Replaced or forgotten while it started: whoever did so
			// looked before it was there. (One a turn took is the
			// turn's: the runner hands it over.)
			p.Discard(w.inv)
		}
	}
}

// mostRecentlyWanted is the session in waiting whose codex is still to
// start and that asked for it last. Called with b.mu held.
func (b *Backend) mostRecentlyWanted() (string, *warmCodex) {
	var id string
	var mru *warmCodex
	for sid, w := range b.waiting {
		if w.state == warmWanted && (mru == nil || w.used > mru.used) {
			id, mru = sid, w
		}
	}
	return id, mru
}

func (b *Backend) maxWarm() int {
	if b.MaxWarm == 0 {
		return backend.DefaultMaxWarm
	}
	return b.MaxWarm
}

func (b *Backend) idle() time.Duration {
	switch {
	case b.Idle == 0:
		return DefaultPrestartIdle
	case b.Idle < 0:
		return 0
	}
	return b.Idle
}

func (b *Backend) logger() *slog.Logger {
	if b.Logger != nil {
		return b.Logger
	}
	return slog.Default()
}

// sameCommand reports whether two invocations start the same codex command
// (prompts aside).
func sameCommand(a, b execrun.Invocation) bool {
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
func execInvocation(t backend.Turn) execrun.Invocation {
	p := backend.ModePolicy(t.Mode, t.User, t.Dirs)
	inv := execrun.Invocation{
		Cwd:      t.Cwd,
		ThreadID: t.ThreadID,
		Prompt:   t.Prompt,
		Sandbox:  p.Sandbox,
		Model:    t.Model,
	}
	inv.Config, inv.Env = editorMCPConfig(t.EditorMCP, p.Tools) // custom: as the preset it amounts to
	if t.Review != nil {
		inv.Review = &execrun.Review{Branch: t.Review.Branch, Commit: t.Review.Commit}
	}
	if t.Effort != "" {
		inv.Config = append(inv.Config, "model_reasoning_effort="+tomlString(t.Effort))
	}
	if p.Sandbox == codex.SandboxWorkspaceWrite && len(t.Dirs) > 0 {
		inv.Config = append(inv.Config, "sandbox_workspace_write.writable_roots="+tomlStringArray(p.WorkspaceWrite.WritableRoots))
	}
	if t.Tools != nil {
		inv.Config = append(inv.Config,
			"mcp_servers."+backend.OwnServerName+"="+ownServerTable(t.Tools),
			"developer_instructions="+tomlString(backend.DeveloperInstructions(t.Cwd)+execAskNote(t.EditorMCP, p.Tools)),
		)
		if t.Catalog != "" {
			inv.Config = append(inv.Config, "model_catalog_json="+tomlString(t.Catalog))
		}
		inv.Env = append(inv.Env, tokenEnv(t.Tools)+"="+t.Tools.Token)
	}
	return inv
}

// ownServerTable is the file tools' server as a -c value: the relay when
// there is one, else the HTTP endpoint. Either way the token is in codex's
// environment (toolsTokenEnv), which codex passes to the relay (env_vars)
// or sends as the bearer token.
func ownServerTable(tools *backend.TurnTools) string {
	// A permission prompt waits for the user; codex must not time out first.
	const common = `, required=true, default_tools_approval_mode="approve", tool_timeout_sec=86400}`
	r := tools.Relay
	if r == nil {
		return "{url=" + tomlString(tools.URL) + ", bearer_token_env_var=" + tomlString(toolsTokenEnv) + common
	}
	env := make([][2]string, 0, len(r.Env))
	for _, k := range slices.Sorted(maps.Keys(r.Env)) {
		env = append(env, [2]string{k, r.Env[k]})
	}
	return "{command=" + tomlString(r.Command) + ", args=" + tomlStringArray(r.Args) +
		", env=" + tomlInlineTable(env) + ", env_vars=" + tomlStringArray([]string{r.TokenEnv}) + common
}

// tokenEnv is the variable of codex's environment that carries the token.
func tokenEnv(tools *backend.TurnTools) string {
	if tools.Relay != nil {
		return tools.Relay.TokenEnv
	}
	return toolsTokenEnv
}

// editorMCPConfig renders the editor's MCP servers as codex -c overrides
// (mcp_servers.NAME={...}) and the environment they need. HTTP header
// values (often credentials) travel in the environment through
// env_http_headers, so they never appear on codex's command line. (Stdio
// servers' env stays inline: passing it through codex's own environment
// could change codex itself, e.g. OPENAI_API_KEY.)
//
// Codex asks before it runs an MCP tool it cannot tell is read-only (no
// readOnlyHint), and codex exec has no one to ask: under its approval
// policy "never" such a call fails ("MCP tool call requires approval, but
// approval policy is never"). So in auto and full-access (mode is the
// preset whose tool behaviour applies) the servers are registered with
// default_tools_approval_mode="approve": their tools run as the editor's
// configuration has them, as they would in the editor's other agents. In
// read-only mode only their read-only tools run: nothing there may change
// anything, and an MCP server runs outside codex's sandbox. Ask mode
// refuses them too: it must not run without a question what its name says
// it asks about, and exec cannot ask (execAskNote tells the model why).
// (The app-server backend puts each such call to the user instead.)
func editorMCPConfig(servers []backend.MCPServer, mode backend.Mode) (config, env []string) {
	for i, s := range servers {
		var table string
		if s.URL != "" {
			headers := make([][2]string, 0, len(s.Headers))
			for j, h := range s.Headers {
				envName := fmt.Sprintf("CODEXACP_MCP_HEADER_%d_%d", i, j)
				headers = append(headers, [2]string{h.Name, envName})
				env = append(env, envName+"="+h.Value)
			}
			table = "{url=" + tomlString(s.URL) + ", env_http_headers=" + tomlInlineTable(headers)
		} else {
			vars := make([][2]string, 0, len(s.Env))
			for _, e := range s.Env {
				vars = append(vars, [2]string{e.Name, e.Value})
			}
			table = "{" + strings.Join([]string{
				"command=" + tomlString(s.Command),
				"args=" + tomlStringArray(s.Args),
				"env=" + tomlInlineTable(vars),
			}, ", ")
		}
		if mode != backend.ModeReadOnly && mode != backend.ModeAsk {
			table += `, default_tools_approval_mode="approve"`
		}
		config = append(config, "mcp_servers."+s.Name+"="+table+"}")
	}
	return config, env
}

// execAskNote is what the model is told, on exec in ask mode with editor
// MCP servers, about their refused tools, so that it can tell the user
// why and what to do; "" otherwise.
func execAskNote(servers []backend.MCPServer, mode backend.Mode) string {
	if mode != backend.ModeAsk || len(servers) == 0 {
		return ""
	}
	return "\nTools of the editor's other MCP servers that are not read-only are refused in this session's Ask mode: codex exec cannot ask the user to approve them. If the user needs one, tell them so and that Auto mode, or codexacp's app-server backend (which asks), runs it."
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 || r == 0x7f {
				fmt.Fprintf(&b, `\u%04X`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

func tomlStringArray(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = tomlString(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// tomlInlineTable renders key/value string pairs; keys are always quoted so
// any name survives.
func tomlInlineTable(kv [][2]string) string {
	parts := make([]string, len(kv))
	for i, p := range kv {
		parts[i] = tomlString(p[0]) + "=" + tomlString(p[1])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
