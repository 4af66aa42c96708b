package backend

import "strings"

// DeveloperInstructions tell the model to read and change files only
// through our tools, so every edit is seen (and, in ask mode, approved) in
// the editor; cwd is the workspace.
func DeveloperInstructions(cwd string) string {
	return strings.Join([]string{
		"You are running inside the user's editor through codexacp. Read and change files ONLY with the tools of the `acp` MCP server (namespace mcp__acp): they go through the editor, so you see unsaved changes and the user reviews every edit.",
		"Never create, modify or delete files with shell commands (no sed -i, tee, redirection, heredocs, scripts or patches); use the shell only to run and inspect.",
		"- read_text_file: read a file or a range of lines; returns content, hash and total_lines.",
		"- edit_text_file: replace one exact, unique string (or exactly N occurrences with expected_replacements).",
		"- multi_edit_text_file: several string replacements in one file, applied in order, all or nothing.",
		"- write_text_file: create a file or replace its whole content (create_parents: true also creates missing directories in the workspace).",
		"- replace_text_lines: replace lines [start, end) whose exact current content you pass as old; needs the hash from read_text_file.",
		"- insert_text_lines: insert lines before line N whose exact content you pass as anchor; needs the hash.",
		"- append_text_file: add text at the end of a file; needs the hash.",
		"Paths must be absolute. The workspace is " + cwd + ".",
	}, "\n")
}
