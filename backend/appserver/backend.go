// Package appserver is the backend that runs every session's turns on one
// long-lived `codex app-server` process: text and command output stream as
// codex produces them, and codex's questions (command and MCP tool
// approvals, MCP servers' forms, requestUserInput) go to the user through
// the turn's backend.Output. Besides turns it steers (turn/steer), forks
// and deletes threads, runs plan-mode turns (plan.go), follows subagents
// (subagents.go) and answers the slash commands' thread operations.
//
// Everything it sends and reads is codex's app-server protocol
// (docs/codex-app-server.md), as package protocol's types: requests go
// through codexapp.Call with a protocol constant, codex's requests are
// read with the constant's Decode and answered with its result type.
package appserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/backend/internal/skillflight"
	"github.com/codexacp/codexacp/codex"
	codexapp "github.com/codexacp/codexacp/codex/appserver"
	"github.com/codexacp/codexacp/codex/appserver/protocol"
	"github.com/codexacp/codexacp/codex/proc"
	"github.com/codexacp/codexacp/events"
	"github.com/codexacp/codexacp/internal/recovery"
)

// sessionTagEnv is set in the environment of every command a session's
// turns start (through the thread's shell_environment_policy), so that a
// cancel can find and end exactly that session's commands: the app-server
// leaves them running after turn/interrupt, and it serves every session.
const sessionTagEnv = "CODEXACP_SESSION"

// interruptGrace bounds how long a cancel waits for the app-server to end
// the interrupted turn (it takes ~7 ms) before the turn's commands are
// killed and the prompt answers.
const interruptGrace = 2 * time.Second

// Backend runs every session's turns on one `codex app-server`
// process, started on first need and started again on the next turn after
// it died (the thread is then resumed). Text and command output stream as
// codex produces them, and commands that need more than the sandbox are
// put to the user (see appServerPolicy).
type Backend struct {
	backend.Unsupported // Prepare: a thread needs no preparing between turns

	// MaxWarm bounds the sessions whose thread Warm starts ahead of their
	// first prompt and that have not taken it yet: a session beyond it
	// starts its thread at its first prompt. Codex keeps a thread it
	// loaded until it exits, so none is ever given back; a thread ready
	// for warmStale without being taken stops counting (it stays the
	// session's), so that sessions that never prompt do not take the
	// bound for good. 0 means DefaultMaxWarm, negative none. Set before
	// the first Warm.
	MaxWarm int

	opts  codexapp.Options
	log   *slog.Logger
	start func(context.Context, codexapp.Options) (*codexapp.Server, error)
	now   func() time.Time // the clock of warmStale

	warming  sync.WaitGroup    // Warm's start-up
	listings skillflight.Group // skills/list requests in flight, by cwd
	life     context.Context   // ends with Close: cuts a start short
	stop     context.CancelFunc

	mu       sync.Mutex
	starting chan struct{} // closed when a start in progress ends
	server   *codexapp.Server
	loaded   map[string]bool            // threads started or resumed in server
	prepared map[string]*preparedThread // by session id, until its first turn
	active   map[string]*activeTurn     // by session id: its running turn (Steer)
	settings map[string]threadSettings  // by thread id: its model and collaboration mode (plan.go)
	onSkills func()                     // watchSkills
	closed   bool
	lastWarm <-chan struct{} // done of the latest thread Warm prepares (start.go: warmInOrder)

	limits  rateLimitStore // the account's usage limits codex sent (ratelimits.go)
	mcpAuth mcpAuth        // MCP sign-ins and the servers that need one (mcpauth.go)
}

var _ backend.Backend = (*Backend)(nil)

// Name implements backend.Backend.
func (b *Backend) Name() string { return "app-server" }

// Capabilities implements backend.Backend: the app-server has every
// command, and steers, forks and deletes threads, applies the service
// tier on every turn, and starts a session's thread before its first
// prompt.
func (b *Backend) Capabilities() backend.Capabilities {
	return backend.Review | backend.Compact | backend.Skills | backend.ThreadCommands | backend.Plan |
		backend.Fork | backend.DeleteThread | backend.Steer | backend.FastMode | backend.Warm | backend.RateLimits |
		backend.MCPLogin | backend.Hooks | backend.Undo
}

// New returns a backend that starts codex app-server with
// opts when the first turn needs it.
func New(opts codexapp.Options) *Backend {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	life, stop := context.WithCancel(context.Background())
	b := &Backend{opts: opts, log: log, start: codexapp.Start, now: time.Now, life: life, stop: stop,
		prepared: map[string]*preparedThread{}, active: map[string]*activeTurn{}, settings: map[string]threadSettings{}}
	b.opts.Unrouted = b.unrouted
	return b
}

// Warm gets a session ready in the background, so that its first prompt
// waits for neither the app-server's start nor the thread's (which connects
// codex to our tool server): it starts the app-server if none runs, then
// starts the session's thread, or resumes it when the session continues
// one. A started thread is kept here, not in the session, until the first
// turn uses it: the session is stored without a thread before its first
// turn (another agent process may load it, and codex writes the thread's
// rollout only at its first turn). Beyond MaxWarm sessions waiting for
// their first prompt, Warm does nothing: a burst of sessions does not
// start a thread for each at once.
func (b *Backend) Warm(t backend.Turn) { b.warm(t, false) }

// warm starts preparing the session's thread in the background: when
// needed, also beyond MaxWarm, unless it is being prepared already.
func (b *Backend) warm(t backend.Turn, needed bool) {
	p := &preparedThread{done: make(chan struct{})}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	_, had := b.prepared[t.SessionID]
	switch {
	case needed && had:
		return
	case !needed && !had && b.waitingWarm() >= b.maxWarm():
		b.log.Debug("not preparing the session's codex thread ahead: enough sessions wait for their first prompt; it starts with the first prompt",
			"session", t.SessionID, "max", b.maxWarm())
		return
	}
	p.pinned = needed
	b.prepared[t.SessionID] = p
	after := b.warmInOrder(p)
	b.warming.Add(1) // under b.mu: Close sets closed under it before it waits
	go func() {
		defer b.warming.Done()
		defer close(p.done)
		defer func() { p.ready = b.now() }()
		defer recovery.Recover(b.log, "preparing the session's codex thread", &p.err) // the prompt prepares again
		b.awaitTurn(after)
		p.server, p.thread, p.err = b.prepare(t)
		if p.err != nil {
			b.log.Warn("could not prepare the session's codex thread; the first prompt will", "session", t.SessionID, "err", p.err)
		}
	}()
}

// warmStale is how long a thread started ahead waits for its session's
// first prompt before it stops counting against MaxWarm: long past a burst
// of sessions (an editor restoring them: seconds), short enough that
// sessions restored and never used do not keep every later one from
// having its thread ready. At most MaxWarm threads a warmStale are thus
// started for sessions that never prompt.
const warmStale = time.Minute

// waitingWarm is how many sessions count against MaxWarm (under b.mu):
// those whose thread is being prepared ahead, or was less than warmStale
// ago, and not needed before their first prompt (a thread request's:
// beyond the bound).
func (b *Backend) waitingWarm() int {
	now, n := b.now(), 0
	for _, p := range b.prepared {
		if p.pinned {
			continue
		}
		select {
		case <-p.done:
			if now.Sub(p.ready) >= warmStale {
				continue
			}
		default:
		}
		n++
	}
	return n
}

func (b *Backend) maxWarm() int {
	if b.MaxWarm == 0 {
		return backend.DefaultMaxWarm
	}
	return b.MaxWarm
}

// Forget drops the thread Warm prepared for a session that closed before
// its first turn took it. Codex has no way to unload a thread (an
// app-server keeps every thread it loaded until it exits; see
// docs/codex-app-server.md), so the thread itself stays in codex; only the
// agent's hold on it goes.
func (b *Backend) Forget(sessionID string) {
	b.mu.Lock()
	delete(b.prepared, sessionID)
	b.mu.Unlock()
}

// preparedThread is a thread Warm started (or resumed) for a session.
type preparedThread struct {
	done   chan struct{}
	server *codexapp.Server // the process it lives in
	thread string           // started here; "" when Warm resumed the session's own
	err    error
	ready  time.Time // when done was closed
	pinned bool      // needed by a thread request before the first prompt (under b.mu)
}

func (b *Backend) prepare(t backend.Turn) (*codexapp.Server, string, error) {
	ctx, cancel := context.WithTimeout(b.life, time.Minute)
	defer cancel()
	server, err := b.running(ctx)
	if err != nil {
		return nil, "", err
	}
	thread, started, err := b.openThread(ctx, server, t)
	if err != nil || !started {
		return server, "", err
	}
	return server, thread, nil
}

// openThread makes the turn's thread live in server: a new one when the
// turn has none (started is true), else the turn's own, resumed unless
// server has it loaded already.
func (b *Backend) openThread(ctx context.Context, server *codexapp.Server, t backend.Turn) (thread string, started bool, err error) {
	if t.ThreadID == "" {
		res, err := codexapp.Call(ctx, server, protocol.ThreadStart, protocol.ThreadStartParams{ThreadOptions: threadParams(t)})
		if err != nil {
			return "", false, fmt.Errorf("codex app-server: thread/start: %w", err)
		}
		b.markLoaded(server, res.Thread.ID)
		b.noteSettings(res.Thread.ID, threadSettings{Model: res.Model})
		return res.Thread.ID, true, nil
	}
	if b.isLoaded(server, t.ThreadID) {
		return t.ThreadID, false, nil
	}
	resumed, err := codexapp.Call(ctx, server, protocol.ThreadResume, protocol.ThreadResumeParams{ThreadOptions: threadParams(t), ThreadID: t.ThreadID})
	if err != nil {
		var rpc *codexapp.RPCError
		if errors.As(err, &rpc) && strings.Contains(rpc.Message, "active writer") {
			// Codex lets one process at a time continue a thread, and an
			// app-server holds its threads until it exits.
			return "", false, fmt.Errorf("this conversation is open in another codex process (another codexacp, or codex itself); close it there and try again (%w)", err)
		}
		return "", false, fmt.Errorf("codex app-server: thread/resume %s: %w", t.ThreadID, err)
	}
	b.markLoaded(server, t.ThreadID)
	b.noteSettings(t.ThreadID, threadSettings{Model: resumed.Model, CollaborationMode: resumed.CollaborationMode})
	return t.ThreadID, false, nil
}

// takePrepared waits for what Warm prepared for the session (or ctx) and
// hands it over once: the thread it started in the live app-server, if any.
func (b *Backend) takePrepared(ctx context.Context, sessionID string, server *codexapp.Server) string {
	b.mu.Lock()
	p := b.prepared[sessionID]
	delete(b.prepared, sessionID)
	b.mu.Unlock()
	if p == nil {
		return ""
	}
	select {
	case <-p.done:
	case <-ctx.Done():
		return ""
	}
	if p.err != nil || p.server != server {
		return ""
	}
	return p.thread
}

// Close stops the app-server (its commands end with it). Turns started
// afterwards fail.
func (b *Backend) Close() error {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.stop()
	b.warming.Wait()
	b.mu.Lock()
	server := b.server
	b.server, b.closed = nil, true
	b.mu.Unlock()
	if server == nil {
		return nil
	}
	return server.Close()
}

// ReadUserConfig is codex's settings in cwd (codexapp.ReadUserConfig), asked
// of the backend's own app-server, started if none runs: the session's
// Warm, right after session/new reads them, needs it anyway, so a project
// with its own settings costs session/new a request, not a second codex.
func (b *Backend) ReadUserConfig(ctx context.Context, cwd string) (codex.UserConfig, error) {
	server, err := b.running(ctx)
	if err != nil {
		return codex.UserConfig{}, err
	}
	return codexapp.ReadUserConfig(ctx, server, cwd)
}

// running returns the live app-server, starting one when there is none or
// the last one died. The start runs outside b.mu, so that a caller whose
// ctx ends (a cancel) stops waiting for a slow start.
func (b *Backend) running(ctx context.Context) (*codexapp.Server, error) {
	for {
		b.mu.Lock()
		if b.closed {
			b.mu.Unlock()
			return nil, errors.New("codex app-server backend closed")
		}
		if b.server != nil {
			select {
			case <-b.server.Done():
				b.log.Warn("codex app-server had exited; starting a new one", "err", b.server.Err())
				b.server.Close()
				b.server = nil
			default:
				server := b.server
				b.mu.Unlock()
				return server, nil
			}
		}
		if starting := b.starting; starting != nil {
			b.mu.Unlock()
			select {
			case <-starting:
				continue
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			}
		}
		starting := make(chan struct{})
		b.starting = starting
		b.mu.Unlock()

		// Not ctx: others may be waiting for this start. Close cuts it short.
		startCtx, cancel := context.WithTimeout(b.life, time.Minute)
		server, err := b.start(startCtx, b.opts)
		cancel()
		b.mu.Lock()
		b.starting = nil
		close(starting)
		if err == nil && b.closed {
			b.mu.Unlock()
			server.Close()
			return nil, errors.New("codex app-server backend closed")
		}
		if err == nil {
			b.server, b.loaded = server, map[string]bool{}
		}
		b.mu.Unlock()
		if err != nil {
			return nil, err
		}
		return server, nil
	}
}

func (b *Backend) markLoaded(server *codexapp.Server, thread string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.server == server {
		b.loaded[thread] = true
	}
}

func (b *Backend) isLoaded(server *codexapp.Server, thread string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.server == server && b.loaded[thread]
}

// Run implements Backend.
func (b *Backend) Run(ctx context.Context, t backend.Turn, out backend.Output) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	server, err := b.running(ctx)
	if err != nil {
		return err
	}
	log := b.log.With("session", t.SessionID)
	h := NewTurnHandler(out, log)
	turnStarted, endActive := b.beginActive(t.SessionID)
	defer endActive()

	thread := t.ThreadID
	newThread := false
	if prepared := b.takePrepared(ctx, t.SessionID, server); prepared != "" && thread == "" {
		thread, newThread = prepared, true
	} else if thread, newThread, err = b.openThread(ctx, server, t); err != nil {
		return err
	}
	if newThread {
		// thread/started may have been delivered before the route existed.
		out.Event(events.Event{Type: events.TypeThreadStarted, ThreadID: thread})
	}
	b.warnSignIns(thread, out)
	h.subagents.route = server.Route
	remove := server.Route(thread, h)
	defer func() {
		remove()
		h.subagents.end()
		h.Close()
	}()

	sandbox, approval := appServerPolicy(t)
	// Not cancelled by ctx: a turn codex started without our learning its
	// id could not be interrupted. It answers at once; a cancel is acted on
	// right after.
	startCtx, cancelStart := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancelStart()
	params := protocol.TurnStartParams{
		ThreadID:       thread,
		Input:          appServerInput(t),
		Cwd:            t.Cwd,
		SandboxPolicy:  sandbox,
		ApprovalPolicy: approval,
		Model:          t.Model,
		Effort:         t.Effort,
	}
	switch t.ServiceTier {
	case "":
	case backend.ServiceTierOff:
		params.ServiceTier = protocol.Null[string]() // the thread's tier is kept across turns until cleared
	default:
		params.ServiceTier = protocol.Some(t.ServiceTier)
	}
	params.CollaborationMode = b.collaborationMode(t, thread)
	turnID, err := b.startTurn(startCtx, server, h, t, params)
	if err != nil {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return fmt.Errorf("codex app-server: turn/start: %w", err)
	}
	if turnID == "" {
		return errors.New("codex app-server: turn/start answered without a turn id")
	}
	h.Started(turnID)
	log.Debug("app-server turn started", "thread", thread, "turn", turnID)
	turnStarted(server, thread, turnID)

	select {
	case <-h.Ended(turnID):
		// The prompt answers once the subagents the turn started are done,
		// so that their work and questions are the turn's; a cancel while
		// they run interrupts them.
		if h.subagents.wait(ctx, server.Done()) {
			return nil
		}
		if ctx.Err() == nil {
			return errors.New("codex app-server exited during the turn")
		}
	case <-server.Done():
		// Its commands were reparented away from it: find them by their tag
		// (the session's random id) wherever they are.
		n, err := proc.KillTaggedAnywhere(sessionTag(t.SessionID))
		logKilled(log, n, err)
		if err := server.Err(); err != nil {
			return fmt.Errorf("codex app-server exited during the turn: %w", err)
		}
		return errors.New("codex app-server exited during the turn")
	case <-ctx.Done():
	}
	// Cancelled: interrupt the turn, wait for codex to end it, then end
	// whatever commands it leaves running.
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), interruptGrace)
	defer cancel()
	select {
	case <-h.Ended(turnID):
	default:
		if _, err := codexapp.Call(stopCtx, server, protocol.TurnInterrupt, protocol.TurnInterruptParams{ThreadID: thread, TurnID: turnID}); err != nil {
			log.Warn("turn/interrupt failed", "err", err)
		}
	}
	// A subagent must not go on working after a cancel.
	for child, turn := range h.subagents.running() {
		if _, err := codexapp.Call(stopCtx, server, protocol.TurnInterrupt, protocol.TurnInterruptParams{ThreadID: child, TurnID: turn}); err != nil {
			log.Warn("turn/interrupt of a subagent failed", "thread", child, "err", err)
		}
	}
	select {
	case <-h.Ended(turnID):
	case <-server.Done():
	case <-stopCtx.Done():
		log.Warn("codex app-server did not end the interrupted turn", "turn", turnID)
	}
	if !h.subagents.wait(stopCtx, server.Done()) {
		log.Warn("codex app-server did not end the interrupted subagents")
	}
	n, err := proc.KillTagged(server.Pid(), sessionTag(t.SessionID))
	logKilled(log, n, err)
	return fmt.Errorf("codex turn interrupted: %w", context.Cause(ctx))
}

// sessionTag is the environment entry every command of the session carries.
func sessionTag(sessionID string) string { return sessionTagEnv + "=" + sessionID }

// logKilled logs how ending a turn's commands went.
func logKilled(log *slog.Logger, n int, err error) {
	if err != nil {
		log.Warn("cannot end the turn's commands", "err", err)
	} else if n > 0 {
		log.Info("ended the turn's commands", "processes", n)
	}
}

// threadParams are the settings of thread/start, thread/resume and
// thread/fork: everything exec passes as -c overrides, here per thread, so
// one process serves sessions with different tokens and MCP servers.
func threadParams(t backend.Turn) protocol.ThreadOptions {
	config := protocol.ConfigOverrides{}
	for _, s := range t.EditorMCP {
		config["mcp_servers."+s.Name] = editorServerConfig(s)
	}
	// The tag that lets a cancel find this session's commands.
	config["shell_environment_policy.set."+sessionTagEnv] = t.SessionID
	params := protocol.ThreadOptions{Cwd: t.Cwd}
	if t.Tools != nil {
		config["mcp_servers."+backend.OwnServerName] = ownServerConfig(t.Tools)
		if t.Catalog != "" {
			config["model_catalog_json"] = t.Catalog
		}
		params.DeveloperInstructions = backend.DeveloperInstructions(t.Cwd)
	}
	params.Config = config
	_, params.ApprovalPolicy = appServerPolicy(t)
	params.Sandbox = t.Policy().Sandbox
	return params
}

// ownServerConfig is the file tools' server in a thread's config: the
// relay when there is one, else the HTTP endpoint. The token is sent over
// the app-server's stdin, never on a command line.
func ownServerConfig(tools *backend.TurnTools) protocol.MCPServerConfig {
	c := protocol.MCPServerConfig{
		Required:                 true,
		DefaultToolsApprovalMode: "approve",
		// A permission prompt waits for the user; codex must not time out first.
		ToolTimeoutSec: 86400,
	}
	if r := tools.Relay; r != nil {
		c.Command, c.Args = r.Command, append([]string{}, r.Args...)
		c.Env = map[string]string{r.TokenEnv: tools.Token}
		for k, v := range r.Env {
			c.Env[k] = v
		}
		return c
	}
	c.URL = tools.URL
	c.HTTPHeaders = map[string]string{"Authorization": "Bearer " + tools.Token}
	return c
}

// editorServerConfig is one of the editor's MCP servers in a thread's
// config. Header values go inline: the thread's config travels over the
// app-server's stdin, and the process's environment is shared by every
// session.
func editorServerConfig(s backend.MCPServer) protocol.MCPServerConfig {
	if s.URL != "" {
		headers := map[string]string{}
		for _, h := range s.Headers {
			headers[h.Name] = h.Value
		}
		return protocol.MCPServerConfig{URL: s.URL, HTTPHeaders: headers}
	}
	env := map[string]string{}
	for _, e := range s.Env {
		env[e.Name] = e.Value
	}
	return protocol.MCPServerConfig{Command: s.Command, Args: append([]string{}, s.Args...), Env: env}
}

// appServerPolicy is the sandbox and approval policy of a turn in the
// session's mode (modePolicy), layered on the user's configuration, with
// codex asking the user:
//   - read-only: read-only sandbox; codex asks only whether one of the
//     editor's MCP tools may run (readOnlyApproval), never for a command
//     (one that needs more fails);
//   - ask: read-only sandbox; a command that needs more asks (on-request);
//   - auto: workspace-write sandbox with the user's writable roots, network
//     access and /tmp exclusions, plus the additional directories; escalations ask;
//   - full-access: no sandbox, no questions;
//   - custom: the user's sandbox and approval policy as configured.
//
// A plan turn runs read-only whatever the mode (turnPolicy).
//
// Every turn states it in full: a turn's policy stays the thread's until
// another turn changes it, so leaving it out would keep the previous mode's.
func appServerPolicy(t backend.Turn) (sandbox *protocol.SandboxPolicy, approval protocol.AskForApproval) {
	p := t.Policy()
	approval = protocol.AskForApproval{Policy: p.Approval}
	if p.Approval == codex.ApprovalGranular {
		approval = protocol.AskForApproval{Granular: json.RawMessage(p.Granular)}
	}
	if t.Mode == backend.ModeReadOnly {
		approval = protocol.AskForApproval{Granular: readOnlyApproval}
	}
	switch p.Sandbox {
	case codex.SandboxDangerFullAccess:
		return &protocol.SandboxPolicy{Type: protocol.SandboxDangerFullAccess}, approval
	case codex.SandboxWorkspaceWrite:
		w := p.WorkspaceWrite
		// Each flag false by default: stated only when the user turned it on.
		return &protocol.SandboxPolicy{Type: protocol.SandboxWorkspaceWrite, WritableRoots: append([]string{}, w.WritableRoots...),
			NetworkAccess: w.NetworkAccess, ExcludeTmpdirEnvVar: w.ExcludeTmpdirEnvVar, ExcludeSlashTmp: w.ExcludeSlashTmp}, approval
	default:
		return &protocol.SandboxPolicy{Type: protocol.SandboxReadOnly}, approval
	}
}

// readOnlyApproval is read-only mode's approval policy on the app-server:
// "never", except that codex may ask the user (mcpServer/elicitation/request,
// ApproveMCPTool) before one of the editor's MCP tools not annotated
// read-only runs. Commands never ask for more than the sandbox (no
// escalation, no execpolicy prompt, no extra permissions). Exec keeps
// "never": it has no one to ask.
var readOnlyApproval = json.RawMessage(`{"granular":{"mcp_elicitations":true,"rules":false,"sandbox_approval":false,"request_permissions":false,"skill_approval":false}}`)

// TurnHandler receives one turn's notifications and requests from the
// app-server client.
type TurnHandler struct {
	conv *events.AppServer // used only by Notify, on the client's reader goroutine
	out  backend.Output
	log  *slog.Logger

	// mu is held while a notification is delivered: once Run has closed
	// the handler (on its way to answering the prompt) nothing more of
	// this turn reaches the editor.
	mu        sync.Mutex
	closed    bool
	turnID    string   // once turn/start answered; others' notifications are dropped
	completed turnDone // closed by turn/completed
	// firstStarted receives the id of the first turn/started while the
	// turn's id is not known (a compaction's start does not answer it).
	firstStarted chan string
	mcpCalls     []*events.Item // MCP tool calls started and not completed (mcpElicitation)
	subagents    subagents      // child threads routed to this turn (subagents.go)
}

func NewTurnHandler(out backend.Output, log *slog.Logger) *TurnHandler {
	return &TurnHandler{conv: events.NewAppServer(), out: out, log: log, completed: turnDone{},
		firstStarted: make(chan string, 1)}
}

// ended is closed once turn/completed for the turn has been delivered
// (possibly before the caller learnt the turn's id).
func (h *TurnHandler) Ended(turnID string) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.completed.of(turnID)
}

// started records the turn's id: notifications of other turns (a late one
// of an interrupted turn) are not this turn's.
func (h *TurnHandler) Started(turnID string) {
	h.mu.Lock()
	h.turnID = turnID
	h.mu.Unlock()
}

// close waits for a notification being delivered and drops any later one.
func (h *TurnHandler) Close() {
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
}

// notice is what the turn handlers read of a notification's params
// themselves (events.AppServer converts the rest): decoded once per
// notification.
type notice struct {
	TurnID string `json:"turnId"`
	Turn   struct {
		ID string `json:"id"`
	} `json:"turn"`
	Item struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"item"`
}

// readNotice decodes params. A field that does not fit is left empty and
// does not spoil the others (json.Unmarshal goes on past a type mismatch):
// an item of an unexpected shape still names its turn.
func readNotice(params json.RawMessage) notice {
	var n notice
	_ = json.Unmarshal(params, &n)
	return n
}

// turn is the turn the notification names (params.turnId or
// params.turn.id), "" when it names none.
func (n notice) turn() string {
	return firstNonEmpty(n.TurnID, n.Turn.ID)
}

// turnOf is the turn a notification names.
func turnOf(params json.RawMessage) string {
	return readNotice(params).turn()
}

// turnDone holds a channel per turn id, closed when the turn completes;
// its owner's mutex is held.
type turnDone map[string]chan struct{}

// of is the turn's channel.
func (d turnDone) of(turn string) chan struct{} {
	ch, ok := d[turn]
	if !ok {
		ch = make(chan struct{})
		d[turn] = ch
	}
	return ch
}

// close closes the turn's channel, once.
func (d turnDone) close(turn string) {
	ch := d.of(turn)
	select {
	case <-ch:
	default:
		close(ch)
	}
}

// Notify implements codexapp.Handler.
func (h *TurnHandler) Notify(method string, params json.RawMessage) {
	n := readNotice(params)
	turn := n.turn()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed || (h.turnID != "" && turn != "" && turn != h.turnID) {
		h.log.Debug("app-server notification of another turn dropped", "method", method, "turn", turn)
		return
	}
	if method == protocol.TurnStarted.Method() && h.turnID == "" && turn != "" {
		select {
		case h.firstStarted <- turn:
		default:
		}
	}
	evs, err := h.conv.Convert(method, params)
	if err != nil {
		h.log.Warn("unreadable app-server notification", "method", method, "err", err, "bytes", len(params))
	}
	for _, ev := range evs {
		h.trackMCPCall(ev)
		h.out.Event(ev)
		if ev.Item != nil {
			for _, child := range ev.Item.ChildThreads() {
				h.subagents.add(h, child, ev.Item.ID)
			}
		}
	}
	if method == protocol.ItemCompleted.Method() {
		h.notePlan(n)
	}
	if method == protocol.TurnCompleted.Method() && turn != "" {
		h.completed.close(turn)
	}
	h.closeIfOver()
}

// closeIfOver closes the handler once the turn's work is done: its
// turn/completed was delivered and no subagent's turn runs. Run would close
// it on its way to answering; closing it here, on the reader goroutine,
// makes what codex sends right after (its subAgentActivity "completed" item
// for a subagent whose turn just ended) dropped every time rather than
// shown or not as the goroutines happen to run. h.mu is held.
func (h *TurnHandler) closeIfOver() {
	if h.closed || h.turnID == "" {
		return
	}
	select {
	case <-h.completed.of(h.turnID):
	default:
		return
	}
	if len(h.subagents.running()) == 0 {
		h.closed = true
	}
}

// Request implements codexapp.Handler: approvals go to the user;
// what codexacp does not offer is declined so that codex never waits.
func (h *TurnHandler) Request(ctx context.Context, method string, params json.RawMessage) (any, error) {
	switch method {
	case protocol.ToolRequestUserInput.Method():
		return h.userInput(ctx, params)
	case protocol.CommandExecutionRequestApproval.Method():
		p, err := protocol.CommandExecutionRequestApproval.Decode(params)
		if err != nil {
			return nil, &codexapp.RPCError{Code: protocol.CodeInvalidParams, Message: "codexacp: unreadable approval request: " + err.Error()}
		}
		d := h.out.ApproveCommand(ctx, backend.CommandApproval{ItemID: p.ItemID, Command: p.Command, Cwd: p.Cwd, Reason: p.Reason})
		h.log.Info("command approval", "item", p.ItemID, "decision", d)
		return protocol.CommandExecutionRequestApprovalResponse{Decision: d.String()}, nil
	case protocol.FileChangeRequestApproval.Method():
		// Edits go through the acp tools; codex's own patches are not offered.
		return protocol.FileChangeRequestApprovalResponse{Decision: protocol.DecisionDecline}, nil
	case protocol.PermissionsRequestApproval.Method():
		return protocol.PermissionsRequestApprovalResponse{}, nil // none granted
	case protocol.McpServerElicitationRequest.Method():
		return h.mcpElicitation(ctx, params)
	}
	h.log.Debug("app-server request not supported", "method", method)
	return nil, &codexapp.RPCError{Code: protocol.CodeMethodNotFound, Message: "codexacp does not support " + method}
}

// trackMCPCall keeps the MCP tool calls in progress, which codex's approval
// questions do not name (mcpElicitation); h.mu is held.
func (h *TurnHandler) trackMCPCall(ev events.Event) {
	if ev.Item == nil || ev.Item.Type != events.ItemMCPToolCall {
		return
	}
	switch ev.Type {
	case events.TypeItemStarted:
		h.mcpCalls = append(h.mcpCalls, ev.Item)
	case events.TypeItemCompleted:
		h.mcpCalls = slices.DeleteFunc(h.mcpCalls, func(it *events.Item) bool { return it.ID == ev.Item.ID })
	}
}

// mcpCallItem is the id of the call in progress a question is about: the
// newest of that server's tool (any of its tools when tool is ""),
// preferring one with the same arguments. Codex announces the call
// (item/started) before it asks.
func (h *TurnHandler) mcpCallItem(server, tool string, args json.RawMessage) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	found := ""
	for i := len(h.mcpCalls) - 1; i >= 0; i-- {
		it := h.mcpCalls[i]
		if it.Server != server || (tool != "" && it.Tool != tool) {
			continue
		}
		if sameJSONArgs(it.Arguments, args) {
			return it.ID
		}
		if found == "" {
			found = it.ID
		}
	}
	return found
}

func sameJSONArgs(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ja, _ := json.Marshal(x) // map keys sorted: a canonical form
	jb, _ := json.Marshal(y)
	return string(ja) == string(jb)
}

// mcpElicitation answers an mcpServer/elicitation/request. Codex asks
// this way before it runs an MCP tool that needs approval (a form with no
// fields whose _meta.codex_approval_kind is "mcp_tool_call"); that question
// goes to the editor as a permission question. Other elicitations are an
// MCP server's own questions (mode form or url), which go to an editor
// that declared elicitation (ElicitMCP); codex's own form modes
// (openai/form) are declined.
func (h *TurnHandler) mcpElicitation(ctx context.Context, params json.RawMessage) (any, error) {
	p, err := protocol.McpServerElicitationRequest.Decode(params)
	if err != nil {
		return nil, &codexapp.RPCError{Code: protocol.CodeInvalidParams, Message: "codexacp: unreadable elicitation request: " + err.Error()}
	}
	meta := protocol.ElicitationMeta{}
	if p.Meta != nil {
		meta = *p.Meta
	}
	if meta.Kind != protocol.ApprovalKindMCPToolCall || meta.ToolName == "" {
		if ctx.Err() != nil || (p.Mode != protocol.ElicitForm && p.Mode != protocol.ElicitURL) {
			h.log.Debug("MCP elicitation declined", "server", p.ServerName, "mode", p.Mode, "kind", meta.Kind)
			return elicitationAnswer(backend.MCPDecline)
		}
		a := h.out.ElicitMCP(ctx, backend.MCPElicitation{
			ItemID: h.mcpCallItem(p.ServerName, "", nil), Server: p.ServerName, Message: p.Message,
			Mode: p.Mode, Schema: p.RequestedSchema, URL: p.URL, ElicitationID: p.ElicitationID,
		})
		h.log.Info("MCP server's question", "server", p.ServerName, "mode", p.Mode, "action", a.Action)
		return elicitationAnswer(a)
	}
	req := backend.MCPToolApproval{
		ItemID:     h.mcpCallItem(p.ServerName, meta.ToolName, meta.ToolParams),
		Server:     p.ServerName,
		Tool:       meta.ToolName,
		Arguments:  meta.ToolParams,
		Message:    p.Message,
		ForSession: persistOffers(meta.Persist, protocol.PersistSession),
	}
	d := h.out.ApproveMCPTool(ctx, req)
	h.log.Info("MCP tool approval", "item", req.ItemID, "server", req.Server, "tool", req.Tool, "decision", d)
	return mcpApprovalAnswer(d), nil
}

// mcpApprovalAnswer is the elicitation result codex reads as the decision:
// accept runs the call, with _meta.persist "session" codex also remembers
// it for the thread; decline and cancel skip it, and the model is told.
func mcpApprovalAnswer(d backend.ApprovalDecision) protocol.McpServerElicitationRequestResponse {
	switch d {
	case backend.ApprovalAccept:
		return protocol.McpServerElicitationRequestResponse{Action: protocol.ElicitAccept}
	case backend.ApprovalAcceptForSession:
		return protocol.McpServerElicitationRequestResponse{Action: protocol.ElicitAccept,
			Meta: &protocol.ElicitationResponseMeta{Persist: protocol.PersistSession}}
	case backend.ApprovalCancel:
		return protocol.McpServerElicitationRequestResponse{Action: protocol.ElicitCancel}
	default:
		return protocol.McpServerElicitationRequestResponse{Action: protocol.ElicitDecline}
	}
}

// elicitationAnswer is the user's answer to an MCP server's question as
// codex reads it: the action, and the form's content when there is any.
func elicitationAnswer(a backend.MCPElicitationAnswer) (protocol.McpServerElicitationRequestResponse, error) {
	res := protocol.McpServerElicitationRequestResponse{Action: a.Action}
	if len(a.Content) > 0 {
		content, err := json.Marshal(a.Content)
		if err != nil {
			return res, err
		}
		res.Content = content
	}
	return res, nil
}

// persistOffers reports whether codex's _meta.persist (a string or a list
// of them) offers want.
func persistOffers(raw json.RawMessage, want string) bool {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return one == want
	}
	var many []string
	if json.Unmarshal(raw, &many) == nil {
		for _, s := range many {
			if s == want {
				return true
			}
		}
	}
	return false
}

// appServerInput is the turn's prompt as turn/start input items: its
// images first, as codex exec attaches them, then the text. An inline
// image goes as a data URL (no file to write, nor to remove after a
// crash); a file of the user's by its path, which codex reads and names
// to the model, as exec's --image does.
func appServerInput(t backend.Turn) []protocol.UserInput {
	input := make([]protocol.UserInput, 0, len(t.Images)+1)
	for _, img := range t.Images {
		if img.Path != "" {
			input = append(input, protocol.UserInput{Type: protocol.InputLocalImage, Path: img.Path})
		} else {
			input = append(input, protocol.UserInput{Type: protocol.InputImage, URL: img.DataURL()})
		}
	}
	return append(input, protocol.UserInput{Type: protocol.InputText, Text: t.Prompt})
}

// activeTurn is a session's turn running in the app-server, from the
// start of its Run. ready is closed once turn/start has answered (turn is
// set) or the Run ended without a turn running (turn is ""); the fields are
// guarded by the backend's mu.
type activeTurn struct {
	ready        chan struct{}
	server       *codexapp.Server
	thread, turn string
}

// beginActive makes the session's Run its running turn: started names the
// turn once codex has started it, end (deferred by Run) removes it.
func (b *Backend) beginActive(sessionID string) (started func(server *codexapp.Server, thread, turn string), end func()) {
	a := &activeTurn{ready: make(chan struct{})}
	b.mu.Lock()
	b.active[sessionID] = a
	b.mu.Unlock()
	var once sync.Once
	markReady := func() { once.Do(func() { close(a.ready) }) }
	started = func(server *codexapp.Server, thread, turn string) {
		b.mu.Lock()
		a.server, a.thread, a.turn = server, thread, turn
		b.mu.Unlock()
		markReady()
	}
	end = func() {
		b.mu.Lock()
		a.turn = ""
		if b.active[sessionID] == a {
			delete(b.active, sessionID)
		}
		b.mu.Unlock()
		markReady()
	}
	return started, end
}

// Steer implements backend.Backend: turn/steer adds text to the session's running
// turn as the user's message. Codex refuses when that turn is no longer
// the thread's active one (it is ending).
func (b *Backend) Steer(ctx context.Context, sessionID, text string, images []backend.Image) error {
	b.mu.Lock()
	a := b.active[sessionID]
	b.mu.Unlock()
	if a == nil {
		return backend.ErrNoRunningTurn
	}
	// A prompt that comes while the turn is starting (turn/start sent, its
	// answer not yet handled) waits for it: whether the prompt joins the
	// turn must not depend on which of the two messages the agent happened
	// to handle first.
	select {
	case <-a.ready:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	b.mu.Lock()
	server, thread, turn := a.server, a.thread, a.turn
	b.mu.Unlock()
	if turn == "" {
		return backend.ErrNoRunningTurn
	}
	params := protocol.TurnSteerParams{
		ThreadID:       thread,
		ExpectedTurnID: turn,
		Input:          appServerInput(backend.Turn{Prompt: text, Images: images}),
	}
	if _, err := codexapp.Call(ctx, server, protocol.TurnSteer, params); err != nil {
		return fmt.Errorf("codex app-server: turn/steer: %w", err)
	}
	return nil
}

// ForkThread implements backend.Backend: codex copies t.ThreadID's history
// into a new thread (`thread/fork`), set up for t's session (its tool
// token, MCP servers, mode), and loads it. It returns the new thread's id.
func (b *Backend) ForkThread(ctx context.Context, t backend.Turn) (string, error) {
	server, err := b.running(ctx)
	if err != nil {
		return "", err
	}
	params := protocol.ThreadForkParams{ThreadOptions: threadParams(t), ThreadID: t.ThreadID,
		// The history is the editor's already (it is the source session's).
		ExcludeTurns: true}
	res, err := codexapp.Call(ctx, server, protocol.ThreadFork, params)
	if err != nil {
		return "", fmt.Errorf("codex app-server: thread/fork %s: %w", t.ThreadID, err)
	}
	if res.Thread.ID == "" {
		return "", errors.New("codex app-server: thread/fork answered without a thread id")
	}
	b.markLoaded(server, res.Thread.ID)
	return res.Thread.ID, nil
}

// DeleteThread implements backend.Backend: codex deletes the thread and its
// rollout (`thread/delete`).
func (b *Backend) DeleteThread(ctx context.Context, threadID string) error {
	server, err := b.running(ctx)
	if err != nil {
		return err
	}
	if _, err := codexapp.Call(ctx, server, protocol.ThreadDelete, protocol.ThreadDeleteParams{ThreadID: threadID}); err != nil {
		return fmt.Errorf("codex app-server: thread/delete %s: %w", threadID, err)
	}
	b.mu.Lock()
	if b.server == server {
		delete(b.loaded, threadID)
	}
	b.mu.Unlock()
	return nil
}

// startTurn starts t on the thread and returns the turn's id: turn/start
// with params for a prompt (plus the skill it runs), review/start for a
// review, thread/compact/start for a compaction (whose answer has no turn:
// its id comes with turn/started).
func (b *Backend) startTurn(ctx context.Context, server *codexapp.Server, h *TurnHandler, t backend.Turn, params protocol.TurnStartParams) (string, error) {
	thread := params.ThreadID
	switch {
	case t.Review != nil:
		target := protocol.ReviewTarget{Type: protocol.ReviewUncommittedChanges}
		switch {
		case t.Review.Branch != "":
			target = protocol.ReviewTarget{Type: protocol.ReviewBaseBranch, Branch: t.Review.Branch}
		case t.Review.Commit != "":
			target = protocol.ReviewTarget{Type: protocol.ReviewCommit, SHA: t.Review.Commit}
		case t.Prompt != "":
			target = protocol.ReviewTarget{Type: protocol.ReviewCustom, Instructions: t.Prompt}
		}
		started, err := codexapp.Call(ctx, server, protocol.ReviewStart, protocol.ReviewStartParams{ThreadID: thread, Target: target, Delivery: protocol.ReviewInline})
		return started.Turn.ID, err
	case t.Compact:
		if _, err := codexapp.Call(ctx, server, protocol.ThreadCompactStart, protocol.ThreadCompactStartParams{ThreadID: thread}); err != nil {
			return "", err
		}
		select {
		case id := <-h.firstStarted:
			return id, nil
		case <-server.Done():
			return "", codexapp.ErrClosed
		case <-ctx.Done():
			return "", context.Cause(ctx)
		}
	case t.Skill != nil:
		// As codex's own clients run a skill: the text names it ($name)
		// and a skill item points codex at its SKILL.md.
		params.Input = append(params.Input, protocol.UserInput{Type: protocol.InputSkill, Name: t.Skill.Name, Path: t.Skill.Path})
	}
	started, err := codexapp.Call(ctx, server, protocol.TurnStart, params)
	return started.Turn.ID, err
}

// Skills implements backend.Backend with skills/list for the turn's cwd, once
// the session's thread is ready (so that codex sees the requests in the
// same order every time); one request for sessions in one cwd that ask at
// once.
func (b *Backend) Skills(ctx context.Context, t backend.Turn) ([]backend.Skill, error) {
	b.awaitPrepared(ctx, t.SessionID)
	server, err := b.running(ctx)
	if err != nil {
		return nil, err
	}
	return b.listings.List(ctx, t.Cwd, func(ctx context.Context) ([]backend.Skill, error) { return codexapp.ListSkills(ctx, server, t.Cwd) })
}

// threadRequest sends codex the request m about the session's thread (the
// slash commands' thread operations), with the params made for that thread,
// and returns its answer.
func threadRequest[P, R any](ctx context.Context, b *Backend, t backend.Turn, m protocol.Request[P, R], params func(thread string) P) (R, error) {
	var zero R
	server, thread, err := b.sessionThread(ctx, t)
	if err != nil {
		return zero, err
	}
	res, err := codexapp.Call(ctx, server, m, params(thread))
	if err != nil {
		return zero, fmt.Errorf("codex app-server: %s: %w", m.Method(), err)
	}
	return res, nil
}

// sessionThread is the server and thread a request about the session's
// thread goes to. A session before its first turn has its thread prepared
// here (Warm, or now when Warm did not): the request goes to that thread,
// which the first turn then takes.
func (b *Backend) sessionThread(ctx context.Context, t backend.Turn) (*codexapp.Server, string, error) {
	prepared := b.awaitPrepared(ctx, t.SessionID)
	if prepared == nil && t.ThreadID == "" {
		// Not prepared ahead (beyond MaxWarm): the request needs its
		// thread now.
		b.warm(t, true)
		prepared = b.awaitPrepared(ctx, t.SessionID)
	}
	server, err := b.running(ctx)
	if err != nil {
		return nil, "", err
	}
	thread := t.ThreadID
	switch {
	case thread != "":
		if thread, _, err = b.openThread(ctx, server, t); err != nil {
			return nil, "", err
		}
	case prepared != nil && prepared.server == server && prepared.thread != "":
		thread = prepared.thread
	default:
		return nil, "", errors.New("the session has no codex thread yet; send a prompt first")
	}
	return server, thread, nil
}

// goalOf is codex's ThreadGoal as the backend's Goal; nil: none is set.
func goalOf(g *protocol.ThreadGoal) *backend.Goal {
	if g == nil {
		return nil
	}
	return &backend.Goal{Objective: g.Objective, Status: g.Status, TokenBudget: g.TokenBudget,
		TokensUsed: g.TokensUsed, TimeUsedSeconds: g.TimeUsedSeconds}
}

// Goal implements backend.Backend: thread/goal/get.
func (b *Backend) Goal(ctx context.Context, t backend.Turn) (*backend.Goal, error) {
	res, err := threadRequest(ctx, b, t, protocol.ThreadGoalGet, func(thread string) protocol.ThreadGoalGetParams {
		return protocol.ThreadGoalGetParams{ThreadID: thread}
	})
	if err != nil {
		return nil, err
	}
	return goalOf(res.Goal), nil
}

// SetGoal implements backend.Backend: thread/goal/set, an active goal the
// user set.
func (b *Backend) SetGoal(ctx context.Context, t backend.Turn, objective string) (*backend.Goal, error) {
	res, err := threadRequest(ctx, b, t, protocol.ThreadGoalSet, func(thread string) protocol.ThreadGoalSetParams {
		return protocol.ThreadGoalSetParams{ThreadID: thread, Objective: objective, Status: protocol.GoalActive, Origin: protocol.GoalOriginUser}
	})
	if err != nil {
		return nil, err
	}
	return goalOf(res.Goal), nil
}

// ClearGoal implements backend.Backend: thread/goal/clear.
func (b *Backend) ClearGoal(ctx context.Context, t backend.Turn) error {
	_, err := threadRequest(ctx, b, t, protocol.ThreadGoalClear, func(thread string) protocol.ThreadGoalClearParams {
		return protocol.ThreadGoalClearParams{ThreadID: thread}
	})
	return err
}

// RenameThread implements backend.Backend: thread/name/set.
func (b *Backend) RenameThread(ctx context.Context, t backend.Turn, name string) error {
	_, err := threadRequest(ctx, b, t, protocol.ThreadNameSet, func(thread string) protocol.ThreadSetNameParams {
		return protocol.ThreadSetNameParams{ThreadID: thread, Name: name}
	})
	return err
}

// MCPServerStatus implements backend.Backend: mcpServerStatus/list, the
// tools and auth status only.
func (b *Backend) MCPServerStatus(ctx context.Context, t backend.Turn) ([]backend.MCPServerStatus, error) {
	res, err := threadRequest(ctx, b, t, protocol.McpServerStatusList, func(thread string) protocol.ListMcpServerStatusParams {
		return protocol.ListMcpServerStatusParams{ThreadID: thread, Detail: protocol.McpStatusToolsAndAuthOnly}
	})
	if err != nil {
		return nil, err
	}
	out := make([]backend.MCPServerStatus, 0, len(res.Data))
	for _, m := range res.Data {
		st := backend.MCPServerStatus{Name: m.Name, RuntimeStatus: m.RuntimeStatus, AuthStatus: m.AuthStatus,
			Tools: slices.Sorted(maps.Keys(m.Tools))}
		if m.ToolsError != nil {
			st.ToolsError = *m.ToolsError
		}
		out = append(out, st)
	}
	return out, nil
}

// awaitPrepared waits for what Warm is preparing for the session, if
// anything, and returns it without taking it: the thread is then needed
// before the first prompt, and no longer counts against MaxWarm.
func (b *Backend) awaitPrepared(ctx context.Context, sessionID string) *preparedThread {
	b.mu.Lock()
	p := b.prepared[sessionID]
	if p != nil {
		p.pinned = true // its thread is the session's now, not one ahead
	}
	b.mu.Unlock()
	if p == nil {
		return nil
	}
	select {
	case <-p.done:
		return p
	case <-ctx.Done():
		return nil
	}
}

// WatchSkills implements backend.Backend.
func (b *Backend) WatchSkills(f func()) {
	b.mu.Lock()
	b.onSkills = f
	b.mu.Unlock()
}

// unrouted receives the app-server's notifications about no thread (on the
// client's reader goroutine: it must not call the server).
func (b *Backend) unrouted(method string, params json.RawMessage) {
	if b.limits.notify(method, params) || b.mcpAuth.notify(method, params) || method != protocol.SkillsChanged.Method() {
		return
	}
	// Before any refresh starts: refreshes must not join a listing that
	// began before the change.
	b.listings.Changed()
	b.mu.Lock()
	f := b.onSkills
	b.mu.Unlock()
	if f != nil {
		go func() {
			defer recovery.Recover(b.log, "skills changed", nil)
			f()
		}()
	}
}

// LoginAPIKey makes key codex's login through the app-server
// (account/login/start with type apiKey: codex saves it in its home, as
// `codex login --with-api-key` does) and checks with account/read that codex
// now reports an API-key account. The key travels on the process's stdin
// only; codex takes any string without asking OpenAI, so this
// confirms that codex will use the key, not that OpenAI accepts it. Errors
// never quote the key.
func (b *Backend) LoginAPIKey(ctx context.Context, key string) error {
	server, err := b.running(ctx)
	if err != nil {
		return err
	}
	if _, err := codexapp.Call(ctx, server, protocol.AccountLoginStart, protocol.LoginAccountParams{Type: protocol.LoginAPIKey, APIKey: key}); err != nil {
		return fmt.Errorf("%s: %w", protocol.AccountLoginStart.Method(), err)
	}
	read, err := codexapp.Call(ctx, server, protocol.AccountRead, protocol.GetAccountParams{})
	if err != nil {
		return fmt.Errorf("%s: %w", protocol.AccountRead.Method(), err)
	}
	if read.Account == nil || read.Account.Type != protocol.LoginAPIKey {
		got := "no account"
		if read.Account != nil {
			got = "a " + read.Account.Type + " account"
		}
		return fmt.Errorf("codex reports %s after the API-key login", got)
	}
	return nil
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}
