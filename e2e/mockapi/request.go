package mockapi

import (
	"encoding/json"
	"net/http"
)

// Request is one recorded POST /v1/responses.
type Request struct {
	Header http.Header
	Raw    []byte         // body as received
	Body   map[string]any // Raw parsed as JSON; nil if it was not JSON
}

// Input returns the body's input items (the whole history: codex sends
// store:false and resends everything on every request).
func (r Request) Input() []map[string]any {
	list, _ := r.Body["input"].([]any)
	items := make([]map[string]any, 0, len(list))
	for _, v := range list {
		if m, ok := v.(map[string]any); ok {
			items = append(items, m)
		}
	}
	return items
}

// ToolNames returns the name of each offered tool, or its type for unnamed
// built-ins such as web_search and tool_search.
func (r Request) ToolNames() []string {
	list, _ := r.Body["tools"].([]any)
	names := make([]string, 0, len(list))
	for _, v := range list {
		m, _ := v.(map[string]any)
		if name, ok := m["name"].(string); ok && name != "" {
			names = append(names, name)
		} else if typ, ok := m["type"].(string); ok {
			names = append(names, typ)
		}
	}
	return names
}

// HasTool reports whether a tool with that name (or unnamed type) is offered.
func (r Request) HasTool(name string) bool {
	for _, n := range r.ToolNames() {
		if n == name {
			return true
		}
	}
	return false
}

// Texts returns the text parts (input_text or output_text) of the input
// messages with the given role ("user", "assistant", "developer"), in order.
func (r Request) Texts(role string) []string {
	return r.parts(role, "", "text")
}

// Images returns the image_url of each input_image part (a data URL: codex
// inlines local images) of the input messages with the given role, in
// order.
func (r Request) Images(role string) []string {
	return r.parts(role, "input_image", "image_url")
}

// parts returns the string field key of the content parts of type typ (any
// type when "") of the input messages with the given role, in order.
func (r Request) parts(role, typ, key string) []string {
	var out []string
	for _, item := range r.Input() {
		if item["type"] != "message" || item["role"] != role {
			continue
		}
		parts, _ := item["content"].([]any)
		for _, p := range parts {
			m, _ := p.(map[string]any)
			if typ != "" && m["type"] != typ {
				continue
			}
			if s, ok := m[key].(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

// FunctionCallOutput returns what the tool call callID returned to the model:
// the output string, or the JSON of a structured output.
func (r Request) FunctionCallOutput(callID string) (string, bool) {
	for _, item := range r.Input() {
		if item["type"] != "function_call_output" || item["call_id"] != callID {
			continue
		}
		if s, ok := item["output"].(string); ok {
			return s, true
		}
		b, err := json.Marshal(item["output"])
		if err != nil {
			return "", false
		}
		return string(b), true
	}
	return "", false
}
