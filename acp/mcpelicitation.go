package acp

import (
	"context"
	"encoding/json"
	"net/url"

	"github.com/codexacp/codexacp/internal/forms"
)

// MCPElicitation is an MCP server's own question to the user, which codex
// forwards (mcpServer/elicitation/request, other than its tool-call
// approvals): a form to fill in, or a page to open.
type MCPElicitation struct {
	ItemID        string          // the server's tool call in progress; "" when none was seen
	Server        string          // the server's name as codex knows it
	Message       string          // the server's question
	Mode          string          // "form" or "url"
	Schema        json.RawMessage // form: the server's requestedSchema
	URL           string          // url: the page
	ElicitationID string          // url: the server's id for it
}

// MCPElicitationAnswer is the user's answer as codex passes it on to the
// server (McpServerElicitationRequestResponse): Content only with accept,
// by the server's property names.
type MCPElicitationAnswer struct {
	Action  string                     `json:"action"` // accept, decline or cancel
	Content map[string]json.RawMessage `json:"content,omitempty"`
}

var (
	mcpDecline = MCPElicitationAnswer{Action: "decline"}
	mcpCancel  = MCPElicitationAnswer{Action: "cancel"}
)

// mcpElicitor is a TurnOutput that can put an MCP server's questions to
// the user.
type mcpElicitor interface {
	ElicitMCP(ctx context.Context, req MCPElicitation) MCPElicitationAnswer
}

var _ mcpElicitor = (*turnOutput)(nil)

// ElicitMCP puts an MCP server's question to an editor that declared the
// elicitation it needs (a form: clientCapabilities.elicitation.form; a
// page: .url), as an elicitation/create of the session naming the server.
// Anything else is declined: an editor without that elicitation, a form
// the agent cannot map, a page that is not http(s), a failed request, an
// unreadable answer, or one the server's schema does not allow (the
// server is owed an answer it asked for, not a guess). A turn cancelled
// while the user is asked withdraws the question and answers cancel.
func (o *turnOutput) ElicitMCP(ctx context.Context, req MCPElicitation) MCPElicitationAnswer {
	ctx, stop := mergeContext(ctx, o.ctx)
	defer stop()
	if ctx.Err() != nil {
		return mcpCancel
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
			return mcpDecline
		}
		ask.RequestedSchema = &f.Schema
	case req.Mode == "url" && page:
		if u, err := url.Parse(req.URL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			log.Warn("MCP server's page declined: not an http(s) URL", "url", req.URL)
			return mcpDecline
		}
		ask.URL, ask.ElicitationID = req.URL, firstNonEmpty(req.ElicitationID, req.Server)
	default:
		log.Info("MCP server's question declined: the editor does not offer this elicitation")
		return mcpDecline
	}
	raw, err := o.elicit(ctx, ask)
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return mcpCancel
	default:
		log.Warn("MCP server's question to the user failed: declined", "err", err)
		return mcpDecline
	}
	resp, err := forms.DecodeAnswer(raw)
	if err != nil {
		log.Warn("MCP server's question: unusable answer, declined", "err", err)
		return mcpDecline
	}
	if resp.Action != "accept" || req.Mode == "url" {
		return MCPElicitationAnswer{Action: resp.Action}
	}
	content, err := f.Content(resp.Content)
	if err != nil {
		log.Warn("MCP server's form: the answer does not fit its schema, declined", "err", err)
		return mcpDecline
	}
	return MCPElicitationAnswer{Action: "accept", Content: content}
}
