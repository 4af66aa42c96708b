package backend

import (
	"context"
	"encoding/json"

	"github.com/codexacp/codexacp/events"
	"github.com/codexacp/codexacp/internal/forms"
)

// Output receives what a running turn produces: its events, and codex's
// questions to the user. Event calls come in order; the questions may be
// asked concurrently with them. Each question returns a cancel (or an
// empty answer) when the turn ends while the user is asked.
type Output interface {
	Event(ev events.Event)
	// ApproveCommand asks the user whether codex may run a command.
	ApproveCommand(ctx context.Context, req CommandApproval) ApprovalDecision
	// ApproveMCPTool asks the user whether a tool of one of the editor's
	// MCP servers may run.
	ApproveMCPTool(ctx context.Context, req MCPToolApproval) ApprovalDecision
	// ElicitMCP puts an MCP server's own question to the user.
	ElicitMCP(ctx context.Context, req MCPElicitation) MCPElicitationAnswer
	// AskUser puts codex's questions to the user. It returns the answers
	// by question id; a question left out was not answered (declined,
	// cancelled, or not answerable in the editor).
	AskUser(ctx context.Context, itemID string, qs []UserQuestion) map[string][]string
	// ProposedPlan is the plan a plan-mode turn proposes (Plan).
	ProposedPlan(text string)
}

// CommandApproval is codex asking to run a shell command (one that needs
// more than the sandbox allows, or any command its policy does not trust).
type CommandApproval struct {
	ItemID  string // codex's item id of the command (its tool call)
	Command string
	Cwd     string
	Reason  string // codex's or the model's justification; may be empty
}

// ApprovalDecision is the user's answer to a CommandApproval or an
// MCPToolApproval.
type ApprovalDecision int

const (
	ApprovalDecline          ApprovalDecision = iota // do not run it; the turn goes on
	ApprovalAccept                                   // run it once
	ApprovalAcceptForSession                         // run it and similar ones without asking again
	ApprovalCancel                                   // do not run it and end the turn
)

func (d ApprovalDecision) String() string {
	switch d {
	case ApprovalAccept:
		return "accept"
	case ApprovalAcceptForSession:
		return "acceptForSession"
	case ApprovalCancel:
		return "cancel"
	default:
		return "decline"
	}
}

// MCPToolApproval is codex asking whether a tool of one of the editor's MCP
// servers may run (app-server: an mcpServer/elicitation/request whose
// _meta.codex_approval_kind is "mcp_tool_call"). Codex asks for every tool
// not annotated readOnlyHint, in modes whose approval policy lets it ask
// (read-only, ask and auto); in full-access it runs.
type MCPToolApproval struct {
	ItemID     string          // codex's mcpToolCall item (its tool call); "" when none was seen
	Server     string          // the server's name as codex knows it
	Tool       string          // the tool's name
	Arguments  json.RawMessage // the call's arguments; may be empty
	Message    string          // codex's question
	ForSession bool            // codex can remember a yes for the rest of the session
}

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

// The answers to an MCP server's question that carry no content.
var (
	MCPDecline = MCPElicitationAnswer{Action: "decline"}
	MCPCancel  = MCPElicitationAnswer{Action: "cancel"}
)

// UserQuestion is one of codex's questions to the user
// (item/tool/requestUserInput), put to the editor as a form of
// internal/forms.
type UserQuestion = forms.Question

// UserOption is one answer codex offers.
type UserOption = forms.Option
