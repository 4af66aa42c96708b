package backend

import "time"

// MCPLoginTimeout bounds how long LoginMCPServer waits for the user to
// sign in on the server's page.
const MCPLoginTimeout = 5 * time.Minute

// HookList is the codex hooks of a workspace, and the hooks files codex
// could not read.
type HookList struct {
	Hooks    []Hook
	Warnings []string
	Errors   []HookError
}

// HookError is a hooks file codex could not read.
type HookError struct {
	Path    string
	Message string
}

// Hook is one codex hook: what codex runs (Handler: HookCommand's Command;
// HookMCPTool's Server and Tool; "prompt" or "agent"), on which event, and
// whether the user trusts it.
type Hook struct {
	Key        string // codex's key of the hook (its file, event and place in it)
	Event      string // codex's event name: preToolUse, postToolUse, sessionStart, stop, …
	Matcher    string // which tools (or sources) it applies to; "": all
	Handler    string
	Command    string
	Server     string
	Tool       string
	Source     string // project, user, plugin, system, …
	SourcePath string // the file that defines it
	Enabled    bool
	Managed    bool   // set by an administrator: trusted without the user
	Timeout    int64  // seconds
	Hash       string // its current hash: what trusting it records
	Trust      string // HookTrusted, HookUntrusted, HookModified or HookManaged
}

// Hook handlers and trust statuses, as codex names them.
const (
	HookCommand = "command"
	HookMCPTool = "mcpTool"

	HookTrusted   = "trusted"
	HookUntrusted = "untrusted"
	HookModified  = "modified" // trusted once, changed since
	HookManaged   = "managed"
)

// NeedsTrust reports whether codex runs the hook only once the user trusts
// it (again).
func (h Hook) NeedsTrust() bool { return h.Trust == HookUntrusted || h.Trust == HookModified }
