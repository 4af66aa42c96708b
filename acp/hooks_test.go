package acp

import (
	"slices"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/internal/fakeeditor"
)

func testHooks() []backend.Hook {
	return []backend.Hook{
		{Key: "/p/.codex/hooks.json:pre_tool_use:0:0", Event: "preToolUse", Matcher: "shell", Handler: "command",
			Command: "./check.sh --strict", Source: "project", SourcePath: "/p/.codex/hooks.json", Enabled: true, Hash: "sha256:aa", Trust: "untrusted"},
		{Key: "/h/hooks.json:stop:0:0", Event: "stop", Handler: "command", Command: "notify-send done",
			Source: "user", SourcePath: "/h/hooks.json", Enabled: true, Hash: "sha256:bb", Trust: "trusted"},
		{Key: "/p/.codex/hooks.json:post_tool_use:0:0", Event: "postToolUse", Handler: "mcpTool", Server: "lint", Tool: "check",
			Source: "project", SourcePath: "/p/.codex/hooks.json", Enabled: true, Hash: "sha256:cc", Trust: "modified"},
	}
}

// A hook is trusted only after the user's yes to a question that shows
// what it runs; a no, or a dismissed question, writes nothing.
func TestHooksTrust(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		prompt  string
		answer  string // the option the editor picks; "": dismissed
		asked   int
		trusted []string
		text    string
	}{
		{name: "list", prompt: "/hooks", text: "1. on preToolUse (matching `shell`), project (/p/.codex/hooks.json) — runs `./check.sh --strict` — **not trusted: not run**\n" +
			"2. on stop, user (/h/hooks.json) — runs `notify-send done` — trusted\n" +
			"3. on postToolUse, project (/p/.codex/hooks.json) — calls tool check of MCP server lint — **changed since you trusted it: not run until trusted again**\n"},
		{name: "trust all, yes", prompt: "/hooks trust", answer: optHookTrust, asked: 2,
			trusted: []string{"/p/.codex/hooks.json:pre_tool_use:0:0=sha256:aa", "/p/.codex/hooks.json:post_tool_use:0:0=sha256:cc"},
			text:    "Hook 1 trusted: codex runs it from now on, until it changes.\nHook 3 trusted"},
		{name: "trust all, no", prompt: "/hooks trust", answer: optHookReject, asked: 2, text: "Hook 1 not trusted: codex does not run it.\nHook 3 not trusted"},
		{name: "dismissed", prompt: "/hooks trust 1", asked: 1, text: "Hook 1 not trusted"},
		{name: "one, yes", prompt: "/hooks trust 1", answer: optHookTrust, asked: 1,
			trusted: []string{"/p/.codex/hooks.json:pre_tool_use:0:0=sha256:aa"}, text: "Hook 1 trusted"},
		{name: "trusted already", prompt: "/hooks trust 2", answer: optHookTrust, text: "Hook 2 is trusted already"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			be := &authBackend{hooks: testHooks()}
			var asked []acpsdk.RequestPermissionRequest
			h := startAgent(t, be, fakeeditor.Options{Permission: func(req acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse {
				asked = append(asked, req)
				if tc.answer == "" {
					return acpsdk.RequestPermissionResponse{Outcome: acpsdk.NewRequestPermissionOutcomeCancelled()}
				}
				return acpsdk.RequestPermissionResponse{Outcome: acpsdk.NewRequestPermissionOutcomeSelected(acpsdk.PermissionOptionId(tc.answer))}
			}})
			sid := h.newSession(t, t.TempDir())
			resp, err := h.prompt(sid, tc.prompt)
			if err != nil || resp.StopReason != acpsdk.StopReasonEndTurn {
				t.Fatalf("prompt = %+v, %v", resp, err)
			}
			h.editor.Sync(h.ctx)
			if got := agentText(h.editor); !strings.Contains(got, tc.text) {
				t.Errorf("agent text = %q\nwant it to hold %q", got, tc.text)
			}
			if len(asked) != tc.asked {
				t.Fatalf("questions = %d, want %d", len(asked), tc.asked)
			}
			if tc.asked > 0 {
				q := asked[0]
				shown := q.ToolCall.Content[0].Content.Content.Text.Text
				if !strings.Contains(shown, "```\n./check.sh --strict\n```") || !strings.Contains(shown, "preToolUse") ||
					q.ToolCall.Title == nil || !strings.Contains(*q.ToolCall.Title, "Trust codex hook 1") {
					t.Errorf("question = %q, %q", *q.ToolCall.Title, shown)
				}
			}
			be.mu.Lock()
			defer be.mu.Unlock()
			if !slices.Equal(be.trusted, tc.trusted) {
				t.Errorf("trusted %q, want %q", be.trusted, tc.trusted)
			}
		})
	}
}

func TestHooksBadArgs(t *testing.T) {
	t.Parallel()
	for _, prompt := range []string{"/hooks trust 0", "/hooks trust 4", "/hooks trust x", "/hooks forget"} {
		be := &authBackend{hooks: testHooks()}
		h := startAgent(t, be, fakeeditor.Options{})
		sid := h.newSession(t, t.TempDir())
		if _, err := h.prompt(sid, prompt); err == nil || !strings.Contains(err.Error(), "/hooks") {
			t.Errorf("%s: %v, want an error naming /hooks", prompt, err)
		}
		if len(be.trusted) != 0 {
			t.Errorf("%s trusted %q", prompt, be.trusted)
		}
	}
}
