package acp

// Session lifecycle: session/new, fork, close and delete, and what they
// share (a session's setup, its registration with the agent and the
// backend, its close). Restoring a stored session (list, load, resume) is
// sessionload.go; the session itself is session.go.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/events"
	"github.com/codexacp/codexacp/internal/recovery"
	"github.com/codexacp/codexacp/internal/sessionstore"
)

var _ acpsdk.ExtensionMethodHandler = (*Agent)(nil)

// methodSessionDelete is ACP's session/delete (stabilised June 2026), which
// acp-go-sdk v0.13.0 does not route; the input guard hands it to the SDK
// under extDeleteSession, an extension method the SDK routes to
// HandleExtensionMethod.
const (
	methodSessionDelete = "session/delete"
	extDeleteSession    = "_codexacp/session/delete"
)

// canDelete: session/delete needs the session store.
func (a *Agent) canDelete() bool { return a.store != nil }

// canFork: session/fork needs the store and a backend that forks threads.
func (a *Agent) canFork() bool {
	return a.store != nil && a.can(backend.Fork)
}

// HandleExtensionMethod implements acpsdk.ExtensionMethodHandler.
func (a *Agent) HandleExtensionMethod(ctx context.Context, method string, params json.RawMessage) (any, error) {
	if method == extSessionUndo && a.can(backend.Undo) {
		return a.handleUndoMethod(ctx, params)
	}
	if method != extDeleteSession || !a.canDelete() {
		return nil, acpsdk.NewMethodNotFound(method)
	}
	var req struct {
		SessionID acpsdk.SessionId `json:"sessionId"`
	}
	if err := json.Unmarshal(params, &req); err != nil || req.SessionID == "" {
		return nil, invalidParams("session/delete needs a sessionId")
	}
	return struct{}{}, a.DeleteSession(ctx, req.SessionID)
}

// DeleteSession is session/delete: the session ends if it is live, its
// record goes (session/list no longer shows it), and with the app-server
// codex deletes the thread too. Deleting an unknown or deleted session
// succeeds, as ACP asks.
func (a *Agent) DeleteSession(ctx context.Context, id acpsdk.SessionId) error {
	if !sessionstore.ValidSessionID(string(id)) {
		return invalidParams(fmt.Sprintf("%v: %q", sessionstore.ErrBadSessionID, id))
	}
	a.mu.Lock()
	s := a.sessions[string(id)]
	delete(a.sessions, string(id))
	reg := a.tools[string(id)]
	delete(a.tools, string(id))
	a.mu.Unlock()
	thread := ""
	if s != nil {
		s.markDeleted()
		s.close()
		a.opts.Backend.Forget(s.id)
		thread = s.thread()
	}
	// The session's last turn may have left its record's save running
	// (persistSoon); close waited for the turn, so the save is counted.
	a.flushSaves()
	if reg != nil {
		reg.unregister()
	}
	rec, err := a.store.Load(string(id))
	switch {
	case errors.Is(err, sessionstore.ErrNoSession):
	case errors.Is(err, sessionstore.ErrBadRecord):
		// Not a record codexacp can read (a FIFO, a link, corrupt): it
		// names no thread, and is removed all the same.
		a.log.Warn("deleting an unusable session record", "session", id, "err", err)
	case err != nil:
		return &acpsdk.RequestError{Code: -32603, Message: err.Error()}
	default:
		thread = firstNonEmpty(thread, rec.ThreadID)
	}
	if a.can(backend.DeleteThread) && thread != "" {
		if err := a.opts.Backend.DeleteThread(ctx, thread); err != nil {
			return &acpsdk.RequestError{Code: -32603, Message: fmt.Sprintf("cannot delete session %s: %v", id, err)}
		}
	}
	// Under the store's lock: a save that began before the session was
	// marked deleted lands first, and is removed with it.
	a.storeMu.Lock()
	err = a.store.Remove(string(id))
	a.storeMu.Unlock()
	if err != nil {
		return &acpsdk.RequestError{Code: -32603, Message: err.Error()}
	}
	a.log.Info(methodSessionDelete, "session", id, "thread", thread)
	return nil
}

// UnstableForkSession implements session/fork (unstable in ACP; acp-go-sdk
// v0.13.0 routes it): a new session continues a copy of the source
// session's codex thread, in the source's mode, model, effort, fast mode
// and collaboration mode, so the two diverge from here; its commands are
// sent after the answer, as for session/new. Offered with the app-server
// backend only.
func (a *Agent) UnstableForkSession(ctx context.Context, req acpsdk.UnstableForkSessionRequest) (acpsdk.UnstableForkSessionResponse, error) {
	if !a.canFork() {
		return acpsdk.UnstableForkSessionResponse{}, acpsdk.NewMethodNotFound(acpsdk.AgentMethodSessionFork)
	}
	a.startBackend()
	src, err := a.sourceRecord(req.SessionId)
	if err != nil {
		return acpsdk.UnstableForkSessionResponse{}, err
	}
	var servers []acpsdk.McpServer
	if len(req.McpServers) > 0 {
		// The unstable type has the stable one's wire form.
		b, err := json.Marshal(req.McpServers)
		if err == nil {
			err = json.Unmarshal(b, &servers)
		}
		if err != nil {
			return acpsdk.UnstableForkSessionResponse{}, invalidParams("mcpServers: " + err.Error())
		}
	}
	cwd, dirs, mcp, err := sessionSetup(req.Cwd, req.AdditionalDirectories, servers)
	if err != nil {
		return acpsdk.UnstableForkSessionResponse{}, err
	}
	if err := a.requireAuth(ctx); err != nil {
		return acpsdk.UnstableForkSessionResponse{}, err
	}
	if err := a.settingsReady(ctx); err != nil {
		return acpsdk.UnstableForkSessionResponse{}, err
	}
	s := newSession(newSessionID(), cwd, dirs, mcp, events.Options{ContextWindow: a.modelInfo().ContextWindow})
	s.user = a.sessionUserConfig(ctx, cwd)
	s.mode, s.model, s.effort, s.title = a.storedMode(src, s.user), src.Model, src.Effort, src.Title
	s.serviceTier, s.plan = src.ServiceTier, src.Plan && a.offersPlanMode()
	if src.ThreadID != "" {
		// The fork's thread carries the new session's tool token.
		a.attachTools(s)
		t, _ := a.turn(ctx, s, "")
		t.ThreadID = src.ThreadID
		thread, err := a.opts.Backend.ForkThread(ctx, t)
		if err != nil {
			return acpsdk.UnstableForkSessionResponse{}, &acpsdk.RequestError{Code: -32603, Message: fmt.Sprintf("cannot fork session %s: %v", req.SessionId, err)}
		}
		s.threadID = thread
		s.translator = events.NewTranslator(events.Options{ContextWindow: a.modelInfo().ContextWindow, ThreadID: thread, OwnMCPServer: backend.OwnServerName})
		// The fork's history holds the source's overwrites.
		if err := a.store.CopyWrites(string(req.SessionId), s.id); err != nil {
			a.log.Warn("write log not copied; the fork's overwrites replay without their diffs", "session", s.id, "err", err)
		}
		// The fork's files are the source's: its turns can be undone
		// (codex checks they are the fork's thread's last turns).
		a.flushSaves() // the source's last change set is stored
		if err := a.store.CopyUndo(string(req.SessionId), s.id); err != nil {
			a.log.Warn("change sets not copied; the fork cannot undo the source's turns", "session", s.id, "err", err)
		}
	}
	a.openUndo(s, false)
	a.addSession(s)
	a.persist(s)
	a.log.Info(acpsdk.AgentMethodSessionFork, "session", s.id, "from", req.SessionId, "thread", s.thread())
	resp := acpsdk.UnstableForkSessionResponse{SessionId: acpsdk.SessionId(s.id), Modes: modeState(s.currentMode(), s.user)}
	// The unstable type has the stable one's wire form.
	if b, err := json.Marshal(a.configOptions(s)); err == nil {
		_ = json.Unmarshal(b, &resp.ConfigOptions)
	}
	a.announceCommands(ctx, s)
	return resp, nil
}

// sourceRecord is the session to fork as it is now: live, or stored.
func (a *Agent) sourceRecord(id acpsdk.SessionId) (sessionstore.Record, error) {
	if !sessionstore.ValidSessionID(string(id)) {
		return sessionstore.Record{}, invalidParams(fmt.Sprintf("%v: %q", sessionstore.ErrBadSessionID, id))
	}
	a.mu.Lock()
	s := a.sessions[string(id)]
	a.mu.Unlock()
	if s != nil {
		return s.record(), nil
	}
	a.flushSaves()
	rec, err := a.store.Load(string(id))
	switch {
	case errors.Is(err, sessionstore.ErrNoSession):
		return sessionstore.Record{}, unknownSession(id)
	case err != nil:
		return sessionstore.Record{}, &acpsdk.RequestError{Code: -32603, Message: err.Error()}
	}
	return rec, nil
}

// NewSession implements acpsdk.Agent.
func (a *Agent) NewSession(ctx context.Context, req acpsdk.NewSessionRequest) (acpsdk.NewSessionResponse, error) {
	a.startBackend()
	cwd, dirs, servers, err := sessionSetup(req.Cwd, req.AdditionalDirectories, req.McpServers)
	if err != nil {
		return acpsdk.NewSessionResponse{}, err
	}
	if err := a.requireAuth(ctx); err != nil {
		return acpsdk.NewSessionResponse{}, err
	}
	if err := a.settingsReady(ctx); err != nil {
		return acpsdk.NewSessionResponse{}, err
	}
	s := newSession(newSessionID(), cwd, dirs, servers, events.Options{ContextWindow: a.modelInfo().ContextWindow})
	s.user = a.sessionUserConfig(ctx, cwd)
	s.mode = defaultMode(s.user)
	a.openUndo(s, false)
	a.addSession(s)
	// Stored before the answer: a client may load the session from another
	// agent process right away (acpx starts one per prompt).
	a.persist(s)
	a.log.Info("session/new", "session", s.id, "cwd", cwd, "mcp_servers", len(req.McpServers))
	a.announceCommands(ctx, s)

	return acpsdk.NewSessionResponse{
		SessionId:     acpsdk.SessionId(s.id),
		Modes:         modeState(s.currentMode(), s.user),
		ConfigOptions: a.configOptions(s),
	}, nil
}

// sessionSetup validates what session/new and session/load share: an
// absolute existing cwd and additional directories, and the editor's MCP
// servers as codex config.
func sessionSetup(cwd string, addDirs []string, servers []acpsdk.McpServer) (string, []string, []backend.MCPServer, error) {
	cwd, err := checkDir(cwd, "cwd")
	if err != nil {
		return "", nil, nil, err
	}
	var dirs []string
	for _, d := range addDirs {
		d, err := checkDir(d, "additionalDirectories")
		if err != nil {
			return "", nil, nil, err
		}
		dirs = append(dirs, d)
	}
	setup, err := clientMCPConfig(servers)
	if err != nil {
		return "", nil, nil, invalidParams(err.Error())
	}
	return cwd, dirs, setup, nil
}

// addSession attaches the session's tools and makes it reachable by id.
func (a *Agent) addSession(s *session) {
	a.attachTools(s)
	a.mu.Lock()
	a.sessions[s.id] = s
	a.mu.Unlock()
	if a.can(backend.Warm) {
		t, _ := a.turn(context.Background(), s, "")
		a.opts.Backend.Warm(t)
	}
	a.warmShellEdits(s)
}

// checkDir requires an absolute path to an existing directory and returns it
// cleaned.
func checkDir(p, field string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", invalidParams(fmt.Sprintf("%s must be an absolute path: %q", field, p))
	}
	p = filepath.Clean(p)
	fi, err := os.Stat(p)
	if err != nil {
		return "", invalidParams(fmt.Sprintf("%s does not exist: %s", field, p))
	}
	if !fi.IsDir() {
		return "", invalidParams(fmt.Sprintf("%s is not a directory: %s", field, p))
	}
	return p, nil
}

func newSessionID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return "sess_" + hex.EncodeToString(b[:])
}

// session returns the live session id: -32602 for an id this agent cannot
// have issued, -32002 (Resource not found) for one it does not have live.
func (a *Agent) session(id acpsdk.SessionId) (*session, error) {
	if !sessionstore.ValidSessionID(string(id)) {
		return nil, invalidParams(fmt.Sprintf("%v: %q", sessionstore.ErrBadSessionID, id))
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.sessions[string(id)]
	if !ok {
		return nil, unknownSession(id)
	}
	return s, nil
}

// CloseSession implements acpsdk.Agent. The stored record stays: a closed
// session can be loaded or resumed again.
func (a *Agent) CloseSession(ctx context.Context, req acpsdk.CloseSessionRequest) (acpsdk.CloseSessionResponse, error) {
	s, err := a.session(req.SessionId)
	if err != nil {
		return acpsdk.CloseSessionResponse{}, err
	}
	a.mu.Lock()
	// A concurrent load may have replaced s already; it closed s then.
	closing := a.sessions[s.id] == s
	if closing {
		delete(a.sessions, s.id)
	}
	a.mu.Unlock()
	s.close()
	// Its last turn's change set is stored before the answer: another
	// agent (a second window, a restart) may load the session next.
	s.undoSettled()
	if closing {
		a.opts.Backend.Forget(s.id)
	}
	return acpsdk.CloseSessionResponse{}, nil
}

func (a *Agent) closeAllSessions() {
	a.mu.Lock()
	all := make([]*session, 0, len(a.sessions))
	for _, s := range a.sessions {
		all = append(all, s)
	}
	a.sessions = map[string]*session{}
	regs := a.tools
	a.tools = map[string]*toolsRegistration{}
	a.mu.Unlock()
	// Concurrently: every running turn is cancelled at once, not after the
	// turns of the sessions before it ended.
	var wg sync.WaitGroup
	for _, s := range all {
		wg.Go(func() {
			defer recovery.Recover(a.log, "closing a session", nil)
			s.close()
			a.opts.Backend.Forget(s.id)
		})
	}
	wg.Wait()
	for _, reg := range regs {
		reg.unregister()
	}
}
