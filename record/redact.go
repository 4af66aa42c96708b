package record

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/codexacp/codexacp/internal/secrets"
)

// Redacted replaces every secret in a transcript.
const Redacted = secrets.Redacted

// minSecretLen keeps short values (a "1", a "true") from being treated as
// secrets and blanked out all over the transcript.
const minSecretLen = 8

// headersKey is in every message whose MCP server headers redactHeaders
// blanks (the keys of headerKeys).
var headersKey = []byte("headers")

// redactMessage blanks secret string values in an ACP message: fields whose
// key looks secret, {"name": <secret-looking>, "value": ...} pairs, and the
// values of every MCP server header (the "headers" of MCP servers in
// session/new). The message is returned unchanged (byte for byte) when
// nothing was redacted.
func redactMessage(msg json.RawMessage) json.RawMessage {
	out, _ := redactLearning(msg)
	return out
}

// redactLearning is redactMessage that also returns the values it blanked,
// so that the recorder can replace them wherever else they appear (with a
// "Bearer " prefix, also the token after it).
func redactLearning(msg json.RawMessage) (json.RawMessage, []string) {
	// A cheap pre-check: only messages that mention a secret-looking name
	// or headers are decoded and walked.
	if !secrets.MentionsName(msg) && !bytes.Contains(msg, headersKey) &&
		!bytes.Contains(msg, mcpServersKey) && !bytes.Contains(msg, mcpServersTable) {
		return msg, nil
	}
	v, err := decodeJSON(msg)
	if err != nil {
		return msg, nil
	}
	var learned []string
	learn := func(s string) {
		learned = append(learned, s)
		if prefix, token, ok := strings.Cut(s, " "); ok && strings.EqualFold(prefix, "bearer") {
			learned = append(learned, strings.TrimSpace(token))
		}
	}
	servers := redactMCPServers(v, learn)
	if !redactValue(v, learn) && !servers {
		return msg, nil
	}
	out, err := encodeJSON(v)
	if err != nil {
		return msg, nil
	}
	return out, learned
}

// decodeJSON decodes a message for redaction: numbers stay as written.
func decodeJSON(msg json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(msg))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// encodeJSON encodes a redacted message: HTML characters stay as they are.
func encodeJSON(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return json.RawMessage(bytes.TrimRight(buf.Bytes(), "\n")), nil
}

// editObjects calls edit on every object in v, a decoded message, each
// before the values inside it, and reports whether any call changed
// something (edit says so).
func editObjects(v any, edit func(obj map[string]any) bool) bool {
	changed := false
	switch v := v.(type) {
	case map[string]any:
		changed = edit(v)
		for _, child := range v {
			if editObjects(child, edit) {
				changed = true
			}
		}
	case []any:
		for _, child := range v {
			if editObjects(child, edit) {
				changed = true
			}
		}
	}
	return changed
}

// headerKeys hold the HTTP headers of an MCP server, every value of which is
// blanked whatever the header's name (a custom header can carry a
// credential): "headers", a list of {"name", "value"} pairs in ACP, and
// "http_headers", a name → value object in codex's config (an app-server
// thread's MCP servers, ours with the bearer token among them).
var headerKeys = map[string]bool{"headers": true, "http_headers": true}

// redactValue walks v and blanks secret strings in place, telling learn each
// value it blanked; it reports whether it changed anything.
func redactValue(v any, learn func(string)) bool {
	changed := false
	blank := func(s string) bool {
		if s == "" || s == Redacted {
			return false
		}
		learn(s)
		changed = true
		return true
	}
	switch v := v.(type) {
	case map[string]any:
		if name, ok := v["name"].(string); ok && secrets.IsName(name) {
			if s, ok := v["value"].(string); ok && blank(s) {
				v["value"] = Redacted
			}
		}
		for k, child := range v {
			if s, ok := child.(string); ok && secrets.IsName(k) {
				if blank(s) {
					v[k] = Redacted
				}
				continue
			}
			if headerKeys[k] {
				redactHeaders(child, blank)
			}
			if redactValue(child, learn) {
				changed = true
			}
		}
	case []any:
		for _, child := range v {
			if redactValue(child, learn) {
				changed = true
			}
		}
	}
	return changed
}

// redactHeaders blanks every header value of an MCP server's headers: an
// object of strings, or a list of {"name", "value"} objects.
func redactHeaders(headers any, blank func(string) bool) {
	switch h := headers.(type) {
	case map[string]any:
		for name, value := range h {
			if s, ok := value.(string); ok && blank(s) {
				h[name] = Redacted
			}
		}
	case []any:
		for _, pair := range h {
			if p, ok := pair.(map[string]any); ok {
				if s, ok := p["value"].(string); ok && blank(s) {
					p["value"] = Redacted
				}
			}
		}
	}
}

// secretSet is the known secret values, replaced wherever they occur.
type secretSet struct {
	values [][]byte
}

func (s *secretSet) add(value string) {
	if len(value) < minSecretLen {
		return
	}
	forms := []string{value}
	// The JSON-escaped form, when it differs (a secret with a quote).
	if b, err := json.Marshal(value); err == nil {
		if esc := string(b[1 : len(b)-1]); esc != value {
			forms = append(forms, esc)
		}
	}
	for _, f := range forms {
		known := false
		for _, v := range s.values {
			if string(v) == f {
				known = true
				break
			}
		}
		if !known {
			s.values = append(s.values, []byte(f))
		}
	}
}

// addEnv adds the values of secret-looking variables of a KEY=VALUE list.
func (s *secretSet) addEnv(env []string) {
	for _, kv := range env {
		name, value, ok := strings.Cut(kv, "=")
		if ok && secrets.IsName(name) {
			s.add(value)
		}
	}
}

// scrub replaces known secrets in line, and API keys and bearer tokens
// (secrets.RedactValues).
func (s *secretSet) scrub(line []byte) []byte {
	for _, v := range s.values {
		if bytes.Contains(line, v) {
			line = bytes.ReplaceAll(line, v, []byte(Redacted))
		}
	}
	return secrets.RedactValues(line)
}
