package mockapi

import (
	"encoding/json"
	"fmt"
	"sync/atomic"
)

// Item is one Responses API output item, exactly as it is streamed to codex.
// Tests may add or change fields before enqueueing it.
type Item map[string]any

// itemSeq makes item ids unique within a test binary; codex only needs them to
// be distinct within one response.
var itemSeq atomic.Int64

func nextID(prefix string) string {
	return fmt.Sprintf("%s_%d", prefix, itemSeq.Add(1))
}

// Message is an assistant message with one output_text part; it is streamed
// with output_text deltas before its output_item.done.
func Message(text string) Item {
	return Item{
		"type":   "message",
		"id":     nextID("msg"),
		"role":   "assistant",
		"status": "completed",
		"content": []any{
			map[string]any{"type": "output_text", "text": text, "annotations": []any{}},
		},
	}
}

// Reasoning is a reasoning item whose summary is text (codex shows it as a
// reasoning item).
func Reasoning(text string) Item {
	return Item{
		"type":              "reasoning",
		"id":                nextID("rs"),
		"summary":           []any{map[string]any{"type": "summary_text", "text": text}},
		"encrypted_content": nil,
	}
}

// FunctionCall is a call of a top-level function tool. argsJSON is the
// arguments object as JSON text, passed through unchanged.
func FunctionCall(callID, name, argsJSON string) Item {
	return Item{
		"type":      "function_call",
		"id":        nextID("fc"),
		"call_id":   callID,
		"name":      name,
		"arguments": argsJSON,
		"status":    "completed",
	}
}

// NamespacedCall is a call of a deferred tool such as an MCP tool: codex wants
// namespace "mcp__<server>" and the bare tool name, not a flattened name.
func NamespacedCall(callID, namespace, name, argsJSON string) Item {
	it := FunctionCall(callID, name, argsJSON)
	it["namespace"] = namespace
	return it
}

// ExecCommand is a call of codex's exec_command shell tool running cmd.
func ExecCommand(callID, cmd string) Item {
	args, err := json.Marshal(map[string]string{"cmd": cmd})
	if err != nil {
		panic(err) // a map of strings always marshals
	}
	return FunctionCall(callID, "exec_command", string(args))
}
