// Package secrets recognises where secrets sit in configuration: variable,
// header and key names that hold them, their values inside codex -c
// arguments, and API keys and bearer tokens in any text. Transcripts and logs
// use it to leave secrets out.
package secrets

import (
	"strings"

	"github.com/codexacp/codexacp/internal/lazyregexp"
)

// Redacted replaces a secret value.
const Redacted = "[REDACTED]"

// secretName matches names (environment variables, header names, JSON and
// TOML keys) whose values are secrets.
var secretName = lazyregexp.New(`(?i)(key|token|secret|passw|auth|cookie|credential)`)

// MentionsName reports whether b contains a word that IsName looks for
// anywhere (case-insensitively): a cheap test before decoding a message to
// look for secret fields. A false answer means no name in b holds a secret.
func MentionsName(b []byte) bool { return secretName.Match(b) }

// IsName reports whether a variable, header or field called name holds
// a secret. Names of configuration keys that hold the *name* of a variable
// (codex's env_key, bearer_token_env_var) are not secrets.
func IsName(name string) bool {
	lower := strings.ToLower(name)
	if strings.HasSuffix(lower, "env_var") || strings.HasSuffix(lower, "env_key") {
		return false
	}
	return secretName.MatchString(name)
}

// IsFormField reports whether a free-text field of a form (an MCP server's
// elicitation) asks for a secret: its name or its title names one. MCP has
// no password format to say so.
func IsFormField(key, title string) bool { return IsName(key) || IsName(title) }

// tomlSecret matches key = "value" (or 'value', or a triple-quoted string)
// pairs in codex -c arguments, e.g. http_headers={"Authorization"="Bearer x"}
// or env={API_KEY="x"}.
var tomlSecret = lazyregexp.New(`("?)([A-Za-z0-9_.-]+)("?\s*=\s*)("""[\s\S]*?"""|'''[\s\S]*?'''|"(?:[^"\\]|\\.)*"|'[^']*')`)

// RedactConfigArg blanks the values of secret-looking keys in a -c argument. A
// whole "dotted.key=value" whose last key part looks secret loses its value
// whatever its form: codex also takes unquoted values as strings.
func RedactConfigArg(arg string) string {
	if key, value, ok := strings.Cut(arg, "="); ok && !strings.ContainsAny(key, " \t{[\"'") {
		last := key[strings.LastIndexByte(key, '.')+1:]
		v := strings.TrimSpace(value)
		if IsName(last) && v != "" && v[0] != '{' && v[0] != '[' {
			return key + `="` + Redacted + `"`
		}
	}
	return tomlSecret.ReplaceAllStringFunc(arg, func(m string) string {
		sub := tomlSecret.FindStringSubmatch(m)
		if !IsName(sub[2]) {
			return m
		}
		return sub[1] + sub[2] + sub[3] + `"` + Redacted + `"`
	})
}

// valuePatterns find secrets by their form, whatever holds them:
// OpenAI-style API keys and bearer tokens (the word "Bearer" is kept).
var valuePatterns = []struct {
	re   *lazyregexp.Regexp
	repl []byte
}{
	{lazyregexp.New(`\bsk-[A-Za-z0-9][A-Za-z0-9_-]{15,}`), []byte(Redacted)},
	{lazyregexp.New(`(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}`), []byte("${1}" + Redacted)},
}

// RedactValues replaces API keys (sk-…) and bearer tokens in b by Redacted.
// It returns b itself when there is none.
func RedactValues(b []byte) []byte {
	for _, p := range valuePatterns {
		if p.re.Match(b) {
			b = p.re.ReplaceAll(b, p.repl)
		}
	}
	return b
}
