package protocol

import (
	"bytes"
	"encoding/json"
)

// The notifications codexacp reads (package events converts most of them
// to ACP updates; the backend follows turns and items itself).
const (
	ThreadStarted Notification[ThreadStartedNotification] = "thread/started"
	TurnStarted   Notification[TurnNotification]          = "turn/started"
	TurnCompleted Notification[TurnNotification]          = "turn/completed"
	ItemStarted   Notification[ItemNotification]          = "item/started"
	ItemCompleted Notification[ItemNotification]          = "item/completed"

	AgentMessageDelta   Notification[DeltaNotification]   = "item/agentMessage/delta"
	PlanDelta           Notification[DeltaNotification]   = "item/plan/delta"
	ReasoningTextDelta  Notification[DeltaNotification]   = "item/reasoning/textDelta"
	ReasoningSumDelta   Notification[DeltaNotification]   = "item/reasoning/summaryTextDelta"
	CommandOutputDelta  Notification[DeltaNotification]   = "item/commandExecution/outputDelta"
	ReasoningPartAdded  Notification[ItemRef]             = "item/reasoning/summaryPartAdded"
	TurnPlanUpdated     Notification[TurnRef]             = "turn/plan/updated"
	ThreadTokenUsage    Notification[TurnRef]             = "thread/tokenUsage/updated"
	ErrorNotice         Notification[ErrorNotification]   = "error"
	Warning             Notification[WarningNotification] = "warning"
	ModelRerouted       Notification[TurnRef]             = "model/rerouted"
	ThreadGoalUpdated   Notification[ThreadRef]           = "thread/goal/updated"
	ThreadGoalCleared   Notification[ThreadRef]           = "thread/goal/cleared"
	ServerRequestSolved Notification[ThreadRef]           = "serverRequest/resolved"

	// SkillsChanged names no thread: the skills of some workspace changed.
	SkillsChanged Notification[struct{}] = "skills/changed"
	// AccountRateLimitsUpdated names no thread: codex read the account's
	// usage limits from a model response's headers.
	AccountRateLimitsUpdated Notification[AccountRateLimitsUpdatedNotification] = "account/rateLimits/updated"
)

// ThreadRef is the thread a notification is about (the params' threadId).
type ThreadRef struct {
	ThreadID string `json:"threadId"`
}

// TurnRef is the thread and turn a notification is about.
type TurnRef struct {
	ThreadID string `json:"threadId"`
	TurnID   string `json:"turnId"`
}

// ItemRef is the thread, turn and item a notification is about.
type ItemRef struct {
	ThreadID string `json:"threadId"`
	TurnID   string `json:"turnId"`
	ItemID   string `json:"itemId"`
}

// ThreadStartedNotification announces a thread (one codexacp started, or
// a subagent's).
type ThreadStartedNotification struct {
	Thread Thread `json:"thread"`
}

// TurnNotification announces a turn's start or end (turn/started,
// turn/completed): the turn's id, and at its end its status and error.
type TurnNotification struct {
	ThreadID string `json:"threadId"`
	Turn     Turn   `json:"turn"`
}

// ItemNotification announces an item's start or end (item/started,
// item/completed).
type ItemNotification struct {
	ThreadID string     `json:"threadId"`
	TurnID   string     `json:"turnId"`
	Item     ThreadItem `json:"item"`
}

// ThreadItem is one item of a turn: its Type and ID, and its Text for the
// items that have one (agentMessage, plan). Raw is the whole item as
// codex sent it, for package events, which reads each type's fields.
type ThreadItem struct {
	Type string `json:"type"`
	ID   string `json:"id"`
	Text string `json:"text,omitempty"`

	Raw json.RawMessage `json:"-"`
}

// Item types codexacp looks at itself.
const (
	ItemAgentMessage = "agentMessage"
	ItemPlan         = "plan"
	ItemMCPToolCall  = "mcpToolCall"
)

func (it *ThreadItem) UnmarshalJSON(b []byte) error {
	type fields ThreadItem
	var f fields
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*it = ThreadItem(f)
	it.Raw = append(json.RawMessage(nil), bytes.TrimSpace(b)...)
	return nil
}

// MarshalJSON sends Raw when the item came from codex, else the fields.
func (it ThreadItem) MarshalJSON() ([]byte, error) {
	if len(it.Raw) > 0 {
		return it.Raw, nil
	}
	type fields ThreadItem
	return json.Marshal(fields(it))
}

// DeltaNotification is a piece of an item's streamed text or output.
type DeltaNotification struct {
	ThreadID string `json:"threadId"`
	TurnID   string `json:"turnId"`
	ItemID   string `json:"itemId"`
	Delta    string `json:"delta"`
}

// WarningNotification is a warning for the user, of a thread or of none.
type WarningNotification struct {
	ThreadID string `json:"threadId,omitempty"`
	Message  string `json:"message"`
}

// ErrorNotification reports a turn's error; WillRetry: codex tries again.
type ErrorNotification struct {
	ThreadID  string          `json:"threadId"`
	TurnID    string          `json:"turnId"`
	Error     json.RawMessage `json:"error"`
	WillRetry bool            `json:"willRetry"`
}

// AccountRateLimitsUpdatedNotification holds one limit's snapshot.
type AccountRateLimitsUpdatedNotification struct {
	RateLimits *RateLimitSnapshot `json:"rateLimits"`
}
