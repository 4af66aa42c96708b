// Package secrets recognises where secrets sit in configuration: variable,
// header and key names that hold them, and their values inside codex -c
// arguments. Transcripts and logs use it to leave secrets out.
package secrets

import (
	"regexp"
	"strings"
)

// Redacted replaces a secret value.
const Redacted = "[REDACTED]"

// secretName matches names (environment variables, header names, JSON and
// TOML keys) whose values are secrets.
var secretName = regexp.MustCompile(`(?i)(key|token|secret|passw|auth|cookie|credential)`)

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

// tomlSecret matches key = "value" (or 'value', or a triple-quoted string)
// pairs in codex -c arguments, e.g. http_headers={"Authorization"="Bearer x"}
// or env={API_KEY="x"}.
var tomlSecret = regexp.MustCompile(`("?)([A-Za-z0-9_.-]+)("?\s*=\s*)("""[\s\S]*?"""|'''[\s\S]*?'''|"(?:[^"\\]|\\.)*"|'[^']*')`)

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
