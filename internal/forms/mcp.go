package forms

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/mail"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/codexacp/codexacp/internal/secrets"
)

// MCPMessage is the form's message for an MCP server's question: it names
// the server asking, since the editor shows the message and the user should
// know who wants the answer.
func MCPMessage(server, message string) string {
	msg := strings.TrimSpace(message)
	if msg == "" {
		msg = "It needs your input."
	}
	return clip("The "+server+" MCP server asks: "+msg, 4096)
}

// MCPForm is an MCP server's requestedSchema as an ACP form. The two
// schemas are nearly the same (both restrict JSON Schema to flat objects
// of primitive fields); the form is built from the server's, field by
// field, rather than passed on, so that the editor gets nothing ACP does
// not define and the answer can be checked against what was asked.
type MCPForm struct {
	Schema Schema // the request's requestedSchema
	fields []mcpField
}

// mcpField ties one of the server's properties to its form field.
type mcpField struct {
	key      string // the server's property name
	formKey  string // the form's: key, with secretKeySuffix for a secret
	required bool
	field    formField
}

// mcpProperty is one property of an MCP requestedSchema
// (McpElicitationPrimitiveSchema in codex app-server's schema).
type mcpProperty struct {
	Type        string          `json:"type"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Format      string          `json:"format"`
	MinLength   *int64          `json:"minLength"`
	MaxLength   *int64          `json:"maxLength"`
	Minimum     *float64        `json:"minimum"`
	Maximum     *float64        `json:"maximum"`
	Enum        []string        `json:"enum"`
	EnumNames   []string        `json:"enumNames"`
	OneOf       []formChoice    `json:"oneOf"`
	Items       *formItems      `json:"items"`
	MinItems    *int64          `json:"minItems"`
	MaxItems    *int64          `json:"maxItems"`
	Default     json.RawMessage `json:"default"`
}

// acpStringFormats are the string formats ACP's StringFormat has (MCP's
// are the same).
var acpStringFormats = []string{"email", "uri", "date", "date-time"}

// NewMCPForm maps an MCP server's requestedSchema to a form. A schema with
// a property of a kind ACP forms cannot hold is an error (the form would
// ask less than the server needs).
func NewMCPForm(raw json.RawMessage) (MCPForm, error) {
	var s struct {
		Type       string          `json:"type"`
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return MCPForm{}, fmt.Errorf("requested schema: %w", err)
	}
	if s.Type != "object" {
		return MCPForm{}, fmt.Errorf("requested schema: type %q, not object", s.Type)
	}
	props, err := objectMembers(s.Properties)
	if err != nil {
		return MCPForm{}, fmt.Errorf("requested schema properties: %w", err)
	}
	f := MCPForm{Schema: Schema{Type: "object"}}
	for _, p := range props {
		var prop mcpProperty
		if err := json.Unmarshal(p.value, &prop); err != nil {
			return MCPForm{}, fmt.Errorf("property %q: %w", p.key, err)
		}
		field, err := formFieldOf(prop)
		if err != nil {
			return MCPForm{}, fmt.Errorf("property %q: %w", p.key, err)
		}
		formKey := p.key
		if isSecretField(p.key, field) {
			// Keyed as a secret, so that a --record transcript blanks
			// what the user types (as for codex's secret questions). No
			// two keys meet: a server's key ending so is a secret's too.
			formKey += secretKeySuffix
			field.Description = strings.TrimSpace(field.Description + " " + secretNote)
		}
		mf := mcpField{key: p.key, formKey: formKey, required: slices.Contains(s.Required, p.key), field: field}
		f.fields = append(f.fields, mf)
		f.Schema.Properties = append(f.Schema.Properties, formProperty{mf.formKey, field})
		if mf.required {
			f.Schema.Required = append(f.Schema.Required, mf.formKey)
		}
	}
	return f, nil
}

// isSecretField reports whether a free-text field asks for a secret
// (secrets.IsFormField: a password, a token, an API key), as the recorder
// judges an app-server trace's (record/appserver.go).
func isSecretField(key string, f formField) bool {
	return f.Type == "string" && len(f.OneOf) == 0 && len(f.Enum) == 0 && secrets.IsFormField(key, f.Title)
}

// formFieldOf maps one MCP property to a form field.
func formFieldOf(p mcpProperty) (formField, error) {
	f := formField{Type: p.Type, Title: clip(p.Title, 200), Description: clip(p.Description, 4096)}
	switch p.Type {
	case "string":
		switch {
		case len(p.OneOf) > 0:
			f.OneOf = p.OneOf
		case len(p.Enum) > 0 && len(p.EnumNames) == len(p.Enum):
			// MCP's legacy titled enum: ACP titles choices with oneOf.
			for i, v := range p.Enum {
				f.OneOf = append(f.OneOf, formChoice{Const: v, Title: p.EnumNames[i]})
			}
		case len(p.Enum) > 0:
			f.Enum = p.Enum
		default:
			if slices.Contains(acpStringFormats, p.Format) {
				f.Format = p.Format
			}
			f.MinLength, f.MaxLength = p.MinLength, p.MaxLength
		}
	case "integer":
		// ACP's integer bounds are integers: a bound keeps only the
		// integers the server's allows.
		if p.Minimum != nil {
			f.Minimum = ptr(math.Ceil(*p.Minimum))
		}
		if p.Maximum != nil {
			f.Maximum = ptr(math.Floor(*p.Maximum))
		}
	case "number":
		f.Minimum, f.Maximum = p.Minimum, p.Maximum
	case "boolean":
	case "array":
		if p.Items == nil || (len(p.Items.Enum) == 0 && len(p.Items.AnyOf) == 0) {
			return formField{}, errors.New("a multi-select without choices")
		}
		f.Items = &formItems{AnyOf: p.Items.AnyOf}
		if len(p.Items.AnyOf) == 0 {
			f.Items = &formItems{Type: "string", Enum: p.Items.Enum}
		}
		f.MinItems, f.MaxItems = p.MinItems, p.MaxItems
	default:
		return formField{}, fmt.Errorf("type %q has no form field", p.Type)
	}
	if len(p.Default) > 0 && string(p.Default) != "null" && f.check(p.Default) == nil {
		f.Default = p.Default
	}
	return f, nil
}

// Content checks the editor's accepted answer against the form and
// returns it by the server's property names. Only the properties asked
// may be answered, each with a value its field allows, and every required
// one must be; a null is no answer.
func (f MCPForm) Content(given map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	for key := range given {
		if !slices.ContainsFunc(f.fields, func(mf mcpField) bool { return mf.formKey == key }) {
			return nil, fmt.Errorf("field %q was not asked", key)
		}
	}
	for _, mf := range f.fields {
		v, ok := given[mf.formKey]
		if !ok || string(v) == "null" {
			if mf.required {
				return nil, fmt.Errorf("required field %q not answered", mf.formKey)
			}
			continue
		}
		if err := mf.field.check(v); err != nil {
			return nil, fmt.Errorf("field %q: %w", mf.formKey, err)
		}
		out[mf.key] = v
	}
	return out, nil
}

// check reports whether v is a value the field allows: its type, its
// choices, its bounds and its format.
func (f formField) check(v json.RawMessage) error {
	switch f.Type {
	case "string":
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return errors.New("not text")
		}
		return f.checkText(s)
	case "integer", "number":
		var n float64
		if err := json.Unmarshal(v, &n); err != nil {
			return errors.New("not a number")
		}
		if f.Type == "integer" && n != math.Trunc(n) {
			return errors.New("not an integer")
		}
		if (f.Minimum != nil && n < *f.Minimum) || (f.Maximum != nil && n > *f.Maximum) {
			return fmt.Errorf("%v out of bounds", n)
		}
	case "boolean":
		var b bool
		if err := json.Unmarshal(v, &b); err != nil {
			return errors.New("not true or false")
		}
	case "array":
		var picked []string
		if err := json.Unmarshal(v, &picked); err != nil {
			return errors.New("not a list of choices")
		}
		for i, p := range picked {
			if !f.Items.offers(p) {
				return fmt.Errorf("%q is not a choice", p)
			}
			if slices.Contains(picked[:i], p) {
				return fmt.Errorf("%q chosen twice", p)
			}
		}
		n := int64(len(picked))
		if (f.MinItems != nil && n < *f.MinItems) || (f.MaxItems != nil && n > *f.MaxItems) {
			return fmt.Errorf("%d choices out of bounds", n)
		}
	default:
		return fmt.Errorf("type %q", f.Type)
	}
	return nil
}

// checkText checks a string field's value.
func (f formField) checkText(s string) error {
	if len(f.OneOf) > 0 && !slices.ContainsFunc(f.OneOf, func(c formChoice) bool { return c.Const == s }) ||
		len(f.Enum) > 0 && !slices.Contains(f.Enum, s) {
		return fmt.Errorf("%q is not a choice", s)
	}
	n := int64(utf8.RuneCountInString(s))
	if (f.MinLength != nil && n < *f.MinLength) || (f.MaxLength != nil && n > *f.MaxLength) {
		return fmt.Errorf("length %d out of bounds", n)
	}
	var bad bool
	switch f.Format {
	case "email":
		a, err := mail.ParseAddress(s)
		bad = err != nil || a.Address != s
	case "uri":
		u, err := url.Parse(s)
		bad = err != nil || !u.IsAbs()
	case "date":
		_, err := time.Parse(time.DateOnly, s)
		bad = err != nil
	case "date-time":
		_, err := time.Parse(time.RFC3339, s)
		bad = err != nil
	}
	if bad {
		return fmt.Errorf("not a valid %s", f.Format)
	}
	return nil
}

// offers reports whether v is one of the items' choices.
func (it *formItems) offers(v string) bool {
	return slices.Contains(it.Enum, v) || slices.ContainsFunc(it.AnyOf, func(c formChoice) bool { return c.Const == v })
}

// member is one member of a JSON object.
type member struct {
	key   string
	value json.RawMessage
}

// objectMembers reads a JSON object's members in their order (a map would
// lose it, and a form shows its fields in the order the server gave).
// Absent or null: none.
func objectMembers(raw json.RawMessage) ([]member, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if slices.ContainsFunc(out, func(m member) bool { return m.key == key }) {
			return nil, fmt.Errorf("property %q twice", key)
		}
		out = append(out, member{key, v})
	}
	return out, nil
}

func ptr[T any](v T) *T { return &v }
