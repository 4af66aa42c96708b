package events

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"
)

// HistoryOptions configure History.
type HistoryOptions struct {
	// OwnMCPServer is codexacp's tool server ("acp"): its calls are shown as
	// read/edit tool calls with the diff they made, like in a live turn.
	OwnMCPServer string
	// MaxOutputBytes caps command output as in Options; 0: the default.
	MaxOutputBytes int
	// Writes are the overwrites by write_text_file the session kept, in
	// the order they happened: the rollout has such a call's new text and
	// the hash of it, not the text it replaced, so each replayed overwrite
	// shows the content of the first unused one of its path and hash.
	Writes []KnownWrite
}

// KnownWrite is what a session kept of a write_text_file call that
// overwrote a file: the content its tool call showed when it completed
// (the diff from the old text), for its replay.
type KnownWrite struct {
	Path    string                   `json:"path"` // the call's path argument
	Hash    string                   `json:"hash"` // the result's: of the new text
	Content []acpsdk.ToolCallContent `json:"content"`
}

// knownWrites hands out each KnownWrite once, to the first overwrite of
// its path and hash.
type knownWrites struct {
	writes []KnownWrite
	used   []bool
}

func (k *knownWrites) take(path, hash string) ([]acpsdk.ToolCallContent, bool) {
	for i, w := range k.writes {
		if !k.used[i] && hash != "" && w.Hash == hash && (w.Path == path || w.Path == filepath.Clean(path)) {
			k.used[i] = true
			return w.Content, true
		}
	}
	return nil, false
}

// rolloutLine is one record of codex's rollout file
// ($CODEX_HOME/sessions/…/rollout-…-<thread>.jsonl). History reads only the
// event_msg item_completed records: they carry what the user and the model
// said and did, without the instructions and context codex injects.
type rolloutLine struct {
	Type    string `json:"type"`
	Payload struct {
		Type string          `json:"type"`
		Item json.RawMessage `json:"item"`
	} `json:"payload"`
}

type rolloutItem struct {
	Type    string `json:"type"`
	ID      string `json:"id"`
	Text    string `json:"text"` // Plan
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	SummaryText      []string        `json:"summary_text"`
	Command          []string        `json:"command"`
	AggregatedOutput string          `json:"aggregated_output"`
	ExitCode         *int            `json:"exit_code"`
	Status           string          `json:"status"`
	Server           string          `json:"server"`
	Tool             string          `json:"tool"`
	Arguments        json.RawMessage `json:"arguments"`
	Result           *struct {
		Content           []json.RawMessage `json:"content"`
		StructuredContent json.RawMessage   `json:"structuredContent"`
	} `json:"result"`
	Error json.RawMessage `json:"error"`
}

// History turns a codex rollout file into the session updates that replay
// the conversation for session/load: user messages, the model's messages and
// reasoning, and completed tool calls. Records it does not know are skipped;
// a line that is not JSON is an error (the file is not a rollout).
func History(r io.Reader, opts HistoryOptions) ([]acpsdk.SessionUpdate, error) {
	if opts.MaxOutputBytes == 0 {
		opts.MaxOutputBytes = DefaultMaxOutputBytes
	}
	br := bufio.NewReader(r)
	known := &knownWrites{writes: opts.Writes, used: make([]bool, len(opts.Writes))}
	var out []acpsdk.SessionUpdate
	plan := "" // a proposed plan waiting for its message
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var rec rolloutLine
			if jerr := json.Unmarshal(line, &rec); jerr != nil {
				return nil, fmt.Errorf("rollout line %d: %w", n, jerr)
			}
			if rec.Type == "event_msg" && rec.Payload.Type == "item_completed" && len(rec.Payload.Item) > 0 {
				var it rolloutItem
				if jerr := json.Unmarshal(rec.Payload.Item, &it); jerr == nil {
					switch {
					case it.Type == "Plan":
						// Plan mode's proposed plan, which codex completes
						// before the message it was part of (the text
						// around the <proposed_plan> block): shown after
						// that whole message (live it streamed between the
						// text before and after the block). A plan still
						// waiting had no message (a plan-only turn): it
						// goes first.
						out, plan = withPlan(out, plan), it.Text
					case it.Type == "AgentMessage":
						out = append(out, separate(historyItem(&it, rec.Payload.Item, len(out), opts, known), out)...)
						out, plan = withPlan(out, plan), ""
					default:
						out, plan = withPlan(out, plan), ""
						out = append(out, separate(historyItem(&it, rec.Payload.Item, len(out), opts, known), out)...)
					}
				}
			}
		}
		if err == io.EOF {
			return withPlan(out, plan), nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading rollout: %w", err)
		}
	}
}

func historyItem(it *rolloutItem, raw json.RawMessage, seq int, opts HistoryOptions, known *knownWrites) []acpsdk.SessionUpdate {
	id := acpsdk.ToolCallId(fmt.Sprintf("history-%d-%s", seq, it.ID))
	switch it.Type {
	case "UserMessage":
		if text := joinText(it); text != "" {
			return []acpsdk.SessionUpdate{acpsdk.UpdateUserMessageText(text)}
		}
	case "AgentMessage":
		if text := joinText(it); text != "" {
			return []acpsdk.SessionUpdate{acpsdk.UpdateAgentMessageText(text)}
		}
	case "Reasoning":
		if text := strings.Join(it.SummaryText, "\n\n"); text != "" {
			return []acpsdk.SessionUpdate{acpsdk.UpdateAgentThoughtText(text)}
		}
	case "CommandExecution":
		command := shellJoin(it.Command)
		title := UnwrapShellCommand(command)
		if title == "" {
			title = "Run a command"
		}
		status := itemStatus(true, it.Status, it.ExitCode)
		out := limitText(it.AggregatedOutput, opts.MaxOutputBytes)
		tc := &acpsdk.SessionUpdateToolCall{
			ToolCallId: id, Title: title, Kind: acpsdk.ToolKindExecute, Status: status,
			RawInput:  map[string]any{"command": command},
			RawOutput: map[string]any{"exit_code": it.ExitCode, "output": out},
		}
		if out != "" {
			tc.Content = []acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(fenced(out)))}
		}
		return []acpsdk.SessionUpdate{{ToolCall: tc}}
	case "McpToolCall":
		return []acpsdk.SessionUpdate{{ToolCall: mcpHistoryCall(id, it, opts, known)}}
	case "WebSearch", "ImageView", "ImageGeneration", "CollabAgentToolCall", "SubAgentActivity":
		return historyTool(id, it.Type, raw)
	}
	return nil
}

// withPlan adds a proposed plan to out as the agent's text.
func withPlan(out []acpsdk.SessionUpdate, plan string) []acpsdk.SessionUpdate {
	if plan == "" {
		return out
	}
	return append(out, separate([]acpsdk.SessionUpdate{acpsdk.UpdateAgentMessageText(plan)}, out)...)
}

// separate starts a message or thought with a paragraph break when the
// update before it is of the same kind: editors join consecutive chunks of
// one kind into one block, as in a live turn (Translator.text).
func separate(us []acpsdk.SessionUpdate, before []acpsdk.SessionUpdate) []acpsdk.SessionUpdate {
	if len(us) != 1 || len(before) == 0 {
		return us
	}
	prev, u := before[len(before)-1], us[0]
	switch {
	case u.AgentMessageChunk != nil && prev.AgentMessageChunk != nil:
		return []acpsdk.SessionUpdate{acpsdk.UpdateAgentMessageText("\n\n" + u.AgentMessageChunk.Content.Text.Text)}
	case u.AgentThoughtChunk != nil && prev.AgentThoughtChunk != nil:
		return []acpsdk.SessionUpdate{acpsdk.UpdateAgentThoughtText("\n\n" + u.AgentThoughtChunk.Content.Text.Text)}
	}
	return us
}

func joinText(it *rolloutItem) string {
	var parts []string
	for _, c := range it.Content {
		if c.Text != "" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// shellJoin renders an argv the way codex's JSONL shows commands, so the
// same unwrapping applies: `/bin/bash -lc 'script'`.
func shellJoin(argv []string) string {
	words := make([]string, len(argv))
	for i, w := range argv {
		if w != "" && strings.IndexFunc(w, func(r rune) bool { return !isShellSafe(r) }) < 0 {
			words[i] = w
		} else {
			words[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
	}
	return strings.Join(words, " ")
}

func isShellSafe(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r)
}

// mcpHistoryCall shows an MCP call. Calls of our own tool server get the
// kinds and titles of a live turn and the unified diff they returned; an
// overwrite the diff the session kept (known).
func mcpHistoryCall(id acpsdk.ToolCallId, it *rolloutItem, opts HistoryOptions, known *knownWrites) *acpsdk.SessionUpdateToolCall {
	status := acpsdk.ToolCallStatusCompleted
	if it.Status != "completed" || len(it.Error) > 0 && string(it.Error) != "null" {
		status = acpsdk.ToolCallStatusFailed
	}
	tc := &acpsdk.SessionUpdateToolCall{ToolCallId: id, Title: it.Server + ": " + it.Tool, Kind: acpsdk.ToolKindOther, Status: status}
	if len(it.Arguments) > 0 && string(it.Arguments) != "null" {
		tc.RawInput = it.Arguments
	}
	if it.Result != nil {
		if len(it.Result.StructuredContent) > 0 {
			tc.RawOutput = it.Result.StructuredContent
		}
		tc.Content = mcpContent(it.Result.Content)
	}
	if it.Server != opts.OwnMCPServer || opts.OwnMCPServer == "" {
		return tc
	}
	var args struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}
	_ = json.Unmarshal(it.Arguments, &args)
	verb, kind := FileTool(it.Tool)
	tc.Title, tc.Kind = strings.TrimSpace(verb+" "+args.Path), kind
	if args.Path != "" {
		tc.Locations = []acpsdk.ToolCallLocation{{Path: args.Path}}
	}
	if it.Result != nil {
		var res struct {
			Diff    string  `json:"diff"`
			Content *string `json:"content"`
			Created bool    `json:"created"`
			Hash    string  `json:"hash"`
		}
		if json.Unmarshal(it.Result.StructuredContent, &res) == nil {
			if res.Diff != "" {
				// As the live turn: diff content, here the changed
				// regions the recorded diff holds (the whole file's old
				// text is not in the rollout); the diff as text when it
				// cannot be read as hunks.
				tc.Content = []acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(fenced(res.Diff)))}
				if hunks := HunkContents(args.Path, res.Diff); args.Path != "" && len(hunks) > 0 {
					tc.Content = hunks
				}
			}
			switch {
			case it.Tool != "write_text_file" || args.Path == "":
			case res.Created:
				// A created file's diff is its whole content, which the
				// call's arguments hold.
				tc.Content = []acpsdk.ToolCallContent{acpsdk.ToolDiffContent(args.Path, args.Content)}
			case status == acpsdk.ToolCallStatusCompleted:
				// An overwrite's old text is not in the rollout: the diff
				// the session kept, else the result as codex saw it.
				if content, ok := known.take(args.Path, res.Hash); ok {
					tc.Content = content
				}
			}
			if kind == acpsdk.ToolKindRead && res.Content != nil {
				// As in a live turn: the facts of a read, not the file.
				var out map[string]any
				if json.Unmarshal(it.Result.StructuredContent, &out) == nil {
					delete(out, "content")
					out["content_bytes"] = len(*res.Content)
					tc.RawOutput = out
				}
				tc.Content = nil
			}
		}
	}
	return tc
}

// FileTool is how one of codexacp's file tools (read_text_file,
// write_text_file, edit_text_file) shows in the editor: its title's verb
// and its kind. The live tool calls (package acp) and the replayed history
// share it, so a loaded session shows its calls as they were shown live.
func FileTool(tool string) (verb string, kind acpsdk.ToolKind) {
	switch tool {
	case "read_text_file":
		return "Read", acpsdk.ToolKindRead
	case "write_text_file":
		return "Write", acpsdk.ToolKindEdit
	}
	return "Edit", acpsdk.ToolKindEdit
}
