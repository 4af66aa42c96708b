package record

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"

	"github.com/codexacp/codexacp/internal/secrets"
)

// Redacted replaces every secret in a transcript.
const Redacted = secrets.Redacted

// minSecretLen keeps short values (a "1", a "true") from being treated as
// secrets and blanked out all over the transcript.
const minSecretLen = 8

// secretPatterns find secrets nobody told the recorder about: OpenAI-style
// API keys and bearer tokens, anywhere in a line.
var secretPatterns = []struct {
	re   *regexp.Regexp
	repl []byte
}{
	{regexp.MustCompile(`\bsk-[A-Za-z0-9][A-Za-z0-9_-]{15,}`), []byte(Redacted)},
	{regexp.MustCompile(`(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}`), []byte("${1}" + Redacted)},
}

// secretKeyHint is a cheap pre-check: only messages that mention a
// secret-looking word are decoded and walked.
var secretKeyHint = regexp.MustCompile(`(?i)(key|token|secret|passw|auth|cookie|credential)`)

// redactMessage blanks secret string values in an ACP message: fields whose
// key looks secret, and {"name": <secret-looking>, "value": ...} pairs (the
// headers and env of MCP servers in session/new). The message is returned
// unchanged (byte for byte) when nothing was redacted.
func redactMessage(msg json.RawMessage) json.RawMessage {
	if !secretKeyHint.Match(msg) {
		return msg
	}
	dec := json.NewDecoder(bytes.NewReader(msg))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return msg
	}
	if !redactValue(v) {
		return msg
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return msg
	}
	return json.RawMessage(bytes.TrimRight(buf.Bytes(), "\n"))
}

// redactValue walks v and blanks secret strings in place; it reports
// whether it changed anything.
func redactValue(v any) bool {
	changed := false
	switch v := v.(type) {
	case map[string]any:
		if name, ok := v["name"].(string); ok && secrets.IsName(name) {
			if s, ok := v["value"].(string); ok && s != Redacted {
				v["value"] = Redacted
				changed = true
			}
		}
		for k, child := range v {
			if s, ok := child.(string); ok && secrets.IsName(k) && s != "" && s != Redacted {
				v[k] = Redacted
				changed = true
				continue
			}
			if redactValue(child) {
				changed = true
			}
		}
	case []any:
		for _, child := range v {
			if redactValue(child) {
				changed = true
			}
		}
	}
	return changed
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

// scrub replaces known secrets and secret patterns in line.
func (s *secretSet) scrub(line []byte) []byte {
	for _, v := range s.values {
		if bytes.Contains(line, v) {
			line = bytes.ReplaceAll(line, v, []byte(Redacted))
		}
	}
	for _, p := range secretPatterns {
		line = p.re.ReplaceAll(line, p.repl)
	}
	return line
}
