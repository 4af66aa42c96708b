package fsops

import (
	"bytes"
	"context"
	"fmt"
	"strings"
)

// The line tools (replace_text_lines, insert_text_lines, append_text_file)
// address a file by line numbers and check what they change: the caller
// passes the hash of the content it read and the exact text of the lines
// it means.
//
// A line's content is its text without the terminator ("\n" or "\r\n"); a
// UTF-8 BOM belongs to no line. Text the caller sends is turned into whole
// lines ending with the file's dominant line terminator, except that a file
// without a final newline keeps lacking one when the change reaches its end.

// ReplaceTextLines implements replace_text_lines: lines [start, end) must
// hold exactly old and are replaced by new (whole lines; "" deletes them).
func (e *Engine) ReplaceTextLines(ctx context.Context, p ReplaceLinesParams, before BeforeWrite) (*LinesResult, error) {
	path, err := checkLineCall(p.Path, p.Hash)
	if err != nil {
		return nil, err
	}
	if len(p.Lines) != 2 {
		return nil, invalidRequest(fmt.Sprintf("lines must be [start, end], got %d numbers", len(p.Lines)),
			"Pass lines as [start, end): 1-based, end exclusive, e.g. [3, 5] for lines 3 and 4; negative numbers count from the end, end 0 means to the end of the file.")
	}
	if err := checkText("old", p.Old); err != nil {
		return nil, err
	}
	if err := checkText("new", p.New); err != nil {
		return nil, err
	}
	return e.lineEdit(ctx, ToolReplaceTextLines, path, p.Hash, before, func(t *textLines) (int, int, []byte, error) {
		start, end, err := t.resolveRange(p.Lines[0], p.Lines[1])
		if err != nil {
			return 0, 0, nil, err
		}
		if err := t.checkOld(start, end, p.Old); err != nil {
			return 0, 0, nil, err
		}
		from, to := t.start(start), t.start(end)
		repl := t.wholeLines(p.New)
		if end > t.n && !t.finalNewline() {
			// The change reaches the end of a file without a final newline.
			if len(repl) > 0 {
				repl = bytes.TrimSuffix(repl, []byte(t.eol))
			} else if start > 1 {
				from = t.contentEnd(start - 1)
			}
		}
		return from, to, repl, nil
	})
}

// InsertTextLines implements insert_text_lines: content is inserted as
// whole lines before line `line`, whose content must be anchor.
func (e *Engine) InsertTextLines(ctx context.Context, p InsertLinesParams, before BeforeWrite) (*LinesResult, error) {
	path, err := checkLineCall(p.Path, p.Hash)
	if err != nil {
		return nil, err
	}
	if err := checkText("anchor", p.Anchor); err != nil {
		return nil, err
	}
	if err := checkText("content", p.Content); err != nil {
		return nil, err
	}
	if p.Content == "" {
		return nil, invalidRequest("content is empty", "Give the lines to insert.")
	}
	return e.lineEdit(ctx, ToolInsertTextLines, path, p.Hash, before, func(t *textLines) (int, int, []byte, error) {
		line := p.Line
		if line < 0 {
			line += t.n + 1
		}
		if t.n == 0 || p.Line == 0 || line < 1 || line > t.n {
			return 0, 0, nil, invalidRequest(fmt.Sprintf("Line %d is not a line of the file (%d lines)", p.Line, t.n),
				fmt.Sprintf("insert_text_lines inserts before an existing line: use a line from 1 to %d (or -1 for the last line); "+
					"to add lines at the end use append_text_file.", t.n))
		}
		if anchor := trimLine(p.Anchor); anchor != string(t.content(line)) {
			return 0, 0, nil, &Error{Code: CodeAnchorMismatch,
				Message: fmt.Sprintf("Line %d contains %q, not %q", line, t.content(line), anchor),
				Hint:    t.whereIs(anchor) + " Re-read the file with read_text_file and pass the exact content of the line to insert before as anchor."}
		}
		at := t.start(line)
		return at, at, t.wholeLines(p.Content), nil
	})
}

// AppendTextFile implements append_text_file: content is added at the end
// of the file, starting on a new line. The file keeps ending with a newline
// if it did (or was empty), and keeps lacking one if it did.
func (e *Engine) AppendTextFile(ctx context.Context, p AppendParams, before BeforeWrite) (*LinesResult, error) {
	path, err := checkLineCall(p.Path, p.Hash)
	if err != nil {
		return nil, err
	}
	if err := checkText("content", p.Content); err != nil {
		return nil, err
	}
	if p.Content == "" {
		return nil, invalidRequest("content is empty", "Give the text to append.")
	}
	return e.lineEdit(ctx, ToolAppendTextFile, path, p.Hash, before, func(t *textLines) (int, int, []byte, error) {
		end := len(t.data)
		add := t.wholeLines(p.Content)
		if !t.finalNewline() {
			add = append([]byte(t.eol), bytes.TrimSuffix(add, []byte(t.eol))...)
		}
		return end, end, add, nil
	})
}

// lineEdit runs a line tool: compute returns the byte range of the old
// content to replace and its replacement.
func (e *Engine) lineEdit(ctx context.Context, tool, path, hash string, before BeforeWrite,
	compute func(t *textLines) (from, to int, repl []byte, err error)) (*LinesResult, error) {
	c, err := e.mutate(ctx, tool, path, hash, before, func(path string, old []byte) ([]byte, []region, error) {
		from, to, repl, err := compute(newTextLines(old))
		if err != nil {
			return nil, nil, err
		}
		if size := int64(len(old) - (to - from) + len(repl)); size > MaxEditBytes {
			return nil, nil, resultTooLargeError(path, size)
		}
		out := make([]byte, 0, len(old)-(to-from)+len(repl))
		out = append(append(append(out, old[:from]...), repl...), old[to:]...)
		return out, []region{{oldStart: from, oldEnd: to, newStart: from, newEnd: from + len(repl)}}, nil
	})
	if err != nil {
		return nil, err
	}
	return &LinesResult{Success: true, Hash: HashOf(c.New), TotalLines: CountLines(c.New), Diff: c.Diff}, nil
}

func checkLineCall(path, hash string) (string, error) {
	clean, err := checkPath(path)
	if err != nil {
		return "", err
	}
	if hash == "" {
		return "", invalidRequest("hash is required",
			"Read the file with read_text_file first and pass the hash it returned; the line tools only change content you have seen.")
	}
	return clean, nil
}

// textLines indexes the lines of a file's content.
type textLines struct {
	data   []byte
	starts []int // starts[k-1] is the offset of line k; starts[n] = len(data)
	n      int
	eol    string
}

func newTextLines(data []byte) *textLines {
	body := len(data) - len(bytes.TrimPrefix(data, utf8BOM))
	t := &textLines{data: data, eol: lineEnding(data)}
	t.starts = make([]int, 0, countLines(data)+1)
	for pos := body; pos < len(data); {
		t.starts = append(t.starts, pos)
		nl := bytes.IndexByte(data[pos:], '\n')
		if nl < 0 {
			break
		}
		pos += nl + 1
	}
	t.n = len(t.starts)
	t.starts = append(t.starts, len(data))
	return t
}

// start returns the offset where line k starts (k = n+1: the end).
func (t *textLines) start(k int) int { return t.starts[k-1] }

// contentEnd returns the offset where line k's terminator starts.
func (t *textLines) contentEnd(k int) int {
	end := t.starts[k]
	if end > t.starts[k-1] && t.data[end-1] == '\n' {
		end--
		if end > t.starts[k-1] && t.data[end-1] == '\r' {
			end--
		}
	}
	return end
}

// content returns line k without its terminator.
func (t *textLines) content(k int) []byte { return t.data[t.starts[k-1]:t.contentEnd(k)] }

func (t *textLines) finalNewline() bool {
	return t.n == 0 || t.data[len(t.data)-1] == '\n'
}

// resolveRange turns [start, end) as given (1-based, negative from the end,
// end 0 = open) into 1-based line numbers with start < end <= n+1.
func (t *textLines) resolveRange(start, end int) (int, int, error) {
	s, e := start, end
	if s < 0 {
		s += t.n + 1
	}
	switch {
	case e < 0:
		e += t.n + 1
	case e == 0:
		e = t.n + 1
	}
	if start == 0 || s < 1 || e > t.n+1 || s >= e {
		return 0, 0, invalidRequest(fmt.Sprintf("Invalid line range [%d, %d) for a file of %d lines", start, end, t.n),
			fmt.Sprintf("lines is [start, end): 1-based, end exclusive, negative counts from the end, end 0 means to the end of the file "+
				"(e.g. [2, 4] is lines 2 and 3, [-3, 0] the last three lines). It must name at least one of the file's %d lines; "+
				"to add lines use insert_text_lines or append_text_file.", t.n))
	}
	return s, e, nil
}

// checkOld verifies that old is the content of lines [start, end), joined
// by line breaks, with or without a final line break; CRLF and LF breaks
// in old are treated alike.
func (t *textLines) checkOld(start, end int, old string) error {
	old = strings.ReplaceAll(strings.TrimPrefix(old, "\uFEFF"), "\r\n", "\n")
	var want strings.Builder
	for k := start; k < end; k++ {
		if k > start {
			want.WriteByte('\n')
		}
		want.Write(t.content(k))
	}
	if old == want.String() || old == want.String()+"\n" {
		return nil
	}
	got := strings.Split(strings.TrimSuffix(old, "\n"), "\n")
	hint := fmt.Sprintf("Re-read the lines with read_text_file (line=%d, limit=%d) and pass their exact content as old, "+
		"or fix lines to point at the text you mean.", start, end-start)
	for k := 0; ; k++ {
		line := start + k
		switch {
		case k == len(got) && line == end:
			// Same lines, so the difference is the final line break.
			return &Error{Code: CodeOldMismatch,
				Message: fmt.Sprintf("Lines %d-%d do not match old", start, end-1), Hint: hint}
		case k == len(got):
			return &Error{Code: CodeOldMismatch,
				Message: fmt.Sprintf("Line %d contains %q, not the end of old (old has %d lines, the range %d)", line, t.content(line), len(got), end-start),
				Hint:    hint}
		case line == end:
			return &Error{Code: CodeOldMismatch,
				Message: fmt.Sprintf("old continues with %q past the end of the range at line %d (old has %d lines, the range %d)", got[k], end-1, len(got), end-start),
				Hint:    hint}
		case got[k] != string(t.content(line)):
			msg := fmt.Sprintf("Line %d contains %q, not %q", line, t.content(line), got[k])
			return &Error{Code: CodeOldMismatch, Message: msg, Hint: t.whereIs(got[0]) + " " + hint}
		}
	}
}

// whereIs says on which lines (up to five) content appears, to help the
// caller fix its line numbers.
func (t *textLines) whereIs(content string) string {
	var at []string
	for k := 1; k <= t.n && len(at) < 5; k++ {
		if string(t.content(k)) == content {
			at = append(at, fmt.Sprint(k))
		}
	}
	if len(at) == 0 || content == "" {
		return fmt.Sprintf("%q is not the content of any line.", content)
	}
	return fmt.Sprintf("%q is the content of line %s.", content, strings.Join(at, ", "))
}

// wholeLines turns text into whole lines with the file's terminator.
func (t *textLines) wholeLines(text string) []byte {
	if text == "" {
		return nil
	}
	text = strings.ReplaceAll(text, "\r\n", "\n")
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	if t.eol != "\n" {
		text = strings.ReplaceAll(text, "\n", t.eol)
	}
	return []byte(text)
}

// trimLine removes a BOM and one final line break from a line's text.
func trimLine(s string) string {
	s = strings.TrimPrefix(s, "\uFEFF")
	s = strings.TrimSuffix(s, "\n")
	return strings.TrimSuffix(s, "\r")
}
