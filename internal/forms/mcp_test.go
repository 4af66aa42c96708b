package forms

import (
	"encoding/json"
	"testing"

	"github.com/codexacp/codexacp/internal/acpschema"
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
			f, err := NewMCPForm(json.RawMessage(tc.schema))
			if tc.want == "" {
				if err == nil {
					t.Fatalf("no error; form %s", jsonString(f.Schema))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := jsonString(f.Schema); got != tc.want {
				t.Errorf("form =\n%s\nwant\n%s", got, tc.want)
			}
			req := Request{SessionID: "s1", Mode: "form", Message: "m", RequestedSchema: &f.Schema}
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
	f, err := NewMCPForm(json.RawMessage(`{"type":"object","properties":{` +
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
			got, err := f.Content(given)
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
