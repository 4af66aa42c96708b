// Package backend is the seam between codexacp's ACP agent (package acp)
// and the ways it runs Codex. A Backend runs one prompt as a Codex turn
// (Turn) and hands what the turn produces to an Output; everything else it
// may offer — getting a session's turn ready ahead, slash commands, skills,
// steering, forking threads, fast mode — is a method of the same interface,
// and Capabilities says which of them it has. The agent reads Capabilities
// and never type-asserts a backend or an output.
//
// Two backends implement it, each in a package of its own beside this one:
// backend/codexexec (one `codex exec` process per turn) and
// backend/appserver (every session's turns on one `codex app-server`). A
// third backend embeds Unsupported, implements Run and Name, and overrides
// what it offers, saying so in Capabilities:
//
//	type myBackend struct{ backend.Unsupported }
//
//	func (myBackend) Name() string { return "mine" }
//	func (b myBackend) Run(ctx context.Context, t backend.Turn, out backend.Output) error { … }
//
// Each feature is thus said twice, by a method and by a bit; its tests
// call backendtest.CheckCapabilities, which fails where the two disagree
// (a method without its bit is never called). Closing is not part of the
// interface: whoever makes a backend holds its concrete type and closes
// it (cmd/codexacp does).
//
// The types a turn carries that both sides need (Mode and its Policy, the
// editor's MCP servers, images, skills) are here too, so that neither side
// imports the other.
package backend

import (
	"context"
	"errors"

	"github.com/codexacp/codexacp/events"
)

// Backend runs Codex turns and offers what goes with them. Methods a
// backend does not offer answer ErrUnsupported (or do nothing, for those
// without an error): see Unsupported.
type Backend interface {
	// Name is how --backend and /status name the backend ("exec",
	// "app-server").
	Name() string
	// Capabilities says what the backend offers beyond Run.
	Capabilities() Capabilities

	// Run runs one turn and returns once it has ended and every event of
	// it has been handed to out. When ctx ends the turn is interrupted and
	// nothing it started keeps running; the error then wraps ctx's cause.
	Run(ctx context.Context, t Turn, out Output) error

	// Start starts in the background what every session will need (the
	// app-server backend: its codex app-server), so that the first
	// session's turn does not wait for it. The agent calls it once, when
	// the editor first opens a session (session/new, load, resume, fork);
	// it must not block.
	Start()
	// Warm gets a session ready before its first prompt (Warm): t is the
	// turn as it would run now, without a prompt.
	Warm(t Turn)
	// Prepare gets the session's next turn ready (Prepare): called after
	// every turn and every change of a setting, with the turn as it would
	// run now, without a prompt.
	Prepare(t Turn)
	// Forget drops what the backend keeps for a session ahead of its turns
	// (a waiting codex, a warmed thread): the session closed.
	Forget(sessionID string)

	// Skills lists the enabled skills codex offers for the turn's
	// workspace (t has no prompt). Skills.
	Skills(ctx context.Context, t Turn) ([]Skill, error)
	// WatchSkills registers f, called (on a goroutine of its own) when
	// codex reports that skills changed. Skills.
	WatchSkills(f func())

	// Steer adds the prompt (text and images) to the session's running
	// turn, as the user's message. It fails (ErrNoRunningTurn) when no turn
	// of the session runs, or codex refuses. Steer.
	Steer(ctx context.Context, sessionID, text string, images []Image) error

	// ForkThread copies t.ThreadID's history into a new thread set up for
	// t's session and returns its id. Fork.
	ForkThread(ctx context.Context, t Turn) (string, error)
	// DeleteThread deletes a thread and its history. DeleteThread.
	DeleteThread(ctx context.Context, threadID string) error

	// The thread operations of the slash commands (ThreadCommands). A
	// session before its first turn has its thread prepared for them, and
	// its first turn then takes it.

	// Goal is the session's thread goal; nil when none is set.
	Goal(ctx context.Context, t Turn) (*Goal, error)
	// SetGoal makes objective the thread's active goal, set by the user.
	SetGoal(ctx context.Context, t Turn, objective string) (*Goal, error)
	// ClearGoal removes the thread's goal.
	ClearGoal(ctx context.Context, t Turn) error
	// RenameThread names the session's thread.
	RenameThread(ctx context.Context, t Turn, name string) error
	// MCPServerStatus lists the MCP servers codex uses for the session's
	// thread.
	MCPServerStatus(ctx context.Context, t Turn) ([]MCPServerStatus, error)

	// ForgetTurns makes codex forget the last turns of t.ThreadID (/undo):
	// turnIDs are codex's ids of those turns, oldest first, as the turns'
	// events named them (events.TypeTurnStarted's TurnID). It checks that
	// they are the thread's last turns and cuts the thread's history before
	// the first, so that the next turn's model request no longer carries
	// them; an id not known, a turn of codex's the list lacks, or any
	// failure cuts nothing and is an error. Undo.
	ForgetTurns(ctx context.Context, t Turn, turnIDs []string) error

	// LastRateLimits is the latest snapshot of the account's usage limits
	// codex sent that says something (nil: none yet); it asks codex
	// nothing.
	LastRateLimits() *events.RateLimits
	// RateLimits lists the account's usage limits for /status: read from
	// codex where it can, else the latest codex sent.
	RateLimits(ctx context.Context) ([]events.RateLimits, error)

	// LoginMCPServer signs the user in to an MCP server of codex's config
	// that needs OAuth (MCPLogin): codex starts the login and open shows
	// the user its authorization page; then it waits for codex to report
	// the login's end (at most MCPLoginTimeout, or until ctx ends), and on
	// success has codex reconnect its MCP servers. An error from open ends
	// the wait and is returned. The token stays with codex.
	LoginMCPServer(ctx context.Context, t Turn, server string, open func(ctx context.Context, url string) error) error
	// Hooks lists the codex hooks that apply in the turn's workspace
	// (Hooks).
	Hooks(ctx context.Context, t Turn) (HookList, error)
	// TrustHook records the user's trust in the hook key as it was when
	// its hash was hash: codex runs it from then on, until it changes
	// (Hooks).
	TrustHook(ctx context.Context, t Turn, key, hash string) error
}

// Capabilities is a set of what a backend offers beyond Run.
type Capabilities uint

const (
	Review         Capabilities = 1 << iota // Turn.Review: code reviews by codex
	Compact                                 // Turn.Compact: compacting the thread's context
	Skills                                  // Skills, WatchSkills and Turn.Skill
	ThreadCommands                          // Goal, SetGoal, ClearGoal, RenameThread, MCPServerStatus
	Plan                                    // Turn.Plan: plan mode, and Output.ProposedPlan
	Fork                                    // ForkThread
	DeleteThread                            // DeleteThread
	Steer                                   // Steer
	FastMode                                // Turn.ServiceTier is applied on every turn
	Warm                                    // Warm does something: call it at session/new, load, resume
	Prepare                                 // Prepare does something: call it after turns and setting changes
	RateLimits                              // LastRateLimits and RateLimits: the account's usage limits
	MCPLogin                                // LoginMCPServer
	Hooks                                   // Hooks and TrustHook
	Undo                                    // ForgetTurns: codex forgets a thread's last turns
)

// Has reports whether c offers everything in want.
func (c Capabilities) Has(want Capabilities) bool { return c&want == want }

// ErrUnsupported is what a method the backend does not offer answers.
var ErrUnsupported = errors.ErrUnsupported

// ErrNoRunningTurn is Steer's answer when no turn of the session runs.
var ErrNoRunningTurn = errors.New("no turn of the session is running")

// Unsupported is embedded by a backend to have every optional method:
// those with an error answer ErrUnsupported, the others do nothing, and
// Capabilities is empty. The backend overrides what it offers.
type Unsupported struct{}

func (Unsupported) Capabilities() Capabilities { return 0 }
func (Unsupported) Start()                     {}
func (Unsupported) Warm(Turn)                  {}
func (Unsupported) Prepare(Turn)               {}
func (Unsupported) Forget(string)              {}
func (Unsupported) Skills(context.Context, Turn) ([]Skill, error) {
	return nil, ErrUnsupported
}
func (Unsupported) WatchSkills(func()) {}
func (Unsupported) Steer(context.Context, string, string, []Image) error {
	return ErrUnsupported
}
func (Unsupported) ForkThread(context.Context, Turn) (string, error) { return "", ErrUnsupported }
func (Unsupported) DeleteThread(context.Context, string) error       { return ErrUnsupported }
func (Unsupported) Goal(context.Context, Turn) (*Goal, error)        { return nil, ErrUnsupported }
func (Unsupported) SetGoal(context.Context, Turn, string) (*Goal, error) {
	return nil, ErrUnsupported
}
func (Unsupported) ClearGoal(context.Context, Turn) error            { return ErrUnsupported }
func (Unsupported) RenameThread(context.Context, Turn, string) error { return ErrUnsupported }
func (Unsupported) MCPServerStatus(context.Context, Turn) ([]MCPServerStatus, error) {
	return nil, ErrUnsupported
}
func (Unsupported) ForgetTurns(context.Context, Turn, []string) error { return ErrUnsupported }
func (Unsupported) LastRateLimits() *events.RateLimits                { return nil }
func (Unsupported) RateLimits(context.Context) ([]events.RateLimits, error) {
	return nil, ErrUnsupported
}
func (Unsupported) LoginMCPServer(context.Context, Turn, string, func(context.Context, string) error) error {
	return ErrUnsupported
}
func (Unsupported) Hooks(context.Context, Turn) (HookList, error)         { return HookList{}, ErrUnsupported }
func (Unsupported) TrustHook(context.Context, Turn, string, string) error { return ErrUnsupported }

// Goal is a thread's goal: the objective codex works towards.
type Goal struct {
	Objective       string
	Status          string // codex's: active, paused, …
	TokenBudget     *int64 // nil: none
	TokensUsed      int64
	TimeUsedSeconds int64
}

// MCPServerStatus is one MCP server codex uses for a thread.
type MCPServerStatus struct {
	Name          string
	RuntimeStatus string   // "" when codex did not say
	AuthStatus    string   // likewise
	Tools         []string // the names of its tools, sorted
	ToolsError    string   // why listing its tools failed; "" when it did not
}

// DefaultMaxWarm is how many sessions at most are kept ready for their
// next prompt ahead of it, on either backend: waiting `codex exec`
// processes (their memory: docs/codex.md), or app-server threads started before
// the session's first prompt. An editor works in a few sessions at a
// time; a burst of hundreds (an editor restoring them, a script) must not
// start hundreds of codex processes or threads.
const DefaultMaxWarm = 4
