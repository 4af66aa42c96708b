package acp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/codex"
	"github.com/codexacp/codexacp/events"
)

// persist stores the session's record once it has a codex thread. A failure
// costs only session/load after a restart, so it is logged, not returned.
func (a *Agent) persist(s *session) {
	if a.store == nil {
		return
	}
	// One save at a time, snapshot included: a mode change racing a turn's
	// end must not let the older snapshot land last.
	a.storeMu.Lock()
	defer a.storeMu.Unlock()
	rec, ok := s.record()
	if !ok {
		return
	}
	if err := a.store.save(rec); err != nil {
		a.log.Warn("session not saved; it cannot be loaded after a restart", "session", s.id, "err", err)
	}
}

// ListSessions implements sdk.Agent: the stored sessions, newest first.
func (a *Agent) ListSessions(ctx context.Context, req sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	if a.store == nil {
		return sdk.ListSessionsResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionList)
	}
	cwd := ""
	if req.Cwd != nil {
		cwd = *req.Cwd
	}
	recs, err := a.store.list(cwd)
	if err != nil {
		return sdk.ListSessionsResponse{}, &sdk.RequestError{Code: -32603, Message: err.Error()}
	}
	resp := sdk.ListSessionsResponse{Sessions: []sdk.SessionInfo{}}
	for _, r := range recs {
		a.observeStored(a.store.path(r.SessionID))
		info := sdk.SessionInfo{
			SessionId:             sdk.SessionId(r.SessionID),
			Cwd:                   r.Cwd,
			AdditionalDirectories: r.AdditionalDirectories,
			UpdatedAt:             sdk.Ptr(r.UpdatedAt.Format(time.RFC3339)),
		}
		if r.Title != "" {
			info.Title = sdk.Ptr(r.Title)
		}
		resp.Sessions = append(resp.Sessions, info)
	}
	return resp, nil
}

// LoadSession implements sdk.AgentLoader: it restores a stored session (its
// codex thread, mode and token totals), replays the conversation from
// codex's rollout of the thread as session updates, and then answers.
func (a *Agent) LoadSession(ctx context.Context, req sdk.LoadSessionRequest) (sdk.LoadSessionResponse, error) {
	if a.store == nil {
		return sdk.LoadSessionResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionLoad)
	}
	rec, err := a.store.load(string(req.SessionId))
	if errors.Is(err, errNoSession) {
		return sdk.LoadSessionResponse{}, invalidParams(fmt.Sprintf("unknown session: %q", req.SessionId))
	}
	if err != nil {
		return sdk.LoadSessionResponse{}, &sdk.RequestError{Code: -32603, Message: err.Error()}
	}
	a.observeStored(a.store.path(rec.SessionID))
	cwd, dirs, servers, err := sessionSetup(req.Cwd, req.AdditionalDirectories, req.McpServers)
	if err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	history, err := a.threadHistory(rec.ThreadID)
	if err != nil {
		return sdk.LoadSessionResponse{}, &sdk.RequestError{Code: -32603,
			Message: fmt.Sprintf("cannot load session %s: %v", rec.SessionID, err)}
	}

	// A session loaded again in the same process replaces its live self.
	a.mu.Lock()
	old := a.sessions[rec.SessionID]
	delete(a.sessions, rec.SessionID)
	a.mu.Unlock()
	if old != nil {
		old.close()
	}
	s := newSession(rec.SessionID, cwd, dirs, servers, events.Options{
		ContextWindow: a.opts.ContextWindow,
		ThreadID:      rec.ThreadID,
		ThreadUsage:   rec.ThreadUsage,
	})
	s.mode, s.title, s.threadUsage = rec.Mode, rec.Title, rec.ThreadUsage
	if _, ok := parseMode(string(s.mode)); !ok {
		s.mode = DefaultMode
	}
	a.addSession(s)
	a.log.Info("session/load", "session", s.id, "thread", rec.ThreadID, "history_updates", len(history))

	for _, u := range history {
		a.sendUpdate(ctx, s.id, u)
	}
	return sdk.LoadSessionResponse{Modes: modeState(s.currentMode())}, nil
}

// threadHistory reads the conversation of a codex thread from its rollout.
func (a *Agent) threadHistory(threadID string) ([]sdk.SessionUpdate, error) {
	home, err := codex.Home()
	if err != nil {
		return nil, err
	}
	path, err := codex.RolloutPath(home, threadID)
	if err != nil {
		return nil, err
	}
	a.observeStored(path, nil)
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return events.History(f, events.HistoryOptions{OwnMCPServer: ownServerName})
}

// observeStored tells Options.ObserveStored of a stored file read for
// session/list or session/load.
func (a *Agent) observeStored(path string, err error) {
	if a.opts.ObserveStored != nil && err == nil {
		a.opts.ObserveStored(path)
	}
}
