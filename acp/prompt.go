package acp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/codex"
	"github.com/codexacp/codexacp/events"
)

// Prompt implements sdk.Agent: it runs one codex turn and returns when codex
// has finished and every update of the turn has been sent.
func (a *Agent) Prompt(ctx context.Context, req sdk.PromptRequest) (sdk.PromptResponse, error) {
	s, err := a.session(req.SessionId)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	text, err := promptText(req.Prompt)
	if err != nil {
		return sdk.PromptResponse{}, invalidParams(err.Error())
	}

	gen := s.newPrompt()
	s.turnMu.Lock()
	defer s.turnMu.Unlock()

	turnCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if !s.beginTurn(gen, cancel) {
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
	}
	defer s.endTurn()
	return a.runTurn(turnCtx, s, text)
}

func (a *Agent) runTurn(ctx context.Context, s *session, text string) (sdk.PromptResponse, error) {
	mode := s.currentMode()
	log := a.log.With("session", s.id)
	inv := codex.Invocation{
		Cwd:      s.cwd,
		ThreadID: s.thread(),
		Prompt:   text,
		Sandbox:  mode.Sandbox(),
		Config:   s.turnConfig(mode),
		Env:      append([]string(nil), s.mcp.env...),
	}
	if a.opts.Tools != nil {
		inv.Config = append(inv.Config, a.toolsConfig(ctx, s)...)
		inv.Env = append(inv.Env, toolsTokenEnv+"="+s.toolsToken)
	}
	log.Info("turn started", "resume", inv.ThreadID != "", "mode", mode)

	s.translator.BeginTurn()
	s.startToolCalls(ctx)
	runErr := a.opts.Backend.Run(ctx, inv, func(line []byte) {
		ev, err := events.Parse(line)
		if err != nil {
			log.Warn("unreadable codex output line", "err", err, "bytes", len(line))
			return
		}
		if !ev.Known() {
			log.Debug("codex event not translated", "type", ev.Type)
		}
		for _, u := range s.translator.Translate(ev) {
			a.sendUpdate(ctx, s.id, u)
		}
	})
	// Codex has exited; its tool calls end with the turn, before the answer.
	for _, id := range s.finishToolCalls(toolCallGrace) {
		log.Warn("file-tool call still running at the end of the turn", "call", id)
		a.sendUpdate(ctx, s.id, failedUpdate(id, "The turn ended before this tool call finished; nothing more will be written."))
	}
	out := s.translator.EndTurn()
	for _, u := range out.Updates {
		a.sendUpdate(ctx, s.id, u)
	}
	s.turnEnded(text, out)
	a.persist(s)

	if ctx.Err() != nil {
		log.Info("turn cancelled", "cause", context.Cause(ctx))
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
	}
	if out.FailedMessage != "" {
		log.Warn("turn failed", "message", out.FailedMessage)
		return sdk.PromptResponse{}, turnError("Codex turn failed: " + out.FailedMessage)
	}
	if runErr != nil {
		log.Warn("codex run failed", "err", runErr)
		return sdk.PromptResponse{}, turnError(runErrorMessage(runErr))
	}
	if !out.Completed {
		return sdk.PromptResponse{}, turnError("Codex exited without completing the turn")
	}
	log.Info("turn completed")
	return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn, Usage: out.Usage.ACP()}, nil
}

// turnConfig is the per-run codex configuration of the session.
func (s *session) turnConfig(mode Mode) []string {
	cfg := append([]string(nil), s.mcp.config...)
	if mode == ModeAuto && len(s.dirs) > 0 {
		cfg = append(cfg, "sandbox_workspace_write.writable_roots="+tomlStringArray(s.dirs))
	}
	return cfg
}

// toolsTokenEnv carries the session's token to codex, which sends it as a
// bearer token; it never appears on a command line.
const toolsTokenEnv = "CODEXACP_MCP_TOKEN"

// toolsConfig registers the embedded tool server with codex and switches off
// codex's own file editing, so every edit goes through the editor.
func (a *Agent) toolsConfig(ctx context.Context, s *session) []string {
	cfg := []string{
		"mcp_servers." + ownServerName + "={url=" + tomlString(a.opts.Tools.URL()) +
			", bearer_token_env_var=" + tomlString(toolsTokenEnv) +
			", required=true, default_tools_approval_mode=\"approve\"" +
			// A permission prompt waits for the user; codex must not time out first.
			", tool_timeout_sec=86400}",
		"developer_instructions=" + tomlString(developerInstructions(s.cwd)),
	}
	if a.opts.Catalog != nil {
		path, err := a.opts.Catalog(ctx)
		if err != nil {
			a.log.Warn("no model catalog without apply_patch; codex keeps its own patch tool", "err", err)
		} else {
			cfg = append(cfg, "model_catalog_json="+tomlString(path))
		}
	}
	return cfg
}

func runErrorMessage(err error) string {
	var exit *codex.ExitError
	if errors.As(err, &exit) {
		return exit.Error()
	}
	return err.Error()
}

func turnError(msg string) *sdk.RequestError {
	return &sdk.RequestError{Code: -32603, Message: msg}
}

// promptText flattens the prompt's content blocks into the text codex reads.
// Resource links become references codex can open with its tools; embedded
// text resources are inlined with their URI.
func promptText(blocks []sdk.ContentBlock) (string, error) {
	var parts []string
	for i, b := range blocks {
		switch {
		case b.Text != nil:
			parts = append(parts, b.Text.Text)
		case b.ResourceLink != nil:
			l := b.ResourceLink
			parts = append(parts, fmt.Sprintf("[@%s](%s)", l.Name, l.Uri))
		case b.Resource != nil && b.Resource.Resource.TextResourceContents != nil:
			r := b.Resource.Resource.TextResourceContents
			parts = append(parts, fmt.Sprintf("<context ref=%q>\n%s\n</context>", r.Uri, r.Text))
		case b.Resource != nil:
			return "", fmt.Errorf("prompt block %d: binary resources are not supported", i)
		case b.Image != nil:
			return "", fmt.Errorf("prompt block %d: images are not supported", i)
		case b.Audio != nil:
			return "", fmt.Errorf("prompt block %d: audio is not supported", i)
		default:
			return "", fmt.Errorf("prompt block %d: unknown content type", i)
		}
	}
	text := strings.Join(parts, "\n")
	if strings.TrimSpace(text) == "" {
		return "", errors.New("the prompt is empty")
	}
	return text, nil
}
