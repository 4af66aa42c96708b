package appserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/codexacp/codexacp/codex/appserver/protocol"
)

// Forgetting turns (/undo, docs/undo.md). codex 0.169 and 0.171 cut a
// thread's history with the app-server's experimental thread/revert
// {threadId, beforeTurnId}: that turn and every later one are gone from
// what the model is sent and from the thread's history (the rollout keeps
// them; OpenRolloutHistory leaves them out). codex exec cannot cut a
// thread; an app-server started on the same CODEX_HOME can, between exec
// turns, and `codex exec resume` then continues from the cut
// (RevertStored). e2e/codexexec/revert_test.go shows each on the next
// model request.

// ErrNotEnoughTurns: a thread has fewer turns than were to be cut.
var ErrNotEnoughTurns = errors.New("the thread has fewer turns")

// turnsPage bounds one thread/turns/list answer.
const turnsPage = 50

// LastTurns returns the ids of a thread's last n turns, newest first
// (thread/turns/list, descending; it reads the stored thread, which need
// not be loaded). It returns fewer when the thread has fewer.
func (c *Server) LastTurns(ctx context.Context, threadID string, n int) ([]string, error) {
	var ids []string
	cursor := ""
	for len(ids) < n {
		page, err := Call(ctx, c, protocol.ThreadTurnsList, protocol.ThreadTurnsListParams{
			Cursor: cursor, Limit: min(n-len(ids), turnsPage), SortDirection: protocol.SortDesc, ThreadID: threadID})
		if err != nil {
			return nil, fmt.Errorf("listing the turns of thread %s: %w", threadID, err)
		}
		for _, t := range page.Data {
			if t.ID == "" {
				return nil, fmt.Errorf("listing the turns of thread %s: a turn without an id", threadID)
			}
			if len(ids) < n {
				ids = append(ids, t.ID)
			}
		}
		if page.NextCursor == nil || *page.NextCursor == "" || len(page.Data) == 0 {
			break
		}
		cursor = *page.NextCursor
	}
	return ids, nil
}

// Revert cuts a thread's history before turn beforeTurnID (thread/revert):
// that turn and the later ones are forgotten. The thread must be loaded on
// c (thread/start, thread/resume); local files are not touched.
func (c *Server) Revert(ctx context.Context, threadID, beforeTurnID string) error {
	if _, err := Call(ctx, c, protocol.ThreadRevert, protocol.ThreadRevertParams{BeforeTurnID: beforeTurnID, ThreadID: threadID}); err != nil {
		return fmt.Errorf("reverting thread %s before turn %s: %w", threadID, beforeTurnID, err)
	}
	return nil
}

// RevertLast cuts the last n turns of a thread loaded on c and returns
// their ids, newest first. Fewer turns than n is ErrNotEnoughTurns, and
// nothing is cut.
func (c *Server) RevertLast(ctx context.Context, threadID string, n int) ([]string, error) {
	if n < 1 {
		return nil, fmt.Errorf("reverting %d turns of thread %s: %w", n, threadID, ErrNotEnoughTurns)
	}
	ids, err := c.LastTurns(ctx, threadID, n)
	if err != nil {
		return nil, err
	}
	if len(ids) < n {
		return nil, fmt.Errorf("reverting %d turns of thread %s, which has %d: %w", n, threadID, len(ids), ErrNotEnoughTurns)
	}
	return ids, c.Revert(ctx, threadID, ids[n-1])
}

// ErrTurnsDiffer: the thread's last turns are not the turns to cut.
var ErrTurnsDiffer = errors.New("the thread's last turns are not those")

// RevertTurns cuts the turns turnIDs (codex's ids, oldest first) off a
// thread loaded on c, after checking that they are its last turns, in
// that order: a turn codex has that the caller does not know of (or the
// other way round) is ErrTurnsDiffer, and nothing is cut.
func (c *Server) RevertTurns(ctx context.Context, threadID string, turnIDs []string) error {
	if len(turnIDs) == 0 {
		return fmt.Errorf("reverting no turn of thread %s: %w", threadID, ErrNotEnoughTurns)
	}
	for _, id := range turnIDs {
		if id == "" {
			return fmt.Errorf("reverting thread %s: codex's id of a turn to cut is not known: %w", threadID, ErrTurnsDiffer)
		}
	}
	last, err := c.LastTurns(ctx, threadID, len(turnIDs))
	if err != nil {
		return err
	}
	if len(last) < len(turnIDs) {
		return fmt.Errorf("reverting %d turns of thread %s, which has %d: %w", len(turnIDs), threadID, len(last), ErrNotEnoughTurns)
	}
	for i, id := range turnIDs {
		if got := last[len(last)-1-i]; got != id {
			return fmt.Errorf("reverting thread %s: its turn %d from the end is %s, not %s: %w", threadID, len(last)-i, got, id, ErrTurnsDiffer)
		}
	}
	return c.Revert(ctx, threadID, turnIDs[0])
}

// RevertStored cuts the last n turns of a thread no process has loaded
// (codex exec's, between its turns): it starts `codex app-server` with
// opts (the same codex and CODEX_HOME as the exec runs), loads the thread
// (thread/resume, without its turns), reverts it and closes the app-server.
// It returns the ids of the turns cut, newest first.
func RevertStored(ctx context.Context, opts Options, threadID string, n int) ([]string, error) {
	var ids []string
	err := withStoredThread(ctx, opts, threadID, func(c *Server) (err error) {
		ids, err = c.RevertLast(ctx, threadID, n)
		return err
	})
	return ids, err
}

// RevertStoredTurns is RevertTurns on a thread no process has loaded, as
// RevertStored loads it.
func RevertStoredTurns(ctx context.Context, opts Options, threadID string, turnIDs []string) error {
	return withStoredThread(ctx, opts, threadID, func(c *Server) error {
		return c.RevertTurns(ctx, threadID, turnIDs)
	})
}

// withStoredThread runs f on an app-server started with opts that has
// loaded the thread, and closes it.
func withStoredThread(ctx context.Context, opts Options, threadID string, f func(*Server) error) error {
	c, err := Start(ctx, opts)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := Call(ctx, c, protocol.ThreadResume, protocol.ThreadResumeParams{ExcludeTurns: true, ThreadID: threadID}); err != nil {
		return fmt.Errorf("loading thread %s to revert it: %w", threadID, err)
	}
	return f(c)
}
