package appserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/codexacp/codexacp/backend"
	codexapp "github.com/codexacp/codexacp/codex/appserver"
	"github.com/codexacp/codexacp/codex/appserver/protocol"
	"github.com/codexacp/codexacp/events"
)

// mcpReloadTimeout bounds config/mcpServer/reload after a login (codex
// reconnects every server).
const mcpReloadTimeout = time.Minute

// mcpAuth follows what codex says of MCP sign-ins outside turns: the
// logins codexacp waits for, and the servers that failed to start for a
// thread for want of a sign-in while no turn of it ran (Warm starts
// threads ahead), whose warning the thread's next turn shows. Safe for
// concurrent use; notify runs on the app-server client's reader goroutine.
type mcpAuth struct {
	mu      sync.Mutex
	waiting []*mcpLoginWait
	// needed is, by thread, the servers that need a sign-in not yet shown
	// to the user; bounded (a thread starts a few servers, and a turn
	// takes its thread's).
	needed map[string][]string
}

// mcpLoginWait is a login waiting for its completion.
type mcpLoginWait struct {
	server  string
	loginID string // once mcpServer/oauth/login answered; "": not yet, or an older codex
	done    chan protocol.McpServerOauthLoginCompletedNotification
}

// maxNeededThreads bounds mcpAuth.needed: threads started and never
// prompted must not grow it for good.
const maxNeededThreads = 256

// notify takes mcpServer/oauthLogin/completed and a failed startup of a
// thread no turn runs (unrouted); false for any other notification.
func (m *mcpAuth) notify(method string, params json.RawMessage) bool {
	switch method {
	case protocol.McpServerOauthLoginCompleted.Method():
		n, err := protocol.McpServerOauthLoginCompleted.Decode(params)
		if err != nil {
			return true
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		for _, w := range m.waiting {
			if w.server == n.Name && (w.loginID == "" || n.LoginID == "" || w.loginID == n.LoginID) {
				select {
				case w.done <- n:
				default: // one completion per login
				}
			}
		}
		return true
	case protocol.McpServerStartupStatus.Method():
		thread, server, ok := events.MCPSignInNeeded(params)
		if !ok || thread == "" {
			return true
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.needed == nil {
			m.needed = map[string][]string{}
		}
		if _, known := m.needed[thread]; !known && len(m.needed) >= maxNeededThreads {
			return true
		}
		if !slices.Contains(m.needed[thread], server) {
			m.needed[thread] = append(m.needed[thread], server)
		}
		return true
	}
	return false
}

// take returns, and forgets, the servers that need a sign-in for thread.
func (m *mcpAuth) take(thread string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	servers := m.needed[thread]
	delete(m.needed, thread)
	return servers
}

// signedIn forgets server's pending warnings: the user signed in to it.
func (m *mcpAuth) signedIn(server string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for thread, servers := range m.needed {
		if servers = slices.DeleteFunc(servers, func(s string) bool { return s == server }); len(servers) == 0 {
			delete(m.needed, thread)
		} else {
			m.needed[thread] = servers
		}
	}
}

func (m *mcpAuth) expect(server string) *mcpLoginWait {
	w := &mcpLoginWait{server: server, done: make(chan protocol.McpServerOauthLoginCompletedNotification, 1)}
	m.mu.Lock()
	m.waiting = append(m.waiting, w)
	m.mu.Unlock()
	return w
}

func (m *mcpAuth) started(w *mcpLoginWait, loginID string) {
	m.mu.Lock()
	w.loginID = loginID
	m.mu.Unlock()
}

func (m *mcpAuth) forget(w *mcpLoginWait) {
	m.mu.Lock()
	m.waiting = slices.DeleteFunc(m.waiting, func(x *mcpLoginWait) bool { return x == w })
	m.mu.Unlock()
}

// warnSignIns shows the turn the servers of its thread that need a sign-in
// and failed to start before the turn's handler was routed (Run calls it
// before routing: out is not yet shared).
func (b *Backend) warnSignIns(thread string, out backend.Output) {
	for _, server := range b.mcpAuth.take(thread) {
		out.Event(events.Event{Type: events.TypeError, Message: events.MCPSignInMessage(server)})
	}
}

// errLoginTimedOut reports a login the user did not finish in time.
var errLoginTimedOut = errors.New("the sign-in was not finished in time")

// LoginMCPServer implements backend.Backend: mcpServer/oauth/login (for the
// session's thread when codex has it loaded: a project's servers are in
// its configuration), open with the authorization URL, then
// mcpServer/oauthLogin/completed of that login, then
// config/mcpServer/reload. The URL is never logged (a transcript redacts
// it: record learns it from the answer).
func (b *Backend) LoginMCPServer(ctx context.Context, t backend.Turn, server string, open func(ctx context.Context, url string) error) error {
	srv, err := b.running(ctx)
	if err != nil {
		return err
	}
	params := protocol.McpServerOauthLoginParams{Name: server, TimeoutSecs: int64(backend.MCPLoginTimeout / time.Second)}
	if t.ThreadID != "" && b.isLoaded(srv, t.ThreadID) {
		params.ThreadID = t.ThreadID
	}
	w := b.mcpAuth.expect(server)
	defer b.mcpAuth.forget(w)
	login, err := codexapp.Call(ctx, srv, protocol.McpServerOauthLogin, params)
	if err != nil {
		return fmt.Errorf("codex could not start signing in to %s: %w", server, err)
	}
	if login.AuthorizationURL == "" {
		return fmt.Errorf("codex gave no sign-in page for %s", server)
	}
	b.mcpAuth.started(w, login.LoginID)
	b.log.Info("MCP server sign-in started", "server", server, "login", login.LoginID)

	// Bounded as codex's own wait is, with a margin for its answer.
	ctx, cancel := context.WithTimeout(ctx, backend.MCPLoginTimeout+10*time.Second)
	defer cancel()
	if err := open(ctx, login.AuthorizationURL); err != nil {
		return err
	}
	var done protocol.McpServerOauthLoginCompletedNotification
	select {
	case done = <-w.done:
	case <-srv.Done():
		return fmt.Errorf("codex app-server ended while waiting for the sign-in to %s: %w", server, codexapp.ErrClosed)
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return errLoginTimedOut
		}
		return context.Cause(ctx)
	}
	b.log.Info("MCP server sign-in ended", "server", server, "login", login.LoginID, "success", done.Success)
	if !done.Success {
		return fmt.Errorf("codex could not sign in to %s: %s", server, firstNonEmpty(done.Error, "no reason given"))
	}
	b.mcpAuth.signedIn(server)
	rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), mcpReloadTimeout)
	defer rcancel()
	if _, err := codexapp.Call(rctx, srv, protocol.McpServerReload, protocol.McpServerReloadParams{}); err != nil {
		return fmt.Errorf("signed in to %s, but codex could not reload its MCP servers (a new session will use it): %w", server, err)
	}
	return nil
}
