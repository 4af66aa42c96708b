// Package backtrace removes the Rust backtraces codex appends to its stderr
// and to error messages (with RUST_BACKTRACE set, or on a panic), so that
// what the editor and the logs show is the error itself.
package backtrace

import "strings"

// Strip removes Rust backtraces from s: a line "Stack backtrace:" (any case,
// any indentation) and the indented frame lines and blank lines after it,
// the hints about RUST_BACKTRACE, and blank space around the rest. Lines
// after a backtrace that are not indented (more text) are kept; a mention of
// "Stack backtrace:" inside a line is not a backtrace.
func Strip(s string) string {
	var out []string
	inTrace := false
	for line := range strings.SplitSeq(s, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.EqualFold(trimmed, "stack backtrace:"):
			inTrace = true
			for len(out) > 0 && strings.TrimSpace(out[len(out)-1]) == "" {
				out = out[:len(out)-1]
			}
			continue
		case inTrace && (trimmed == "" || line[0] == ' ' || line[0] == '\t'):
			continue
		case strings.HasPrefix(trimmed, "note: run with `RUST_BACKTRACE=") ||
			strings.HasPrefix(trimmed, "note: Some details are omitted, run with `RUST_BACKTRACE="):
			continue
		}
		inTrace = false
		out = append(out, line)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}
