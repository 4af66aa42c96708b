package codex

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"
)

// DefaultConfigServerIdle is how long a ConfigServer waits for its next
// question before it ends: as long as a session's prestarted codex exec
// waits for its prompt (a waiting app-server costs about as much).
const DefaultConfigServerIdle = 10 * time.Minute

// ConfigServer is one `codex app-server` that answers questions about
// codex's configuration — config/read, skills/list — and runs no turn
// (ConfigReadEnv). It starts at the first question and ends after Idle
// without one, so that the questions every session/new asks cost a
// request (5–15 ms) rather than a codex start (65–300 ms). Safe for
// concurrent use.
type ConfigServer struct {
	Options AppServerOptions
	Idle    time.Duration // 0: DefaultConfigServerIdle

	starting chan struct{} // holds a token while a question starts the server: one start at a time
	once     sync.Once     // makes starting

	mu     sync.Mutex
	server *AppServer
	busy   int         // questions in progress
	idle   *time.Timer // ends server once busy has been 0 for Idle
	gen    int         // counts idle timers: a stale one does nothing
	closed bool
}

var errConfigServerClosed = errors.New("codex configuration server closed")

// ReadUserConfig is ReadUserConfig for cwd ("" none): codex's effective
// settings as seen from that directory, project layers (.codex/config.toml
// of a trusted project) included.
func (c *ConfigServer) ReadUserConfig(ctx context.Context, cwd string) (UserConfig, error) {
	var uc UserConfig
	err := c.ask(ctx, func(server *AppServer) (err error) {
		uc, err = readUserConfig(ctx, server, cwd)
		return err
	})
	return uc, err
}

// ListSkills is ListSkills on the server.
func (c *ConfigServer) ListSkills(ctx context.Context, cwd string) ([]Skill, error) {
	var skills []Skill
	err := c.ask(ctx, func(server *AppServer) (err error) {
		skills, err = ListSkills(ctx, server, cwd)
		return err
	})
	return skills, err
}

// Warm starts the server in the background, so that the first question
// finds it running.
func (c *ConfigServer) Warm() {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := c.acquire(ctx); err == nil {
			c.release()
		}
	}()
}

// Close ends the server; questions after it fail.
func (c *ConfigServer) Close() {
	c.mu.Lock()
	c.closed = true
	server := c.server
	c.server = nil
	if c.idle != nil {
		c.idle.Stop()
	}
	c.mu.Unlock()
	if server != nil {
		server.Close()
	}
}

// ask runs f with the running server, started if need be.
func (c *ConfigServer) ask(ctx context.Context, f func(*AppServer) error) error {
	server, err := c.acquire(ctx)
	if err != nil {
		return err
	}
	defer c.release()
	return f(server)
}

func (c *ConfigServer) acquire(ctx context.Context) (*AppServer, error) {
	c.once.Do(func() { c.starting = make(chan struct{}, 1) })
	select {
	case c.starting <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("codex configuration server: %w", context.Cause(ctx))
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
	c.server = nil
	c.mu.Unlock()
	s, err := startConfigOnly(ctx, c.Options)
	if err != nil {
		return nil, fmt.Errorf("starting codex for its configuration: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		go s.Close()
		return nil, errConfigServerClosed
	}
	c.server = s
	c.busy++
	return s, nil
}

// release ends a question; the last one arms the idle timer.
func (c *ConfigServer) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.busy--
	c.gen++
	if c.idle != nil {
		c.idle.Stop()
	}
	if c.busy > 0 || c.server == nil || c.closed {
		return
	}
	idle := c.Idle
	if idle <= 0 {
		idle = DefaultConfigServerIdle
	}
	gen := c.gen
	c.idle = time.AfterFunc(idle, func() {
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

func ended(s *AppServer) bool {
	select {
	case <-s.Done():
		return true
	default:
		return false
	}
}

// startConfigOnly starts an app-server that runs no turn, only answers
// questions about codex's configuration (ConfigReadEnv).
func startConfigOnly(ctx context.Context, opts AppServerOptions) (*AppServer, error) {
	if opts.Env == nil {
		opts.Env = os.Environ()
	}
	opts.Env = append(slices.Clip(opts.Env), ConfigReadEnv+"=1")
	return StartAppServer(ctx, opts)
}
