package acp

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	acpsdk "github.com/coder/acp-go-sdk"
)

// A change's text is budgeted by its size as sent: the SDK writes <, >, &
// and control characters as six bytes each, so under 2 MiB of such text
// made an update line of over 11 MiB, past the editor's 10 MiB. Cut texts
// still end at a line end.
func TestLimitContentCountsEscapes(t *testing.T) {
	t.Parallel()
	oldText := strings.Repeat("<<>>&&<<>>&&\n", (1<<20)/13)
	newText := strings.Repeat("\x1b\x1b<<>>&&\x01\x02\n", (1<<20)/13)
	got := limitContent([]acpsdk.ToolCallContent{acpsdk.ToolDiffContent("/w/a.html", newText, oldText)})
	line, err := json.Marshal(acpsdk.SessionNotification{SessionId: "s",
		Update: acpsdk.UpdateToolCall("call", acpsdk.WithUpdateContent(got))})
	if err != nil {
		t.Fatal(err)
	}
	if len(line) > maxUpdateTextBytes+64<<10 {
		t.Errorf("update of %d bytes (%.1f MiB) for %d bytes of text, want at most the %d-byte budget and an envelope",
			len(line), float64(len(line))/(1<<20), len(oldText)+len(newText), maxUpdateTextBytes)
	}
	if len(got) != 2 || got[0].Diff == nil || got[1].Content == nil {
		t.Fatalf("content = %d items, want the cut diff and a note", len(got))
	}
	d := got[0].Diff
	if d.NewText == "" || !strings.HasSuffix(d.NewText, "\n") || !strings.HasPrefix(newText, d.NewText) ||
		d.OldText == nil || !strings.HasSuffix(*d.OldText, "\n") || !strings.HasPrefix(oldText, *d.OldText) {
		t.Errorf("cut diff: new %d bytes, old %v: want prefixes of both ending at a line end", len(d.NewText), d.OldText != nil)
	}

	// Plain text (its newline two bytes as sent) fills the budget as before.
	plain := strings.Repeat("x", 1<<20-2) + "\n"
	got = limitContent([]acpsdk.ToolCallContent{acpsdk.ToolDiffContent("/w/a.txt", plain, plain)})
	if len(got) != 1 {
		t.Errorf("2 MiB of plain text was cut: %d items", len(got))
	}
}

// sentLen counts what encoding/json writes, or a few bytes more (\b and \f),
// never fewer; sentPrefix cuts at a rune boundary within the count.
func TestSentLen(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "plain", "tab\tquote\"back\\slash\r\n", "<a href=\"x\">&</a>", "\x00\x01\x1b\x7f",
		"\b\f", "héllo wörld 日本", "\u2028\u2029", "bad \xff\xfe utf-8", "\xe6\x97"} {
		enc, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := sentLen(s), len(enc)-2; got < want || got > want+8 {
			t.Errorf("sentLen(%q) = %d, json.Marshal writes %d", s, got, want)
		}
		for n := range sentLen(s) + 2 {
			p := sentPrefix(s, n)
			_, size := utf8.DecodeRuneInString(s[p:])
			if sentLen(s[:p]) > n || p < len(s) && (utf8.ValidString(s) && !utf8.RuneStart(s[p]) || sentLen(s[:p+size]) <= n) {
				t.Errorf("sentPrefix(%q, %d) = %d: not the longest prefix within %d bytes as sent", s, n, p, n)
			}
		}
	}
}
