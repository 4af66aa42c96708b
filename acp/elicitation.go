package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
)

// ACP's elicitation/create (unstable) requires the session it belongs to
// (sessionId), which acp-go-sdk v0.13.0's UnstableCreateElicitationRequest
// cannot carry. The agent therefore sends its own request type under
// extCreateElicitation, an extension method the SDK sends as it is, and the
// output writer gives it its ACP name (acpMethodName). The editor's answer
// matches by id and comes back through the SDK.
const (
	methodCreateElicitation = "elicitation/create"
	extCreateElicitation    = "_codexacp/elicitation/create"
)

// elicitationRequest is a session-scoped elicitation
// (CreateElicitationRequest in the SDK's schema.unstable.json): a form
// (mode "form", RequestedSchema) or a page to open (mode "url", URL and
// ElicitationID). Codex's questions name no tool call (the optional
// toolCallId): codex shows none for them; an MCP server's name its call in
// progress, when there is one.
type elicitationRequest struct {
	SessionID       string      `json:"sessionId"`
	ToolCallID      string      `json:"toolCallId,omitempty"`
	Mode            string      `json:"mode"`
	Message         string      `json:"message"`
	RequestedSchema *formSchema `json:"requestedSchema,omitempty"`
	URL             string      `json:"url,omitempty"`
	ElicitationID   string      `json:"elicitationId,omitempty"`
}

// formSchema is an ElicitationSchema: an object of fields, in the order of
// codex's questions or of the MCP server's schema.
type formSchema struct {
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
// may use the rest (mcpelicitation.go), whose constraints (checkValue) an
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

// questionForm is codex's questions as one elicitation form: each question
// a field (its options a choice, else free text), and for a question that
// also takes an answer of the user's own (isOther) a second, free-text
// field.
type questionForm struct {
	message string
	schema  formSchema
	fields  []questionField
}

// questionField ties a question to the form's fields that answer it.
type questionField struct {
	q        UserQuestion
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

// newQuestionForm maps codex's questions to a form.
func newQuestionForm(qs []UserQuestion) questionForm {
	f := questionForm{schema: formSchema{Type: "object"}}
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
		f.schema.Properties = append(f.schema.Properties, formProperty{qf.key, field})
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
			f.schema.Properties = append(f.schema.Properties, formProperty{qf.otherKey, other})
		}
		f.fields = append(f.fields, qf)
	}
	f.message = fmt.Sprintf("Codex has %d questions for you.", len(qs))
	if len(qs) == 1 {
		f.message = clip(firstNonEmpty(qs[0].Question, "Codex has a question for you."), 4096)
	}
	return f
}

// answers reads the editor's answer (a CreateElicitationResponse) as
// codex's answers by question id. Declined or cancelled: none. Only what
// was asked is passed on: a choice among the question's options, or
// non-blank text where the form took text; any other value is left out and
// logged (the question stays unanswered). An answer that is not a
// CreateElicitationResponse is an error.
func (f questionForm) answers(raw json.RawMessage, log *slog.Logger) (map[string][]string, error) {
	resp, err := decodeElicitationAnswer(raw)
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

// elicitationAnswer is a CreateElicitationResponse.
type elicitationAnswer struct {
	Action  string                     `json:"action"` // accept, decline or cancel
	Content map[string]json.RawMessage `json:"content"`
}

// decodeElicitationAnswer reads the editor's answer to elicitation/create;
// an answer that is not a CreateElicitationResponse is an error.
func decodeElicitationAnswer(raw json.RawMessage) (elicitationAnswer, error) {
	var resp elicitationAnswer
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
func (q UserQuestion) offers(label string) bool {
	for _, o := range q.Options {
		if o.Label == label {
			return true
		}
	}
	return false
}

// asksForms reports whether the editor declared form elicitation
// (clientCapabilities.elicitation.form) and has not refused it since.
func (a *Agent) asksForms() bool {
	form, _ := a.elicitationModes()
	return form
}

// elicitationModes reports which elicitations the editor declared
// (clientCapabilities.elicitation.form and .url), none once it answered
// elicitation/create "method not found".
func (a *Agent) elicitationModes() (form, url bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	e := a.clientCaps.Elicitation
	if e == nil || a.formsRefused {
		return false, false
	}
	return e.Form != nil, e.Url != nil
}

// askForm puts codex's questions to the editor as one form. A failed
// request (the editor's error, a cancelled turn: the SDK then sends
// $/cancel_request, ACP's way to withdraw a request) or an unreadable
// answer leaves them unanswered. An editor that declared form elicitation
// but answers "method not found" does not have it after all: ok is false
// (the caller asks permission questions instead), and the agent asks it
// no more forms.
func (o *turnOutput) askForm(ctx context.Context, qs []UserQuestion) (answers map[string][]string, ok bool) {
	f := newQuestionForm(qs)
	raw, err := o.elicit(ctx, elicitationRequest{Mode: "form", Message: f.message, RequestedSchema: &f.schema})
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return map[string][]string{}, true
	case isMethodNotFound(err):
		return nil, false
	default:
		o.log.Warn("questions to the user failed", "err", err)
		return map[string][]string{}, true
	}
	answers, err = f.answers(raw, o.log)
	if err != nil {
		o.log.Warn("questions to the user: unusable answer", "err", err)
		return map[string][]string{}, true
	}
	return answers, true
}

// elicit sends the editor an elicitation/create of the session and returns
// its answer. An editor that declared elicitation but answers "method not
// found" does not have it after all: the agent asks it no more
// (elicitationModes), codex's questions go as permission questions and an
// MCP server's are declined.
func (o *turnOutput) elicit(ctx context.Context, req elicitationRequest) (json.RawMessage, error) {
	req.SessionID = o.s.id
	raw, err := o.a.conn.CallExtension(ctx, extCreateElicitation, req)
	if err != nil && ctx.Err() == nil && isMethodNotFound(err) {
		o.log.Warn("the editor declared elicitation but has no elicitation/create: it is asked no more", "err", err)
		o.a.mu.Lock()
		o.a.formsRefused = true
		o.a.mu.Unlock()
	}
	return raw, err
}

// acpMethodName gives an outbound extCreateElicitation request its ACP
// method name; any other line comes back unchanged. The SDK writes
// "jsonrpc", "id" and "method" first, so the method sits near the start
// (the pattern cannot occur inside a JSON string: its quotes would be
// escaped); decoding the line confirms it is the top-level method.
func acpMethodName(line []byte) []byte {
	ext := []byte(`"method":"` + extCreateElicitation + `"`)
	i := bytes.Index(line[:min(len(line), 200)], ext)
	if i < 0 {
		return line
	}
	var m struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(line, &m) != nil || m.Method != extCreateElicitation {
		return line
	}
	out := make([]byte, 0, len(line))
	out = append(out, line[:i]...)
	out = append(out, `"method":"`+methodCreateElicitation+`"`...)
	return append(out, line[i+len(ext):]...)
}
