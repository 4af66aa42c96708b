package acp

import (
	"context"

	"github.com/codexacp/codexacp/codex"
	"github.com/codexacp/codexacp/events"
	"github.com/codexacp/codexacp/internal/images"
)

// Backend runs Codex turns. Two implement it: ExecBackend (one `codex exec`
// process per turn, the default) and AppServerBackend (turns on one
// persistent `codex app-server`). Whatever the source, a turn's output is
// a stream of events.Event and, for backends that ask, command approvals.
type Backend interface {
	// Run runs one turn and returns once it has ended and every event of
	// it has been handed to out. When ctx ends the turn is interrupted and
	// nothing it started keeps running; the error then wraps ctx's cause.
	Run(ctx context.Context, turn Turn, out TurnOutput) error
}

// warmer is a Backend that can get ready before a session's first prompt
// (the app-server: start its process, and the session's thread, while the
// user types). t is the turn as it would run now, without a prompt.
type warmer interface {
	Warm(t Turn)
}

// turnPreparer is a Backend that prepares each session's next turn ahead
// (the exec backend: a codex started and waiting for its prompt). The agent
// calls Prepare after every turn and every change of a setting, with the
// turn as it would run now (without a prompt), and Forget when the session
// closes.
type turnPreparer interface {
	Prepare(t Turn)
	forgetter
}

// forgetter is a Backend that keeps something per session ahead of its
// turns (a waiting codex, a warmed thread): Forget drops it when the session
// closes.
type forgetter interface {
	Forget(sessionID string)
}

// Image is an image of a prompt, checked: see internal/images.
type Image = images.Image

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
	Plan      bool    // plan mode: codex plans and edits nothing (app-server; plan.go)
	Mode      Mode
	User      codex.UserConfig // the user's own settings, under Mode (modePolicy)
	Model     string           // empty: codex's configured model
	Effort    string           // reasoning effort; empty: the model's default
	// ServiceTier is the fast-mode picker's value: a tier id of the model
	// ("priority"), serviceTierOff (no tier), or empty (the user never
	// chose: codex's configuration decides). Only the app-server applies it.
	ServiceTier string

	// Tools is the embedded file-tool server for this session; nil when
	// codex runs without it (and keeps its own editing).
	Tools *TurnTools
	// Catalog is a model catalog without codex's apply_patch tool; empty:
	// codex's own.
	Catalog string
	// editorMCP holds the editor's MCP servers.
	editorMCP mcpSetup

	// What the turn runs instead of a plain prompt (a slash command,
	// commands.go); at most one is set, and only where the backend's
	// commander offers it.
	Review  *ReviewTarget // a code review by codex; Prompt holds extra instructions
	Compact bool          // compact the thread's context (app-server)
	Skill   *Skill        // the prompt runs this skill; Prompt mentions it ($name)
}

// ReviewTarget is what a review turn reviews.
type ReviewTarget struct {
	Branch string // the changes against this base branch
	Commit string // the changes of this commit
	// Neither: the working tree (staged, unstaged and untracked changes).
}

// Skill is a skill codex lists for a workspace.
type Skill = codex.Skill

// commander is a Backend with slash commands of its own (commands.go): the
// agent offers a command only where the backend has what it needs.
type commander interface {
	commandFeatures() commandFeature
	// skills lists the enabled skills codex offers for the turn's
	// workspace (t has no prompt).
	skills(ctx context.Context, t Turn) ([]Skill, error)
	// threadRequest sends codex a request about the session's thread
	// (method's params get its threadId) and decodes the answer into
	// result. A session without a thread yet uses the one prepared for
	// its first turn.
	threadRequest(ctx context.Context, t Turn, method string, params map[string]any, result any) error
	// watchSkills registers f, called (on a goroutine of its own) when
	// codex reports that skills changed.
	watchSkills(f func())
}

// commandFeature is a set of what a commander can do.
type commandFeature uint

const (
	featReview  commandFeature = 1 << iota // Turn.Review
	featCompact                            // Turn.Compact
	featSkills                             // skills and Turn.Skill
	featThread                             // threadRequest: goals, thread names, MCP server status
	featPlan                               // Turn.Plan: plan mode (plan.go)
)

// TurnTools says where codex finds the session's file tools.
type TurnTools struct {
	URL   string // the loopback MCP endpoint
	Token string // the session's bearer token: never on a command line or in a log
}

// TurnOutput receives what a running turn produces. Event calls come in
// order; ApproveCommand may be called concurrently with them.
type TurnOutput interface {
	Event(ev events.Event)
	// ApproveCommand asks the user whether codex may run a command. It
	// returns ApprovalCancel when the turn ends while the user is asked.
	ApproveCommand(ctx context.Context, req CommandApproval) ApprovalDecision
}

// CommandApproval is codex asking to run a shell command (one that needs
// more than the sandbox allows, or any command its policy does not trust).
type CommandApproval struct {
	ItemID  string // codex's item id of the command (its tool call)
	Command string
	Cwd     string
	Reason  string // codex's or the model's justification; may be empty
}

// ApprovalDecision is the user's answer to a CommandApproval.
type ApprovalDecision int

const (
	ApprovalDecline          ApprovalDecision = iota // do not run it; the turn goes on
	ApprovalAccept                                   // run it once
	ApprovalAcceptForSession                         // run it and similar ones without asking again
	ApprovalCancel                                   // do not run it and end the turn
)

func (d ApprovalDecision) String() string {
	switch d {
	case ApprovalAccept:
		return "accept"
	case ApprovalAcceptForSession:
		return "acceptForSession"
	case ApprovalCancel:
		return "cancel"
	default:
		return "decline"
	}
}
