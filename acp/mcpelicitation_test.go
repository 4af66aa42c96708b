package acp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/internal/fakeeditor"
)

const (
	mcpFormParams = `{"threadId":"th","turnId":"t1","serverName":"fixture","mode":"form","message":"Your details, please",` +
		`"requestedSchema":{"type":"object","properties":{"name":{"type":"string","title":"Name"},"plan":{"type":"string","enum":["free","pro"]}},"required":["name"]}}`
	mcpURLParams = `{"threadId":"th","turnId":"t1","serverName":"fixture","mode":"url","message":"Sign in","url":"https://example.com/signin","elicitationId":"e1"}`
)

// An MCP server's question reaches the editor as elicitation/create of the
// session (valid against the unstable schema) when the editor declared
// that elicitation, and codex gets the editor's answer, checked: accept
// with the server's content, decline, cancel; anything else declines.
func TestElicitMCP(t *testing.T) {
	t.Parallel()
	answer := func(r acpsdk.UnstableCreateElicitationResponse, err error) func(context.Context, acpsdk.UnstableCreateElicitationRequest) (acpsdk.UnstableCreateElicitationResponse, error) {
		return func(context.Context, acpsdk.UnstableCreateElicitationRequest) (acpsdk.UnstableCreateElicitationResponse, error) {
			return r, err
		}
	}
	for _, tc := range []struct {
		name    string
		params  string
		url     bool // the editor declares URL elicitation
		editor  func(context.Context, acpsdk.UnstableCreateElicitationRequest) (acpsdk.UnstableCreateElicitationResponse, error)
		raw     string // the editor's answer sent as it is
		want    string // codex's answer
		asked   bool
		message string // in the elicitation/create params
	}{
		{name: "form accepted", params: mcpFormParams, editor: answer(fakeeditor.Accept(map[string]any{"name": "Ada", "plan": "pro"}), nil),
			want: `{"action":"accept","content":{"name":"Ada","plan":"pro"}}`, asked: true,
			message: `"mode":"form","message":"The fixture MCP server asks: Your details, please","requestedSchema":{"type":"object","properties":{"name":{"type":"string","title":"Name"},"plan":{"type":"string","enum":["free","pro"]}},"required":["name"]}`},
		{name: "form outside the schema", params: mcpFormParams, editor: answer(fakeeditor.Accept(map[string]any{"name": "Ada", "plan": "gold"}), nil),
			want: `{"action":"decline"}`, asked: true},
		{name: "form without a required field", params: mcpFormParams, editor: answer(fakeeditor.Accept(map[string]any{"plan": "pro"}), nil),
			want: `{"action":"decline"}`, asked: true},
		{name: "form declined", params: mcpFormParams, editor: answer(fakeeditor.Decline(), nil), want: `{"action":"decline"}`, asked: true},
		{name: "form dismissed", params: mcpFormParams, editor: answer(fakeeditor.Dismiss(), nil), want: `{"action":"cancel"}`, asked: true},
		{name: "editor error", params: mcpFormParams, editor: answer(acpsdk.UnstableCreateElicitationResponse{}, errors.New("form broke")),
			want: `{"action":"decline"}`, asked: true},
		{name: "unreadable answer", params: mcpFormParams, raw: `{"action":"maybe"}`, want: `{"action":"decline"}`, asked: true},
		{name: "no elicitation", params: mcpFormParams, want: `{"action":"decline"}`},
		{name: "a form ACP cannot hold", params: strings.Replace(mcpFormParams, `"type":"string","title":"Name"`, `"type":"object"`, 1),
			editor: answer(fakeeditor.Decline(), nil), want: `{"action":"decline"}`},
		{name: "url accepted", params: mcpURLParams, url: true, editor: answer(fakeeditor.Accept(nil), nil), want: `{"action":"accept"}`, asked: true,
			message: `"mode":"url","message":"The fixture MCP server asks: Sign in","url":"https://example.com/signin","elicitationId":"e1"`},
		{name: "url declined", params: mcpURLParams, url: true, editor: answer(fakeeditor.Decline(), nil), want: `{"action":"decline"}`, asked: true},
		{name: "url to a form-only editor", params: mcpURLParams, editor: answer(fakeeditor.Accept(nil), nil), want: `{"action":"decline"}`},
		{name: "url not http", params: strings.Replace(mcpURLParams, "https://example.com/signin", "file:///etc/passwd", 1), url: true,
			editor: answer(fakeeditor.Accept(nil), nil), want: `{"action":"decline"}`},
		{name: "codex's own form mode", params: strings.Replace(mcpFormParams, `"mode":"form"`, `"mode":"openai/form"`, 1),
			editor: answer(fakeeditor.Accept(map[string]any{"name": "Ada"}), nil), want: `{"action":"decline"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			be := &askingBackend{method: "mcpServer/elicitation/request", params: tc.params}
			eopts := fakeeditor.Options{Elicitation: tc.editor, ElicitationURL: tc.url}
			if tc.raw != "" {
				eopts.ElicitationResult = func(json.RawMessage) json.RawMessage { return json.RawMessage(tc.raw) }
			}
			h := startAgent(t, be, eopts)
			sid := h.newSession(t, t.TempDir())
			if r, err := h.prompt(sid, "sign me up"); err != nil || r.StopReason != acpsdk.StopReasonEndTurn {
				t.Fatalf("prompt: %+v, %v", r, err)
			}
			if got := be.answered(); len(got) != 1 || got[0] != tc.want {
				t.Errorf("codex's answers = %s, want %s", got, tc.want)
			}
			asked := 0
			for _, raw := range h.editor.Raw() {
				if strings.Contains(string(raw), `"method":"elicitation/create"`) {
					asked++
				}
			}
			if want := map[bool]int{true: 1}[tc.asked]; asked != want {
				t.Fatalf("elicitation/create requests = %d, want %d", asked, want)
			}
			if tc.asked {
				req := sentRequest(t, h.editor, methodCreateElicitation)
				if !strings.Contains(string(req), `"sessionId":"`+string(sid)+`"`) || !strings.Contains(string(req), tc.message) {
					t.Errorf("elicitation/create params = %s, want them to hold %s", req, tc.message)
				}
			}
			checkSent(t, h.editor)
		})
	}
}

// An editor that declares elicitation but answers "method not found" does
// not have it: the server's question is declined, and the next one is
// declined without asking.
func TestElicitMCPRefused(t *testing.T) {
	t.Parallel()
	be := &askingBackend{method: "mcpServer/elicitation/request", params: mcpFormParams}
	h := startAgent(t, be, fakeeditor.Options{
		Elicitation: func(context.Context, acpsdk.UnstableCreateElicitationRequest) (acpsdk.UnstableCreateElicitationResponse, error) {
			return acpsdk.UnstableCreateElicitationResponse{}, acpsdk.NewMethodNotFound(methodCreateElicitation)
		},
	})
	sid := h.newSession(t, t.TempDir())
	for range 2 {
		if r, err := h.prompt(sid, "sign me up"); err != nil || r.StopReason != acpsdk.StopReasonEndTurn {
			t.Fatalf("prompt: %+v, %v", r, err)
		}
	}
	if got := strings.Join(be.answered(), " "); got != `{"action":"decline"} {"action":"decline"}` {
		t.Errorf("codex's answers = %s", got)
	}
	n := 0
	for _, c := range h.editor.Calls() {
		if c.Method == methodCreateElicitation {
			n++
		}
	}
	if n != 1 {
		t.Errorf("elicitation/create requests = %d, want 1", n)
	}
	checkSent(t, h.editor)
}

// A session/cancel while the editor is asked withdraws the question
// ($/cancel_request), codex is answered cancel, and the prompt ends
// cancelled.
func TestElicitMCPCancelledWhileAsked(t *testing.T) {
	t.Parallel()
	be := &askingBackend{method: "mcpServer/elicitation/request", params: mcpFormParams}
	cancelWhileAsked(t, be, fakeeditor.Accept(map[string]any{"name": "Ada"}))
	if got := be.answered(); len(got) != 1 || got[0] != `{"action":"cancel"}` {
		t.Errorf("codex's answers = %s", got)
	}
}

// A secret typed into an MCP server's form is in no --record transcript,
// however short: neither in the editor's answer (its field is keyed as a
// secret) nor in the agent's answer to codex (the recorder finds the
// server's secret fields by the agent's rule, secrets.IsFormField); the
// other answers are.
func TestElicitMCPSecretNotRecorded(t *testing.T) {
	t.Parallel()
	const params = `{"threadId":"th","serverName":"fixture","mode":"form","message":"Sign in","requestedSchema":{"type":"object","properties":{` +
		`"password":{"type":"string"},"pin":{"type":"string","title":"Access token"},"name":{"type":"string"}}}}`
	be := &askingBackend{method: "mcpServer/elicitation/request", params: params}
	transcript := recordedAnswer(t, be, map[string]any{"password_secret": "pw12", "pin_secret": "4321", "name": "Ada Lovelace"},
		`{"action":"accept","content":{"name":"Ada Lovelace","password":"pw12","pin":"4321"}}`)
	checkSecretsLeftOut(t, transcript, "Ada Lovelace", "pw12", "4321")
}
