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
		params := protocol.ThreadTurnsListParams{ThreadID: threadID, SortDirection: protocol.SortDesc, Limit: min(n-len(ids), turnsPage), Cursor: cursor}
		page, err := Call(ctx, c, protocol.ThreadTurnsList, params)
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
	if _, err := Call(ctx, c, protocol.ThreadRevert, protocol.ThreadRevertParams{ThreadID: threadID, BeforeTurnID: beforeTurnID}); err != nil {
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

// RevertStored cuts the last n turns of a thread no process has loaded
// (codex exec's, between its turns): it starts `codex app-server` with
// opts (the same codex and CODEX_HOME as the exec runs), loads the thread
// (thread/resume, without its turns), reverts it and closes the app-server.
// It returns the ids of the turns cut, newest first.
func RevertStored(ctx context.Context, opts Options, threadID string, n int) ([]string, error) {
	c, err := Start(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if _, err := Call(ctx, c, protocol.ThreadResume, protocol.ThreadResumeParams{ThreadID: threadID, ExcludeTurns: true}); err != nil {
		return nil, fmt.Errorf("loading thread %s to revert it: %w", threadID, err)
	}
	return c.RevertLast(ctx, threadID, n)
}
