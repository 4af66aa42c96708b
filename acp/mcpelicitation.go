package acp

import (
	"context"
	"net/url"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/internal/forms"
)

// ElicitMCP puts an MCP server's question to an editor that declared the
// elicitation it needs (a form: clientCapabilities.elicitation.form; a
// page: .url), as an elicitation/create of the session naming the server.
// Anything else is declined: an editor without that elicitation, a form
// the agent cannot map, a page that is not http(s), a failed request, an
// unreadable answer, or one the server's schema does not allow (the
// server is owed an answer it asked for, not a guess). A turn cancelled
// while the user is asked withdraws the question and answers cancel.
func (o *turnOutput) ElicitMCP(ctx context.Context, req backend.MCPElicitation) backend.MCPElicitationAnswer {
	ctx, stop := mergeContext(ctx, o.ctx)
	defer stop()
	if ctx.Err() != nil {
		return backend.MCPCancel
	}
	log := o.log.With("server", req.Server, "mode", req.Mode)
	form, page := o.a.elicitationModes()
	ask := forms.Request{Mode: req.Mode, Message: forms.MCPMessage(req.Server, req.Message)}
	if id, ok := o.toolCallOf(req.ItemID); ok {
		ask.ToolCallID = string(id)
	}
	var f forms.MCPForm
	switch {
	case req.Mode == "form" && form:
		var err error
		if f, err = forms.NewMCPForm(req.Schema); err != nil {
			log.Warn("MCP server's form declined: it cannot be asked", "err", err)
			return backend.MCPDecline
		}
		ask.RequestedSchema = &f.Schema
	case req.Mode == "url" && page:
		if u, err := url.Parse(req.URL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			log.Warn("MCP server's page declined: not an http(s) URL", "url", req.URL)
			return backend.MCPDecline
		}
		ask.URL, ask.ElicitationID = req.URL, firstNonEmpty(req.ElicitationID, req.Server)
	default:
		log.Info("MCP server's question declined: the editor does not offer this elicitation")
		return backend.MCPDecline
	}
	raw, err := o.elicit(ctx, ask)
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return backend.MCPCancel
	default:
		log.Warn("MCP server's question to the user failed: declined", "err", err)
		return backend.MCPDecline
	}
	resp, err := forms.DecodeAnswer(raw)
	if err != nil {
		log.Warn("MCP server's question: unusable answer, declined", "err", err)
		return backend.MCPDecline
	}
	if resp.Action != "accept" || req.Mode == "url" {
		return backend.MCPElicitationAnswer{Action: resp.Action}
	}
	content, err := f.Content(resp.Content)
	if err != nil {
		log.Warn("MCP server's form: the answer does not fit its schema, declined", "err", err)
		return backend.MCPDecline
	}
	return backend.MCPElicitationAnswer{Action: "accept", Content: content}
}
