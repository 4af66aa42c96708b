package acp

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/internal/forms"
)

// errSignInDeclined is the user turning the sign-in page down.
var errSignInDeclined = errors.New("the user declined to open the sign-in page")

// questionSeq numbers the sign-in pages and hook questions asked (their
// elicitation and tool call ids).
var questionSeq atomic.Int64

// needsSignIn reports whether codex says the server needs the user to sign
// in before it can be used.
func needsSignIn(m backend.MCPServerStatus) bool { return m.AuthStatus == "notLoggedIn" }

// mcpLoginCommand signs the user in to an MCP server of codex's config
// that needs OAuth (/mcp login <server>): the server's page reaches the
// editor (signInPage), the prompt waits for codex to report the end (a
// session/cancel stops the wait; the backend bounds it), and says the
// result. The page's URL is neither logged nor kept.
func (a *Agent) mcpLoginCommand(ctx context.Context, s *session, args string) (string, error) {
	if !a.can(backend.MCPLogin) {
		return "", invalidParams("signing in to an MCP server is not available with the " + a.opts.Backend.Name() + " backend (run `codex mcp login <server>` in a terminal)")
	}
	server, ok := oneWord(args)
	if !ok {
		return "", invalidParams("/mcp login needs the server's name, e.g. /mcp login docs (/mcp lists the servers)")
	}
	t, _ := a.turn(ctx, s, "")
	var shown string // the elicitation id of the page the editor accepted to open
	err := a.opts.Backend.LoginMCPServer(ctx, t, server, func(ctx context.Context, page string) error {
		id, err := a.signInPage(ctx, s, server, page)
		shown = id
		return err
	})
	if shown != "" {
		// ACP's (unstable) end of a URL elicitation: the editor may close
		// what it shows for the page.
		if err := a.conn.UnstableCompleteElicitation(context.WithoutCancel(ctx), acpsdk.UnstableCompleteElicitationNotification{
			ElicitationId: acpsdk.UnstableElicitationId(shown)}); err != nil {
			a.log.Debug("elicitation/complete not delivered", "session", s.id, "err", err)
		}
	}
	switch {
	case errors.Is(err, errSignInDeclined):
		a.log.Info("MCP server sign-in declined", "session", s.id, "server", server)
		return "Not signed in to " + server + ": the sign-in page was declined. Nothing changed.", nil
	case err != nil && ctx.Err() != nil:
		return "", err
	case err != nil:
		a.log.Warn("MCP server sign-in failed", "session", s.id, "server", server, "err", err)
		return fmt.Sprintf("⚠ Not signed in to %s: %v. Try again with /mcp login %s.", server, err, server), nil
	}
	a.log.Info("MCP server signed in", "session", s.id, "server", server)
	text := "Signed in to " + server + ". Codex reloaded its MCP servers"
	if list, err := a.opts.Backend.MCPServerStatus(ctx, t); err == nil {
		for _, m := range list {
			if m.Name == server {
				text += fmt.Sprintf("; %s has %d tools", server, len(m.Tools))
				if len(m.Tools) > 0 {
					text += " (" + strings.Join(m.Tools, ", ") + ")"
				}
				if needsSignIn(m) {
					text += ", but codex still reports it as not signed in"
				}
			}
		}
	}
	return text + ".", nil
}

// signInPage shows the user the server's sign-in page: as a URL
// elicitation where the editor declared them (its answer says whether the
// user opens the page: a decline is errSignInDeclined), else, or when the
// editor cannot ask after all, as agent text with the link. id is the
// elicitation's when the editor accepted it.
func (a *Agent) signInPage(ctx context.Context, s *session, server, page string) (id string, err error) {
	if u, err := url.Parse(page); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", fmt.Errorf("codex gave a sign-in page that is not an http(s) URL")
	}
	if _, urls := a.elicitationModes(); urls {
		id := fmt.Sprintf("mcp-login-%s-%d", server, questionSeq.Add(1))
		raw, err := a.elicit(ctx, s, forms.Request{Mode: "url", URL: page, ElicitationID: id,
			Message: "Sign in to the MCP server “" + server + "” so that codex can use its tools: open the page and finish signing in there."})
		switch {
		case err == nil:
			resp, err := forms.DecodeAnswer(raw)
			if err != nil || resp.Action != "accept" {
				return "", errSignInDeclined
			}
			a.sendUpdate(ctx, s.id, acpsdk.UpdateAgentMessageText(waitingText(server)))
			return id, nil
		case ctx.Err() != nil:
			return "", context.Cause(ctx)
		default:
			a.log.Warn("the sign-in page could not be asked; it is shown as a link", "session", s.id, "err", err)
		}
	}
	a.sendUpdate(ctx, s.id, acpsdk.UpdateAgentMessageText(
		"To sign in to the MCP server "+server+", open this page in your browser:\n\n<"+page+">\n\n"+waitingText(server)))
	return "", nil
}

func waitingText(server string) string {
	return fmt.Sprintf("Waiting for the sign-in to %s to finish (at most %d minutes; cancel to stop waiting).\n\n",
		server, int(backend.MCPLoginTimeout.Minutes()))
}
