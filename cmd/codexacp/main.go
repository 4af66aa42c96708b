// Command codexacp is an ACP agent that runs OpenAI's Codex CLI for an editor.
// Editors launch it with no arguments and speak ACP on its stdin/stdout; logs
// go to stderr.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/codexacp/codexacp/acp"
	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/backend/appserver"
	"github.com/codexacp/codexacp/backend/codexexec"
	"github.com/codexacp/codexacp/codex"
	codexapp "github.com/codexacp/codexacp/codex/appserver"
	"github.com/codexacp/codexacp/codex/execrun"
	"github.com/codexacp/codexacp/internal/images"
	"github.com/codexacp/codexacp/internal/recovery"
	"github.com/codexacp/codexacp/mcp"
	"github.com/codexacp/codexacp/record"
)

// version is stamped at build time with -ldflags "-X main.version=1.2.3";
// unstamped builds take it from their build info (version.go).
var version string

func main() {
	if len(os.Args) == 2 && os.Args[1] == mcp.RelayArg {
		// codex started us as a session's file-tool server (mcp.RunRelay):
		// stdout carries MCP only, and none of the agent starts.
		if err := mcp.RunRelay(os.Stdin, os.Stdout, os.Getenv); err != nil {
			fmt.Fprintln(os.Stderr, "codexacp:", err)
			os.Exit(1)
		}
		return
	}
	// Logs go through a queue: an editor that does not read our stderr
	// must not stall the agent once the pipe is full.
	stderr := newLogWriter(os.Stderr, logBufferSize)
	err := run(os.Args[1:], os.Stdin, os.Stdout, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "codexacp:", err)
	}
	stderr.close(logFlushTimeout)
	if err != nil {
		os.Exit(1)
	}
}

// configFlag collects repeated -c key=value flags.
type configFlag []string

func (c *configFlag) String() string { return strings.Join(*c, " ") }

func (c *configFlag) Set(v string) error {
	if !strings.Contains(v, "=") {
		return fmt.Errorf("expected key=value, got %q", v)
	}
	*c = append(*c, v)
	return nil
}

type options struct {
	backend   string
	codexPath string
	config    configFlag
	logLevel  string
	record    string
	stateDir  string
	version   bool
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("codexacp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, `Usage: codexacp [flags]
       codexacp doctor [flags]
       codexacp record scrub [--replace OLD=NEW]... [--check] FILE

codexacp is an ACP agent: an editor launches it and speaks the Agent Client
Protocol on its stdin/stdout. Turns run in one long-lived "codex
app-server" (the default backend), or with --backend exec in one
"codex exec --json" per prompt.
"codexacp doctor" checks codex, the model catalog, the state directory and
the tool server, and prints what it found; what the agent would log while
checking goes to stderr at --log-level. "codexacp record scrub" rewrites a
--record transcript for a bug report (codexacp record -h).

Flags (environment variables in brackets):
`)
		fs.PrintDefaults()
	}
	fs.StringVar(&o.backend, "backend", envOr("CODEXACP_BACKEND", defaultBackend),
		"how turns run: app-server (one persistent codex app-server: streamed text, shell commands and MCP tools approved in the editor, faster turns, plan mode, fork) or exec (one codex exec process per turn: nothing shared between prompts, but no questions asked mid-turn) [CODEXACP_BACKEND]")
	fs.StringVar(&o.codexPath, "codex-path", os.Getenv("CODEXACP_CODEX_PATH"),
		"codex executable; default: the native binary of an npm install of @openai/codex found on PATH [CODEXACP_CODEX_PATH]")
	fs.Var(&o.config, "c",
		"codex config override key=value, passed to every codex run like codex's own -c; repeatable [CODEXACP_CONFIG, one per line]")
	fs.StringVar(&o.logLevel, "log-level", envOr("CODEXACP_LOG_LEVEL", "info"), "debug, info, warn or error [CODEXACP_LOG_LEVEL]")
	fs.StringVar(&o.record, "record", os.Getenv("CODEXACP_RECORD"),
		"write a transcript of the session (ACP messages, codex runs, tool calls; secrets redacted) to FILE, or to a new file in FILE when it is a directory or ends in /; see docs/replay.md [CODEXACP_RECORD]")
	fs.StringVar(&o.stateDir, "state-dir", envOr("CODEXACP_STATE_DIR", defaultStateDir()),
		"where sessions are kept for session/list and session/load after a restart; empty: not kept [CODEXACP_STATE_DIR]")
	fs.BoolVar(&o.version, "version", false, "print the version and exit")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	switch o.backend {
	case backendExec, backendAppServer:
	default:
		return nil, fmt.Errorf("--backend: unknown backend %q (want %s or %s)", o.backend, backendExec, backendAppServer)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if env := os.Getenv("CODEXACP_CONFIG"); env != "" {
		var fromEnv configFlag
		for _, line := range strings.Split(env, "\n") {
			if line = strings.TrimSpace(line); line == "" {
				continue
			}
			if err := fromEnv.Set(line); err != nil {
				return nil, fmt.Errorf("CODEXACP_CONFIG: %w", err)
			}
		}
		// Flags come last so they win over the environment.
		o.config = append(fromEnv, o.config...)
	}
	return o, nil
}

// defaultStateDir is $XDG_STATE_HOME/codexacp, else ~/.local/state/codexacp
// (on Windows %LocalAppData%\codexacp; see docs/platforms.md).
func defaultStateDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "codexacp")
	}
	if d := os.Getenv("LocalAppData"); runtime.GOOS == "windows" && d != "" {
		return filepath.Join(d, "codexacp")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "state", "codexacp")
	}
	return ""
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "record" {
		return recordCommand(args[1:], stdout, stderr)
	}
	isDoctor := len(args) > 0 && args[0] == "doctor"
	if isDoctor {
		args = args[1:]
	}
	args, isLogin := loginArgs(args)
	o, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	if o.version {
		fmt.Fprintln(stdout, "codexacp", version)
		return nil
	}
	if isLogin {
		return login(o)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	if isDoctor {
		// The checks go to stdout; what the agent would log while making
		// them goes to stderr, at --log-level.
		return doctor(context.Background(), o, stdout, log)
	}
	slog.SetDefault(log)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	// Start-up work that the answer to initialize does not need waits until
	// that answer has gone out: on 2 CPUs, codex runs beside it (login
	// status, a new catalog) delayed it. codex app-server, which a fresh
	// agent's first prompt waits for, still starts at launch.
	later := newStartGate()
	bg, cancelBG := context.WithCancel(ctx)
	defer later.end(cancelBG)
	agentOpts := acp.Options{Version: version, Logger: log, Initialized: later.open}

	// Image directories of agents killed mid-turn; in the background,
	// stopped when the agent exits.
	defer sweepImages(later, log)()

	if o.stateDir != "" {
		agentOpts.StateDir = filepath.Join(o.stateDir, "sessions")
	}
	path, findErr := codex.Find(o.codexPath)
	if findErr != nil {
		log.Error("codex not available", "err", findErr)
	} else {
		log.Info("using codex", "path", path, "backend", o.backend)
		// In front of the user's overrides, which win.
		o.config = append(codex.DefaultOverrides(os.Environ(), o.config), o.config...)
		agentOpts.ModelInfo = prepareCatalog(bg, later, log, path, o.config)
		agentOpts.CodexVersion = prepareCodexVersion(bg, later, log, path, agentOpts.ModelInfo)
		agentOpts.DefaultModel = codex.ConfiguredModel(o.config)
		agentOpts.DefaultEffort = codex.ConfiguredValue(o.config, "model_reasoning_effort")
		agentOpts.DefaultServiceTier = codex.ConfiguredValue(o.config, "service_tier")
		agentOpts.Auth = prepareAuth(bg, later, log, path, o.config, o.backend, args)
	}

	tools, err := mcp.NewHost(&mcp.HostOptions{Logger: log, RelayCommand: relayCommand(log)})
	if err != nil {
		return fmt.Errorf("starting the file-tool server: %w", err)
	}
	defer tools.Close()
	agentOpts.Tools = tools

	var rec *record.Recorder
	if o.record != "" {
		if rec = startRecording(o.record, log, &agentOpts, o.stateDir, o.backend); rec != nil {
			defer closeRecording(rec, log)
			stdin, stdout = rec.Input(stdin), rec.Output(stdout)
		}
	}

	switch {
	case findErr != nil:
		// Keep serving: the editor shows this error on the first prompt,
		// which is more useful than an agent that dies at launch.
		agentOpts.Backend = unavailable{err: findErr}
	case o.backend == backendAppServer:
		asOpts := codexapp.Options{
			Path: path, Config: o.config, Logger: log, ClientName: "codexacp", ClientVersion: version,
		}
		if rec != nil {
			asOpts.Trace = rec.AppServerTrace(asOpts)
		}
		be := appserver.New(asOpts)
		defer be.Close()
		// codex app-server starts now, not at the first session/new: a
		// fresh agent's first prompt waits for its start and initialize
		// (~100–250 ms of codex's own work), which so overlap the
		// editor's initialize and session/new. The agent's answers need
		// nothing from it, and the start is a goroutine's.
		be.Start()
		agentOpts.Backend = be
		if agentOpts.Auth.LoginStatus != nil {
			agentOpts.Auth.SaveAPIKey = be.LoginAPIKey
		}
		// The user's settings at launch come from a settings-only process
		// that ends once it has answered: the editor's initialize and first
		// session/new need not wait for the turns' app-server. A session's
		// project settings come from the turns' app-server, which the
		// session's thread needs right after anyway (one codex start, not
		// two, before the first prompt).
		cs := &codexapp.ConfigServer{Options: codexapp.Options{Path: path, Config: o.config, Logger: log}}
		defer cs.Close()
		agentOpts.UserConfig = prepareUserConfig(bg, later, log, rec, func(ctx context.Context) (codex.UserConfig, error) {
			defer cs.Close()
			return cs.UserConfig(ctx)
		})
		agentOpts.ProjectUserConfig = func(ctx context.Context, cwd string) (codex.UserConfig, bool, error) {
			return codex.ProjectUserConfig(ctx, nil, cwd, be.ReadUserConfig)
		}
	default:
		runner := &execrun.Runner{Path: path, Config: o.config, Logger: log, Env: execEnv(ctx, log, agentOpts.Auth)}
		var lines codexexec.LineRunner = runner
		// The settings and skills server answers what a session/new, load
		// or resume asks, then ends: it holds ~90 MB resident, which an exec
		// agent would otherwise keep for 10 idle minutes beside its turns
		// (issue 24). The next session's questions start it again.
		cs := &codexapp.ConfigServer{Options: codexapp.Options{Path: path, Config: o.config, Env: runner.Env, Logger: log},
			Idle: execConfigServerIdle}
		defer cs.Close()
		listSkills := cs.ListSkills
		if rec != nil {
			lines = rec.Backend(runner, runner.Command)
			listSkills = rec.Skills(listSkills)
		}
		be := &codexexec.Backend{Runner: lines, Logger: log, ListSkills: listSkills}
		// /undo: codex exec cannot cut a thread; an app-server on the same
		// codex and CODEX_HOME can, between exec turns (docs/undo.md).
		be.Revert = func(ctx context.Context, threadID string, turnIDs []string) error {
			opts := codexapp.Options{Path: path, Config: o.config, Env: runner.Env, Logger: log, ClientName: "codexacp", ClientVersion: version}
			if rec != nil {
				opts.Trace = rec.AppServerTrace(opts)
			}
			return codexapp.RevertStoredTurns(ctx, opts, threadID, turnIDs)
		}
		if rec != nil {
			// The rollout records that show refused commands: codex exec
			// prints nothing for them, and a replay needs them.
			be.ObserveRollout = rec.Rollout
		}
		defer be.Close()
		cs.Warm() // every session/new, load and resume lists skills with it
		agentOpts.Backend = be
		useConfigServer(bg, later, log, rec, &agentOpts, cs)
	}
	err = acp.NewAgent(agentOpts).Serve(ctx, stdin, stdout)
	if ctx.Err() != nil {
		// Stopped by a signal: a requested stop, not a failure.
		log.Info("stopped", "cause", err)
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the editor's messages: %w", err)
	}
	return nil
}

// modelCatalog prepares codex's model catalog without apply_patch (cached per
// codex version in the user's cache directory) and reads the configured
// model's context window from it. On failure the path is empty: codex keeps
// its own catalog.
func modelCatalog(ctx context.Context, log *slog.Logger, codexPath string, config []string) (string, int) {
	info := catalogInfo(ctx, log, codexPath, config)
	return info.Catalog, info.ContextWindow
}

// catalogInfo prepares the catalog (see modelCatalog) and reads the model
// picker's models and the configured model's context window from it, in
// one pass over the file where it can.
func catalogInfo(ctx context.Context, log *slog.Logger, codexPath string, config []string) acp.ModelInfo {
	cacheDir, err := os.UserCacheDir()
	if err != nil {
		cacheDir = os.TempDir()
	}
	cacheDir = filepath.Join(cacheDir, "codexacp")
	path, err := codex.ModelCatalog(ctx, codexPath, cacheDir)
	if err != nil {
		log.Warn("cannot build the model catalog without apply_patch; codex keeps its own patch tool", "err", err)
		return acp.ModelInfo{}
	}
	info := acp.ModelInfo{Catalog: path}
	summary, err := codex.ReadSummary(path)
	if err != nil {
		log.Warn("no model picker", "err", err)
		return info
	}
	info.Models = summary.Models
	// The window of the configured model, or of codex's default (the
	// first listed).
	model := codex.ConfiguredModel(config)
	var ok bool
	if info.ContextWindow, ok = summary.ContextWindow(model); !ok {
		log.Info("context window unknown; no usage updates", "err", fmt.Errorf("model %q is not in the catalog", model))
	}
	return info
}

// prepareCodexVersion finds codex's version in the background and returns
// a function that waits for it (acp.Options.CodexVersion, for /status and a
// recording's header). At start, so that the log says early when codex is
// outside the tested range. The model catalog's file is named by the
// version it was made for (codex.CatalogVersion), so a catalog made by an
// earlier process (catalog, which this waits for) tells it without a codex
// run; else `codex --version` runs: a codex start beside the agent's own,
// which an initialize or session/new answered meanwhile would share the
// CPU with.
func prepareCodexVersion(ctx context.Context, later *startGate, log *slog.Logger, codexPath string, catalog func() acp.ModelInfo) func() string {
	return inBackground(later, func() string {
		v := codex.CatalogVersion(catalog().Catalog)
		if v == "" {
			var err error
			if v, err = codex.Version(ctx, codexPath); err != nil {
				log.Info("codex version unknown", "err", err)
				return ""
			}
		}
		if note := codex.VersionNote(v); note != "" {
			log.Warn(note, "codex_version", v, "tested", codex.TestedRange())
		}
		return v
	})
}

// prepareCatalog makes codex's model catalog in the background once later
// opens (after the answer to initialize) and returns a function that waits for it
// (acp.Options.ModelInfo: the agent calls it once, when a session first
// needs the catalog). The goroutine is not waited for at exit: it ends by
// itself (codex runs are bounded), and an agent that is leaving has no use
// for its result.
func prepareCatalog(ctx context.Context, later *startGate, log *slog.Logger, codexPath string, config []string) func() acp.ModelInfo {
	return inBackground(later, func() acp.ModelInfo { return catalogInfo(ctx, log, codexPath, config) })
}

// useConfigServer makes cs the source of the user's codex settings: read
// at start (prepareUserConfig; a recording, rec, notes them), and in each
// session's cwd where a project layer may change them.
func useConfigServer(ctx context.Context, later *startGate, log *slog.Logger, rec *record.Recorder, opts *acp.Options, cs *codexapp.ConfigServer) {
	opts.UserConfig = prepareUserConfig(ctx, later, log, rec, cs.UserConfig)
	opts.ProjectUserConfig = cs.ProjectUserConfig
}

// prepareUserConfig asks codex for the user's sandbox and approval settings
// in the background once later opens (after the answer to initialize) and
// returns a function that waits for them. When codex cannot tell, the modes are the
// presets alone, as with nothing configured. A recording (rec, may be nil)
// notes the settings read.
func prepareUserConfig(ctx context.Context, later *startGate, log *slog.Logger, rec *record.Recorder, read func(context.Context) (codex.UserConfig, error)) func() codex.UserConfig {
	return inBackground(later, func() codex.UserConfig {
		ctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		user, err := read(ctx)
		if err != nil {
			log.Warn("cannot read your codex sandbox and approval settings; the modes are codexacp's presets alone", "err", err)
			return user
		}
		log.Info("codex settings under the modes", "approval_policy", user.ApprovalPolicy, "sandbox_mode", user.SandboxMode,
			"sandbox_workspace_write", user.WorkspaceWrite != nil)
		if rec != nil {
			rec.UserConfig(user)
		}
		return user
	})
}

// inBackground starts f once later opens (now when later is nil) and
// returns a function that waits for its result (as often as it is called);
// waiting opens later, so a result asked for before initialize was
// answered (an editor that skips it) is not held back.
func inBackground[T any](later *startGate, f func() T) func() T {
	ready := make(chan struct{})
	var v T
	later.started()
	go func() {
		defer later.finished()
		defer close(ready)
		defer recovery.Recover(nil, "a background start-up task", nil) // v stays zero
		if later.wait() {
			v = f()
		}
	}()
	return func() T { later.open(); <-ready; return v }
}

// startGate holds back start-up work the answer to initialize does not
// need: it opens once that answer has been written (acp.Options.Initialized)
// or when a result of that work is waited for, whichever comes first. A
// nil gate is open. An agent that leaves before it opened drops the work.
type startGate struct {
	ch, left           chan struct{}
	openOnce, leftOnce sync.Once
	// work counts the work started under the gate, which end waits for:
	// it writes caches (the model catalog) that must not change under a
	// caller that thinks the agent is done.
	work sync.WaitGroup
}

func newStartGate() *startGate {
	return &startGate{ch: make(chan struct{}), left: make(chan struct{})}
}

// open lets the held-back work start, unless the agent left; it never
// blocks.
func (g *startGate) open() {
	if g == nil {
		return
	}
	select {
	case <-g.left:
	default:
		g.openOnce.Do(func() { close(g.ch) })
	}
}

// leave drops the work still held back: the agent is leaving.
func (g *startGate) leave() { g.leftOnce.Do(func() { close(g.left) }) }

// started and finished count a piece of work under the gate.
func (g *startGate) started() {
	if g != nil {
		g.work.Add(1)
	}
}

func (g *startGate) finished() {
	if g != nil {
		g.work.Done()
	}
}

// end drops the work still held back, cancels (with cancel, the context
// of the work) what runs, and waits for it to return.
func (g *startGate) end(cancel context.CancelFunc) {
	g.leave()
	cancel()
	g.work.Wait()
}

// wait reports whether g opened (true) or the agent left first (false).
func (g *startGate) wait() bool {
	if g == nil {
		return true
	}
	select {
	case <-g.ch:
		return true
	case <-g.left:
		select {
		case <-g.ch: // both: open wins
			return true
		default:
			return false
		}
	}
}

// sweepImages runs images.Sweep once later opens and returns a function
// that stops it (or that it never starts) and waits for it.
func sweepImages(later *startGate, log *slog.Logger) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		defer recovery.Recover(log, "image directory sweep", nil)
		if !later.wait() {
			return
		}
		stopSweep := images.Sweep(log)
		<-quit
		stopSweep()
	}()
	return func() { later.leave(); close(quit); <-done }
}

// unavailable is the backend when codex cannot be found: every turn fails
// with the reason and how to install codex.
type unavailable struct {
	backend.Unsupported
	err error
}

func (u unavailable) Name() string { return "unavailable" }

func (u unavailable) Run(context.Context, backend.Turn, backend.Output) error { return u.err }

// execConfigServerIdle is how long the exec backend's settings and skills
// server waits for another question after answering one. Questions that
// overlap (a burst of sessions) share it anyway; the bound only lets one
// that follows at once find it, and is short enough for the server to be
// gone before a user's first prompt: at 1 s it still ran beside the first
// turn of the side-by-side bench (prompts 1.5 s apart) under load.
const execConfigServerIdle = 250 * time.Millisecond

// Backends (--backend).
const (
	backendExec      = "exec"
	backendAppServer = "app-server"
	// defaultBackend is app-server: it streams text, puts shell commands
	// and MCP tools to the user, and is warm between turns (README,
	// "Backends").
	defaultBackend = backendAppServer
)

// relayEnv=on gives codex the file tools through the relay instead of
// HTTP. Off by default until the relay's token is out of reach of the
// commands codex runs (docs/mcp.md, "The relay": the token sits in the
// relay's environment, which a command of the same user may read where
// codex's sandbox shows it the relay's process).
const relayEnv = "CODEXACP_MCP_RELAY"

// relayCommand is the executable codex runs as the file tools' relay
// (mcp.RunRelay) when relayEnv=on: this very binary, when its path still
// names it. "" (and the HTTP route) otherwise, or when the binary was
// removed or replaced since it started (an upgrade while the editor
// runs), or the path cannot be found.
func relayCommand(log *slog.Logger) string {
	if os.Getenv(relayEnv) != "on" {
		return ""
	}
	exe, err := os.Executable()
	if err == nil {
		err = sameAsRunning(exe)
	}
	if err != nil {
		log.Info("codex reaches the file tools over HTTP", "reason", err)
		return ""
	}
	return exe
}

// sameAsRunning checks that path is the running executable, where the
// system says which that is (/proc/self/exe); elsewhere that it exists.
func sameAsRunning(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("the executable: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("the executable %s is not a regular file", path)
	}
	if self, err := os.Stat("/proc/self/exe"); err == nil && !os.SameFile(fi, self) {
		return fmt.Errorf("%s is no longer the running executable", path)
	}
	return nil
}
