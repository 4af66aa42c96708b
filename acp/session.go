package acp

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/codex"
	"github.com/codexacp/codexacp/events"
	"github.com/codexacp/codexacp/internal/changeset"
	"github.com/codexacp/codexacp/internal/sessionstore"
)

var (
	errSessionClosed = errors.New("session closed")
)

// session is one ACP session: a working directory, a mode, and the codex
// thread its turns continue.
type session struct {
	id   string
	cwd  string
	dirs []string            // additional workspace directories
	mcp  []backend.MCPServer // the editor's MCP servers
	user codex.UserConfig    // the user's sandbox and approval settings, under the modes

	// toolsToken authenticates this session's codex runs to the embedded
	// MCP server (the agent owns the registration, see toolsRegistration).
	toolsToken string

	// turns is held by the Prompt running a turn; turns of a session never
	// overlap, and waiting prompts run in order (turn.go). translator is
	// only used while holding it.
	turns      turnQueue
	translator *events.Translator
	// trMu serialises the translator between the turn's goroutine, the
	// backend's event delivery and command approvals.
	trMu sync.Mutex

	mu          sync.Mutex
	mode        backend.Mode
	model       string // chosen in the picker; "" lets codex's configuration decide
	effort      string // likewise
	serviceTier string // likewise (the fast-mode picker)
	threadID    string
	title       string       // first line of the first prompt
	threadUsage events.Usage // codex's token totals after the last turn
	closed      bool
	deleted     bool                     // session/delete: its record is never saved again (persist)
	latest      uint64                   // generation of the newest prompt
	read        uint64                   // prompts the input guard read (promptRead); latest catches up
	caughtUp    chan struct{}            // closed when latest reaches read; nil: nobody waits
	cancelledTo uint64                   // prompts up to this generation were cancelled by the client
	nextCancel  context.Context          // done at the next session/cancel (newPrompt)
	fireCancel  context.CancelFunc       // ends nextCancel
	cancel      context.CancelCauseFunc  // cancels the running turn; nil when idle
	running     *runningTurn             // the running turn, which prompts may join; nil when idle
	plan        bool                     // collaboration_mode plan (plan.go)
	proposed    string                   // the plan the running turn proposed
	planAsks    int                      // switch_mode questions asked, for their ids
	mcpAsks     atomic.Uint64            // MCP tool questions asked with a tool call of their own, for their ids
	allowed     map[acpsdk.ToolKind]bool // kinds the user allowed for the whole session
	// runAlways: the user answered a command approval with "always". Codex
	// then runs commands like it outside ask mode's read-only sandbox
	// without asking again, so every later turn's shell edits are followed
	// (shelledits.go).
	runAlways atomic.Bool
	calls     turnCalls // the running turn's file-tool calls
	// shell is the shell-edits tracker kept between turns (shelledits.go).
	shell keptTracker

	// undo is the session's change sets (undo.go): in memory until
	// openUndo gives it the stored ones.
	undo       *changeset.Log
	undoSaving chan struct{} // closed once the last turn's change set is stored
	undoCalls  int           // undo tool calls made, for their ids

	skills        []backend.Skill // codex's skills for the workspace, offered as commands
	commandsReady chan struct{}   // closed once the session's commands were sent (commands.go)
	// refreshing serializes refreshCommands: listing the skills and sending
	// them, so that an older list never overwrites a newer one.
	refreshing sync.Mutex
}

// newSession makes a session; a restored one passes its thread and token
// totals in topts (ThreadID, ThreadUsage).
func newSession(id, cwd string, dirs []string, mcp []backend.MCPServer, topts events.Options) *session {
	topts.OwnMCPServer = backend.OwnServerName
	return &session{
		id:         id,
		cwd:        cwd,
		dirs:       dirs,
		mcp:        mcp,
		mode:       DefaultMode,
		threadID:   topts.ThreadID,
		translator: events.NewTranslator(topts),
		undo:       newMemUndo(),
	}
}

func (s *session) currentMode() backend.Mode {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mode
}

// toolMode is the preset whose file-tool and shell-edit behaviour applies
// in the session's mode (for ModeCustom, the one matching the user's
// settings). While planning it is read-only whatever the mode: nothing is
// edited until the user approves the plan (plan.go).
func (s *session) toolMode() backend.Mode {
	s.mu.Lock()
	m, planning := s.mode, s.plan
	s.mu.Unlock()
	if planning {
		return backend.ModeReadOnly
	}
	return backend.ModePolicy(m, s.user, nil).Tools
}

func (s *session) setMode(m backend.Mode) {
	s.mu.Lock()
	s.mode = m
	s.mu.Unlock()
}

func (s *session) thread() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.threadID
}

// turnEnded records what a finished turn tells about the thread. It reports
// whether the session's thread or title changed (its first turn, or a
// thread codex started again): what finding and loading it depend on; and
// the title when this turn gave the session its title (the editor is told).
func (s *session) turnEnded(prompt string, out events.Outcome) (changed bool, newTitle string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if out.ThreadID != "" && out.ThreadID != s.threadID {
		s.threadID, changed = out.ThreadID, true
	}
	if out.ThreadUsage != (events.Usage{}) {
		s.threadUsage = out.ThreadUsage
	}
	if s.title == "" {
		if s.title = sessionTitle(prompt); s.title != "" {
			changed, newTitle = true, s.title
		}
	}
	return changed, newTitle
}

// titleUpdate tells the editor the session's title (session_info_update;
// acp-go-sdk v0.13.0 has no session capability for titles to advertise).
func titleUpdate(title string) acpsdk.SessionUpdate {
	return acpsdk.SessionUpdate{SessionInfoUpdate: &acpsdk.SessionSessionInfoUpdate{
		SessionUpdate: "session_info_update",
		Title:         acpsdk.Ptr(title),
	}}
}

// record is the session as stored. Before its first turn it has no thread:
// a load or resume restores it as new, and its first prompt starts one.
func (s *session) record() sessionstore.Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sessionstore.Record{
		SessionID:             s.id,
		ThreadID:              s.threadID,
		Cwd:                   s.cwd,
		AdditionalDirectories: s.dirs,
		Mode:                  string(s.mode),
		Model:                 s.model,
		Effort:                s.effort,
		ServiceTier:           s.serviceTier,
		Plan:                  s.plan,
		Title:                 s.title,
		UpdatedAt:             time.Now().UTC(),
		ThreadUsage:           s.threadUsage,
	}
}

func (s *session) alwaysAllowed(kind acpsdk.ToolKind) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.allowed[kind]
}

func (s *session) allowAlways(kind acpsdk.ToolKind) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.allowed == nil {
		s.allowed = map[acpsdk.ToolKind]bool{}
	}
	s.allowed[kind] = true
}

// markDeleted records that session/delete removes the session: from now
// on its record is not saved (persist).
func (s *session) markDeleted() {
	s.mu.Lock()
	s.deleted = true
	s.mu.Unlock()
}

func (s *session) isDeleted() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.deleted
}

// close cancels the running turn and waits until it has ended. Its tool
// server stays registered for a session restored under the same id.
func (s *session) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancelTurn(errSessionClosed)
	// Holding the turn waits for the running turn to end; no turn starts
	// after (closed is set).
	s.turns.acquire(context.Background())
	defer s.turns.release()
	s.mu.Lock()
	s.cancel = nil // no turn runs any more
	s.mu.Unlock()
	s.shell.drop() // its watches end with the session
}

// sessionTitle is the first line of the first prompt, shortened.
func sessionTitle(prompt string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(prompt), "\n")
	line = strings.TrimSpace(line)
	const max = 80
	if r := []rune(line); len(r) > max {
		line = string(r[:max-1]) + "…"
	}
	return line
}
