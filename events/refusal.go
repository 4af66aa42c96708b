package events

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Commands codex refused without asking anybody. `codex exec` runs with
// approval policy "never": a shell command the model wants to run with
// more than the sandbox allows (sandbox_permissions "require_escalated" or
// "with_additional_permissions") is refused, and the model is told so in
// the call's output, but codex exec prints no JSONL item for it
// (docs/codex.md#pinned-codex-facts): the editor would see nothing. The call and its output
// are in the thread's rollout, though; RefusalScanner finds them there and
// makes them command_execution items the Translator shows as failed
// tool calls with codex's reason (Item.Refusal).

// CommandRefusal is why codex did not run a command.
type CommandRefusal struct {
	// Reason is codex's text to the model ("approval policy is Never;
	// reject command — …").
	Reason string `json:"reason"`
	// Justification is the model's reason for asking for more than the
	// sandbox, when it gave one.
	Justification string `json:"justification,omitempty"`
}

// refusedCallPrefix starts the item id of a refused call: refused-<call id>
// (codex's call id), never an item id codex exec prints (item_N).
const refusedCallPrefix = "refused-"

// maxPendingShellCalls bounds the shell calls a RefusalScanner keeps while
// it waits for their output (calls run in parallel, few at a time).
const maxPendingShellCalls = 64

// RefusalScanner reads the records codex appends to a thread's rollout
// during a turn, one line at a time, in order, and returns an
// item.completed command_execution event for each shell command codex
// refused to run for want of an approval it could not ask for. It is pure
// and not safe for concurrent use.
type RefusalScanner struct {
	calls map[string]shellCall // by call id, until the call's output
	order []string             // call ids, oldest first (the bound)
}

// shellCall is a shell function call of the model, as the rollout has it.
type shellCall struct {
	command       string
	workdir       string
	justification string
}

// rolloutResponseItem is a rollout record of a model item (response_item).
type rolloutResponseItem struct {
	Type    string `json:"type"`
	Payload struct {
		Type      string          `json:"type"`
		Name      string          `json:"name"`
		Arguments string          `json:"arguments"`
		CallID    string          `json:"call_id"`
		Output    json.RawMessage `json:"output"`
	} `json:"payload"`
}

// Record reads one rollout line. ok is false for every line but the
// output of a refused shell call.
func (s *RefusalScanner) Record(line []byte) (ev Event, ok bool) {
	ev, ok, _ = s.Scan(line)
	return ev, ok
}

// Scan is Record that also reports whether the line is one a scanner needs
// to find the same refusals again: a shell call (kept until its output) or
// the output of a refused one. A recording keeps only those lines of the
// rollout (docs/replay.md): the outputs of commands that ran are codex's
// JSONL already.
func (s *RefusalScanner) Scan(line []byte) (ev Event, ok, needed bool) {
	// Most records are neither: skip them without decoding.
	isCall := bytes.Contains(line, []byte(`"function_call"`))
	isOutput := bytes.Contains(line, []byte(`"function_call_output"`))
	if !isCall && !isOutput {
		return Event{}, false, false
	}
	var rec rolloutResponseItem
	if err := json.Unmarshal(line, &rec); err != nil || rec.Type != "response_item" || rec.Payload.CallID == "" {
		return Event{}, false, false
	}
	p := rec.Payload
	switch p.Type {
	case "function_call":
		if call, ok := parseShellCall(p.Name, p.Arguments); ok {
			s.remember(p.CallID, call)
			return Event{}, false, true
		}
	case "function_call_output":
		call, known := s.calls[p.CallID]
		if !known {
			return Event{}, false, false
		}
		s.forget(p.CallID)
		reason, ok := RefusalReason(outputText(p.Output))
		if !ok {
			return Event{}, false, false
		}
		return Event{Type: TypeItemCompleted, Item: &Item{
			ID:      refusedCallPrefix + p.CallID,
			Type:    ItemCommandExecution,
			Command: call.command,
			Cwd:     call.workdir,
			Status:  "declined",
			Refusal: &CommandRefusal{Reason: reason, Justification: call.justification},
		}}, true, true
	}
	return Event{}, false, false
}

func (s *RefusalScanner) remember(id string, c shellCall) {
	if s.calls == nil {
		s.calls = map[string]shellCall{}
	}
	if _, dup := s.calls[id]; !dup {
		s.order = append(s.order, id)
	}
	s.calls[id] = c
	for len(s.order) > maxPendingShellCalls {
		delete(s.calls, s.order[0])
		s.order = s.order[1:]
	}
}

func (s *RefusalScanner) forget(id string) {
	delete(s.calls, id)
	for i, o := range s.order {
		if o == id {
			s.order = append(s.order[:i], s.order[i+1:]...)
			break
		}
	}
}

// parseShellCall reads the arguments of the model's shell tools:
// exec_command (cmd, workdir) and the older shell / shell_command
// (command as a list or a string).
func parseShellCall(name, arguments string) (shellCall, bool) {
	switch name {
	case "exec_command", "shell", "shell_command", "local_shell":
	default:
		return shellCall{}, false
	}
	var a struct {
		Cmd           string          `json:"cmd"`
		Command       json.RawMessage `json:"command"`
		Workdir       string          `json:"workdir"`
		Justification string          `json:"justification"`
	}
	if err := json.Unmarshal([]byte(arguments), &a); err != nil {
		return shellCall{}, false
	}
	c := shellCall{command: a.Cmd, workdir: a.Workdir, justification: a.Justification}
	if c.command == "" && len(a.Command) > 0 {
		var argv []string
		if json.Unmarshal(a.Command, &argv) == nil {
			c.command = strings.Join(argv, " ")
		} else {
			_ = json.Unmarshal(a.Command, &c.command)
		}
	}
	return c, true
}

// outputText is a function call output's text: a string, or an object
// with a content string (codex has written both).
func outputText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		Content string `json:"content"`
	}
	if json.Unmarshal(raw, &o) == nil {
		return o.Content
	}
	return ""
}

// RefusalReason reports whether a shell call's output is codex refusing to
// run it for want of an approval ("approval policy is Never; reject
// command — you cannot ask for escalated permissions if the approval
// policy is Never", or a request for additional permissions under a
// policy other than on-request), and returns the reason, trimmed. Codex's
// text is the whole output, so it must start it: a command that ran and
// printed these words is no refusal.
func RefusalReason(output string) (string, bool) {
	out := strings.TrimSpace(output)
	switch {
	case strings.HasPrefix(out, "approval policy is ") && strings.Contains(out, "reject command"),
		strings.HasPrefix(out, "you cannot request additional permissions unless the approval policy is"):
		return out, true
	}
	return "", false
}

// RefusalHint tells the user what to do about a command codex refused: the
// exec backend cannot ask, the app-server backend can.
const RefusalHint = "codex exec (the backend codexacp runs with --backend exec) cannot ask you for approval, so codex refused this command. " +
	"Start codexacp with `--backend app-server` (the default: drop `--backend exec` and CODEXACP_BACKEND=exec) to be asked before a command that needs " +
	"more than the sandbox runs, or use the full-access mode (no sandbox)."

// refusalContent is the text a refused command's tool call shows.
func refusalContent(r *CommandRefusal) string {
	text := "Codex refused to run this command: " + r.Reason
	if j := strings.TrimSpace(r.Justification); j != "" {
		text += "\nThe model's reason for asking: " + j
	}
	return text + "\n\n" + RefusalHint
}
