package record

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// minSummarised is the length from which instructions are summarised.
const minSummarised = 512

// instructionKeys hold the developer instructions the agent gives codex:
// exec's -c developer_instructions, the app-server's thread and turn
// params. They are codexacp's own text (2–5 KB, the same in every run),
// which neither the replay nor a fake codex compares.
var instructionKeys = map[string]bool{"developer_instructions": true, "developerInstructions": true}

// summarise stands for a long text in a transcript: its size, lines and
// the start of its SHA-256, so that two runs' instructions still compare.
func summarise(text string) string {
	sum := sha256.Sum256([]byte(text))
	return fmt.Sprintf("[instructions: %d bytes, %d lines, sha256 %s…]", len(text), strings.Count(text, "\n")+1, hex.EncodeToString(sum[:6]))
}

// summariseConfigArg summarises a long developer_instructions="…" -c
// argument.
func summariseConfigArg(arg string) string {
	key, value, ok := strings.Cut(arg, "=")
	v := strings.TrimSpace(value)
	if !ok || !instructionKeys[strings.TrimSpace(key)] || len(v) < minSummarised || (v[0] != '"' && v[0] != '\'') {
		return arg
	}
	return key + "=" + strconv.Quote(summarise(tomlUnquote(v)))
}

// instructionsKey is in every message summariseInstructions may change.
var instructionsKeys = [][]byte{[]byte(`"developerInstructions"`), []byte(`"developer_instructions"`)}

// summariseInstructions summarises long developer instructions in a
// message the agent sends codex app-server. Other messages come back
// unchanged.
func summariseInstructions(msg json.RawMessage) json.RawMessage {
	if !containsAny(msg, instructionsKeys) {
		return msg
	}
	v, err := decodeJSON(msg)
	if err != nil {
		return msg
	}
	summariseMembers := func(obj map[string]any) bool {
		changed := false
		for k, child := range obj {
			if s, ok := child.(string); ok && instructionKeys[k] && len(s) >= minSummarised {
				obj[k] = summarise(s)
				changed = true
			}
		}
		return changed
	}
	if !editObjects(v, summariseMembers) {
		return msg
	}
	out, err := encodeJSON(v)
	if err != nil {
		return msg
	}
	return out
}

func containsAny(b []byte, subs [][]byte) bool {
	for _, s := range subs {
		if bytes.Contains(b, s) {
			return true
		}
	}
	return false
}
