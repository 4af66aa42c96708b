// Command mcpfixture is a small stdio MCP server that e2e tests pass to the
// agent as one of the editor's MCP servers (session/new mcpServers). Its
// tools differ only in their annotations, which is what codex's approval
// rules look at:
//
//   - note (destructiveHint): appends its text to the file named by
//     MCPFIXTURE_LOG, so a test sees on disk whether it really ran;
//   - lookup (readOnlyHint): answers from a fixed table;
//   - plain (no annotations): echoes its text;
//   - signup (readOnlyHint, so codex runs it without asking): asks the user
//     a form of its own (MCP elicitation) and answers what the user gave,
//     or the user's refusal;
//   - visit (readOnlyHint): asks the user to open a URL (URL elicitation).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

type textArgs struct {
	Text string `json:"text" jsonschema:"the text"`
}

type keyArgs struct {
	Key string `json:"key" jsonschema:"the key to look up"`
}

func main() {
	logPath := os.Getenv("MCPFIXTURE_LOG")
	s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "mcpfixture", Version: "1.0.0"}, nil)

	destructive := true
	mcpsdk.AddTool(s, &mcpsdk.Tool{
		Name:        "note",
		Description: "Records a note.",
		Annotations: &mcpsdk.ToolAnnotations{DestructiveHint: &destructive},
	}, func(ctx context.Context, req *mcpsdk.CallToolRequest, a textArgs) (*mcpsdk.CallToolResult, any, error) {
		if logPath == "" {
			return nil, nil, fmt.Errorf("MCPFIXTURE_LOG is not set")
		}
		f, err := os.OpenFile(logPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, nil, err
		}
		defer f.Close()
		if _, err := fmt.Fprintln(f, a.Text); err != nil {
			return nil, nil, err
		}
		return text("noted: " + a.Text), nil, nil
	})

	mcpsdk.AddTool(s, &mcpsdk.Tool{
		Name:        "lookup",
		Description: "Looks a key up.",
		Annotations: &mcpsdk.ToolAnnotations{ReadOnlyHint: true},
	}, func(ctx context.Context, req *mcpsdk.CallToolRequest, a keyArgs) (*mcpsdk.CallToolResult, any, error) {
		return text("value of " + a.Key + " is 42"), nil, nil
	})

	mcpsdk.AddTool(s, &mcpsdk.Tool{
		Name:        "plain",
		Description: "Echoes its text.",
	}, func(ctx context.Context, req *mcpsdk.CallToolRequest, a textArgs) (*mcpsdk.CallToolResult, any, error) {
		return text("echo: " + a.Text), nil, nil
	})

	mcpsdk.AddTool(s, &mcpsdk.Tool{
		Name:        "signup",
		Description: "Signs the user up, asking for their details.",
		Annotations: &mcpsdk.ToolAnnotations{ReadOnlyHint: true},
	}, func(ctx context.Context, req *mcpsdk.CallToolRequest, _ struct{}) (*mcpsdk.CallToolResult, any, error) {
		res, err := req.Session.Elicit(ctx, &mcpsdk.ElicitParams{Message: "Your details, please", RequestedSchema: signupSchema})
		if err != nil {
			return nil, nil, fmt.Errorf("elicitation: %w", err)
		}
		return elicited(res), nil, nil
	})

	mcpsdk.AddTool(s, &mcpsdk.Tool{
		Name:        "visit",
		Description: "Asks the user to open a page.",
		Annotations: &mcpsdk.ToolAnnotations{ReadOnlyHint: true},
	}, func(ctx context.Context, req *mcpsdk.CallToolRequest, _ struct{}) (*mcpsdk.CallToolResult, any, error) {
		res, err := req.Session.Elicit(ctx, &mcpsdk.ElicitParams{Mode: "url", Message: "Open this page to sign in",
			URL: "http://127.0.0.1:9/signin", ElicitationID: "visit-1"})
		if err != nil {
			return nil, nil, fmt.Errorf("elicitation: %w", err)
		}
		return elicited(res), nil, nil
	})

	if err := s.Run(context.Background(), &mcpsdk.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}

func text(s string) *mcpsdk.CallToolResult {
	return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: s}}}
}

// signupSchema is the signup tool's form: each kind of field MCP has.
var signupSchema = json.RawMessage(`{
	"type": "object",
	"properties": {
		"name": {"type": "string", "title": "Name", "minLength": 1},
		"password": {"type": "string", "title": "Password"},
		"plan": {"type": "string", "title": "Plan", "oneOf": [{"const": "free", "title": "Free"}, {"const": "pro", "title": "Pro"}]},
		"seats": {"type": "integer", "title": "Seats", "minimum": 1, "maximum": 10},
		"newsletter": {"type": "boolean", "title": "Newsletter"}
	},
	"required": ["name", "plan"]
}`)

// elicited is a tool's result for the user's answer: the action, and the
// content given as JSON (keys sorted).
func elicited(res *mcpsdk.ElicitResult) *mcpsdk.CallToolResult {
	if res.Action != "accept" {
		return text("user answered " + res.Action)
	}
	b, err := json.Marshal(res.Content)
	if err != nil {
		return text("unreadable content: " + err.Error())
	}
	return text("user accepted: " + string(b))
}
