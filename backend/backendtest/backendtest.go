// Package backendtest has what tests of backends and of the agent share:
// an Output that a test's own output embeds to answer only what the test
// is about.
package backendtest

import (
	"context"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/events"
)

// NopOutput is a backend.Output that drops events and declines every
// question (AskUser answers nothing). Embed it and override what a test
// looks at.
type NopOutput struct{}

var _ backend.Output = NopOutput{}

func (NopOutput) Event(events.Event) {}

func (NopOutput) ApproveCommand(context.Context, backend.CommandApproval) backend.ApprovalDecision {
	return backend.ApprovalDecline
}

func (NopOutput) ApproveMCPTool(context.Context, backend.MCPToolApproval) backend.ApprovalDecision {
	return backend.ApprovalDecline
}

func (NopOutput) ElicitMCP(context.Context, backend.MCPElicitation) backend.MCPElicitationAnswer {
	return backend.MCPDecline
}

func (NopOutput) AskUser(context.Context, string, []backend.UserQuestion) map[string][]string {
	return nil
}

func (NopOutput) ProposedPlan(string) {}
