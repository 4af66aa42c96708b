package events

import (
	acpsdk "github.com/coder/acp-go-sdk"
)

// An agent message's moderation verdict, which newer app-servers send
// (docs/events.md, "Codex 0.171's fields", says which codex versions send
// which shape; the same section covers the bioPolicy category of
// codexErrorInfo, explained with the other categories by ClassifyFailure,
// failure.go, and environmentId on MCP items, which asItem does not read).

// asModeration is what an agentMessage's "moderation" adds to asItem.
type asModeration struct {
	Moderation *struct {
		Moderated bool `json:"moderated"`
		// Display is a tagged union {"mode": "show" | "hide" | "block",
		// "version": 1, "replacement" | "reason" …}; an older codex sent
		// {"action": …, "blockType": …}, read the same way (docs/events.md).
		Display *struct {
			Mode        string `json:"mode"`
			Action      string `json:"action"` // the older shape
			Replacement *struct {
				Kind string `json:"kind"`
			} `json:"replacement"`
			Reason *struct {
				Kind           string `json:"kind"`
				ProtectionType string `json:"protectionType"`
			} `json:"reason"`
			BlockType string `json:"blockType"` // the older shape
		} `json:"display"`
	} `json:"moderation"`
}

// withheld says why codex withholds the message from the user ("hidden by
// codex's moderation", …), or "" when it is to be shown: no moderation,
// "show", or a display codex's clients are told to leave alone (unknown).
func (m asModeration) withheld() string {
	if m.Moderation == nil || m.Moderation.Display == nil {
		return ""
	}
	d := m.Moderation.Display
	mode := d.Mode
	if mode == "" {
		mode = d.Action
	}
	switch mode {
	case "hide":
		why := "hidden by codex's moderation"
		if d.Replacement != nil && d.Replacement.Kind == "wellbeingPromptHelpline" {
			why += "; codex's own apps show a wellbeing helpline message in its place"
		}
		return why
	case "block":
		why := "blocked by codex's moderation"
		switch {
		case d.Reason != nil && d.Reason.Kind == "protection" && d.Reason.ProtectionType != "":
			why += ": " + d.Reason.ProtectionType
		case d.Reason != nil && d.Reason.Kind != "":
			why += ": " + d.Reason.Kind
		case d.BlockType != "":
			why += ": " + d.BlockType
		}
		return why
	}
	return ""
}

// withheldMessage is what the editor gets for a message codex withholds:
// a plain note instead of its text, or, when its text streamed before
// codex's verdict (item/agentMessage/delta comes first), a note that the
// text above was withheld — what is on screen cannot be taken back.
func (t *Translator) withheldMessage(it *Item) []acpsdk.SessionUpdate {
	s := t.streams[it.ID]
	streamed := s != nil && !s.done && s.kind == chunkMessage && s.sent.Len() > 0
	if it.ID != "" {
		t.streams[it.ID] = &textStream{kind: chunkMessage, done: true}
	}
	if streamed {
		return t.warning("codex withheld the message above (" + it.Withheld + "): it streamed before codex's verdict; do not rely on it.")
	}
	return t.warning("codex withheld a message (" + it.Withheld + "); its text is not shown.")
}
