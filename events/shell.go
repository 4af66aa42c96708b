package events

import (
	"path"
	"strings"
)

// wrapperShells are the shells codex wraps commands in (`/bin/bash -lc '…'`,
// `/bin/zsh -lc '…'`, `bash -c …`).
var wrapperShells = map[string]bool{"bash": true, "zsh": true, "sh": true, "dash": true, "ksh": true}

// UnwrapShellCommand returns the script of a `SHELL [-flags] -c SCRIPT`
// command line such as `/bin/bash -lc 'echo hi'` (giving `echo hi`), with the
// shell quoting of SCRIPT undone. Any other command line, or one whose
// quoting is broken, is returned unchanged.
func UnwrapShellCommand(command string) string {
	words, ok := splitShellWords(command)
	if !ok || len(words) < 3 || !wrapperShells[path.Base(words[0])] {
		return command
	}
	// Flags before the script: single-letter options that take no argument,
	// one of them c (-c, -lc, -l -c, -ec).
	for i := 1; i < len(words); i++ {
		w := words[i]
		if len(w) < 2 || w[0] != '-' || strings.Trim(w[1:], "ceilux") != "" {
			return command
		}
		if strings.Contains(w, "c") {
			// Extra words after the script would become $0, $1...: not a
			// plain wrapper, so keep the whole line.
			if i+2 != len(words) {
				return command
			}
			script := strings.TrimSpace(words[i+1])
			if script == "" {
				return command
			}
			return script
		}
	}
	return command
}

// splitShellWords splits s into words the way a POSIX shell would, for the
// quoting codex produces: single quotes, double quotes (where \ escapes
// $ ` " \ and newline) and backslash escapes. ok is false for an unterminated
// quote or a trailing backslash.
func splitShellWords(s string) (words []string, ok bool) {
	var (
		cur    strings.Builder
		inWord bool
	)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, false
			}
			cur.WriteString(s[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
					i++
					if s[i] == '\n' {
						continue // line continuation
					}
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, false
			}
			inWord = true
		case c == '\\':
			if i+1 >= len(s) {
				return nil, false
			}
			i++
			if s[i] != '\n' { // backslash-newline joins lines
				cur.WriteByte(s[i])
				inWord = true
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, true
}
