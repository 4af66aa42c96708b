package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Event types printed by `codex exec --json`.
const (
	TypeThreadStarted = "thread.started"
	TypeTurnStarted   = "turn.started"
	TypeTurnCompleted = "turn.completed"
	TypeTurnFailed    = "turn.failed"
	TypeItemStarted   = "item.started"
	TypeItemUpdated   = "item.updated"
	TypeItemCompleted = "item.completed"
	TypeError         = "error"
)

// Event types codex exec does not print: the app-server backend
// (AppServer) produces them too.
const (
	TypeItemDelta       = "item.delta"       // a streamed piece of an item (Event.Delta)
	TypeTurnInterrupted = "turn.interrupted" // the turn was interrupted (turn/interrupt)
)

// Kinds of Delta: which part of which item grows.
const (
	DeltaMessage   = "message"   // agent_message text
	DeltaReasoning = "reasoning" // reasoning text
	DeltaOutput    = "output"    // command_execution output
)

// Item types carried by item.* events.
const (
	ItemAgentMessage     = "agent_message"
	ItemReasoning        = "reasoning"
	ItemCommandExecution = "command_execution"
	ItemFileChange       = "file_change"
	ItemMCPToolCall      = "mcp_tool_call"
	ItemTodoList         = "todo_list"
	ItemWebSearch        = "web_search"
	ItemError            = "error"
	// ItemContextCompaction is codex compacting the thread's context
	// (app-server only; exec prints nothing for it).
	ItemContextCompaction = "context_compaction"
	// ItemCollabToolCall is a call of one of codex's subagent tools
	// (spawn_agent, send_input, wait, close_agent, ...): exec prints it as
	// collab_tool_call, the app-server as collabAgentToolCall.
	ItemCollabToolCall = "collab_tool_call"
	// App-server only (exec prints nothing for them): a subagent started,
	// messaged or interrupted (multi-agent v2 tools), an image the model
	// looked at (view_image), an image the model generated.
	ItemSubAgentActivity = "sub_agent_activity"
	ItemImageView        = "image_view"
	ItemImageGeneration  = "image_generation"
)

// Event is one line of `codex exec --json` output, or what AppServer makes
// of an app-server notification: the backend-neutral event the Translator
// reads. Only the fields of its Type are set; unknown fields are dropped.
type Event struct {
	Type     string     `json:"type"`
	ThreadID string     `json:"thread_id,omitempty"` // thread.started
	Item     *Item      `json:"item,omitempty"`      // item.* except item.delta
	Delta    *Delta     `json:"delta,omitempty"`     // item.delta
	Usage    *Usage     `json:"usage,omitempty"`     // turn.completed (turn.failed, turn.interrupted): the thread's running totals
	Error    *ErrorInfo `json:"error,omitempty"`     // turn.failed
	Message  string     `json:"message,omitempty"`   // top-level error (a warning)
	// LastUsage is the last model request's tokens, when the backend
	// reports them (app-server; with Usage): its input plus output is the
	// context in use, so the Translator need not estimate it.
	LastUsage *Usage `json:"last_usage,omitempty"`
	// TurnID is codex's id of the turn (turn.started), when the backend
	// knows it: the app-server's turn/started has it; codex exec prints
	// none, and its backend reads it from the thread's rollout. /undo
	// names the turns to cut by it (docs/undo.md). Not part of codex
	// exec's JSON.
	TurnID string `json:"-"`
}

// Delta is a streamed piece of an item (app-server): Text is appended to
// the item's text (DeltaMessage, DeltaReasoning) or output (DeltaOutput).
type Delta struct {
	ItemID string `json:"item_id"`
	Kind   string `json:"kind"`
	Text   string `json:"text"`
}

// Known reports whether the event (and, for item events, its item type) is
// one this package translates. The caller logs the others.
func (e Event) Known() bool {
	switch e.Type {
	case TypeThreadStarted, TypeTurnStarted, TypeTurnCompleted, TypeTurnFailed, TypeTurnInterrupted, TypeError:
		return true
	case TypeItemDelta:
		if e.Delta == nil {
			return false
		}
		switch e.Delta.Kind {
		case DeltaMessage, DeltaReasoning, DeltaOutput:
			return true
		}
	case TypeItemStarted, TypeItemUpdated, TypeItemCompleted:
		if e.Item == nil {
			return false
		}
		switch e.Item.Type {
		case ItemAgentMessage, ItemReasoning, ItemCommandExecution, ItemFileChange,
			ItemMCPToolCall, ItemTodoList, ItemWebSearch, ItemError,
			ItemCollabToolCall, ItemSubAgentActivity, ItemImageView, ItemImageGeneration:
			return true
		}
	}
	return false
}

// Item is a codex thread item. Which fields are set depends on Type.
type Item struct {
	ID   string `json:"id"`
	Type string `json:"type"`

	// agent_message, reasoning
	Text string `json:"text,omitempty"`
	// agent_message the app-server's moderation withholds (docs/events.md):
	// why, for the user; Text is then empty.
	Withheld string `json:"withheld,omitempty"`
	// agent_message of a subagent (app-server): the parent's tool call item
	// that started the subagent, whose content shows the message
	// (ChildEvent), not the agent's text.
	ParentCallID string `json:"parent_call_id,omitempty"`
	// error
	Message string `json:"message,omitempty"`

	// command_execution
	Command          string `json:"command,omitempty"`
	Cwd              string `json:"cwd,omitempty"`
	AggregatedOutput string `json:"aggregated_output,omitempty"`
	ExitCode         *int   `json:"exit_code,omitempty"` // nil while running
	// Refusal is set on a command codex refused to run without asking
	// (RefusalScanner; codex prints no item for it): shown failed, with
	// codex's reason.
	Refusal *CommandRefusal `json:"refusal,omitempty"`

	// command_execution, file_change, mcp_tool_call: in_progress, completed,
	// failed (declined is treated as failed).
	Status string `json:"status,omitempty"`

	// file_change
	Changes []FileChange `json:"changes,omitempty"`

	// mcp_tool_call
	Server    string          `json:"server,omitempty"`
	Tool      string          `json:"tool,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Result    *MCPResult      `json:"result,omitempty"`
	Error     *ErrorInfo      `json:"error,omitempty"`

	// todo_list
	Items []TodoItem `json:"items,omitempty"`

	// web_search
	Query  string           `json:"query,omitempty"`
	Action *WebSearchAction `json:"action,omitempty"`

	// collab_tool_call (and Tool, Status): the subagent tool's prompt (the
	// task or message), the agents it addressed and their last known
	// states, whose messages are the subagents' results.
	Prompt            string                `json:"prompt,omitempty"`
	Model             string                `json:"model,omitempty"`
	SenderThreadID    string                `json:"sender_thread_id,omitempty"`
	ReceiverThreadIDs []string              `json:"receiver_thread_ids,omitempty"`
	AgentsStates      map[string]AgentState `json:"agents_states,omitempty"`

	// sub_agent_activity: started, interacted, interrupted or completed.
	Activity      string `json:"activity,omitempty"`
	AgentThreadID string `json:"agent_thread_id,omitempty"`
	AgentPath     string `json:"agent_path,omitempty"`

	// image_view (the image's path), image_generation (Status, and where
	// codex saved the image).
	Path string `json:"path,omitempty"`
	// image_generation: the prompt the image model used, the image
	// (base64), and why it failed.
	RevisedPrompt string `json:"revised_prompt,omitempty"`
	ImageData     string `json:"image_data,omitempty"`
	Failure       string `json:"failure,omitempty"`
}

// AgentState is a subagent's last known state in a collab_tool_call:
// pending_init, running, interrupted, completed, errored, shutdown or
// not_found, and its message (a completed agent's final answer, an
// errored one's error).
type AgentState struct {
	Status  string `json:"status"`
	Message string `json:"message,omitempty"`
}

// FileChange is one file of a file_change item. Kind is add, update or
// delete. Diff (app-server only) is what the app-server calls the change's
// diff: the new file's content (add), the deleted file's content (delete),
// a unified diff (update).
type FileChange struct {
	Path string `json:"path"`
	Kind string `json:"kind"`
	Diff string `json:"diff,omitempty"`
}

// MCPResult is the result of an MCP tool call as codex reports it. Content
// blocks are MCP content (text, image, resource, ...), kept verbatim.
type MCPResult struct {
	Content           []json.RawMessage `json:"content"`
	StructuredContent json.RawMessage   `json:"structured_content,omitempty"`
}

// TodoItem is one entry of a todo_list item.
type TodoItem struct {
	Text      string `json:"text"`
	Completed bool   `json:"completed"`
}

// WebSearchAction says what a web_search item did: search (Query, Queries),
// open_page (URL) or find_in_page (URL, Pattern).
type WebSearchAction struct {
	Type    string   `json:"type"`
	Query   string   `json:"query,omitempty"`
	Queries []string `json:"queries,omitempty"`
	URL     string   `json:"url,omitempty"`
	Pattern string   `json:"pattern,omitempty"`
}

// ErrorInfo is codex's error object ({"message": ...}). A bare JSON string is
// accepted too.
type ErrorInfo struct {
	Message string `json:"message"`
	// CodexErrorInfo is the app-server's codexErrorInfo of a failure
	// ("contextWindowExceeded", {"httpConnectionFailed": {...}}): what
	// ClassifyFailure reads. codex exec prints none.
	CodexErrorInfo json.RawMessage `json:"codex_error_info,omitempty"`
}

// UnmarshalJSON accepts {"message": "..."} or "...".
func (e *ErrorInfo) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &e.Message)
	}
	type plain ErrorInfo
	return json.Unmarshal(b, (*plain)(e))
}

// Usage holds token counts as codex reports them. In turn.completed they are
// the thread's running totals; Outcome.Usage holds one turn's share.
// InputTokens includes CachedInputTokens; OutputTokens includes
// ReasoningOutputTokens (OpenAI Responses semantics).
type Usage struct {
	InputTokens           int64 `json:"input_tokens"`
	CachedInputTokens     int64 `json:"cached_input_tokens"`
	CacheWriteInputTokens int64 `json:"cache_write_input_tokens"`
	OutputTokens          int64 `json:"output_tokens"`
	ReasoningOutputTokens int64 `json:"reasoning_output_tokens"`
}

// Parse decodes one line of `codex exec --json` output. It is tolerant:
// unknown event and item types, unknown fields and duplicate keys are
// accepted. A line that is not a JSON object with a string "type" is an error.
func Parse(line []byte) (Event, error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return Event{}, errors.New("parse codex event: empty line")
	}
	var ev Event
	if err := json.Unmarshal(line, &ev); err != nil {
		return Event{}, fmt.Errorf("parse codex event: %w", err)
	}
	if ev.Type == "" {
		return Event{}, errors.New("parse codex event: no \"type\"")
	}
	if ev.Item != nil {
		// encoding/json keeps the last of duplicate keys. web_search items
		// carry two "id" keys: the item id first, then the search call's id.
		// The item id is the one item.started and item.completed share.
		if id, ok := itemID(line); ok {
			ev.Item.ID = id
		}
	}
	return ev, nil
}

// itemID returns the first "id" of the "item" object of an event line. It
// reads only up to that key, which codex prints first, so even a
// multi-megabyte line costs almost nothing.
func itemID(line []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(line))
	if !enterObject(dec) || !skipToKey(dec, "item") || !enterObject(dec) || !skipToKey(dec, "id") {
		return "", false
	}
	tok, err := dec.Token()
	s, ok := tok.(string)
	return s, err == nil && ok
}

// enterObject consumes the '{' that starts an object.
func enterObject(dec *json.Decoder) bool {
	tok, err := dec.Token()
	return err == nil && tok == json.Delim('{')
}

// skipToKey consumes members of the current object up to and including the
// first key named key.
func skipToKey(dec *json.Decoder, key string) bool {
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if tok == key {
			return true
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return false
		}
	}
	return false
}
