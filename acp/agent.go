// Package acp is codexacp's ACP agent: it answers an editor's initialize,
// session and prompt requests, runs each prompt as a Codex turn through a
// Backend, and streams what Codex does back as session updates.
package acp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"slices"
	"sync"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/codex"
	"github.com/codexacp/codexacp/fsops"
	"github.com/codexacp/codexacp/internal/recovery"
	"github.com/codexacp/codexacp/internal/sessionstore"
	"github.com/codexacp/codexacp/internal/shelledits"
	"github.com/codexacp/codexacp/internal/stdioguard"
	"github.com/codexacp/codexacp/mcp"
)

// Options configure an Agent.
type Options struct {
	Backend backend.Backend
	Version string       // reported in agentInfo
	Logger  *slog.Logger // nil: slog.Default()
	// Tools serves the file tools to codex. Nil: codex runs without them
	// (and keeps its own editing).
	Tools *mcp.Host
	// Catalog is the path of a model catalog without codex's own
	// apply_patch tool. Empty: codex's bundled catalog is used.
	Catalog string
	// ContextWindow is the model's context window in tokens, reported in
	// usage_update. 0: unknown, no usage_update is sent.
	ContextWindow int
	// Models are codex's models for the model picker, codex's default
	// first (codex.Models). None: no model or effort picker.
	Models []codex.Model
	// ModelInfo, when set, stands for Catalog, ContextWindow and Models: it is
	// called once, when a session first needs them, and may block until
	// codex's catalog is ready (so that the agent answers initialize at
	// once).
	ModelInfo func() ModelInfo
	// CodexVersion is codex's version (codex --version) for /status; nil
	// or "": unknown. Called when /status needs it, not before, so that
	// session/new never waits for a codex run.
	CodexVersion func() string
	// Initialized, when set, is called once, after the answer to the
	// editor's initialize has been written: the launcher's start-up work
	// that this answer does not need (sign-in status, settings, catalog)
	// waits for it, so that it does not share the CPU with the answer.
	// It must not block.
	Initialized func()
	// DefaultModel and DefaultEffort are what the user configured with -c
	// (model=, model_reasoning_effort=); empty: UserConfig's (config.toml),
	// else codex's defaults.
	DefaultModel, DefaultEffort string
	// DefaultServiceTier is the user's -c service_tier= ("fast" read as
	// codex reads it, "priority"); empty: codex's default.
	DefaultServiceTier string
	// StateDir keeps session records (session id → codex thread, cwd, mode,
	// title) so that session/list and session/load work after a restart.
	// Empty: sessions live only as long as the process, and neither
	// capability is advertised.
	StateDir string
	// EditorTimeout bounds one editor fs request (fs/read_text_file,
	// fs/write_text_file). 0: a minute.
	EditorTimeout time.Duration
	// LocalFiles is the disk adapter used when the editor lacks fs methods.
	// Nil: fsops.NewLocalFiles().
	LocalFiles fsops.Files
	// ObserveTools, when set, wraps each session's tool observer (the
	// transcript recorder uses it to see every tool call and its result).
	ObserveTools func(sessionID string, roots []string, obs mcp.Observer) mcp.Observer
	// ObserveStored, when set, is told the path of each stored file that
	// session/list and session/load read, before they answer: the session
	// records a list returns, and the record and codex's rollout of the
	// thread a load restores (the transcript recorder copies them, so that a
	// replay can list and load too).
	ObserveStored func(path string)
	// UserConfig returns the user's codex sandbox and approval settings
	// (appserver.ReadUserConfig), on which the modes are layered. It is called
	// once, when the first session needs it, and may block until codex has
	// answered. Nil: nothing configured.
	UserConfig func() codex.UserConfig
	// ProjectUserConfig returns the same settings as codex applies in a
	// session's cwd, with its project layers (a trusted project's
	// .codex/config.toml); ok false: no project file names them there
	// (codex not asked), and UserConfig's apply. ok true says codex was
	// asked, not that a project layer applied: for an untrusted project
	// codex answers the user's settings. Called at each session/new, load, resume and
	// fork, before the answer (the modes offered depend on it). Nil: no
	// project layers are read.
	ProjectUserConfig func(ctx context.Context, cwd string) (user codex.UserConfig, ok bool, err error)
	// Auth tells whether codex can sign in and which sign-in methods to
	// offer (auth.go). Zero: no methods, and codex counts as signed in.
	Auth Auth

	// beforePromptRegisters runs in session/prompt's handler before the
	// prompt registers (tests hold it back, as a busy machine may). nil: none.
	beforePromptRegisters func()
	// promptRegisterBound, when set, says how long each session/cancel
	// waits for the prompts read before it (tests). nil: promptRegisterBound.
	promptRegisterBound func() time.Duration
	// toolCallGrace overrides how long a turn's end waits for its tool
	// calls (tests reach the given-up path with it). 0: toolCallGrace.
	toolCallGrace time.Duration
	// shutdownGrace overrides shutdownGrace (tests). 0: shutdownGrace.
	shutdownGrace time.Duration
	// removeFile removes a file an undo takes back (tests inject its
	// errors). nil: removeRegular.
	removeFile func(path string) error
	// newShellTracker replaces shelledits.New (tests). nil: shelledits.New.
	newShellTracker func(roots []string, lim shelledits.Limits) *shelledits.Tracker
	// shellIdle overrides how long a session keeps its shell-edits watches
	// between turns (tests). 0: shellKeepIdle.
	shellIdle time.Duration
	// shellIdleBytes overrides maxIdleShellBytes (tests). 0: it.
	shellIdleBytes int64
	// noShellWarm: no shell-edits baseline ahead of a session's first
	// turn (tests of what turns alone do with the kept trackers).
	noShellWarm bool
}

// Agent is the ACP agent. Its methods are called concurrently by the SDK (one
// goroutine per request), so all state is guarded.
type Agent struct {
	opts    Options
	log     *slog.Logger
	conn    *acpsdk.AgentSideConnection
	store   *sessionstore.Store // nil without Options.StateDir
	storeMu sync.Mutex          // serialises persist
	saves   lateSaves           // persistSoon's

	modelInfo func() ModelInfo // Options.ModelInfo, once
	// modelInfoReady waits for modelInfo's value until ctx ends, and
	// reports whether it is there.
	modelInfoReady func(ctx context.Context) bool
	userConfig     func() codex.UserConfig // Options.UserConfig, once
	// userConfigReady waits for userConfig's value until ctx ends, and
	// reports whether it is there.
	userConfigReady func(ctx context.Context) bool
	auth            authState // codex's login status, cached
	// startBackend starts what every session needs, once (NewAgent).
	startBackend func()

	mu         sync.Mutex
	clientCaps acpsdk.ClientCapabilities
	// formsRefused: the editor answered elicitation/create "method not
	// found" although it declared form elicitation; questions go as
	// permission questions from then on (askForm).
	formsRefused bool
	sessions     map[string]*session
	tools        map[string]*toolsRegistration // by session id, live or closed

	// idleShells are the sessions' shell-edits trackers kept between
	// turns (acp/shelledits.go).
	idleShells idleShells
	// warming holds a token while a session's shell-edits baseline is
	// taken ahead of its first turn (warmShellEdits): one at a time.
	warming chan struct{}
}

var (
	_ acpsdk.Agent       = (*Agent)(nil)
	_ acpsdk.AgentLoader = (*Agent)(nil)
)

// onceInBackground computes f once, on a goroutine of its own started by
// the first call of get or ready, so that a caller can stop waiting for it
// when its request ends (ready reports false then). get waits for it. A
// panic in f is logged as what failed, and leaves the zero T.
func onceInBackground[T any](log *slog.Logger, what string, f func() T) (get func() T, ready func(ctx context.Context) bool) {
	var v T
	done := make(chan struct{})
	start := sync.OnceFunc(func() {
		go func() {
			defer close(done)
			defer recovery.Recover(log, what, nil) // v stays zero
			v = f()
		}()
	})
	get = func() T {
		start()
		<-done
		return v
	}
	ready = func(ctx context.Context) bool {
		start()
		select {
		case <-done:
			return true
		default:
		}
		select {
		case <-done:
			return true
		case <-ctx.Done():
			return false
		}
	}
	return get, ready
}

// settingsReady waits, until ctx ends, for what making a session reads:
// the user's codex settings and the model information. Either may take
// codex a while (a hung codex: up to its own timeout); a client that gives
// up on the request gets its answer at once.
func (a *Agent) settingsReady(ctx context.Context) error {
	if !a.userConfigReady(ctx) || !a.modelInfoReady(ctx) {
		return fmt.Errorf("waiting for codex's settings: %w", context.Cause(ctx))
	}
	return nil
}

// projectConfigTimeout bounds asking codex for a project's settings: the
// session's answer waits for it (a hung codex leaves the user's settings).
const projectConfigTimeout = 30 * time.Second

// sessionUserConfig is the user's codex settings in cwd: the project's
// where it has its own (Options.ProjectUserConfig), else the user's.
func (a *Agent) sessionUserConfig(ctx context.Context, cwd string) codex.UserConfig {
	if a.opts.ProjectUserConfig != nil {
		ctx, cancel := context.WithTimeout(ctx, projectConfigTimeout)
		user, ok, err := a.opts.ProjectUserConfig(ctx, cwd)
		cancel()
		if err != nil {
			a.log.Warn("cannot read the project's codex settings; the user's apply", "cwd", cwd, "err", err)
		}
		if ok {
			// codex was asked, which a project file naming a setting is
			// enough for; whether codex applied it (a trusted project) shows
			// only in the answer.
			if !reflect.DeepEqual(user, a.userConfig()) {
				a.log.Info("project codex settings under the modes", "cwd", cwd, "approval_policy", user.ApprovalPolicy,
					"sandbox_mode", user.SandboxMode, "sandbox_workspace_write", user.WorkspaceWrite != nil,
					"model", user.Model, "model_reasoning_effort", user.ReasoningEffort)
			} else {
				a.log.Debug("codex applies no project settings of its own here (an untrusted project's are ignored)", "cwd", cwd)
			}
			return user
		}
	}
	return a.userConfig()
}

// NewAgent returns an agent that runs turns with opts.Backend.
func NewAgent(opts Options) *Agent {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	if opts.Backend == nil {
		opts.Backend = noBackend{}
	}
	a := &Agent{opts: opts, log: log, sessions: make(map[string]*session), tools: make(map[string]*toolsRegistration),
		warming: make(chan struct{}, 1)}
	a.saves.idle.L = &a.saves.mu
	if opts.StateDir != "" {
		a.store = sessionstore.New(opts.StateDir, log)
	}
	a.modelInfo = func() ModelInfo {
		return ModelInfo{Catalog: opts.Catalog, ContextWindow: opts.ContextWindow, Models: opts.Models}
	}
	a.modelInfoReady = func(context.Context) bool { return true }
	if opts.ModelInfo != nil {
		a.modelInfo, a.modelInfoReady = onceInBackground(log, "loading the model list", opts.ModelInfo)
	}
	a.userConfig = func() codex.UserConfig { return codex.UserConfig{} }
	a.userConfigReady = func(context.Context) bool { return true }
	if opts.UserConfig != nil {
		a.userConfig, a.userConfigReady = onceInBackground(log, "reading codex's settings", opts.UserConfig)
	}
	if a.can(backend.Skills) {
		opts.Backend.WatchSkills(a.skillsChanged)
	}
	// When the editor first opens a session, not at initialize: an editor
	// may start the agent and never open one (a probe of its capabilities,
	// a session/list, a short scripted run), and a codex start costs
	// ~100 MB and a CPU for a while. A session's own waits (settings,
	// catalog, login) then run beside the start. The launcher may have
	// started the backend already (cmd/codexacp starts codex app-server at
	// launch, for a fresh agent's first prompt); Start is then a no-op.
	a.startBackend = sync.OnceFunc(func() { a.opts.Backend.Start() })
	return a
}

// noBackend stands for a missing Options.Backend: it offers nothing, and
// every turn fails.
type noBackend struct{ backend.Unsupported }

func (noBackend) Name() string { return "none" }

func (noBackend) Run(context.Context, backend.Turn, backend.Output) error {
	return errors.New("codexacp has no backend to run codex with")
}

// can reports whether the backend offers everything in c.
func (a *Agent) can(c backend.Capabilities) bool {
	return a.opts.Backend.Capabilities().Has(c)
}

// Serve speaks ACP on in/out until in ends (the editor closed the pipe) or ctx
// is done, then cancels every running turn and waits for it to finish.
// Malformed input lines are answered with JSON-RPC errors and skipped;
// notifications other than session/cancel are ignored.
//
// It returns nil when in ended, the error that ended reading in otherwise,
// or ctx's cause when ctx ended first. When in ended, the input guard has
// stopped and every turn has ended when it returns. When ctx ended (a
// signal: the process is about to exit), it waits for them only up to
// shutdownGrace: a write to an editor that stopped reading out cannot be
// interrupted, so the guard or a turn blocked in one may still finish that
// write after Serve returned; nothing else is written then.
func (a *Agent) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	pr, pw := io.Pipe()
	w, guard := stdioguard.New(out, pw, stdioguard.Options{
		Log: a.log,
		// The guard handles session/cancel itself: queued in the SDK, a burst
		// of notifications would close the connection (see stdioguard.Guard).
		Cancel: func(sessionID string) {
			defer recovery.Recover(a.log, "session/cancel", nil)
			if err := a.Cancel(ctx, acpsdk.CancelNotification{SessionId: acpsdk.SessionId(sessionID)}); err != nil {
				a.log.Debug("session/cancel ignored", "session", sessionID, "err", err)
			}
		},
		// A session/cancel covers the prompts read before it, even those
		// whose handler the SDK has not started yet (turn.go).
		Prompt: func(sessionID string) {
			if s, err := a.session(acpsdk.SessionId(sessionID)); err == nil {
				s.promptRead()
			}
		},
		Rename:           map[string]string{methodSessionDelete: extDeleteSession},
		Rewrite:          acpMethodName, // elicitation.go
		DeleteCapability: a.canDelete(),
		Initialized:      a.opts.Initialized,
	})
	a.conn = acpsdk.NewAgentSideConnection(rescued{a}, w, pr) // handlers guarded (recover.go)
	// The SDK's reader reads its logger only once input arrives, so setting
	// it before the guard starts feeding input is race-free.
	a.conn.SetLogger(a.log)
	// A read of in cannot be interrupted (os.Stdin blocks in read(2)), so the
	// guard reads it through a pipe that Serve can close. The copier owns
	// nothing else: blocked in in.Read after Serve returned, it ends on the
	// next input or at in's end, failing to write to the closed pipe.
	src, feed := io.Pipe()
	go func() {
		defer recovery.Recover(a.log, "stdin copier", nil)
		_, err := io.Copy(feed, in)
		feed.CloseWithError(err) // nil: EOF
	}()
	guardErr := make(chan error, 1)
	go func() {
		defer func() {
			if e := recovery.Handle(a.log, "input guard", recover()); e != nil {
				pw.CloseWithError(e) // no more input comes: the SDK ends too
				guardErr <- e
			}
		}()
		guardErr <- guard.Run(src)
	}()

	select {
	case <-a.conn.Done():
	case <-ctx.Done():
	}
	// Stop the guard first, whichever way it stands: reading (src closed)
	// or feeding an SDK that stopped reading first (pr closed). No request
	// reaches the SDK after this (the SDK's input is closed), so none
	// starts while the sessions close.
	src.CloseWithError(errServeStopped)
	pr.CloseWithError(io.ErrClosedPipe)
	wait := context.Background() // stdin ended: as long as it takes
	if ctx.Err() != nil {
		grace := shutdownGrace
		if a.opts.shutdownGrace > 0 {
			grace = a.opts.shutdownGrace
		}
		var stop context.CancelFunc
		wait, stop = context.WithTimeout(wait, grace)
		defer stop()
	}
	sessionsClosed := make(chan struct{})
	go func() {
		defer close(sessionsClosed)
		defer recovery.Recover(a.log, "closing the sessions", nil)
		// A session's commands listed while the input ended still go out
		// (bounded by skillsTimeout): whether the editor gets them does
		// not depend on how long codex took to list the skills. Every
		// session's, not only the newest's: sessions opened at once
		// announce at once, and none writes after Serve returned.
		a.everyAnnouncementDone(wait)
		a.closeAllSessions()
	}()
	var err error
	stopping, closing := guardErr, sessionsClosed // nil once done
	for stopping != nil || closing != nil {
		select {
		case err = <-stopping:
			stopping = nil
		case <-closing:
			closing = nil
		case <-wait.Done():
			a.log.Warn("shutdown: not waiting longer for writes to the editor", "guard_stopped", stopping == nil, "sessions_closed", closing == nil)
			stopping, closing = nil, nil
		}
	}
	a.stopSaves() // the records' writes go to disk, not to the editor: no bound
	switch {
	case ctx.Err() != nil:
		return context.Cause(ctx)
	case errors.Is(err, errServeStopped), errors.Is(err, io.ErrClosedPipe):
		return nil // the SDK ended the connection; the guard was stopped after
	}
	return err
}

// shutdownGrace bounds how long Serve, stopped by its context, waits for
// the input guard and the running turns: longer than a turn's end takes
// (toolCallGrace for its tool calls, then codex's exit), short enough for a
// process told to stop.
const shutdownGrace = 5 * time.Second

// errServeStopped stops the input guard when Serve returns.
var errServeStopped = errors.New("serve stopped")

// everyAnnouncementDone waits until the commands of every live session
// have been sent (the goroutines announceCommands starts have ended), or
// ctx ends.
func (a *Agent) everyAnnouncementDone(ctx context.Context) {
	a.mu.Lock()
	all := make([]*session, 0, len(a.sessions))
	for _, s := range a.sessions {
		all = append(all, s)
	}
	a.mu.Unlock()
	for _, s := range all {
		s.commandsAnnounced(ctx)
	}
}

// Initialize implements acpsdk.Agent.
func (a *Agent) Initialize(ctx context.Context, req acpsdk.InitializeRequest) (acpsdk.InitializeResponse, error) {
	a.mu.Lock()
	a.clientCaps = req.ClientCapabilities
	a.mu.Unlock()
	a.log.Info("initialize", "client", clientName(req.ClientInfo), "protocol", req.ProtocolVersion,
		"fs_read", req.ClientCapabilities.Fs.ReadTextFile, "fs_write", req.ClientCapabilities.Fs.WriteTextFile)
	sessionCaps := acpsdk.SessionCapabilities{
		Close: &acpsdk.SessionCloseCapabilities{},
		// Extra workspace roots, contained like cwd (workspace.go).
		AdditionalDirectories: &acpsdk.SessionAdditionalDirectoriesCapabilities{},
	}
	if a.store != nil {
		sessionCaps.List = &acpsdk.SessionListCapabilities{}
		sessionCaps.Resume = &acpsdk.SessionResumeCapabilities{}
		// session/delete is advertised by the writer (stdioguard.Options.DeleteCapability).
	}
	if a.canFork() {
		sessionCaps.Fork = &acpsdk.SessionForkCapabilities{}
	}
	var meta map[string]any
	if a.can(backend.Undo) {
		// Extension methods an editor may call (a button for /undo).
		meta = map[string]any{"codexacp": map[string]any{"methods": []string{extSessionUndo}}}
	}
	return acpsdk.InitializeResponse{
		Meta:            meta,
		ProtocolVersion: acpsdk.ProtocolVersion(acpsdk.ProtocolVersionNumber),
		AgentInfo: &acpsdk.Implementation{
			Name:    "codexacp",
			Title:   acpsdk.Ptr("Codex (codexacp)"),
			Version: a.opts.Version,
		},
		AgentCapabilities: acpsdk.AgentCapabilities{
			LoadSession:         a.store != nil,
			PromptCapabilities:  acpsdk.PromptCapabilities{EmbeddedContext: true, Image: true},
			McpCapabilities:     acpsdk.McpCapabilities{Http: true},
			SessionCapabilities: sessionCaps,
			Auth:                a.authCapabilities(),
		},
		AuthMethods: a.authMethods(req.ClientCapabilities),
	}, nil
}

func clientName(info *acpsdk.Implementation) string {
	if info == nil {
		return "unknown"
	}
	return info.Name + " " + info.Version
}

// Authenticate implements acpsdk.Agent: it checks that the chosen sign-in
// method works now (auth.go).
func (a *Agent) Authenticate(ctx context.Context, req acpsdk.AuthenticateRequest) (acpsdk.AuthenticateResponse, error) {
	return acpsdk.AuthenticateResponse{}, a.authenticate(ctx, req.MethodId)
}

// toolsRegistration is a session id's tool server on the shared host. It
// outlives the session object: a session restored in this process (load or
// resume after close, or of a live one) takes it over with its token, which
// codex keeps for an app-server thread as long as the thread is loaded.
type toolsRegistration struct {
	token      string
	unregister func()
	reporter   *toolReporter
	roots      []string
}

// attachTools gives the session its tool server on the shared host — its
// predecessor's when there is one for the same workspace roots. The
// server's files are the editor's buffers when the editor offers fs methods.
func (a *Agent) attachTools(s *session) {
	if a.opts.Tools == nil {
		return
	}
	a.mu.Lock()
	caps := a.clientCaps.Fs
	reg := a.tools[s.id]
	a.mu.Unlock()
	if reg != nil && slices.Equal(reg.roots, s.roots()) {
		reg.reporter.sess.Store(s)
		s.toolsToken = reg.token
		return
	}
	if reg != nil {
		reg.unregister()
	}
	local := a.opts.LocalFiles
	if local == nil {
		// Local writes inside the workspace are made relative to its roots.
		local = fsops.NewLocalFiles().Within(s.roots()...)
	}
	files := newEditorFiles(a.conn, s.id, caps, local)
	reporter := newToolReporter(a, s)
	files.checkWrite = func(path string) error { return reporter.sess.Load().checkWrite(path) }
	files.hardLinks = func(ctx context.Context, t *writeTarget) error { return reporter.sess.Load().hardLinkAllowed(ctx, t) }
	reporter.editorRoute = func() bool { return !files.writeLocal.Load() }
	if a.opts.EditorTimeout > 0 {
		files.timeout = a.opts.EditorTimeout
	}
	var obs mcp.Observer = reporter
	if a.opts.ObserveTools != nil {
		obs = a.opts.ObserveTools(s.id, s.roots(), obs)
	}
	server := mcp.NewServer(fsops.NewEngine(files), obs)
	reg = &toolsRegistration{reporter: reporter, roots: s.roots()}
	reg.token, reg.unregister = a.opts.Tools.Register(server)
	s.toolsToken = reg.token
	a.mu.Lock()
	a.tools[s.id] = reg
	a.mu.Unlock()
}

// sendUpdate delivers one session update. It ignores the caller's
// cancellation: updates of a cancelled turn must still reach the editor before
// the prompt's response.
func (a *Agent) sendUpdate(ctx context.Context, sessionID string, u acpsdk.SessionUpdate) {
	err := a.conn.SessionUpdate(context.WithoutCancel(ctx), acpsdk.SessionNotification{
		SessionId: acpsdk.SessionId(sessionID),
		Update:    u,
	})
	if err != nil {
		a.log.Warn("session/update not delivered", "session", sessionID, "err", err)
	}
}

var errCancelledByClient = errors.New("cancelled by the client")
