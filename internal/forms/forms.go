// Package forms builds the forms codexacp puts to the user through ACP's
// elicitation/create (unstable) and checks the answers. Codex's questions
// (item/tool/requestUserInput, [Question]) become one form
// ([NewQuestionForm]), whose answer [QuestionForm.Answers] reads back as
// codex's answers; an MCP server's requestedSchema becomes a form
// ([NewMCPForm]), whose answer [MCPForm.Content] checks against what the
// server asked. Fields where a secret is typed are keyed so that a
// --record transcript blanks them. Sending the request and the session's
// state stay in package acp.
package forms

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
)

// Request is a session-scoped elicitation
// (CreateElicitationRequest in the SDK's schema.unstable.json): a form
// (mode "form", RequestedSchema) or a page to open (mode "url", URL and
// ElicitationID). Codex's questions name no tool call (the optional
// toolCallId): codex shows none for them; an MCP server's name its call in
// progress, when there is one.
type Request struct {
	SessionID       string  `json:"sessionId"`
	ToolCallID      string  `json:"toolCallId,omitempty"`
	Mode            string  `json:"mode"`
	Message         string  `json:"message"`
	RequestedSchema *Schema `json:"requestedSchema,omitempty"`
	URL             string  `json:"url,omitempty"`
	ElicitationID   string  `json:"elicitationId,omitempty"`
}

// Schema is an ElicitationSchema: an object of fields, in the order of
// codex's questions or of the MCP server's schema.
type Schema struct {
	Type       string         `json:"type"`
	Properties formProperties `json:"properties"`
	Required   []string       `json:"required,omitempty"`
}

// formProperties marshal as a JSON object in their order (a map would sort
// them, and editors show fields in the object's order).
type formProperties []formProperty

type formProperty struct {
	key string
	formField
}

// formField is an ElicitationPropertySchema. Codex's questions use a
// StringPropertySchema (free text, or one of OneOf); an MCP server's form
// may use the rest (mcp.go), whose constraints (check) an
// answer must meet.
type formField struct {
	Type        string       `json:"type"` // string, number, integer, boolean or array
	Title       string       `json:"title,omitempty"`
	Description string       `json:"description,omitempty"`
	OneOf       []formChoice `json:"oneOf,omitempty"`
	Enum        []string     `json:"enum,omitempty"`
	Format      string       `json:"format,omitempty"`
	MinLength   *int64       `json:"minLength,omitempty"`
	MaxLength   *int64       `json:"maxLength,omitempty"`
	Minimum     *float64     `json:"minimum,omitempty"`
	Maximum     *float64     `json:"maximum,omitempty"`
	Items       *formItems   `json:"items,omitempty"`
	MinItems    *int64       `json:"minItems,omitempty"`
	MaxItems    *int64       `json:"maxItems,omitempty"`
	Default     any          `json:"default,omitempty"`
}

// formItems is a MultiSelectItems: the values an array field may hold,
// untitled (Type "string" and Enum) or titled (AnyOf).
type formItems struct {
	Type  string       `json:"type,omitempty"`
	Enum  []string     `json:"enum,omitempty"`
	AnyOf []formChoice `json:"anyOf,omitempty"`
}

// formChoice is an EnumOption: the value sent back is Const.
type formChoice struct {
	Const string `json:"const"`
	Title string `json:"title"`
}

func (p formProperties) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range p {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(f.key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(f.formField)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// QuestionForm is codex's questions as one elicitation form: each question
// a field (its options a choice, else free text), and for a question that
// also takes an answer of the user's own (isOther) a second, free-text
// field.
type QuestionForm struct {
	Message string // the request's message
	Schema  Schema // its requestedSchema
	fields  []questionField
}

// questionField ties a question to the form's fields that answer it.
type questionField struct {
	q        Question
	key      string // the choice, or the text of a question without options
	otherKey string // the free text of a question with options and isOther; "" without
}

// secretNote warns that a secret is typed in the clear: ACP's string
// formats (email, uri, date, date-time) have no masked one.
const secretNote = "(secret: the form does not hide what you type)"

// secretKeySuffix ends the key of a field where a secret is typed: a name
// that says so (secrets.IsName), so that a --record transcript blanks the
// editor's answer in it and replaces the value wherever else it appears
// (record's redaction of ACP messages), codex's answer among them.
const secretKeySuffix = "_secret"

// Question is one of codex's questions to the user
// (item/tool/requestUserInput).
type Question struct {
	ID       string
	Header   string
	Question string
	Options  []Option // none: a free-text answer
	Other    bool     // a free-text answer is allowed besides the options
	Secret   bool
}

// Option is one answer codex offers.
type Option struct {
	Label       string
	Description string
}

// NewQuestionForm maps codex's questions to a form.
func NewQuestionForm(qs []Question) QuestionForm {
	f := QuestionForm{Schema: Schema{Type: "object"}}
	unique := uniqueKeys()
	for _, q := range qs {
		key := firstNonEmpty(q.ID, "answer")
		if q.Secret && len(q.Options) == 0 {
			key += secretKeySuffix
		}
		qf := questionField{q: q, key: unique(key)}
		field := formField{Type: "string", Title: clip(firstNonEmpty(q.Header, q.ID, "Answer"), 200)}
		if len(qs) > 1 {
			field.Description = clip(q.Question, 4096)
		}
		for _, o := range q.Options {
			title := o.Label
			if o.Description != "" {
				title += " — " + o.Description
			}
			field.OneOf = append(field.OneOf, formChoice{Const: o.Label, Title: clip(title, 400)})
		}
		if q.Secret && len(q.Options) == 0 {
			field.Description = strings.TrimSpace(field.Description + " " + secretNote)
		}
		f.Schema.Properties = append(f.Schema.Properties, formProperty{qf.key, field})
		if q.Other && len(q.Options) > 0 {
			otherKey := qf.key + "_other"
			if q.Secret {
				otherKey += secretKeySuffix
			}
			qf.otherKey = unique(otherKey)
			other := formField{Type: "string", Title: clip(field.Title, 190) + ": other", Description: "Your own answer, instead of or besides a choice"}
			if q.Secret {
				other.Description += " " + secretNote
			}
			f.Schema.Properties = append(f.Schema.Properties, formProperty{qf.otherKey, other})
		}
		f.fields = append(f.fields, qf)
	}
	f.Message = fmt.Sprintf("Codex has %d questions for you.", len(qs))
	if len(qs) == 1 {
		f.Message = clip(firstNonEmpty(qs[0].Question, "Codex has a question for you."), 4096)
	}
	return f
}

// Answers reads the editor's answer (a CreateElicitationResponse) as
// codex's answers by question id. Declined or cancelled: none. Only what
// was asked is passed on: a choice among the question's options, or
// non-blank text where the form took text; any other value is left out and
// logged (the question stays unanswered). An answer that is not a
// CreateElicitationResponse is an error.
func (f QuestionForm) Answers(raw json.RawMessage, log *slog.Logger) (map[string][]string, error) {
	resp, err := DecodeAnswer(raw)
	if err != nil {
		return nil, err
	}
	if resp.Action != "accept" {
		return map[string][]string{}, nil
	}
	answers := map[string][]string{}
	for _, qf := range f.fields {
		var a []string
		if v, ok := formText(resp.Content, qf.key, log); ok {
			if len(qf.q.Options) == 0 || qf.q.offers(v) {
				a = append(a, v)
			} else {
				log.Warn("elicitation answer not among the question's options: left out", "question", qf.q.ID)
			}
		}
		if v, ok := formText(resp.Content, qf.otherKey, log); ok {
			a = append(a, v)
		}
		if len(a) > 0 {
			answers[qf.q.ID] = a
		}
	}
	return answers, nil
}

// uniqueKeys returns a function that makes form keys unique: a key taken
// already gets underscores appended.
func uniqueKeys() func(key string) string {
	taken := map[string]bool{}
	return func(key string) string {
		for taken[key] {
			key += "_"
		}
		taken[key] = true
		return key
	}
}

// Answer is the editor's answer, a CreateElicitationResponse.
type Answer struct {
	Action  string                     `json:"action"` // accept, decline or cancel
	Content map[string]json.RawMessage `json:"content"`
}

// DecodeAnswer reads the editor's answer to elicitation/create;
// an answer that is not a CreateElicitationResponse is an error.
func DecodeAnswer(raw json.RawMessage) (Answer, error) {
	var resp Answer
	if err := json.Unmarshal(raw, &resp); err != nil {
		return resp, fmt.Errorf("elicitation answer: %w", err)
	}
	switch resp.Action {
	case "accept", "decline", "cancel":
		return resp, nil
	}
	return resp, fmt.Errorf("elicitation answer: unknown action %q", resp.Action)
}

// formText is the non-blank string content holds for key ("": none).
func formText(content map[string]json.RawMessage, key string, log *slog.Logger) (string, bool) {
	raw, ok := content[key]
	if !ok || key == "" || string(raw) == "null" {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		log.Warn("elicitation answer is not text: left out", "field", key)
		return "", false
	}
	if strings.TrimSpace(s) == "" {
		return "", false
	}
	return s, true
}

// offers reports whether label is one of the question's options.
func (q Question) offers(label string) bool {
	for _, o := range q.Options {
		if o.Label == label {
			return true
		}
	}
	return false
}

// clip returns s when it has at most n bytes, else its first n (at a rune
// boundary) and how long it was.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + fmt.Sprintf("… (%d bytes in all)", len(s))
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}
