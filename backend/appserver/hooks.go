package appserver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/codexacp/codexacp/backend"
	codexapp "github.com/codexacp/codexacp/codex/appserver"
	"github.com/codexacp/codexacp/codex/appserver/protocol"
)

// hooksTimeout bounds hooks/list and the trust's config/batchWrite (codex
// reads and writes local files).
const hooksTimeout = 30 * time.Second

// Hooks implements backend.Backend: hooks/list for the turn's workspace.
func (b *Backend) Hooks(ctx context.Context, t backend.Turn) (backend.HookList, error) {
	server, err := b.running(ctx)
	if err != nil {
		return backend.HookList{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, hooksTimeout)
	defer cancel()
	res, err := codexapp.Call(ctx, server, protocol.HooksList, protocol.HooksListParams{Cwds: []string{t.Cwd}})
	if err != nil {
		return backend.HookList{}, fmt.Errorf("codex app-server: hooks/list: %w", err)
	}
	var list backend.HookList
	for _, entry := range res.Data {
		for _, h := range entry.Hooks {
			list.Hooks = append(list.Hooks, hookOf(h))
		}
		list.Warnings = append(list.Warnings, entry.Warnings...)
		for _, e := range entry.Errors {
			list.Errors = append(list.Errors, backend.HookError{Path: e.Path, Message: e.Message})
		}
	}
	return list, nil
}

func hookOf(h protocol.HookMetadata) backend.Hook {
	hook := backend.Hook{Key: h.Key, Event: h.EventName, Handler: h.HandlerType, Command: h.Command,
		Server: h.Server, Tool: h.Tool, Source: h.Source, SourcePath: h.SourcePath, Enabled: h.Enabled,
		Managed: h.IsManaged, Timeout: h.TimeoutSec, Hash: h.CurrentHash, Trust: h.TrustStatus}
	if h.Matcher != nil {
		hook.Matcher = *h.Matcher
	}
	return hook
}

// TrustHook implements backend.Backend the way codex's own clients do (0.169
// and 0.171 read it so): hooks.state."<key>".trusted_hash = hash in the
// user's config.toml, merged into what is there (upsert keeps the hook's
// other state and every other hook's), written by codex
// (config/batchWrite) and applied to the loaded threads. A hook that
// changed since its hash was read is not trusted by it: codex compares the
// hash with the hook as it is when it runs.
func (b *Backend) TrustHook(ctx context.Context, _ backend.Turn, key, hash string) error {
	if key == "" || hash == "" {
		return errors.New("no hook to trust")
	}
	server, err := b.running(ctx)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, hooksTimeout)
	defer cancel()
	_, err = codexapp.Call(ctx, server, protocol.ConfigBatchWrite, protocol.ConfigBatchWriteParams{
		Edits: []protocol.ConfigEdit{{
			KeyPath:       "hooks.state",
			MergeStrategy: protocol.MergeUpsert,
			// The key is one TOML key (it holds dots and colons): a table
			// value, not a longer key path.
			Value: map[string]any{key: map[string]string{"trusted_hash": hash}},
		}},
		ReloadUserConfig: true,
	})
	if err != nil {
		return fmt.Errorf("codex app-server: config/batchWrite: %w", err)
	}
	return nil
}
