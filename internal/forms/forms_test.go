package forms

import (
	"encoding/json"
	"log/slog"
	"reflect"
	"testing"

	"github.com/codexacp/codexacp/internal/acpschema"
)

var (
	langQuestion = Question{ID: "lang", Header: "Language", Question: "Which language?",
		Options: []Option{{Label: "English", Description: "Hello"}, {Label: "French", Description: "Bonjour"}}}
	nameQuestion  = Question{ID: "name", Header: "Name", Question: "Whom to greet?"}
	otherQuestion = Question{ID: "tone", Header: "Tone", Question: "Which tone?", Other: true,
		Options: []Option{{Label: "Warm"}, {Label: "Formal"}}}
	secretQuestion = Question{ID: "key", Header: "Key", Question: "Your key?", Secret: true}
)

// Codex's questions as one form: each question a field, in codex's order;
// the request is a valid CreateElicitationRequest of the unstable schema.
func TestQuestionForm(t *testing.T) {
	for _, tc := range []struct {
		name string
		qs   []Question
		want string // requestedSchema
		msg  string
	}{
		{"one question with options", []Question{langQuestion},
			`{"type":"object","properties":{"lang":{"type":"string","title":"Language","oneOf":[{"const":"English","title":"English — Hello"},{"const":"French","title":"French — Bonjour"}]}}}`,
			"Which language?"},
		{"free text", []Question{nameQuestion},
			`{"type":"object","properties":{"name":{"type":"string","title":"Name"}}}`, "Whom to greet?"},
		{"options and an answer of one's own", []Question{otherQuestion},
			`{"type":"object","properties":{"tone":{"type":"string","title":"Tone","oneOf":[{"const":"Warm","title":"Warm"},{"const":"Formal","title":"Formal"}]},` +
				`"tone_other":{"type":"string","title":"Tone: other","description":"Your own answer, instead of or besides a choice"}}}`,
			"Which tone?"},
		{"secret", []Question{secretQuestion},
			`{"type":"object","properties":{"key_secret":{"type":"string","title":"Key","description":"` + secretNote + `"}}}`, "Your key?"},
		{"secret with options", []Question{{ID: "pin", Header: "PIN", Question: "Which PIN?", Secret: true, Other: true, Options: []Option{{Label: "none"}}}},
			`{"type":"object","properties":{"pin":{"type":"string","title":"PIN","oneOf":[{"const":"none","title":"none"}]},` +
				`"pin_other_secret":{"type":"string","title":"PIN: other","description":"Your own answer, instead of or besides a choice ` + secretNote + `"}}}`, "Which PIN?"},
		{"several, in codex's order, each described", []Question{nameQuestion, langQuestion},
			`{"type":"object","properties":{"name":{"type":"string","title":"Name","description":"Whom to greet?"},` +
				`"lang":{"type":"string","title":"Language","description":"Which language?","oneOf":[{"const":"English","title":"English — Hello"},{"const":"French","title":"French — Bonjour"}]}}}`,
			"Codex has 2 questions for you."},
		{"keys never clash", []Question{{ID: "a_other", Question: "1"}, {ID: "a", Question: "2", Other: true, Options: []Option{{Label: "x"}}}, {ID: "a", Question: "3"}},
			`{"type":"object","properties":{"a_other":{"type":"string","title":"a_other","description":"1"},` +
				`"a":{"type":"string","title":"a","description":"2","oneOf":[{"const":"x","title":"x"}]},` +
				`"a_other_":{"type":"string","title":"a: other","description":"Your own answer, instead of or besides a choice"},` +
				`"a_":{"type":"string","title":"a","description":"3"}}}`,
			"Codex has 3 questions for you."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := NewQuestionForm(tc.qs)
			if got := jsonString(f.Schema); got != tc.want {
				t.Errorf("requestedSchema =\n%s\nwant\n%s", got, tc.want)
			}
			if f.Message != tc.msg {
				t.Errorf("message = %q, want %q", f.Message, tc.msg)
			}
			req := Request{SessionID: "s1", Mode: "form", Message: f.Message, RequestedSchema: &f.Schema}
			if err := acpschema.ValidateDefinition("CreateElicitationRequest", []byte(jsonString(req))); err != nil {
				t.Error(err)
			}
		})
	}
}

// The editor's answer as codex's answers: only what was asked.
func TestQuestionFormAnswers(t *testing.T) {
	f := NewQuestionForm([]Question{langQuestion, nameQuestion, otherQuestion})
	for _, tc := range []struct {
		name   string
		answer string
		want   map[string][]string
		err    bool
	}{
		{"all answered", `{"action":"accept","content":{"lang":"French","name":"Ada","tone":"Warm","tone_other":"and brief"}}`,
			map[string][]string{"lang": {"French"}, "name": {"Ada"}, "tone": {"Warm", "and brief"}}, false},
		{"own answer only", `{"action":"accept","content":{"tone_other":"cheeky"}}`, map[string][]string{"tone": {"cheeky"}}, false},
		{"some left blank", `{"action":"accept","content":{"lang":"English","name":"  "}}`, map[string][]string{"lang": {"English"}}, false},
		{"accepted empty", `{"action":"accept"}`, map[string][]string{}, false},
		{"not among the options", `{"action":"accept","content":{"lang":"German","name":"Ada"}}`, map[string][]string{"name": {"Ada"}}, false},
		{"not text", `{"action":"accept","content":{"lang":["French"],"name":42,"tone":null}}`, map[string][]string{}, false},
		{"unknown fields ignored", `{"action":"accept","content":{"lang":"French","extra":"x"}}`, map[string][]string{"lang": {"French"}}, false},
		{"declined", `{"action":"decline"}`, map[string][]string{}, false},
		{"cancelled", `{"action":"cancel","content":{"lang":"French"}}`, map[string][]string{}, false},
		{"no action", `{"content":{"lang":"French"}}`, nil, true},
		{"unknown action", `{"action":"maybe"}`, nil, true},
		{"content not an object", `{"action":"accept","content":"French"}`, nil, true},
		{"not an object", `null`, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := f.Answers(json.RawMessage(tc.answer), slog.New(slog.DiscardHandler))
			if (err != nil) != tc.err {
				t.Fatalf("err = %v, want error %v", err, tc.err)
			}
			if !tc.err && !reflect.DeepEqual(got, tc.want) {
				t.Errorf("answers = %v, want %v", got, tc.want)
			}
		})
	}
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
