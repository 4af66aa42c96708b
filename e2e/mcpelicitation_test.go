package e2e_test

import (
	"cmp"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/e2e/mockapi"
	"github.com/codexacp/codexacp/internal/fakeeditor"
)

// TestAppServerMCPElicitation: an MCP server's own question to the user
// (the fixture's signup tool elicits a form, its visit tool a URL), which
// codex forwards as mcpServer/elicitation/request, reaches an editor that
// declares elicitation as elicitation/create of the session, and the
// editor's answer, checked against the server's schema, reaches the tool
// and so the model. An editor without elicitation, an answer the schema
// does not allow, and a URL to an editor that only takes forms are
// declined. docs/codex-app-server.md, "An MCP server's questions".
func TestAppServerMCPElicitation(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tool   string
		mode   string                                    // "": ask
		url    bool                                      // the editor declares URL elicitation
		answer *acpsdk.UnstableCreateElicitationResponse // nil: the editor has no elicitation
		asked  int                                       // elicitation/create requests
		output string                                    // in the tool's output to the model
	}{
		{name: "accepted", tool: "signup", asked: 1,
			answer: acpsdk.Ptr(fakeeditor.Accept(map[string]any{"name": "Ada", "password_secret": "hunter2", "plan": "pro", "seats": 3, "newsletter": true})),
			output: `user accepted: {"name":"Ada","newsletter":true,"password":"hunter2","plan":"pro","seats":3}`},
		// Approval policy never: codex 0.169 answers the server itself.
		{name: "full-access", tool: "signup", mode: "full-access",
			answer: acpsdk.Ptr(fakeeditor.Accept(map[string]any{"name": "Ada", "plan": "free"})), output: "user answered decline"},
		{name: "read-only", tool: "signup", mode: "read-only", asked: 1,
			answer: acpsdk.Ptr(fakeeditor.Accept(map[string]any{"name": "Ada", "plan": "free"})), output: `user accepted: {"name":"Ada","plan":"free"}`},
		{name: "outside the schema", tool: "signup", asked: 1,
			answer: acpsdk.Ptr(fakeeditor.Accept(map[string]any{"name": "Ada", "plan": "gold"})), output: "user answered decline"},
		{name: "declined", tool: "signup", asked: 1, answer: acpsdk.Ptr(fakeeditor.Decline()), output: "user answered decline"},
		{name: "dismissed", tool: "signup", asked: 1, answer: acpsdk.Ptr(fakeeditor.Dismiss()), output: "user answered cancel"},
		{name: "no elicitation", tool: "signup", output: "user answered decline"},
		{name: "url", tool: "visit", url: true, asked: 1, answer: acpsdk.Ptr(fakeeditor.Accept(nil)), output: "user accepted: {}"},
		{name: "url to a form-only editor", tool: "visit", answer: acpsdk.Ptr(fakeeditor.Accept(nil)), output: "user answered decline"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := setup{backend: "app-server", fs: true, elicitationURL: tc.url}
			if tc.answer != nil {
				s.elicitation = func(context.Context, acpsdk.UnstableCreateElicitationRequest) (acpsdk.UnstableCreateElicitationResponse, error) {
					return *tc.answer, nil
				}
			}
			e := start(t, s)
			e.mcpSession(t, cmp.Or(tc.mode, "ask"))
			e.mock.Enqueue(
				mockapi.Reply(fixtureCall(t, "call_1", tc.tool, map[string]any{})),
				mockapi.Reply(mockapi.Message("done")),
			)
			if r := e.mustPrompt("sign me up"); r.StopReason != acpsdk.StopReasonEndTurn {
				t.Errorf("stopReason = %q", r.StopReason)
			}
			forms := elicitations(e)
			if len(forms) != tc.asked {
				t.Fatalf("elicitation/create requests = %d, want %d", len(forms), tc.asked)
			}
			if tc.asked > 0 {
				checkMCPElicitation(t, e, forms[0], tc.tool)
			}
			// The output is JSON: its text's quotes escaped.
			want, _ := json.Marshal(tc.output)
			if out := toolOutput(t, e, "call_1"); !strings.Contains(out, strings.Trim(string(want), `"`)) {
				t.Errorf("the model got %s, want %q", out, tc.output)
			}
		})
	}
}

// checkMCPElicitation checks the editor's elicitation/create: the
// session's, naming the server, with the server's form (the password a
// field of its own key, so that --record blanks what is typed there) or
// URL.
func checkMCPElicitation(t *testing.T, e *env, params json.RawMessage, tool string) {
	t.Helper()
	var p struct {
		SessionID       string          `json:"sessionId"`
		Mode            string          `json:"mode"`
		Message         string          `json:"message"`
		URL             string          `json:"url"`
		ElicitationID   string          `json:"elicitationId"`
		RequestedSchema json.RawMessage `json:"requestedSchema"`
	}
	if err := json.Unmarshal(params, &p); err != nil || p.SessionID != string(e.session) || !strings.Contains(p.Message, "fixture") {
		t.Errorf("elicitation/create params = %s", params)
	}
	if tool == "visit" {
		if p.Mode != "url" || p.URL != "http://127.0.0.1:9/signin" || p.ElicitationID == "" {
			t.Errorf("URL elicitation = %s", params)
		}
		return
	}
	for _, want := range []string{
		`"name":{"type":"string","title":"Name","minLength":1}`,
		`"password_secret":{"type":"string","title":"Password"`,
		`"plan":{"type":"string","title":"Plan","oneOf":[{"const":"free","title":"Free"},{"const":"pro","title":"Pro"}]}`,
		`"seats":{"type":"integer","title":"Seats","minimum":1,"maximum":10}`,
		`"newsletter":{"type":"boolean","title":"Newsletter"}`,
		`"required":["name","plan"]`,
	} {
		if p.Mode != "form" || !strings.Contains(string(p.RequestedSchema), want) {
			t.Errorf("form lacks %s: %s", want, p.RequestedSchema)
		}
	}
}

// A session/cancel while the editor is asked withdraws the question and
// answers the server "cancel"; the turn ends cancelled.
func TestAppServerMCPElicitationCancelled(t *testing.T) {
	asked := make(chan struct{}, 1)
	withdrawn := make(chan struct{})
	e := start(t, setup{backend: "app-server", fs: true, elicitation: func(ctx context.Context, _ acpsdk.UnstableCreateElicitationRequest) (acpsdk.UnstableCreateElicitationResponse, error) {
		asked <- struct{}{}
		<-ctx.Done()
		close(withdrawn)
		return fakeeditor.Dismiss(), nil
	}})
	e.mcpSession(t, "ask")
	e.mock.Enqueue(mockapi.Reply(fixtureCall(t, "call_1", "signup", map[string]any{})))
	done := e.promptAsync("sign me up")
	select {
	case <-asked:
	case <-time.After(60 * time.Second):
		t.Fatal("the editor was never asked")
	}
	e.cancelAndExpectCancelled(done)
	select {
	case <-withdrawn:
	case <-time.After(10 * time.Second):
		t.Error("the question was not withdrawn ($/cancel_request)")
	}
}
