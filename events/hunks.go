package events

import (
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"
)

// HunkContents turns a unified diff of the file at path into one ACP diff
// content per hunk, old and new text each made of the hunk's context and
// changed lines: the changed regions, reviewable as diffs where the whole
// file's old and new text are not at hand (a large file's edit, live; a
// file tool's edit in a loaded session, whose rollout keeps the diff only).
func HunkContents(path, diff string) []acpsdk.ToolCallContent {
	var out []acpsdk.ToolCallContent
	var old, new strings.Builder
	lastSide := byte(0)
	inHunk := false // the "--- "/"+++ " headers come only before the first hunk
	flush := func() {
		if old.Len() > 0 || new.Len() > 0 {
			out = append(out, acpsdk.ToolDiffContent(path, new.String(), old.String()))
		}
		old.Reset()
		new.Reset()
	}
	trimLast := func(b *strings.Builder) {
		s := strings.TrimSuffix(b.String(), "\n")
		b.Reset()
		b.WriteString(s)
	}
	for _, line := range strings.SplitAfter(diff, "\n") {
		switch {
		case !inHunk && (strings.HasPrefix(line, "--- ") || strings.HasPrefix(line, "+++ ")):
		case strings.HasPrefix(line, "@@"):
			inHunk = true
			flush()
		case strings.HasPrefix(line, `\`):
			// "\ No newline at end of file" applies to the line before it.
			switch lastSide {
			case ' ':
				trimLast(&old)
				trimLast(&new)
			case '-':
				trimLast(&old)
			case '+':
				trimLast(&new)
			}
		case line == "":
		default:
			lastSide = line[0]
			text := line[1:]
			switch lastSide {
			case ' ':
				old.WriteString(text)
				new.WriteString(text)
			case '-':
				old.WriteString(text)
			case '+':
				new.WriteString(text)
			}
		}
	}
	flush()
	return out
}
