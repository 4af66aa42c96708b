package acp

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	acpsdk "github.com/coder/acp-go-sdk"
)

// Every message the agent writes stays well under the 10 MiB line limit ACP
// clients (and the SDK) enforce, so a huge write cannot make the editor drop
// the connection: tool-call content and raw input are trimmed for display.
const (
	// maxUpdateTextBytes bounds the old+new text of one tool-call update,
	// counted as sent (sentLen): escaping can make text six times larger.
	maxUpdateTextBytes = 2 << 20
	// maxRawInputBytes bounds the raw arguments echoed in a tool call;
	// longer string arguments are cut to maxRawStringBytes.
	maxRawInputBytes  = 64 << 10
	maxRawStringBytes = 4 << 10
)

// trimRawInput returns the arguments as they are when small, else with
// long strings (file contents) cut: the editor shows the diff, not the
// content argument.
func trimRawInput(raw json.RawMessage) any {
	if len(raw) <= maxRawInputBytes {
		return raw
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return map[string]any{"truncated": fmt.Sprintf("%d bytes of arguments", len(raw))}
	}
	return trimStrings(v)
}

func trimStrings(v any) any {
	switch x := v.(type) {
	case string:
		return clip(x, maxRawStringBytes)
	case []any:
		for i := range x {
			x[i] = trimStrings(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = trimStrings(x[k])
		}
	}
	return v
}

// limitContent keeps tool-call content within maxUpdateTextBytes of text
// as sent: diffs past the budget are cut at a line end and the rest is left
// out, with a note saying so.
func limitContent(contents []acpsdk.ToolCallContent) []acpsdk.ToolCallContent {
	budget := maxUpdateTextBytes
	for i, c := range contents {
		if c.Diff == nil {
			continue
		}
		old := ""
		if c.Diff.OldText != nil {
			old = *c.Diff.OldText
		}
		size := sentLen(old) + sentLen(c.Diff.NewText)
		if size <= budget {
			budget -= size
			continue
		}
		d := *c.Diff
		newText := cutAtLine(d.NewText, sentPrefix(d.NewText, budget/2))
		d.NewText = newText
		if d.OldText != nil {
			oldText := cutAtLine(old, sentPrefix(old, budget-sentLen(newText)))
			d.OldText = &oldText
		}
		out := append(contents[:i:i], acpsdk.ToolCallContent{Diff: &d})
		note := fmt.Sprintf("The change is too large to show in full here: the first %d KiB are shown. "+
			"Review the file in the editor.", maxUpdateTextBytes>>10)
		return append(out, acpsdk.ToolContent(acpsdk.TextBlock(note)))
	}
	return contents
}

// cutAtLine returns the longest prefix of s of at most n bytes that ends at
// a line end (or s cut at a rune boundary when its first line is longer).
func cutAtLine(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if i := strings.LastIndexByte(s[:n], '\n'); i >= 0 {
		return s[:i+1]
	}
	return cutAtRune(s, n)
}

// clip returns s when it has at most n bytes, else its first n (at a rune
// boundary) and how long it was.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return cutAtRune(s, n) + fmt.Sprintf("… (%d bytes in all)", len(s))
}

func cutAtRune(s string, n int) string {
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// sentLen is how many bytes s takes inside a JSON string as the SDK
// writes it (encoding/json): quotes, backslashes and \n, \r, \t as two
// bytes; <, >, &, other control characters, U+2028, U+2029 and invalid
// UTF-8 (written as U+FFFD) as six. It may count a few too many, never too
// few.
func sentLen(s string) int {
	return sentPrefixLen(s, -1)
}

// sentPrefix is the length of the longest prefix of s whose sentLen is at
// most n; it ends at a rune boundary.
func sentPrefix(s string, n int) int {
	return sentPrefixLen(s, n)
}

// sentPrefixLen walks s: with n < 0 it returns sentLen(s), else
// sentPrefix(s, n).
func sentPrefixLen(s string, n int) int {
	sent := 0
	for i := 0; i < len(s); {
		c := s[i]
		w, size := 1, 1
		switch {
		case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
			w = 2
		case c < 0x20 || c == '<' || c == '>' || c == '&':
			w = 6
		case c >= utf8.RuneSelf:
			var r rune
			r, size = utf8.DecodeRuneInString(s[i:])
			w = size
			if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
				w = 6
			}
		}
		if n >= 0 && sent+w > n {
			return i
		}
		sent += w
		i += size
	}
	if n >= 0 {
		return len(s)
	}
	return sent
}
