package e2e_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/e2e/mockapi"
)

// On exec (approval policy never) codex refuses a command that asks for
// more than the sandbox, and prints nothing for it: the editor still gets
// a failed execute tool call with codex's reason and the way to be asked.
func TestExecRefusedCommandShown(t *testing.T) {
	e := start(t, setup{backend: "exec", fs: true, mode: "auto"})
	outside := filepath.Join(filepath.Dir(e.cwd), "outside.txt")
	args, err := json.Marshal(map[string]any{"cmd": "touch " + outside, "sandbox_permissions": "require_escalated",
		"justification": "write outside the workspace"})
	if err != nil {
		t.Fatal(err)
	}
	e.mock.Enqueue(
		mockapi.Reply(mockapi.FunctionCall("call_esc", "exec_command", string(args))),
		mockapi.Reply(mockapi.Message("codex would not run it")),
	)
	e.mustPrompt("touch a file outside")

	if out := toolOutput(t, e, "call_esc"); !strings.Contains(out, "approval policy is Never") {
		t.Fatalf("the model got %q, not codex's refusal: codex 0.169's behaviour changed", out)
	}
	var refused *acpsdk.SessionUpdateToolCall
	var order []string
	for _, n := range e.editor.Updates() {
		switch u := n.Update; {
		case u.ToolCall != nil:
			order = append(order, "tool_call")
			if u.ToolCall.Kind == acpsdk.ToolKindExecute {
				refused = u.ToolCall
			}
		case u.AgentMessageChunk != nil:
			order = append(order, "message")
		}
	}
	if refused == nil {
		t.Fatalf("no execute tool call for the refused command; updates %v", collapse(order))
	}
	text := ""
	if len(refused.Content) == 1 && refused.Content[0].Content != nil && refused.Content[0].Content.Content.Text != nil {
		text = refused.Content[0].Content.Content.Text.Text
	}
	if refused.Status != acpsdk.ToolCallStatusFailed || !strings.Contains(refused.Title, "touch "+outside) ||
		!strings.Contains(text, "approval policy is Never") || !strings.Contains(text, "--backend app-server") ||
		!strings.Contains(text, "write outside the workspace") {
		t.Errorf("refused command shown as %q %q: %q", refused.Status, refused.Title, text)
	}
	if got := strings.Join(collapse(order), " "); got != "tool_call message" {
		t.Errorf("updates %q, want the refused command before the model's message", got)
	}
}
