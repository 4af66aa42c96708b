package backend

import (
	"github.com/codexacp/codexacp/codex"
	"github.com/codexacp/codexacp/internal/images"
)

// Turn is one prompt for codex, with everything the session decides about
// how it runs. Each backend renders it in its own terms (command-line
// overrides for exec, thread and turn parameters for the app-server).
type Turn struct {
	SessionID string
	Cwd       string   // absolute; the workspace root
	Dirs      []string // additional workspace directories (writable in auto mode)
	ThreadID  string   // the codex thread to continue; empty starts one
	Prompt    string
	Images    []Image // attached to the prompt, checked (internal/images)
	Plan      bool    // plan mode: codex plans and edits nothing (Plan)
	Mode      Mode
	User      codex.UserConfig // the user's own settings, under Mode (ModePolicy)
	Model     string           // empty: codex's configured model
	Effort    string           // reasoning effort; empty: the model's default
	// ServiceTier is the fast-mode picker's value: a tier id of the model
	// ("priority"), ServiceTierOff (no tier), or empty (the user never
	// chose: codex's configuration decides). Only a backend with FastMode
	// applies it.
	ServiceTier string

	// Tools is the embedded file-tool server for this session; nil when
	// codex runs without it (and keeps its own editing).
	Tools *TurnTools
	// Catalog is a model catalog without codex's apply_patch tool; empty:
	// codex's own.
	Catalog string
	// EditorMCP are the editor's MCP servers for the session.
	EditorMCP []MCPServer

	// What the turn runs instead of a plain prompt (a slash command); at
	// most one is set, and only where the backend's Capabilities offer it.
	Review  *ReviewTarget // a code review by codex (Review); Prompt holds extra instructions
	Compact bool          // compact the thread's context (Compact)
	Skill   *Skill        // the prompt runs this skill (Skills); Prompt mentions it ($name)
}

// Policy is the mode's policy for the turn; a plan turn (Turn.Plan) gets a
// read-only sandbox, the mode's approval policy kept: plan mode promises
// nothing is edited until the plan is approved, and codex's collaboration
// mode alone does not stop a command from writing.
func (t Turn) Policy() Policy {
	p := ModePolicy(t.Mode, t.User, t.Dirs)
	if t.Plan {
		p.Sandbox = codex.SandboxReadOnly
	}
	return p
}

// ServiceTierOff is Turn.ServiceTier's "no tier": the standard speed.
const ServiceTierOff = "off"

// Image is an image of a prompt, checked: see internal/images.
type Image = images.Image

// Skill is a skill codex lists for a workspace.
type Skill = codex.Skill

// ReviewTarget is what a review turn reviews.
type ReviewTarget struct {
	Branch string // the changes against this base branch
	Commit string // the changes of this commit
	// Neither: the working tree (staged, unstaged and untracked changes).
}

// TurnTools says where codex finds the session's file tools.
type TurnTools struct {
	URL   string // the loopback MCP endpoint
	Token string // the session's bearer token: never on a command line or in a log
	// Relay, when set, is the route codex takes instead of URL: a stdio MCP
	// server (the agent's own binary) that forwards to the agent, so that
	// codex starts a process rather than building an HTTP client for each
	// thread (docs/benchmarks.md, "What a prompt waits for").
	Relay *ToolsRelay
}

// ToolsRelay is a stdio MCP server entry that reaches the session's file
// tools: the token goes to the relay as TokenEnv, through the thread's
// config sent over stdin (app-server) or codex's own environment (exec),
// never on a command line.
type ToolsRelay struct {
	Command  string
	Args     []string
	Env      map[string]string // besides the token
	TokenEnv string
}

// OwnServerName is the MCP server name codex knows our file tools by.
const OwnServerName = "acp"

// MCPServer is one of the editor's MCP servers, as codex is to start or
// reach it: a stdio server (Command) or an http one (URL).
type MCPServer struct {
	// Name is the server's name as codex knows it: a TOML bare key, unique
	// among the session's servers and never OwnServerName.
	Name    string
	Command string     // stdio: the program
	Args    []string   // stdio: its arguments
	Env     []KeyValue // stdio: its environment, in the editor's order
	URL     string     // http: the endpoint
	Headers []KeyValue // http: its headers (often credentials: never on a command line)
}

// KeyValue is a name and its value.
type KeyValue struct{ Name, Value string }
