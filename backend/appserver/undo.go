package appserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/codexacp/codexacp/backend"
)

// ForgetTurns implements backend.Backend (/undo, docs/undo.md): the
// session's thread is loaded (resumed when this app-server has not loaded
// it: after a restart, a session/load) and cut before the first of
// turnIDs with thread/revert, once thread/turns/list shows they are its
// last turns. The next turn/start's model request lacks them.
func (b *Backend) ForgetTurns(ctx context.Context, t backend.Turn, turnIDs []string) error {
	if t.ThreadID == "" {
		return errors.New("the session has no codex thread")
	}
	server, err := b.running(ctx)
	if err != nil {
		return err
	}
	thread, _, err := b.openThread(ctx, server, t)
	if err != nil {
		return err
	}
	if err := server.RevertTurns(ctx, thread, turnIDs); err != nil {
		return fmt.Errorf("codex app-server: %w", err)
	}
	return nil
}
