package events

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/internal/backtrace"
)

// DefaultMaxOutputBytes is the default for Options.MaxOutputBytes.
const DefaultMaxOutputBytes = 64 << 10

// Options configure a Translator.
type Options struct {
	// OwnMCPServer is the name under which codexacp's embedded MCP server is
	// registered with codex ("acp"). Its mcp_tool_call items produce no
	// updates: the server reports those tool calls itself, with diffs.
	OwnMCPServer string
	// ContextWindow is the model's context window in tokens, the size of
	// usage_update. Zero means unknown: no usage_update is sent.
	ContextWindow int
	// ThreadID and ThreadUsage restore a stored session: the codex thread it
	// resumes and codex's running token totals at the end of that thread's
	// last turn (Outcome.ThreadUsage), so the next turn's usage is its own.
	ThreadID    string
	ThreadUsage Usage
	// MaxOutputBytes caps the command output put into one update (content
	// and rawOutput); the middle of longer output is cut out. Zero means
	// DefaultMaxOutputBytes.
	MaxOutputBytes int
}

// Outcome is how a turn ended, as far as codex's events tell.
type Outcome struct {
	// ThreadID is the codex thread id (from thread.started, or the one the
	// Translator already knew).
	ThreadID string
	// Completed is true when codex sent turn.completed.
	Completed bool
	// Interrupted is true when codex reported the turn as interrupted
	// (app-server turn/interrupt; exec has no such event).
	Interrupted bool
	// FailedMessage is codex's turn.failed message without any stack
	// backtrace; empty unless the turn failed. Failure explains it.
	FailedMessage string
	// FailedInfo is the failure's codexErrorInfo (app-server); nil from
	// codex exec, which prints only the message.
	FailedInfo json.RawMessage
	// FailedShown says FailedMessage was the turn's last warning shown
	// (exec prints an error event before turn.failed with the same text).
	FailedShown bool
	// Usage holds this turn's tokens (zero when codex reported none). An
	// interrupted or failed turn has them when the backend reports them
	// (app-server).
	Usage Usage
	// ThreadUsage holds codex's running totals after the turn; store it
	// with the session to seed Options.ThreadUsage after a restart.
	ThreadUsage Usage
	// ContextUsed estimates the tokens in the model's context after the
	// turn (see docs/events.md); zero when codex reported no usage.
	ContextUsed int
	// Updates mark tool calls that were still running when the turn ended
	// (cancelled or failed turn) as failed. Send them before answering the
	// prompt so the editor does not show them running forever.
	Updates []acpsdk.SessionUpdate
}

// ACP converts token counts to the PromptResponse usage of ACP.
func (u Usage) ACP() *acpsdk.Usage {
	return &acpsdk.Usage{
		InputTokens:       int(u.InputTokens),
		OutputTokens:      int(u.OutputTokens),
		TotalTokens:       int(u.InputTokens + u.OutputTokens),
		CachedReadTokens:  acpsdk.Ptr(int(u.CachedInputTokens)),
		CachedWriteTokens: acpsdk.Ptr(int(u.CacheWriteInputTokens)),
		ThoughtTokens:     acpsdk.Ptr(int(u.ReasoningOutputTokens)),
	}
}

// Translator turns the codex events of one ACP session into session
// updates. It lives as long as the session: turn numbers keep tool call ids
// unique although every codex process numbers its items from item_0, and
// the previous turn's token totals turn codex's running totals into
// per-turn usage. A Translator is not safe for concurrent use; a session's
// turns never overlap.
type Translator struct {
	opts     Options
	threadID string
	totals   Usage // codex's running totals after the last turn.completed
	turn     int

	// State of the current turn, reset by BeginTurn.
	calls       map[string]*toolCall // by codex item id
	order       []*toolCall
	streams     map[string]*textStream // streamed messages and reasoning, by item id
	chunk       chunkKind              // kind of the last text chunk of the current agent entry
	modelCalls  int                    // tool results codex sent back to the model
	completed   bool
	interrupted bool
	failed      string
	failedInfo  json.RawMessage
	lastWarning string // the turn's last warning sent
	usage       Usage
	contextUsed int
}

// textStream is an agent message or reasoning item whose text arrived in
// item.delta events: what was sent, so that item.completed sends only what
// is missing.
type textStream struct {
	kind chunkKind
	sent strings.Builder
	done bool // item.completed came; later deltas are ignored
}

type chunkKind int

const (
	chunkNone chunkKind = iota
	chunkMessage
	chunkThought
)

// toolCall is a tool call announced to the editor and the state last sent.
type toolCall struct {
	id   acpsdk.ToolCallId
	sent toolState
	// Output streamed so far (item.delta output), until it passes
	// Options.MaxOutputBytes; then capped, and no more delta updates.
	out    string
	capped bool
	shown  int // bytes of out in the last update sent
	// A subagent's messages shown in the call that started it
	// (subagentMessage), after the content of the call's own state (base).
	said keptText
	base []acpsdk.ToolCallContent
}

// toolState is everything a tool_call can say about a codex item.
type toolState struct {
	title     string
	kind      acpsdk.ToolKind
	status    acpsdk.ToolCallStatus
	locations []acpsdk.ToolCallLocation
	rawInput  any
	rawOutput any
	content   []acpsdk.ToolCallContent
}

// announce is the tool_call update that starts the call id in state st.
func (st toolState) announce(id acpsdk.ToolCallId) *acpsdk.SessionUpdateToolCall {
	return &acpsdk.SessionUpdateToolCall{
		ToolCallId: id,
		Title:      st.title,
		Kind:       st.kind,
		Status:     st.status,
		Locations:  st.locations,
		RawInput:   st.rawInput,
		RawOutput:  st.rawOutput,
		Content:    st.content,
	}
}

// NewTranslator returns a Translator for one ACP session.
func NewTranslator(opts Options) *Translator {
	if opts.MaxOutputBytes <= 0 {
		opts.MaxOutputBytes = DefaultMaxOutputBytes
	}
	t := &Translator{opts: opts, threadID: opts.ThreadID, totals: opts.ThreadUsage}
	t.reset()
	return t
}

// BeginTurn starts a new turn (a new codex process). Translate calls before
// the first BeginTurn belong to turn 1.
func (t *Translator) BeginTurn() {
	t.turn++
	t.reset()
}

func (t *Translator) reset() {
	t.calls = map[string]*toolCall{}
	t.order = nil
	t.streams = map[string]*textStream{}
	t.chunk = chunkNone
	t.modelCalls = 0
	t.completed = false
	t.interrupted = false
	t.failed = ""
	t.failedInfo = nil
	t.lastWarning = ""
	t.usage = Usage{}
	t.contextUsed = 0
}

// EndTurn reports how the turn ended and closes tool calls left running.
func (t *Translator) EndTurn() Outcome {
	out := Outcome{
		ThreadID:      t.threadID,
		Completed:     t.completed,
		Interrupted:   t.interrupted,
		FailedMessage: t.failed,
		FailedInfo:    t.failedInfo,
		FailedShown:   t.failed != "" && t.failed == t.lastWarning,
		Usage:         t.usage,
		ThreadUsage:   t.totals,
		ContextUsed:   t.contextUsed,
	}
	for _, c := range t.order {
		if c.sent.status == acpsdk.ToolCallStatusPending || c.sent.status == acpsdk.ToolCallStatusInProgress {
			c.sent.status = acpsdk.ToolCallStatusFailed
			out.Updates = append(out.Updates, acpsdk.UpdateToolCall(c.id, acpsdk.WithUpdateStatus(acpsdk.ToolCallStatusFailed)))
		}
	}
	return out
}

// Translate returns the session updates for one codex event, possibly none.
// Unknown event and item types give none (see Event.Known).
func (t *Translator) Translate(ev Event) []acpsdk.SessionUpdate {
	if t.turn == 0 {
		t.turn = 1
	}
	switch ev.Type {
	case TypeThreadStarted:
		if ev.ThreadID != "" {
			if t.threadID != "" && t.threadID != ev.ThreadID {
				t.totals = Usage{} // a new thread counts from zero
			}
			t.threadID = ev.ThreadID
		}
	case TypeTurnCompleted:
		t.completed = true
		if ev.Usage != nil {
			return t.turnUsage(*ev.Usage, ev.LastUsage)
		}
	case TypeTurnFailed:
		msg := ""
		if ev.Error != nil {
			msg = backtrace.Strip(ev.Error.Message)
			t.failedInfo = ev.Error.CodexErrorInfo
		}
		if msg == "" {
			msg = "codex reported the turn as failed"
		}
		t.failed = msg
		if ev.Usage != nil {
			return t.turnUsage(*ev.Usage, ev.LastUsage)
		}
	case TypeTurnInterrupted:
		t.interrupted = true
		if ev.Usage != nil {
			return t.turnUsage(*ev.Usage, ev.LastUsage)
		}
	case TypeError:
		return t.warning(ev.Message)
	case TypeItemDelta:
		if ev.Delta != nil {
			return t.delta(ev.Delta)
		}
	case TypeItemStarted, TypeItemUpdated, TypeItemCompleted:
		if ev.Item != nil {
			return t.item(ev.Type == TypeItemCompleted, ev.Item)
		}
	}
	return nil
}

// delta sends a streamed piece of an item (app-server).
func (t *Translator) delta(d *Delta) []acpsdk.SessionUpdate {
	switch d.Kind {
	case DeltaMessage:
		return t.streamText(chunkMessage, d.ItemID, d.Text)
	case DeltaReasoning:
		return t.streamText(chunkThought, d.ItemID, d.Text)
	case DeltaOutput:
		return t.streamOutput(d.ItemID, d.Text)
	}
	return nil
}

// streamText sends a piece of a message or thought as it arrives. The first
// piece of an item is a new text (t.text: a paragraph break after text of
// the same kind); the following ones continue it.
func (t *Translator) streamText(kind chunkKind, id, text string) []acpsdk.SessionUpdate {
	s := t.streams[id]
	if s == nil {
		s = &textStream{kind: kind}
		t.streams[id] = s
	}
	if s.done || s.kind != kind || text == "" {
		return nil
	}
	first := s.sent.Len() == 0
	s.sent.WriteString(text)
	if first {
		return t.text(kind, text)
	}
	t.chunk = kind
	return []acpsdk.SessionUpdate{chunkUpdate(kind, text)}
}

// streamedText handles the completed item of a streamed message or thought:
// nothing when the item's text is what was streamed, the rest when it
// extends it, nothing when it differs (the editor shows the streamed text
// already; sending the whole text again would repeat it). ok is false for
// items that were not streamed.
func (t *Translator) streamedText(kind chunkKind, it *Item) (us []acpsdk.SessionUpdate, ok bool) {
	s := t.streams[it.ID]
	if s == nil && it.ID != "" {
		// Not streamed: remember the item is complete, so that a late
		// delta does not repeat it.
		t.streams[it.ID] = &textStream{kind: kind, done: true}
	}
	if s == nil || s.done || s.kind != kind {
		return nil, false
	}
	sent := s.sent.String()
	s.done = true
	s.sent = strings.Builder{}
	if rest, found := strings.CutPrefix(it.Text, sent); found && rest != "" {
		t.chunk = kind
		return []acpsdk.SessionUpdate{chunkUpdate(kind, rest)}, true
	}
	return nil, true
}

func chunkUpdate(kind chunkKind, text string) acpsdk.SessionUpdate {
	if kind == chunkThought {
		return acpsdk.UpdateAgentThoughtText(text)
	}
	return acpsdk.UpdateAgentMessageText(text)
}

// outputStep is the least growth of a running command's output that is
// worth another update.
const outputStep = 512

// streamOutput shows a running command's output as it grows, in the
// tool call's content (fenced, as the final output). Once the output passes
// MaxOutputBytes, one last update shows its head and tail and later pieces
// are dropped: item.completed brings the final content. Pieces for items
// that are not running commands are ignored.
func (t *Translator) streamOutput(id, text string) []acpsdk.SessionUpdate {
	c := t.calls[id]
	if c == nil || c.capped || text == "" ||
		c.sent.kind != acpsdk.ToolKindExecute || c.sent.status != acpsdk.ToolCallStatusInProgress {
		return nil
	}
	out := c.out + text
	if len(out) > t.opts.MaxOutputBytes {
		out = limitText(out, t.opts.MaxOutputBytes)
		c.out, c.capped = "", true
	} else {
		c.out = out
		// Each update carries the whole output so far (ACP replaces
		// content): sending one per piece would cost the square of the
		// output. Updates wait until it grew by a quarter (at least
		// outputStep bytes), so a command's updates total a few times its
		// output at most.
		if c.shown > 0 && len(out)-c.shown < max(outputStep, c.shown/4) {
			return nil
		}
		c.shown = len(out)
	}
	content := []acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(fenced(out)))}
	c.sent.content = content
	return []acpsdk.SessionUpdate{acpsdk.UpdateToolCall(c.id, acpsdk.WithUpdateContent(content))}
}

func (t *Translator) item(done bool, it *Item) []acpsdk.SessionUpdate {
	switch it.Type {
	case ItemAgentMessage:
		// exec sends whole messages in item.completed only; reacting to
		// started/updated too would repeat the text. The app-server
		// streams them before (item.delta).
		if it.ParentCallID != "" {
			if done {
				return t.subagentMessage(it)
			}
			return nil
		}
		if done {
			if it.Withheld != "" {
				return t.withheldMessage(it)
			}
			if us, ok := t.streamedText(chunkMessage, it); ok {
				return us
			}
			return t.text(chunkMessage, it.Text)
		}
	case ItemReasoning:
		if done {
			if us, ok := t.streamedText(chunkThought, it); ok {
				return us
			}
			return t.text(chunkThought, it.Text)
		}
	case ItemError:
		if done {
			return t.warning(it.Message)
		}
	case ItemTodoList:
		return []acpsdk.SessionUpdate{planUpdate(it.Items, done)}
	case ItemCommandExecution:
		return t.tool(done, it, t.commandState(done, it))
	case ItemFileChange:
		return t.tool(done, it, fileChangeState(done, it, t.opts.MaxOutputBytes))
	case ItemWebSearch:
		return t.tool(done, it, webSearchState(done, it))
	case ItemCollabToolCall, ItemSubAgentActivity, ItemImageView, ItemImageGeneration:
		return t.tool(done, it, agentImageState(done, it))
	case ItemContextCompaction:
		return t.tool(done, it, compactionState(done))
	case ItemMCPToolCall:
		if it.Server == t.opts.OwnMCPServer && t.opts.OwnMCPServer != "" {
			if done {
				t.modelCalls++
			}
			// The agent reported this call as a tool call, and the editor
			// starts a new entry after one: no paragraph break needed.
			t.chunk = chunkNone
			return nil
		}
		return t.tool(done, it, mcpState(done, it))
	}
	return nil
}

// text sends an agent message or thought chunk. Codex sends whole messages,
// while editors append consecutive chunks of one kind to the same block, so
// a paragraph break keeps two messages from running together.
func (t *Translator) text(kind chunkKind, s string) []acpsdk.SessionUpdate {
	if s == "" {
		return nil
	}
	if t.chunk == kind {
		s = "\n\n" + s
	}
	t.chunk = kind
	return []acpsdk.SessionUpdate{chunkUpdate(kind, s)}
}

// warning shows a non-fatal codex error (retries, fallbacks) as agent text.
func (t *Translator) warning(msg string) []acpsdk.SessionUpdate {
	msg = backtrace.Strip(msg)
	if msg == "" {
		return nil
	}
	t.lastWarning = msg
	return t.text(chunkMessage, "⚠ "+msg)
}

// Notice is agent text of codexacp's own (the explanation of a failed
// turn, Outcome.Failure), in a paragraph of its own after the turn's text.
func (t *Translator) Notice(msg string) []acpsdk.SessionUpdate {
	return t.text(chunkMessage, msg)
}

// tool announces a tool-like item or sends what changed since last time.
func (t *Translator) tool(done bool, it *Item, st toolState) []acpsdk.SessionUpdate {
	if done && it.Type != ItemWebSearch && it.Type != ItemImageGeneration {
		// Web search and image generation run inside the model's response;
		// every other tool's result goes back to the model in a further
		// request.
		t.modelCalls++
	}
	c := t.calls[it.ID]
	if c == nil {
		c = &toolCall{id: acpsdk.ToolCallId(fmt.Sprintf("t%d-%s", t.turn, it.ID)), sent: st, base: st.content}
		if it.ID == "" {
			// Not "t<turn>-…": an item whose id is "anon0" must not get it.
			c.id = acpsdk.ToolCallId(fmt.Sprintf("t%d_anon%d", t.turn, len(t.order)))
		} else {
			t.calls[it.ID] = c
		}
		t.order = append(t.order, c)
		t.chunk = chunkNone // the editor starts a new entry after a tool call
		return []acpsdk.SessionUpdate{{ToolCall: st.announce(c.id)}}
	}
	c.base = st.content
	if !c.said.empty() {
		st.content = append(slices.Clip(st.content), t.saidContent(c))
	}
	var opts []acpsdk.ToolCallUpdateOpt
	if st.title != c.sent.title {
		opts = append(opts, acpsdk.WithUpdateTitle(st.title))
	}
	if st.kind != c.sent.kind {
		opts = append(opts, acpsdk.WithUpdateKind(st.kind))
	}
	if st.status != c.sent.status {
		opts = append(opts, acpsdk.WithUpdateStatus(st.status))
	}
	// Empty lists and nil values would be dropped from the JSON (omitempty),
	// so only new non-empty values are sent; ACP has no way to clear them.
	if len(st.locations) > 0 && !sameJSON(st.locations, c.sent.locations) {
		opts = append(opts, acpsdk.WithUpdateLocations(st.locations))
	}
	if st.rawInput != nil && !sameJSON(st.rawInput, c.sent.rawInput) {
		opts = append(opts, acpsdk.WithUpdateRawInput(st.rawInput))
	}
	if st.rawOutput != nil && !sameJSON(st.rawOutput, c.sent.rawOutput) {
		opts = append(opts, acpsdk.WithUpdateRawOutput(st.rawOutput))
	}
	if len(st.content) > 0 && !sameJSON(st.content, c.sent.content) {
		opts = append(opts, acpsdk.WithUpdateContent(st.content))
	}
	c.sent = st
	if len(opts) == 0 {
		return nil
	}
	return []acpsdk.SessionUpdate{acpsdk.UpdateToolCall(c.id, opts...)}
}

// subagentMessage shows a subagent's message in the content of the tool
// call that started it, after the messages before it: the call's own
// content, then the messages joined by blank lines, their head and tail
// within MaxOutputBytes. A message for a call the turn does not have is
// dropped.
func (t *Translator) subagentMessage(it *Item) []acpsdk.SessionUpdate {
	c := t.calls[it.ParentCallID]
	if c == nil || strings.TrimSpace(it.Text) == "" {
		return nil
	}
	if !c.said.empty() {
		c.said.add("\n\n", t.opts.MaxOutputBytes)
	}
	c.said.add(it.Text, t.opts.MaxOutputBytes)
	content := append(slices.Clip(c.base), t.saidContent(c))
	c.sent.content = content
	return []acpsdk.SessionUpdate{acpsdk.UpdateToolCall(c.id, acpsdk.WithUpdateContent(content))}
}

// saidContent is the content block of a subagent's messages.
func (t *Translator) saidContent(c *toolCall) acpsdk.ToolCallContent {
	return acpsdk.ToolContent(acpsdk.TextBlock(c.said.String()))
}

// turnUsage records this turn's tokens and reports the context use.
//
// codex reports the thread's running totals, summed over every model
// request; each request resends the whole conversation. With k requests in
// the turn (one, plus one per tool result sent back), the average request
// input is Δinput/k, and everything the model wrote this turn is now in the
// context as well: used ≈ Δinput/k + Δoutput. When the backend reports the
// last request's tokens (last, app-server), used is exactly its input plus
// output.
func (t *Translator) turnUsage(total Usage, last *Usage) []acpsdk.SessionUpdate {
	prev := t.totals
	if total.InputTokens < prev.InputTokens || total.OutputTokens < prev.OutputTokens {
		prev = Usage{} // counting restarted: a new thread
	}
	t.usage = Usage{
		InputTokens:           total.InputTokens - prev.InputTokens,
		CachedInputTokens:     max(0, total.CachedInputTokens-prev.CachedInputTokens),
		CacheWriteInputTokens: max(0, total.CacheWriteInputTokens-prev.CacheWriteInputTokens),
		OutputTokens:          total.OutputTokens - prev.OutputTokens,
		ReasoningOutputTokens: max(0, total.ReasoningOutputTokens-prev.ReasoningOutputTokens),
	}
	t.totals = total
	requests := int64(1 + t.modelCalls)
	used := int((t.usage.InputTokens+requests-1)/requests + t.usage.OutputTokens)
	if last != nil {
		used = int(max(0, last.InputTokens+last.OutputTokens))
	}
	if t.opts.ContextWindow > 0 {
		used = min(used, t.opts.ContextWindow)
	}
	t.contextUsed = used
	if t.opts.ContextWindow <= 0 {
		return nil
	}
	return []acpsdk.SessionUpdate{{UsageUpdate: &acpsdk.SessionUsageUpdate{Used: used, Size: t.opts.ContextWindow}}}
}

// planUpdate turns a todo list into a plan. While the turn runs, the first
// unfinished entry is the one in progress; in the final list (item.completed,
// sent when the turn ends) unfinished entries are pending.
func planUpdate(items []TodoItem, done bool) acpsdk.SessionUpdate {
	entries := make([]acpsdk.PlanEntry, 0, len(items))
	current := !done
	for _, it := range items {
		st := acpsdk.PlanEntryStatusPending
		switch {
		case it.Completed:
			st = acpsdk.PlanEntryStatusCompleted
		case current:
			st = acpsdk.PlanEntryStatusInProgress
			current = false
		}
		entries = append(entries, acpsdk.PlanEntry{Content: it.Text, Priority: acpsdk.PlanEntryPriorityMedium, Status: st})
	}
	return acpsdk.UpdatePlan(entries...)
}

func (t *Translator) commandState(done bool, it *Item) toolState {
	input := map[string]any{"command": it.Command}
	if it.Cwd != "" {
		input["cwd"] = it.Cwd
	}
	st := toolState{
		title:    UnwrapShellCommand(it.Command),
		kind:     acpsdk.ToolKindExecute,
		status:   itemStatus(done, it.Status, it.ExitCode),
		rawInput: input,
	}
	if st.title == "" {
		st.title = "Run a command"
	}
	if r := it.Refusal; r != nil {
		// Shown failed, not declined: nobody was asked.
		st.status = acpsdk.ToolCallStatusFailed
		shown := CommandRefusal{Reason: limitText(r.Reason, t.opts.MaxOutputBytes), Justification: limitText(r.Justification, t.opts.MaxOutputBytes)}
		if shown.Justification != "" {
			input["justification"] = shown.Justification
		}
		reason := shown.Reason
		st.content = []acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(refusalContent(&shown)))}
		st.rawOutput = map[string]any{"refused": reason}
		return st
	}
	out := limitText(it.AggregatedOutput, t.opts.MaxOutputBytes)
	if out != "" {
		st.content = []acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(fenced(out)))}
	}
	if st.status != acpsdk.ToolCallStatusInProgress {
		st.rawOutput = map[string]any{"exit_code": it.ExitCode, "output": out}
	}
	return st
}

func fileChangeState(done bool, it *Item, maxBytes int) toolState {
	// rawInput without the diffs (app-server): they are in content.
	changes := it.Changes
	if slices.ContainsFunc(changes, func(ch FileChange) bool { return ch.Diff != "" }) {
		changes = slices.Clone(changes)
		for i := range changes {
			changes[i].Diff = ""
		}
	}
	st := toolState{
		title:    fileChangeTitle(it.Changes),
		kind:     acpsdk.ToolKindEdit,
		status:   itemStatus(done, it.Status, nil),
		rawInput: map[string]any{"changes": changes},
		content:  fileChangeContent(it.Changes, maxBytes),
	}
	seen := map[string]bool{}
	for _, ch := range it.Changes {
		if !seen[ch.Path] {
			seen[ch.Path] = true
			st.locations = append(st.locations, acpsdk.ToolCallLocation{Path: ch.Path})
		}
	}
	return st
}

// fileChangeContent shows the changes the app-server reports with their
// diffs: an added file as an ACP diff without old text, a deleted one as a
// diff to empty text (their "diff" is the file's content), an update as
// its unified diff in a code block. maxBytes bounds the whole: a file
// that does not fit is left out (a cut file would be a wrong diff), a
// unified diff keeps its head and tail.
func fileChangeContent(changes []FileChange, maxBytes int) []acpsdk.ToolCallContent {
	var out []acpsdk.ToolCallContent
	budget := maxBytes
	for _, ch := range changes {
		if ch.Diff == "" || budget <= 0 {
			continue
		}
		switch ch.Kind {
		case "add", "delete":
			if len(ch.Diff) > budget {
				continue
			}
			budget -= len(ch.Diff)
			if ch.Kind == "add" {
				out = append(out, acpsdk.ToolDiffContent(ch.Path, ch.Diff))
			} else {
				out = append(out, acpsdk.ToolDiffContent(ch.Path, "", ch.Diff))
			}
		default:
			text := limitText(ch.Diff, budget)
			budget -= len(text)
			out = append(out, acpsdk.ToolContent(acpsdk.TextBlock(ch.Path+"\n"+fencedAs("diff", text))))
		}
	}
	return out
}

// fileChangeTitle names the files by kind of change: "Edit a.go, b.go",
// "Add x", "Edit a.go; add b.go".
func fileChangeTitle(changes []FileChange) string {
	const shown = 3
	var (
		verbs  []string
		byVerb = map[string][]string{}
	)
	for _, ch := range changes {
		v := changeVerb(ch.Kind)
		if _, ok := byVerb[v]; !ok {
			verbs = append(verbs, v)
		}
		byVerb[v] = append(byVerb[v], filepath.Base(ch.Path))
	}
	if len(verbs) == 0 {
		return "Edit files"
	}
	parts := make([]string, 0, len(verbs))
	for i, v := range verbs {
		names := byVerb[v]
		list := strings.Join(names[:min(len(names), shown)], ", ")
		if len(names) > shown {
			list += fmt.Sprintf(" and %d more", len(names)-shown)
		}
		if i > 0 {
			v = strings.ToLower(v)
		}
		parts = append(parts, v+" "+list)
	}
	return strings.Join(parts, "; ")
}

func changeVerb(kind string) string {
	switch kind {
	case "add":
		return "Add"
	case "delete":
		return "Delete"
	case "update":
		return "Edit"
	}
	return "Change"
}

func mcpState(done bool, it *Item) toolState {
	st := toolState{
		title:  it.Server + ": " + it.Tool,
		kind:   acpsdk.ToolKindOther,
		status: itemStatus(done, it.Status, nil),
	}
	if len(it.Arguments) > 0 && !bytes.Equal(it.Arguments, []byte("null")) {
		st.rawInput = it.Arguments
	}
	switch {
	case it.Error != nil:
		msg := backtrace.Strip(it.Error.Message)
		st.rawOutput = map[string]any{"error": msg}
		if msg != "" {
			st.content = []acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(msg))}
		}
	case it.Result != nil:
		st.rawOutput = it.Result
		st.content = mcpContent(it.Result.Content)
	}
	return st
}

// mcpContent shows the text and image blocks of an MCP result; the whole
// result is in rawOutput.
func mcpContent(blocks []json.RawMessage) []acpsdk.ToolCallContent {
	var out []acpsdk.ToolCallContent
	for _, raw := range blocks {
		var b struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			Data     string `json:"data"`
			MimeType string `json:"mimeType"`
		}
		if json.Unmarshal(raw, &b) != nil {
			continue
		}
		switch b.Type {
		case "text":
			out = append(out, acpsdk.ToolContent(acpsdk.TextBlock(b.Text)))
		case "image":
			out = append(out, acpsdk.ToolContent(acpsdk.ImageBlock(b.Data, b.MimeType)))
		}
	}
	return out
}

func webSearchState(done bool, it *Item) toolState {
	st := toolState{
		title:  webSearchTitle(it),
		kind:   acpsdk.ToolKindFetch,
		status: acpsdk.ToolCallStatusInProgress,
	}
	if done {
		st.status = acpsdk.ToolCallStatusCompleted
	}
	input := map[string]any{}
	if it.Query != "" {
		input["query"] = it.Query
	}
	if it.Action != nil {
		input["action"] = it.Action
	}
	if len(input) > 0 {
		st.rawInput = input
	}
	return st
}

// compactionState shows codex compacting the context as a tool call that
// runs while it does.
func compactionState(done bool) toolState {
	if done {
		return toolState{title: "Compacted the conversation", kind: acpsdk.ToolKindThink, status: acpsdk.ToolCallStatusCompleted}
	}
	return toolState{title: "Compacting the conversation", kind: acpsdk.ToolKindThink, status: acpsdk.ToolCallStatusInProgress}
}

func webSearchTitle(it *Item) string {
	a := it.Action
	if a == nil {
		a = &WebSearchAction{}
	}
	switch a.Type {
	case "open_page":
		if a.URL != "" {
			return "Open " + a.URL
		}
	case "find_in_page":
		if a.Pattern != "" && a.URL != "" {
			return fmt.Sprintf("Find %q in %s", a.Pattern, a.URL)
		}
	}
	q := it.Query
	if q == "" {
		q = a.Query
	}
	if q == "" {
		q = strings.Join(a.Queries, ", ")
	}
	if q == "" {
		return "Web search"
	}
	return "Web search: " + q
}

// itemStatus maps a codex item status to an ACP tool call status. A non-zero
// exit code fails a command even when codex says completed; an item.completed
// without a final status counts as completed.
func itemStatus(done bool, status string, exitCode *int) acpsdk.ToolCallStatus {
	failedExit := exitCode != nil && *exitCode != 0
	switch status {
	case "failed", "declined":
		return acpsdk.ToolCallStatusFailed
	case "completed":
		if failedExit {
			return acpsdk.ToolCallStatusFailed
		}
		return acpsdk.ToolCallStatusCompleted
	}
	if !done {
		return acpsdk.ToolCallStatusInProgress
	}
	if failedExit {
		return acpsdk.ToolCallStatusFailed
	}
	return acpsdk.ToolCallStatusCompleted
}

// fenced puts text into a Markdown code block whose fence is longer than any
// backtick run inside it.
func fenced(s string) string {
	return fencedAs("", s)
}

// fencedAs is fenced with an info string (the language) after the opening
// fence.
func fencedAs(lang, s string) string {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", max(3, longest+1))
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return fence + lang + "\n" + s + fence
}

// limitText keeps the head and the tail of s, max bytes in all, cut at
// rune boundaries, with a note of how much was left out.
func limitText(s string, limit int) string {
	var k keptText
	k.add(s, limit)
	return k.String()
}

// keptText is text that grows by pieces, kept as what limitText shows of
// the whole: while it is at most limit bytes, all of it; past that, its
// first limit/2 bytes and its last bytes up to limit, and the count of
// bytes between, so that its memory stays within limit however much
// arrives. Each piece costs at most limit bytes of copying.
type keptText struct {
	head    string
	tail    string // "" until cut
	omitted int    // bytes between head and tail; 0: head is the whole text
}

func (k *keptText) empty() bool { return k.head == "" && k.tail == "" && k.omitted == 0 }

// add appends s, keeping the text within limit.
func (k *keptText) add(s string, limit int) {
	if k.omitted == 0 && k.tail == "" {
		if len(k.head)+len(s) <= limit {
			k.head += s
			return
		}
		whole := s
		if k.head != "" {
			whole = k.head + s
		}
		head := limit / 2
		for head > 0 && !utf8.RuneStart(whole[head]) {
			head--
		}
		k.head, s = strings.Clone(whole[:head]), whole[head:]
	}
	tail := k.tail + s
	// The tail starts limit-len(head) bytes before the end, at a rune.
	cut := max(0, len(tail)-(limit-len(k.head)))
	for cut < len(tail) && !utf8.RuneStart(tail[cut]) {
		cut++
	}
	k.tail = strings.Clone(tail[cut:])
	k.omitted += cut
}

// String is the text, with a line counting the omitted bytes in place of
// them.
func (k *keptText) String() string {
	if k.omitted == 0 && k.tail == "" {
		return k.head
	}
	return fmt.Sprintf("%s\n… %d bytes omitted …\n%s", k.head, k.omitted, k.tail)
}

// sameJSON reports whether a and b encode to the same JSON.
func sameJSON(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}
