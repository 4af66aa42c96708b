package acp

import (
	"context"
	"log/slog"

	"github.com/codexacp/codexacp/codex"
	"github.com/codexacp/codexacp/events"
)

// LineRunner runs one `codex exec --json` process and hands each line it
// prints to onLine, in order, before returning. codex.Runner implements it.
type LineRunner interface {
	Run(ctx context.Context, inv codex.Invocation, onLine func(line []byte)) error
}

// ExecBackend runs each turn as one `codex exec` process (`… resume THREAD`
// after the first). Codex asks no questions there: the sandbox decides what
// a command may do.
type ExecBackend struct {
	Runner LineRunner
	Logger *slog.Logger // nil: slog.Default()
}

// Run implements Backend.
func (b *ExecBackend) Run(ctx context.Context, t Turn, out TurnOutput) error {
	log := b.Logger
	if log == nil {
		log = slog.Default()
	}
	return b.Runner.Run(ctx, execInvocation(t), func(line []byte) {
		ev, err := events.Parse(line)
		if err != nil {
			log.Warn("unreadable codex output line", "session", t.SessionID, "err", err, "bytes", len(line))
			return
		}
		out.Event(ev)
	})
}

// toolsTokenEnv carries the session's token to codex, which sends it as a
// bearer token; it never appears on a command line.
const toolsTokenEnv = "CODEXACP_MCP_TOKEN"

// execInvocation is the turn as a codex exec command: every setting is a -c
// override (codex does not store them with the thread), secrets travel in
// the environment.
func execInvocation(t Turn) codex.Invocation {
	inv := codex.Invocation{
		Cwd:      t.Cwd,
		ThreadID: t.ThreadID,
		Prompt:   t.Prompt,
		Sandbox:  t.Mode.Sandbox(),
		Model:    t.Model,
		Config:   append([]string(nil), t.editorMCP.config...),
		Env:      append([]string(nil), t.editorMCP.env...),
	}
	if t.Effort != "" {
		inv.Config = append(inv.Config, "model_reasoning_effort="+tomlString(t.Effort))
	}
	if t.Mode == ModeAuto && len(t.Dirs) > 0 {
		inv.Config = append(inv.Config, "sandbox_workspace_write.writable_roots="+tomlStringArray(t.Dirs))
	}
	if t.Tools != nil {
		inv.Config = append(inv.Config,
			"mcp_servers."+ownServerName+"={url="+tomlString(t.Tools.URL)+
				", bearer_token_env_var="+tomlString(toolsTokenEnv)+
				", required=true, default_tools_approval_mode=\"approve\""+
				// A permission prompt waits for the user; codex must not time out first.
				", tool_timeout_sec=86400}",
			"developer_instructions="+tomlString(developerInstructions(t.Cwd)),
		)
		if t.Catalog != "" {
			inv.Config = append(inv.Config, "model_catalog_json="+tomlString(t.Catalog))
		}
		inv.Env = append(inv.Env, toolsTokenEnv+"="+t.Tools.Token)
	}
	return inv
}
