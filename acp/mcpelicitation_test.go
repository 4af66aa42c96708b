package acp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/internal/acpschema"
	"github.com/codexacp/codexacp/internal/fakeeditor"
)

// An MCP server's requestedSchema as an ACP form: every kind of MCP field
// has its form field, in the server's order, valid against ACP's schema; a
// secret is keyed as one; what ACP forms cannot hold is an error.
func TestNewMCPForm(t *testing.T) {
	for _, tc := range []struct {
		name, schema, want string // want "": an error
	}{
		{"text with constraints",
			`{"type":"object","properties":{"name":{"type":"string","title":"Name","description":"Yours","minLength":1,"maxLength":20,"default":"Ada"},"mail":{"type":"string","format":"email"}},"required":["name","ghost"]}`,
			`{"type":"object","properties":{"name":{"type":"string","title":"Name","description":"Yours","minLength":1,"maxLength":20,"default":"Ada"},"mail":{"type":"string","format":"email"}},"required":["name"]}`},
		{"order kept",
			`{"type":"object","properties":{"z":{"type":"boolean"},"a":{"type":"boolean","default":true}}}`,
			`{"type":"object","properties":{"z":{"type":"boolean"},"a":{"type":"boolean","default":true}}}`},
		{"choices: titled, untitled, legacy titled",
			`{"type":"object","properties":{"a":{"type":"string","oneOf":[{"const":"x","title":"X"}]},"b":{"type":"string","enum":["p","q"]},"c":{"type":"string","enum":["p","q"],"enumNames":["P","Q"],"default":"r"}}}`,
			`{"type":"object","properties":{"a":{"type":"string","oneOf":[{"const":"x","title":"X"}]},"b":{"type":"string","enum":["p","q"]},"c":{"type":"string","oneOf":[{"const":"p","title":"P"},{"const":"q","title":"Q"}]}}}`},
		{"numbers: integer bounds narrowed to integers",
			`{"type":"object","properties":{"n":{"type":"integer","minimum":0.5,"maximum":9.5,"default":3},"x":{"type":"number","minimum":-1.5}}}`,
			`{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":9,"default":3},"x":{"type":"number","minimum":-1.5}}}`},
		{"multi-select",
			`{"type":"object","properties":{"u":{"type":"array","items":{"type":"string","enum":["a","b"]},"minItems":1},"t":{"type":"array","items":{"anyOf":[{"const":"a","title":"A"}]},"default":["a"]}}}`,
			`{"type":"object","properties":{"u":{"type":"array","items":{"type":"string","enum":["a","b"]},"minItems":1},"t":{"type":"array","items":{"anyOf":[{"const":"a","title":"A"}]},"default":["a"]}}}`},
		{"secrets by name or title",
			`{"type":"object","properties":{"password":{"type":"string"},"pin":{"type":"string","title":"Access token"},"pin_secret":{"type":"string"},"role":{"type":"string","title":"Token kind","enum":["a"]}},"required":["pin"]}`,
			`{"type":"object","properties":{"password_secret":{"type":"string","description":"` + secretNote + `"},"pin_secret":{"type":"string","title":"Access token","description":"` + secretNote + `"},"pin_secret_secret":{"type":"string","description":"` + secretNote + `"},"role":{"type":"string","title":"Token kind","enum":["a"]}},"required":["pin_secret"]}`},
		{"unknown format left out", `{"type":"object","properties":{"s":{"type":"string","format":"ipv4"}}}`,
			`{"type":"object","properties":{"s":{"type":"string"}}}`},
		{"no fields", `{"type":"object","properties":{}}`, `{"type":"object","properties":{}}`},
		{"a nested object", `{"type":"object","properties":{"o":{"type":"object"}}}`, ""},
		{"a multi-select without choices", `{"type":"object","properties":{"o":{"type":"array","items":{"type":"string"}}}}`, ""},
		{"not an object", `{"type":"string"}`, ""},
		{"a property twice", `{"type":"object","properties":{"a":{"type":"string"},"a":{"type":"boolean"}}}`, ""},
		{"not JSON", `{"type":`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := newMCPForm(json.RawMessage(tc.schema))
			if tc.want == "" {
				if err == nil {
					t.Fatalf("no error; form %s", jsonString(f.schema))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := jsonString(f.schema); got != tc.want {
				t.Errorf("form =\n%s\nwant\n%s", got, tc.want)
			}
			req := elicitationRequest{SessionID: "s1", Mode: "form", Message: "m", RequestedSchema: &f.schema}
			if err := acpschema.ValidateDefinition("CreateElicitationRequest", []byte(jsonString(req))); err != nil {
				t.Error(err)
			}
		})
	}
}

// The editor's accepted answer as the server's content: only what was
// asked, of the right type, within its choices and bounds, and every
// required field; anything else is an error (the agent declines).
func TestMCPFormContent(t *testing.T) {
	f, err := newMCPForm(json.RawMessage(`{"type":"object","properties":{` +
		`"name":{"type":"string","minLength":2,"maxLength":5},` +
		`"password":{"type":"string"},` +
		`"plan":{"type":"string","oneOf":[{"const":"free","title":"Free"},{"const":"pro","title":"Pro"}]},` +
		`"size":{"type":"string","enum":["s","m"]},` +
		`"seats":{"type":"integer","minimum":1,"maximum":10},` +
		`"ratio":{"type":"number","maximum":1},` +
		`"news":{"type":"boolean"},` +
		`"tags":{"type":"array","items":{"type":"string","enum":["a","b","c"]},"maxItems":2},` +
		`"mail":{"type":"string","format":"email"},` +
		`"site":{"type":"string","format":"uri"},` +
		`"day":{"type":"string","format":"date"},` +
		`"at":{"type":"string","format":"date-time"}` +
		`},"required":["name","plan"]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, answer, want string // want "": an error
	}{
		{"all fields",
			`{"name":"Ada","password_secret":"pw","plan":"pro","size":"m","seats":3,"ratio":0.5,"news":false,"tags":["a","c"],"mail":"ada@example.com","site":"https://example.com/x","day":"2026-01-31","at":"2026-01-31T10:00:00Z"}`,
			`{"at":"2026-01-31T10:00:00Z","day":"2026-01-31","mail":"ada@example.com","name":"Ada","news":false,"password":"pw","plan":"pro","ratio":0.5,"seats":3,"site":"https://example.com/x","size":"m","tags":["a","c"]}`},
		{"required only, nulls as no answer", `{"name":"Ada","plan":"free","seats":null}`, `{"name":"Ada","plan":"free"}`},
		{"integer written as 3.0", `{"name":"Ada","plan":"free","seats":3.0}`, `{"name":"Ada","plan":"free","seats":3.0}`},
		{"a field not asked", `{"name":"Ada","plan":"free","extra":"x"}`, ""},
		{"the server's key for a secret", `{"name":"Ada","plan":"free","password":"pw"}`, ""},
		{"required missing", `{"name":"Ada"}`, ""},
		{"nothing", `{}`, ""},
		{"not a choice", `{"name":"Ada","plan":"gold"}`, ""},
		{"not an enum value", `{"name":"Ada","plan":"free","size":"xl"}`, ""},
		{"too short", `{"name":"A","plan":"free"}`, ""},
		{"too long in characters", `{"name":"Adaéééé","plan":"free"}`, ""},
		{"text for a number", `{"name":"Ada","plan":"free","seats":"3"}`, ""},
		{"a fraction for an integer", `{"name":"Ada","plan":"free","seats":2.5}`, ""},
		{"below the minimum", `{"name":"Ada","plan":"free","seats":0}`, ""},
		{"above the maximum", `{"name":"Ada","plan":"free","ratio":1.5}`, ""},
		{"text for a boolean", `{"name":"Ada","plan":"free","news":"yes"}`, ""},
		{"a tag not offered", `{"name":"Ada","plan":"free","tags":["d"]}`, ""},
		{"a tag twice", `{"name":"Ada","plan":"free","tags":["a","a"]}`, ""},
		{"too many tags", `{"name":"Ada","plan":"free","tags":["a","b","c"]}`, ""},
		{"a number for text", `{"name":42,"plan":"free"}`, ""},
		{"not an email", `{"name":"Ada","plan":"free","mail":"Ada <ada@example.com>"}`, ""},
		{"not an absolute URI", `{"name":"Ada","plan":"free","site":"example.com"}`, ""},
		{"not a date", `{"name":"Ada","plan":"free","day":"31/01/2026"}`, ""},
		{"not a date-time", `{"name":"Ada","plan":"free","at":"2026-01-31"}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var given map[string]json.RawMessage
			if err := json.Unmarshal([]byte(tc.answer), &given); err != nil {
				t.Fatal(err)
			}
			got, err := f.content(given)
			if tc.want == "" {
				if err == nil {
					t.Fatalf("no error; content %s", jsonString(got))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s := jsonString(got); s != tc.want {
				t.Errorf("content =\n%s\nwant\n%s", s, tc.want)
			}
		})
	}
}

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
	const params = `{"threadId":"th","serverName":"fixture","mode":"form","message":"Sign in","requestedSchema":{"type":"object","properties":{` +
		`"password":{"type":"string"},"pin":{"type":"string","title":"Access token"},"name":{"type":"string"}}}}`
	be := &askingBackend{method: "mcpServer/elicitation/request", params: params}
	transcript := recordedAnswer(t, be, map[string]any{"password_secret": "pw12", "pin_secret": "4321", "name": "Ada Lovelace"},
		`{"action":"accept","content":{"name":"Ada Lovelace","password":"pw12","pin":"4321"}}`)
	checkSecretsLeftOut(t, transcript, "Ada Lovelace", "pw12", "4321")
}
