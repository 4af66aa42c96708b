package acp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/codex"
	"github.com/codexacp/codexacp/events"
	"github.com/codexacp/codexacp/internal/recovery"
	"github.com/codexacp/codexacp/internal/sessionstore"
)

// persist stores the session's record, from session/new on, so that
// another agent process (an editor restarted, or acpx, which starts one per
// prompt) can load it. A failure costs only that, so it is logged, not
// returned.
func (a *Agent) persist(s *session) {
	if a.store == nil {
		return
	}
	// One save at a time, snapshot included: a mode change racing a turn's
	// end must not let the older snapshot land last.
	a.storeMu.Lock()
	defer a.storeMu.Unlock()
	// A /rename or mode change that raced session/delete must not bring the
	// record back: the flag is set before the record is removed, both
	// under storeMu's protection of the store (DeleteSession).
	if s.isDeleted() {
		return
	}
	if err := a.store.Save(s.record()); err != nil {
		a.log.Warn("session not saved; it cannot be loaded by another agent process", "session", s.id, "err", err)
	}
}

// persistSoon stores the session's record like persist, on a goroutine of
// its own, so that a turn's answer does not wait for the file write (~1 ms,
// more on a busy disk). What reads the store (list, load, resume) and the
// end of Serve wait for such saves (flushSaves), and so does a delete, so
// that a late save cannot bring a deleted record back; once Serve is ending the
// save happens at once. If the process dies before the save lands, the
// record misses only what the last turn changed that persistSoon is used
// for: its token totals and time (see runTurn).
func (a *Agent) persistSoon(s *session) {
	if a.store == nil {
		return
	}
	a.saves.mu.Lock()
	if a.saves.stopped {
		a.saves.mu.Unlock()
		a.persist(s)
		return
	}
	a.saves.running++
	a.saves.mu.Unlock()
	go func() {
		defer a.saves.done()
		defer recovery.Recover(a.log, "saving a session record", nil)
		if h := a.saves.beforeSave; h != nil {
			h()
		}
		a.persist(s)
	}()
}

// flushSaves waits for the saves persistSoon started.
func (a *Agent) flushSaves() {
	a.saves.mu.Lock()
	defer a.saves.mu.Unlock()
	for a.saves.running > 0 {
		if h := a.saves.beforeWait; h != nil {
			h()
		}
		a.saves.idle.Wait()
	}
}

// stopSaves makes later saves synchronous and waits for those running.
func (a *Agent) stopSaves() {
	a.saves.mu.Lock()
	a.saves.stopped = true
	a.saves.mu.Unlock()
	a.flushSaves()
}

// lateSaves counts the saves persistSoon runs in the background.
type lateSaves struct {
	mu      sync.Mutex
	idle    sync.Cond // signalled when running drops to 0; L is &mu
	running int
	stopped bool // Serve is ending: save synchronously

	// Tests' hooks: before a background save, and before flushSaves waits
	// (mu held).
	beforeSave, beforeWait func()
}

func (l *lateSaves) done() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.running--; l.running == 0 {
		l.idle.Broadcast()
	}
}

// ListSessions implements acpsdk.Agent: the stored sessions, newest first.
func (a *Agent) ListSessions(ctx context.Context, req acpsdk.ListSessionsRequest) (acpsdk.ListSessionsResponse, error) {
	if a.store == nil {
		return acpsdk.ListSessionsResponse{}, acpsdk.NewMethodNotFound(acpsdk.AgentMethodSessionList)
	}
	a.flushSaves()
	cwd := ""
	if req.Cwd != nil {
		cwd = *req.Cwd
	}
	recs, err := a.store.List(cwd)
	if err != nil {
		return acpsdk.ListSessionsResponse{}, internalError(err.Error())
	}
	resp := acpsdk.ListSessionsResponse{Sessions: []acpsdk.SessionInfo{}}
	for _, r := range recs {
		if r.ThreadID == "" {
			continue // never prompted: no conversation to offer
		}
		a.observeStored(a.store.Path(r.SessionID))
		info := acpsdk.SessionInfo{
			SessionId:             acpsdk.SessionId(r.SessionID),
			Cwd:                   r.Cwd,
			AdditionalDirectories: r.AdditionalDirectories,
			UpdatedAt:             acpsdk.Ptr(r.UpdatedAt.Format(time.RFC3339)),
		}
		if r.Title != "" {
			info.Title = acpsdk.Ptr(r.Title)
		}
		resp.Sessions = append(resp.Sessions, info)
	}
	return resp, nil
}

// LoadSession implements acpsdk.AgentLoader: it restores a stored session (its
// codex thread, mode and token totals), replays the conversation from
// codex's rollout of the thread as session updates, and then answers.
func (a *Agent) LoadSession(ctx context.Context, req acpsdk.LoadSessionRequest) (acpsdk.LoadSessionResponse, error) {
	a.startBackend()
	if err := a.settingsReady(ctx); err != nil {
		return acpsdk.LoadSessionResponse{}, err
	}
	s, history, err := a.restore(ctx, acpsdk.AgentMethodSessionLoad, req.SessionId, req.Cwd, req.AdditionalDirectories, req.McpServers, true)
	if err != nil {
		return acpsdk.LoadSessionResponse{}, err
	}
	for _, u := range history {
		a.sendUpdate(ctx, s.id, u)
	}
	a.announceCommands(ctx, s)
	return acpsdk.LoadSessionResponse{Modes: modeState(s.currentMode(), s.user), ConfigOptions: a.configOptions(s)}, nil
}

// ResumeSession implements acpsdk.Agent: it restores a stored session as
// LoadSession does, without replaying the conversation (the editor still
// shows it); the next prompt continues the codex thread.
func (a *Agent) ResumeSession(ctx context.Context, req acpsdk.ResumeSessionRequest) (acpsdk.ResumeSessionResponse, error) {
	a.startBackend()
	if err := a.settingsReady(ctx); err != nil {
		return acpsdk.ResumeSessionResponse{}, err
	}
	s, _, err := a.restore(ctx, acpsdk.AgentMethodSessionResume, req.SessionId, req.Cwd, req.AdditionalDirectories, req.McpServers, false)
	if err != nil {
		return acpsdk.ResumeSessionResponse{}, err
	}
	a.announceCommands(ctx, s)
	return acpsdk.ResumeSessionResponse{Modes: modeState(s.currentMode(), s.user), ConfigOptions: a.configOptions(s)}, nil
}

// restore makes the stored session id live, replacing its live self if
// this process has one. With history it returns the conversation as
// session updates; without, it only checks that codex still has the thread,
// so that a resume fails now rather than at the next prompt. A session
// never prompted has no thread and no history.
func (a *Agent) restore(ctx context.Context, method string, id acpsdk.SessionId, cwd string, addDirs []string, servers []acpsdk.McpServer, history bool) (*session, []acpsdk.SessionUpdate, error) {
	if a.store == nil {
		return nil, nil, acpsdk.NewMethodNotFound(method)
	}
	a.flushSaves()
	rec, err := a.store.Load(string(id))
	switch {
	case errors.Is(err, sessionstore.ErrBadSessionID):
		return nil, nil, invalidParams(err.Error())
	case errors.Is(err, sessionstore.ErrNoSession):
		return nil, nil, unknownSession(id)
	case err != nil:
		return nil, nil, internalError(err.Error())
	}
	a.observeStored(a.store.Path(rec.SessionID))
	cwd, dirs, mcp, err := sessionSetup(cwd, addDirs, servers)
	if err != nil {
		return nil, nil, err
	}
	if err := a.requireAuth(context.Background()); err != nil {
		return nil, nil, err
	}
	var updates []acpsdk.SessionUpdate
	if rec.ThreadID != "" {
		if history {
			updates, err = a.threadHistory(rec.SessionID, rec.ThreadID)
		} else {
			_, err = a.rolloutPath(rec.ThreadID)
		}
		if err != nil {
			return nil, nil, internalError(
				fmt.Sprintf("cannot %s session %s: %v", strings.TrimPrefix(method, "session/"), rec.SessionID, err))
		}
	}

	a.mu.Lock()
	old := a.sessions[rec.SessionID]
	delete(a.sessions, rec.SessionID)
	a.mu.Unlock()
	if old != nil {
		old.close()
		old.undoSettled() // its last turn's change set is stored before it is read
	}
	s := newSession(rec.SessionID, cwd, dirs, mcp, events.Options{
		ContextWindow: a.modelInfo().ContextWindow,
		ThreadID:      rec.ThreadID,
		ThreadUsage:   rec.ThreadUsage,
	})
	s.user = a.sessionUserConfig(ctx, cwd)
	if old != nil {
		// The same thread in this process: codex still runs the commands
		// the user allowed always without asking.
		s.runAlways.Store(old.runAlways.Load())
	}
	s.mode, s.title, s.threadUsage = a.storedMode(rec, s.user), rec.Title, rec.ThreadUsage
	s.model, s.effort, s.serviceTier = rec.Model, rec.Effort, rec.ServiceTier
	s.plan = rec.Plan && a.offersPlanMode()
	a.openUndo(s, true)
	a.addSession(s)
	a.log.Info(method, "session", s.id, "thread", rec.ThreadID, "history_updates", len(updates))
	return s, updates, nil
}

// storedMode is the mode a stored record gives the session it restores
// or forks: the record's own, unless the user's settings no longer offer
// it, or the record's file may hold what someone else wrote (not the
// agent's user's, or writable by others: sessionstore.Record.Foreign). Then the
// session gets the mode session/new would give it: a record grants no
// more than a new session has (docs/sessions.md).
func (a *Agent) storedMode(rec sessionstore.Record, user codex.UserConfig) backend.Mode {
	if _, ok := parseMode(rec.Mode, user); !ok {
		// Not offered any more (the user's own settings, since removed).
		return defaultMode(user)
	}
	if rec.Foreign != "" && backend.Mode(rec.Mode) != defaultMode(user) {
		a.log.Warn("stored mode not granted: the record may not be the user's own", "session", rec.SessionID,
			"stored_mode", rec.Mode, "mode", defaultMode(user), "why", rec.Foreign)
		return defaultMode(user)
	}
	return backend.Mode(rec.Mode)
}

// threadHistory reads the conversation of a session's codex thread from
// its rollout, with the overwrites' diffs the session kept (its write log, internal/sessionstore).
// A forked or reverted thread's rollout holds only its own records and
// names the file its history continues (codex.OpenRolloutHistory).
func (a *Agent) threadHistory(sessionID, threadID string) ([]acpsdk.SessionUpdate, error) {
	home, err := codex.Home()
	if err != nil {
		return nil, err
	}
	// Codex's own files under its home; a link codex or the user made is
	// followed, but a FIFO or device is refused, not waited on or read.
	h, err := codex.OpenRolloutHistory(home, threadID)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	if h.Broken != nil {
		a.log.Warn("rollout history incomplete; its newest part is replayed", "session", sessionID, "err", h.Broken)
	}
	for _, p := range h.Files {
		a.observeStored(p, nil)
	}
	writes, err := a.store.Writes(sessionID)
	if err != nil {
		// Only the overwrites' diffs are missing from the replay.
		a.log.Warn("write log unreadable; overwrites replay without their diffs", "session", sessionID, "err", err)
	}
	if p, err := a.store.Path(sessionID); err == nil {
		// A recording keeps it with the record and the rollout (as missing
		// when there is none), so that a replayed load has the same diffs.
		a.observeStored(sessionstore.WriteLogPath(p), nil)
	}
	return events.History(h, events.HistoryOptions{OwnMCPServer: backend.OwnServerName, Writes: writes})
}

// rolloutPath finds codex's rollout of a thread, which session/load reads
// and codex resumes the thread from.
func (a *Agent) rolloutPath(threadID string) (string, error) {
	home, err := codex.Home()
	if err != nil {
		return "", err
	}
	path, err := codex.RolloutPath(home, threadID)
	a.observeStored(path, err)
	return path, err
}

// observeStored tells Options.ObserveStored of a stored file read for
// session/list, session/load or session/resume.
func (a *Agent) observeStored(path string, err error) {
	if a.opts.ObserveStored != nil && err == nil {
		a.opts.ObserveStored(path)
	}
}
