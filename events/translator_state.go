package events

import acpsdk "github.com/coder/acp-go-sdk"

// ToolCallID is the id of the tool call under which the current turn's
// codex item itemID was announced, so that a question about it (a command
// approval) can be attached to the same call in the editor.
func (t *Translator) ToolCallID(itemID string) (acpsdk.ToolCallId, bool) {
	c, ok := t.calls[itemID]
	if !ok {
		return "", false
	}
	return c.id, true
}

// SetContextWindow changes the context window reported in usage_update
// (the session switched models); zero: unknown, no usage_update.
func (t *Translator) SetContextWindow(tokens int) {
	t.opts.ContextWindow = tokens
}
