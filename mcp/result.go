package mcp

import (
	"fmt"
	"strings"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codexacp/codexacp/fsops"
)

// ErrorResult is the structuredContent of a failed call.
type ErrorResult struct {
	Error ErrorBody `json:"error"`
}

// ErrorBody is what the model reads about a failure: the seed's code and
// message, and a hint saying what to do next (never empty).
type ErrorBody struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Hint    string `json:"hint"`
}

// toolError turns any error from a call into the *fsops.Error the model
// and the observer get (a copy), with a hint filled in when there is none.
func toolError(err error) *fsops.Error {
	te := *fsops.AsError(err)
	if te.Hint == "" {
		te.Hint = defaultHint(&te)
	}
	return &te
}

// defaultHint says what the model can do about an error of this kind.
func defaultHint(e *fsops.Error) string {
	switch e.Code {
	case fsops.CodeNotFound:
		return "Check the path: it must be absolute and exist. To create a new file use write_text_file (with create_parents: true if its directory does not exist yet)."
	case fsops.CodePermission:
		return "The change was not allowed (rejected by the user, the session's mode, or the file system) and nothing was written. Do not retry the same change; ask the user how to proceed."
	case fsops.CodeIsDirectory:
		return "The path is a directory; give the path of a file."
	case fsops.CodeBinary:
		return "The file is not UTF-8 text; these tools only read and edit text files."
	case fsops.CodeDiskFull:
		return "The disk is full and nothing was written; tell the user."
	case fsops.CodeStringNotFound:
		return "old_string must match the file exactly, including whitespace, indentation and line breaks. Read the file with read_text_file and copy the text from it."
	case fsops.CodeMatchCount:
		return "Add surrounding lines to old_string so that it matches exactly once, or set expected_replacements to the number of occurrences to replace them all."
	case fsops.CodeConflict:
		return "An edit partly overlaps text written by an earlier edit of the same call; merge those edits into one."
	case fsops.CodeStale:
		return "The file changed since you read it. Call read_text_file again and retry with the new hash."
	case fsops.CodeOldMismatch:
		return "Call read_text_file for those lines and pass their exact current content as old."
	case fsops.CodeAnchorMismatch:
		return "Call read_text_file and pass the exact current content of that line as anchor."
	case fsops.CodeInvalidRequest:
		return "Fix the arguments as the message says and call again."
	}
	return "Something went wrong on the agent's side and nothing was written; retrying may help. If it keeps failing, tell the user."
}

// errorResult is what the model gets for a failed call: isError, the error
// in structuredContent (all Codex shows), the same words as text.
func errorResult(e *fsops.Error) *mcpsdk.CallToolResult {
	body := ErrorBody{Code: e.Code, Message: e.Message, Hint: e.Hint}
	return &mcpsdk.CallToolResult{
		IsError:           true,
		StructuredContent: ErrorResult{Error: body},
		Content:           []mcpsdk.Content{&mcpsdk.TextContent{Text: fmt.Sprintf("Error %d: %s\nHint: %s", body.Code, body.Message, body.Hint)}},
	}
}

// successResult carries the fsops result as structuredContent and a one-line
// summary as text, for clients that only show text.
func successResult(c *Call, result any) *mcpsdk.CallToolResult {
	return &mcpsdk.CallToolResult{
		StructuredContent: result,
		Content:           []mcpsdk.Content{&mcpsdk.TextContent{Text: summary(c, result)}},
	}
}

func summary(c *Call, result any) string {
	switch r := result.(type) {
	case *fsops.ReadResult:
		s := fmt.Sprintf("Read %s: lines %d-%d of %d, hash %s", c.Path, r.StartLine, r.EndLine, r.TotalLines, r.Hash)
		if r.HasMore {
			s += ". " + r.Hint
		}
		return s
	case *fsops.WriteResult:
		verb := "Overwrote"
		if r.Created {
			verb = "Created"
		}
		dirs := ""
		if len(r.CreatedDirs) > 0 {
			dirs = fmt.Sprintf(" (and the directories %s)", strings.Join(r.CreatedDirs, ", "))
		}
		return fmt.Sprintf("%s %s%s: %d bytes, %d lines, hash %s", verb, c.Path, dirs, r.BytesWritten, r.TotalLines, r.Hash)
	case *fsops.EditResult:
		return fmt.Sprintf("Edited %s: %d replacement(s) at lines %d-%d, now %d lines, hash %s",
			c.Path, r.Replacements, r.LineRange.Start, r.LineRange.End, r.TotalLines, r.Hash)
	case *fsops.MultiEditResult:
		return fmt.Sprintf("Edited %s: %d edit(s) applied, now %d lines, hash %s", c.Path, r.AppliedCount, r.TotalLines, r.Hash)
	case *fsops.LinesResult:
		return fmt.Sprintf("Edited %s: now %d lines, hash %s", c.Path, r.TotalLines, r.Hash)
	}
	return fmt.Sprintf("%s succeeded", c.Tool)
}
