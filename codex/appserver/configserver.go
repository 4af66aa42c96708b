package appserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/codexacp/codexacp/codex"
	"github.com/codexacp/codexacp/codex/appserver/protocol"
	"github.com/codexacp/codexacp/internal/recovery"
)

// DefaultConfigServerIdle is how long a ConfigServer waits for its next
// question before it ends: as long as a session's prestarted codex exec
// waits for its prompt (a waiting app-server costs about as much).
const DefaultConfigServerIdle = 10 * time.Minute

// ConfigServer is one `codex app-server` that answers questions about
// codex's configuration — config/read, skills/list — and runs no turn
// (ConfigReadEnv). It starts at the first question (or Warm) and ends
// after Idle without one, so that the questions a session/new asks cost a
// request (5–15 ms) rather than a codex start (65–300 ms). A server Warm
// started waits for its first question at least DefaultConfigServerIdle:
// a short Idle ends it only once it has answered. Safe for concurrent
// use.
//
// The goroutines it starts (Warm's, the idle timer's) are its own: Close
// waits for them, and for a start in progress, which it cancels.
type ConfigServer struct {
	Options Options
	// Idle is how long the server waits for its next question after
	// answering one; 0: DefaultConfigServerIdle.
	Idle time.Duration

	// start starts the server (tests stand in for it); nil: startConfigOnly.
	start func(context.Context, Options) (*Server, error)
	// afterFunc arms the idle timer (tests stand in for it); nil:
	// time.AfterFunc.
	afterFunc func(time.Duration, func()) *time.Timer

	once     sync.Once     // makes starting and stop
	starting chan struct{} // holds a token while a question starts the server: one start at a time
	stop     context.Context
	cancel   context.CancelFunc // ends stop: Close cancels a start in progress

	mu       sync.Mutex
	server   *Server
	answered bool        // server has been asked a question (Warm's start is none)
	busy     int         // questions in progress
	idle     *time.Timer // ends server once busy has been 0 for Idle
	gen      int         // counts idle timers: a stale one does nothing
	closed   bool
	// goroutines counts Warm's goroutine and an armed or running idle
	// timer; added to under mu while !closed, so never after Close waits.
	goroutines sync.WaitGroup
}

var errConfigServerClosed = errors.New("codex configuration server closed")

// ReadUserConfig is ReadUserConfig for cwd ("" none): codex's effective
// settings as seen from that directory, project layers (.codex/config.toml
// of a trusted project) included.
func (c *ConfigServer) ReadUserConfig(ctx context.Context, cwd string) (codex.UserConfig, error) {
	var uc codex.UserConfig
	err := c.ask(ctx, func(server *Server) (err error) {
		uc, err = ReadUserConfig(ctx, server, cwd)
		return err
	})
	return uc, err
}

// ListSkills is ListSkills on the server.
func (c *ConfigServer) ListSkills(ctx context.Context, cwd string) ([]codex.Skill, error) {
	var skills []codex.Skill
	err := c.ask(ctx, func(server *Server) (err error) {
		skills, err = ListSkills(ctx, server, cwd)
		return err
	})
	return skills, err
}

// Warm starts the server in the background, so that the first question
// finds it running. Close waits for it.
func (c *ConfigServer) Warm() {
	c.init()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.goroutines.Add(1)
	go func() {
		defer c.goroutines.Done()
		defer recovery.Recover(nil, "starting the config server", nil)
		ctx, cancel := context.WithTimeout(c.stop, time.Minute)
		defer cancel()
		if _, err := c.acquire(ctx); err == nil {
			c.release()
		}
	}()
}

// Close ends the server, after a start in progress (cancelled) and the
// goroutines the ConfigServer started; questions after it fail.
func (c *ConfigServer) Close() {
	c.init()
	c.cancel()
	c.mu.Lock()
	c.closed = true
	server := c.server
	c.server = nil
	c.stopIdle()
	c.mu.Unlock()
	if server != nil {
		server.Close()
	}
	// A start in progress ends (and closes what it started) before the
	// token is free again.
	c.starting <- struct{}{}
	<-c.starting
	c.goroutines.Wait()
}

func (c *ConfigServer) init() {
	c.once.Do(func() {
		c.starting = make(chan struct{}, 1)
		c.stop, c.cancel = context.WithCancel(context.Background())
	})
}

// ask runs f with the running server, started if need be.
func (c *ConfigServer) ask(ctx context.Context, f func(*Server) error) error {
	server, err := c.acquire(ctx)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.answered = true
	c.mu.Unlock()
	defer c.release()
	return f(server)
}

func (c *ConfigServer) acquire(ctx context.Context) (*Server, error) {
	c.init()
	select {
	case c.starting <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("codex configuration server: %w", context.Cause(ctx))
	case <-c.stop.Done():
		return nil, errConfigServerClosed
	}
	defer func() { <-c.starting }()
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, errConfigServerClosed
	}
	if s := c.server; s != nil && !ended(s) {
		c.busy++
		c.mu.Unlock()
		return s, nil
	}
	crashed := c.server
	c.server = nil
	c.mu.Unlock()
	if crashed != nil {
		crashed.Close() // it has exited: Close only releases what the client holds
	}
	// Close cancels the start, and waits for it.
	ctx, cancel := context.WithCancel(ctx)
	defer context.AfterFunc(c.stop, cancel)()
	defer cancel()
	start := c.start
	if start == nil {
		start = startConfigOnly
	}
	s, err := start(ctx, c.Options)
	if err != nil {
		return nil, fmt.Errorf("starting codex for its configuration: %w", err)
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		s.Close()
		return nil, errConfigServerClosed
	}
	defer c.mu.Unlock()
	c.server, c.answered = s, false
	c.busy++
	return s, nil
}

// release ends a question; the last one arms the idle timer.
func (c *ConfigServer) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.busy--
	c.gen++
	c.stopIdle()
	if c.busy > 0 || c.server == nil || c.closed {
		return
	}
	idle := c.Idle
	if idle <= 0 {
		idle = DefaultConfigServerIdle
	}
	if !c.answered {
		// Warm's start: the first question may come a while later (the
		// editor's first session/new).
		idle = max(idle, DefaultConfigServerIdle)
	}
	gen := c.gen
	c.goroutines.Add(1) // Done when the timer has run, or by stopIdle
	afterFunc := c.afterFunc
	if afterFunc == nil {
		afterFunc = time.AfterFunc
	}
	c.idle = afterFunc(idle, func() {
		defer c.goroutines.Done()
		defer recovery.Recover(nil, "stopping the idle config server", nil)
		c.mu.Lock()
		server := c.server
		stale := gen != c.gen || c.busy > 0
		if !stale {
			c.server = nil
		}
		c.mu.Unlock()
		if !stale && server != nil {
			server.Close()
		}
	})
}

// stopIdle disarms the idle timer, if it has not fired; c.mu held.
func (c *ConfigServer) stopIdle() {
	if c.idle != nil && c.idle.Stop() {
		c.goroutines.Done()
	}
	c.idle = nil
}

func ended(s *Server) bool {
	select {
	case <-s.Done():
		return true
	default:
		return false
	}
}

// startConfigOnly starts an app-server that runs no turn, only answers
// questions about codex's configuration (ConfigReadEnv).
func startConfigOnly(ctx context.Context, opts Options) (*Server, error) {
	if opts.Env == nil {
		opts.Env = os.Environ()
	}
	opts.Env = append(slices.Clip(opts.Env), ConfigReadEnv+"=1")
	return Start(ctx, opts)
}

// ConfigReadEnv is set (to "1") in the environment of a ConfigServer's
// app-server: codex ignores it; a stand-in codex (a replay's) tells by it
// the process that only answers config/read and skills/list from the ones
// that run turns.
const ConfigReadEnv = "CODEXACP_CONFIG_READ"

// ReadUserConfig asks a running app-server for the user's configuration
// as codex applies it in cwd ("": in no directory, without project layers)
// (`config/read`): codex merges config.toml, a trusted
// project's .codex/config.toml and the -c overrides the process was started
// with, so codexacp needs no TOML parser and sees exactly what codex would
// apply. The exchange stays out of the server's trace (CallUnrecorded):
// codex answers with the user's whole configuration.
func ReadUserConfig(ctx context.Context, server *Server, cwd string) (codex.UserConfig, error) {
	res, err := CallUnrecorded(ctx, server, protocol.ConfigRead, protocol.ConfigReadParams{Cwd: cwd})
	if err != nil {
		return codex.UserConfig{}, err
	}
	return codex.ParseConfig(res.Config)
}

// UserConfig is the user's configuration as codex applies it outside any
// project (ReadUserConfig); both backends read it at start-up.
//
// When no configuration codex reads can hold the settings
// (codex.UserConfigUnset), it answers codex.UserConfig{} at once without
// starting codex: the agent's session/new waits for this answer, and a
// codex start costs 65–300 ms.
func (c *ConfigServer) UserConfig(ctx context.Context) (codex.UserConfig, error) {
	if codex.UserConfigUnset(c.Options.Env, c.Options.Config) {
		if c.Options.Logger != nil {
			c.Options.Logger.Debug("no codex configuration names the sandbox or approval settings; codex not asked")
		}
		return codex.UserConfig{}, nil
	}
	return c.ReadUserConfig(ctx, "")
}

// ProjectUserConfig is the user's configuration as codex applies it in
// cwd, with the project layers: the .codex/config.toml of cwd and of the
// directories above it, which codex reads for trusted projects (codex
// decides which count). ok is false, and codex is not asked, when no such
// file mentions a setting codex.UserConfig holds: UserConfig's answer
// applies there. ok true means codex answered, not that a layer applied:
// codex ignores an untrusted project's file and answers the user's
// settings. The check reads a few small files, so that a session/new in a
// project without its own settings waits for no codex.
func (c *ConfigServer) ProjectUserConfig(ctx context.Context, cwd string) (uc codex.UserConfig, ok bool, err error) {
	return codex.ProjectUserConfig(ctx, c.Options.Env, cwd, c.ReadUserConfig)
}
