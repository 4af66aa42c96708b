package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/codexacp/codexacp/codex/appserver/protocol"
)

// App-server notification methods AppServer converts (the protocol's JSON
// schema: `codex app-server generate-json-schema`; the names are package
// protocol's, the params are read here).
const (
	methodThreadStarted      = string(protocol.ThreadStarted)
	methodTurnStarted        = string(protocol.TurnStarted)
	methodTurnCompleted      = string(protocol.TurnCompleted)
	methodTurnPlanUpdated    = string(protocol.TurnPlanUpdated)
	methodTokenUsageUpdated  = string(protocol.ThreadTokenUsage)
	methodItemStarted        = string(protocol.ItemStarted)
	methodItemCompleted      = string(protocol.ItemCompleted)
	methodAgentMessageDelta  = string(protocol.AgentMessageDelta)
	methodPlanDelta          = string(protocol.PlanDelta)
	methodReasoningPartAdded = string(protocol.ReasoningPartAdded)
	methodReasoningSumDelta  = string(protocol.ReasoningSumDelta)
	methodReasoningRawDelta  = string(protocol.ReasoningTextDelta)
	methodCommandOutputDelta = string(protocol.CommandOutputDelta)
	methodError              = string(protocol.ErrorNotice)
	methodWarning            = string(protocol.Warning)
	methodModelRerouted      = string(protocol.ModelRerouted)
	methodGoalUpdated        = string(protocol.ThreadGoalUpdated)
	methodGoalCleared        = string(protocol.ThreadGoalCleared)
)

// AppServer converts the notifications of one `codex app-server` thread
// into Events, the form `codex exec --json` prints, plus the item.delta and
// turn.interrupted events exec has no use for. Feed it every notification
// of the thread, in order (the caller routes by params.threadId); give the
// Events to the session's Translator.
//
// It is pure: no I/O, no clock. It keeps what later notifications need:
// the thread's latest token totals (turn/completed carries none), the
// reasoning part being streamed per item (so the streamed text equals the
// completed item's), the turn's plan and its last error. Not safe for
// concurrent use; one per session.
type AppServer struct {
	totals    *Usage // latest tokenUsage.total of the thread
	last      *Usage // latest tokenUsage.last: the last model request
	turnUsage bool   // a tokenUsage update arrived in the current turn

	// State of the current turn, reset by turn/started.
	turnID    string
	plan      *Item                      // the todo_list made from turn/plan/updated
	lastError *ErrorInfo                 // the last error notification that ends the turn
	reasoning map[string]*reasoningState // by item id

	goalStatus string // the thread goal's status last seen; "": none seen (active)
	goalNotes  int    // goal messages made, for their item ids
}

// reasoningState is how a reasoning item has been streamed so far: which
// of its texts (summary or raw content; only one is streamed), which part
// is streaming, and whether any text went out.
type reasoningState struct {
	stream  int // reasoningNone, reasoningSummary or reasoningContent
	part    int64
	emitted bool
}

const (
	reasoningNone = iota
	reasoningSummary
	reasoningContent
)

// NewAppServer returns a converter for one app-server thread.
func NewAppServer() *AppServer {
	c := &AppServer{}
	c.resetTurn("")
	return c
}

func (c *AppServer) resetTurn(turnID string) {
	c.turnID = turnID
	c.turnUsage = false
	c.plan = nil
	c.lastError = nil
	c.reasoning = map[string]*reasoningState{}
}

// Convert returns the Events of one server notification, possibly none.
// Methods it does not convert (thread/status/changed, account/*,
// serverRequest/resolved, ...) give nil, nil; params that do not fit the
// schema of a method it converts give an error.
func (c *AppServer) Convert(method string, params json.RawMessage) ([]Event, error) {
	var (
		evs []Event
		err error
	)
	switch method {
	case methodThreadStarted:
		evs, err = c.threadStarted(params)
	case methodTurnStarted:
		evs, err = c.turnStarted(params)
	case methodTurnCompleted:
		evs, err = c.turnCompleted(params)
	case methodTurnPlanUpdated:
		evs, err = c.planUpdated(params)
	case methodTokenUsageUpdated:
		err = c.tokenUsage(params)
	case methodItemStarted, methodItemCompleted:
		evs, err = c.itemEvent(method == methodItemCompleted, params)
	case methodAgentMessageDelta, methodPlanDelta:
		// A proposed plan (plan mode) streams as the agent's text, as
		// its completed item shows (item).
		evs, err = textDelta(DeltaMessage, params)
	case methodReasoningPartAdded:
		err = partAdded(params)
	case methodReasoningSumDelta:
		evs, err = c.reasoningDelta(reasoningSummary, params)
	case methodReasoningRawDelta:
		evs, err = c.reasoningDelta(reasoningContent, params)
	case methodCommandOutputDelta:
		// Text (command/exec's deltas are base64, these are not).
		evs, err = textDelta(DeltaOutput, params)
	case methodError:
		evs, err = c.errorNotification(params)
	case methodWarning:
		evs, err = warningNotification(params)
	case methodModelRerouted:
		evs, err = modelRerouted(params)
	case methodMCPStartupStatus:
		evs, err = mcpStartupNotice(params)
	case methodGoalUpdated:
		evs, err = c.goalUpdated(params)
	case methodGoalCleared:
		// Only a goal this turn worked on: codex also reports a thread
		// without a goal as cleared (on resume).
		if c.goalStatus != "" {
			c.goalStatus = ""
			evs = c.goalNote("Goal cleared.")
		}
	default:
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("app-server %s: %w", method, err)
	}
	return evs, nil
}

// goalUpdated shows a change of the thread goal's status (codex marking it
// complete, blocked, out of budget…) as a line of the agent's message. The
// updates that only count tokens, which come every turn, show nothing; a
// running goal is active, so the first active status shows nothing either.
func (c *AppServer) goalUpdated(params json.RawMessage) ([]Event, error) {
	var p struct {
		Goal struct {
			Objective string `json:"objective"`
			Status    string `json:"status"`
		} `json:"goal"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	prev := c.goalStatus
	if prev == "" {
		prev = "active"
	}
	c.goalStatus = p.Goal.Status
	if p.Goal.Status == prev || p.Goal.Status == "" {
		return nil, nil
	}
	words := map[string]string{
		"active": "active", "paused": "paused", "blocked": "blocked", "complete": "complete",
		"usageLimited": "paused: usage limit reached", "budgetLimited": "stopped: token budget used up",
	}[p.Goal.Status]
	if words == "" {
		words = p.Goal.Status
	}
	return c.goalNote(fmt.Sprintf("Goal %s: %s", words, p.Goal.Objective)), nil
}

// goalNote is text about the thread's goal, as an agent message of its own.
func (c *AppServer) goalNote(text string) []Event {
	c.goalNotes++
	return []Event{{Type: TypeItemCompleted, Item: &Item{ID: fmt.Sprintf("goal_%d", c.goalNotes), Type: ItemAgentMessage, Text: text}}}
}

// decodeParams decodes a notification's params, which must be an object.
func decodeParams(params json.RawMessage, v any) error {
	p := bytes.TrimSpace(params)
	if len(p) == 0 || p[0] != '{' {
		return errors.New("params are not an object")
	}
	return json.Unmarshal(p, v)
}

func (c *AppServer) threadStarted(params json.RawMessage) ([]Event, error) {
	var p struct {
		Thread *struct {
			ID string `json:"id"`
		} `json:"thread"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.Thread == nil || p.Thread.ID == "" {
		return nil, errors.New("no thread.id")
	}
	return []Event{{Type: TypeThreadStarted, ThreadID: p.Thread.ID}}, nil
}

// asTurn is the part of a Turn object the converter reads.
type asTurn struct {
	ID     string   `json:"id"`
	Status string   `json:"status"`
	Error  *asError `json:"error"`
}

// asError is a TurnError.
type asError struct {
	Message           string          `json:"message"`
	AdditionalDetails string          `json:"additionalDetails"`
	CodexErrorInfo    json.RawMessage `json:"codexErrorInfo"`
}

// info is the error as an ErrorInfo, its codexErrorInfo kept (a JSON null
// dropped).
func (e *asError) info() *ErrorInfo {
	info := &ErrorInfo{Message: e.text()}
	if len(e.CodexErrorInfo) > 0 && string(e.CodexErrorInfo) != "null" {
		info.CodexErrorInfo = e.CodexErrorInfo
	}
	return info
}

// text is the message with its additional details, as codex exec prints
// them: "message (details)".
func (e *asError) text() string {
	msg := e.Message
	if e.AdditionalDetails != "" && e.AdditionalDetails != e.Message {
		msg += " (" + e.AdditionalDetails + ")"
	}
	return msg
}

func (c *AppServer) turnStarted(params json.RawMessage) ([]Event, error) {
	var p struct {
		Turn *asTurn `json:"turn"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.Turn == nil {
		return nil, errors.New("no turn")
	}
	c.resetTurn(p.Turn.ID)
	return []Event{{Type: TypeTurnStarted, TurnID: p.Turn.ID}}, nil
}

func (c *AppServer) turnCompleted(params json.RawMessage) ([]Event, error) {
	var p struct {
		Turn *asTurn `json:"turn"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.Turn == nil || p.Turn.Status == "" {
		return nil, errors.New("no turn.status")
	}
	var evs []Event
	if c.plan != nil {
		// As codex exec: the plan's final state ends with the turn.
		it := *c.plan
		evs = append(evs, Event{Type: TypeItemCompleted, Item: &it})
	}
	ev := Event{}
	switch p.Turn.Status {
	case "completed":
		ev.Type = TypeTurnCompleted
	case "failed":
		ev.Type = TypeTurnFailed
		switch {
		case p.Turn.Error != nil && p.Turn.Error.Message != "":
			ev.Error = p.Turn.Error.info()
		case c.lastError != nil:
			ev.Error = c.lastError
		default:
			ev.Error = &ErrorInfo{}
		}
	case "interrupted":
		ev.Type = TypeTurnInterrupted
	default: // inProgress: not an end
		return evs, nil
	}
	if c.turnUsage {
		// The totals after this turn's last request. Without an update in
		// this turn (it failed before any request) there is no new usage.
		ev.Usage = c.totals
		ev.LastUsage = c.last
	}
	c.resetTurn("")
	return append(evs, ev), nil
}

func (c *AppServer) tokenUsage(params json.RawMessage) error {
	var p struct {
		TokenUsage *struct {
			Total *asUsage `json:"total"`
			Last  *asUsage `json:"last"`
		} `json:"tokenUsage"`
	}
	if err := decodeParams(params, &p); err != nil {
		return err
	}
	if p.TokenUsage == nil || p.TokenUsage.Total == nil {
		return errors.New("no tokenUsage.total")
	}
	total := p.TokenUsage.Total.usage()
	c.totals = &total
	c.last = nil
	if p.TokenUsage.Last != nil {
		last := p.TokenUsage.Last.usage()
		c.last = &last
	}
	c.turnUsage = true
	return nil
}

// asUsage is a TokenUsageBreakdown.
type asUsage struct {
	InputTokens           int64 `json:"inputTokens"`
	CachedInputTokens     int64 `json:"cachedInputTokens"`
	CacheWriteInputTokens int64 `json:"cacheWriteInputTokens"`
	OutputTokens          int64 `json:"outputTokens"`
	ReasoningOutputTokens int64 `json:"reasoningOutputTokens"`
}

func (u *asUsage) usage() Usage {
	return Usage{
		InputTokens:           u.InputTokens,
		CachedInputTokens:     u.CachedInputTokens,
		CacheWriteInputTokens: u.CacheWriteInputTokens,
		OutputTokens:          u.OutputTokens,
		ReasoningOutputTokens: u.ReasoningOutputTokens,
	}
}

// planUpdated turns the turn's plan (update_plan) into a todo_list item,
// one per turn, as codex exec does: item.started, then item.updated, and
// item.completed when the turn ends.
func (c *AppServer) planUpdated(params json.RawMessage) ([]Event, error) {
	var p struct {
		TurnID string `json:"turnId"`
		Plan   []struct {
			Step   string `json:"step"`
			Status string `json:"status"`
		} `json:"plan"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	items := make([]TodoItem, 0, len(p.Plan))
	for _, s := range p.Plan {
		items = append(items, TodoItem{Text: s.Step, Completed: s.Status == "completed"})
	}
	typ := TypeItemUpdated
	if c.plan == nil {
		typ = TypeItemStarted
		turn := c.turnID
		if turn == "" {
			turn = p.TurnID
		}
		c.plan = &Item{ID: "plan-" + turn, Type: ItemTodoList}
	}
	c.plan.Items = items
	it := *c.plan
	return []Event{{Type: typ, Item: &it}}, nil
}

// asItem is the union of the ThreadItem variants the converter reads.
type asItem struct {
	Type string `json:"type"`
	ID   string `json:"id"`

	Text    string   `json:"text"`    // agentMessage, plan
	Review  string   `json:"review"`  // exitedReviewMode: the review's findings
	Summary []string `json:"summary"` // reasoning
	Content []string `json:"-"`       // reasoning (raw text); see UnmarshalJSON

	Command          string `json:"command"` // commandExecution
	Cwd              string `json:"cwd"`
	AggregatedOutput string `json:"aggregatedOutput"`
	ExitCode         *int   `json:"exitCode"`
	Status           string `json:"status"` // commandExecution, fileChange, mcpToolCall

	Changes []struct { // fileChange
		Path string `json:"path"`
		Kind struct {
			Type string `json:"type"`
		} `json:"kind"`
		Diff string `json:"diff"`
	} `json:"changes"`

	Server    string          `json:"server"` // mcpToolCall
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Result    *struct {
		Content           []json.RawMessage `json:"content"`
		StructuredContent json.RawMessage   `json:"structuredContent"`
	} `json:"result"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`

	Query  string `json:"query"` // webSearch
	Action *struct {
		Type    string   `json:"type"`
		Query   string   `json:"query"`
		Queries []string `json:"queries"`
		URL     string   `json:"url"`
		Pattern string   `json:"pattern"`
	} `json:"action"`

	asAgentItem
	asImageItem
	asModeration // agentMessage (moderation.go)
}

// UnmarshalJSON reads "content" only for reasoning items: a userMessage's
// content is a list of objects, not strings. An imageGeneration's "result"
// (the image) is a string, an mcpToolCall's an object.
func (it *asItem) UnmarshalJSON(b []byte) error {
	type plain asItem
	var t struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(b, &t); err != nil {
		return err
	}
	if t.Type == "imageGeneration" {
		return it.unmarshalImageGeneration(b)
	}
	if err := json.Unmarshal(b, (*plain)(it)); err != nil {
		return err
	}
	if it.Type != "reasoning" {
		return nil
	}
	var r struct {
		Content []string `json:"content"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return err
	}
	it.Content = r.Content
	return nil
}

func (c *AppServer) itemEvent(done bool, params json.RawMessage) ([]Event, error) {
	var p struct {
		Item *asItem `json:"item"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.Item == nil || p.Item.Type == "" {
		return nil, errors.New("no item.type")
	}
	it := c.item(done, p.Item)
	if it == nil {
		return nil, nil
	}
	typ := TypeItemStarted
	if done {
		typ = TypeItemCompleted
	}
	return []Event{{Type: typ, Item: it}}, nil
}

// item converts a ThreadItem to the exec item shape; nil for item types
// that show nothing (userMessage: the editor sent it; hookPrompt,
// enteredReviewMode, ...).
func (c *AppServer) item(done bool, a *asItem) *Item {
	it := &Item{ID: a.ID}
	switch a.Type {
	case "agentMessage":
		it.Type, it.Text = ItemAgentMessage, a.Text
		if it.Withheld = a.withheld(); it.Withheld != "" {
			it.Text = ""
		}
	case "plan":
		// A proposed plan (plan mode) is Markdown for the user to read:
		// shown as a message, streamed by item/plan/delta. Codex's final
		// text is its deltas joined, but only the last <proposed_plan>
		// block's when the model wrote several: the Translator then sends
		// nothing more, the streamed text being on screen already.
		it.Type, it.Text = ItemAgentMessage, a.Text
	case "reasoning":
		it.Type, it.Text = ItemReasoning, c.reasoningText(a)
		if done {
			delete(c.reasoning, a.ID)
		}
	case "commandExecution":
		it.Type = ItemCommandExecution
		it.Command, it.Cwd, it.AggregatedOutput, it.ExitCode = a.Command, a.Cwd, a.AggregatedOutput, a.ExitCode
		it.Status = itemStatusName(a.Status)
	case "fileChange":
		it.Type = ItemFileChange
		it.Status = itemStatusName(a.Status)
		it.Changes = make([]FileChange, 0, len(a.Changes))
		for _, ch := range a.Changes {
			it.Changes = append(it.Changes, FileChange{Path: ch.Path, Kind: ch.Kind.Type, Diff: ch.Diff})
		}
	case "mcpToolCall":
		it.Type = ItemMCPToolCall
		it.Server, it.Tool, it.Arguments = a.Server, a.Tool, a.Arguments
		it.Status = itemStatusName(a.Status)
		if a.Result != nil {
			it.Result = &MCPResult{Content: a.Result.Content, StructuredContent: a.Result.StructuredContent}
			if it.Result.Content == nil {
				it.Result.Content = []json.RawMessage{}
			}
			if bytes.Equal(bytes.TrimSpace(it.Result.StructuredContent), []byte("null")) {
				it.Result.StructuredContent = nil
			}
		}
		if a.Error != nil {
			it.Error = &ErrorInfo{Message: a.Error.Message}
		}
	case "exitedReviewMode":
		// The review's findings, as codex renders them: what a review
		// turn answers (the reviewer's own messages are not shown).
		if !done || a.Review == "" {
			return nil
		}
		it.Type, it.Text = ItemAgentMessage, a.Review
	case "contextCompaction":
		it.Type, it.Status = ItemContextCompaction, "in_progress"
		if done {
			it.Status = "completed"
		}
	case "collabAgentToolCall":
		a.collabItem(it)
	case "subAgentActivity":
		a.activityItem(it)
	case "imageView":
		it.Type, it.Path = ItemImageView, a.Path
	case "imageGeneration":
		a.imageItem(it)
	case "webSearch":
		it.Type, it.Query = ItemWebSearch, a.Query
		if a.Action != nil {
			it.Action = &WebSearchAction{
				Type:    webSearchActionName(a.Action.Type),
				Query:   a.Action.Query,
				Queries: a.Action.Queries,
				URL:     a.Action.URL,
				Pattern: a.Action.Pattern,
			}
		}
	default:
		return nil
	}
	return it
}

// itemStatusName maps app-server item statuses to exec's.
func itemStatusName(s string) string {
	if s == "inProgress" {
		return "in_progress"
	}
	return s // completed, failed, declined
}

// webSearchActionName maps app-server action types to exec's.
func webSearchActionName(s string) string {
	switch s {
	case "openPage":
		return "open_page"
	case "findInPage":
		return "find_in_page"
	}
	return s // search, other
}

// reasoningText is the text of a reasoning item: its summary parts, or,
// without any summary, its raw content parts (models that expose their
// reasoning), each joined by blank lines. When the item was streamed, the
// text is the one that was streamed, so that both agree.
func (c *AppServer) reasoningText(a *asItem) string {
	stream := reasoningNone
	if st := c.reasoning[a.ID]; st != nil {
		stream = st.stream
	}
	summary := joinParts(a.Summary)
	if stream == reasoningContent || stream == reasoningNone && summary == "" {
		return joinParts(a.Content)
	}
	return summary
}

// joinParts joins the non-empty parts with blank lines, as they are
// streamed (reasoningDelta).
func joinParts(parts []string) string {
	var b strings.Builder
	for _, p := range parts {
		if p == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(p)
	}
	return b.String()
}

// textDelta is a streamed piece of an item's text (a message, a
// command's output).
func textDelta(kind string, params json.RawMessage) ([]Event, error) {
	var p struct {
		ItemID string `json:"itemId"`
		Delta  string `json:"delta"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.ItemID == "" {
		return nil, errors.New("no itemId")
	}
	return deltaEvent(p.ItemID, kind, p.Delta), nil
}

// reasoningDelta streams one of a reasoning item's texts: the summary, or
// the raw content when it comes first (then the summary is not streamed).
// The first delta of a further part starts with a blank line, so that the
// streamed text is the parts joined as in the completed item.
// (summaryPartAdded says a part starts; the part's first delta says the
// same, and an empty part adds nothing.)
func (c *AppServer) reasoningDelta(stream int, params json.RawMessage) ([]Event, error) {
	var p struct {
		ItemID       string `json:"itemId"`
		Delta        string `json:"delta"`
		SummaryIndex int64  `json:"summaryIndex"`
		ContentIndex int64  `json:"contentIndex"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.ItemID == "" {
		return nil, errors.New("no itemId")
	}
	if p.Delta == "" {
		return nil, nil
	}
	st := c.reasoning[p.ItemID]
	if st == nil {
		st = &reasoningState{}
		c.reasoning[p.ItemID] = st
	}
	if st.stream == reasoningNone {
		st.stream = stream
	}
	if st.stream != stream {
		return nil, nil
	}
	part := p.SummaryIndex
	if stream == reasoningContent {
		part = p.ContentIndex
	}
	text := p.Delta
	if st.emitted && part != st.part {
		text = "\n\n" + text
	}
	st.part, st.emitted = part, true
	return deltaEvent(p.ItemID, DeltaReasoning, text), nil
}

// partAdded checks a summaryPartAdded notification; it converts to
// nothing: the part's first delta starts the part (reasoningDelta).
func partAdded(params json.RawMessage) error {
	var p struct {
		ItemID       string `json:"itemId"`
		SummaryIndex int64  `json:"summaryIndex"`
	}
	if err := decodeParams(params, &p); err != nil {
		return err
	}
	if p.ItemID == "" {
		return errors.New("no itemId")
	}
	return nil
}

func deltaEvent(itemID, kind, text string) []Event {
	if text == "" {
		return nil
	}
	return []Event{{Type: TypeItemDelta, Delta: &Delta{ItemID: itemID, Kind: kind, Text: text}}}
}

// errorNotification: with willRetry the error is a retry notice
// ("Reconnecting... 1/5 (...)"), a warning as in codex exec. Without, the
// turn ends failed (turn/completed with status failed and this error
// follows): nothing now, and the message is kept in case turn/completed
// carries none.
func (c *AppServer) errorNotification(params json.RawMessage) ([]Event, error) {
	var p struct {
		Error     *asError `json:"error"`
		WillRetry bool     `json:"willRetry"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.Error == nil {
		return nil, errors.New("no error")
	}
	if !p.WillRetry {
		c.lastError = p.Error.info()
		return nil, nil
	}
	if p.Error.text() == "" {
		return nil, nil
	}
	return []Event{{Type: TypeError, Message: p.Error.text()}}, nil
}

// warningNotification shows codex's warnings for the user as exec does
// (there, error items).
func warningNotification(params json.RawMessage) ([]Event, error) {
	var p struct {
		Message string `json:"message"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.Message == "" {
		return nil, nil
	}
	return []Event{{Type: TypeError, Message: p.Message}}, nil
}

// modelRerouted tells the user that another model answers, as exec does.
func modelRerouted(params json.RawMessage) ([]Event, error) {
	var p struct {
		FromModel string `json:"fromModel"`
		ToModel   string `json:"toModel"`
		Reason    string `json:"reason"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	msg := fmt.Sprintf("model rerouted: %s -> %s", p.FromModel, p.ToModel)
	if p.Reason != "" {
		msg += " (" + p.Reason + ")"
	}
	return []Event{{Type: TypeError, Message: msg}}, nil
}
