package events

import (
	"encoding/json"
	"strings"
)

// The app-server's subagent and image items (codex's ThreadItem
// variants collabAgentToolCall, subAgentActivity, imageView,
// imageGeneration), converted to the exec item shape.

// asAgentItem is what collabAgentToolCall and subAgentActivity add to
// asItem (tool and status are asItem's).
type asAgentItem struct {
	Prompt            string                `json:"prompt"` // collabAgentToolCall
	Model             string                `json:"model"`
	SenderThreadID    string                `json:"senderThreadId"`
	ReceiverThreadIDs []string              `json:"receiverThreadIds"`
	AgentsStates      map[string]asAgentRef `json:"agentsStates"`

	Kind          string `json:"kind"` // subAgentActivity
	AgentThreadID string `json:"agentThreadId"`
	AgentPath     string `json:"agentPath"`
}

// asAgentRef is a CollabAgentState.
type asAgentRef struct {
	Status  string  `json:"status"`
	Message *string `json:"message"`
}

// asImageItem is what imageView and imageGeneration add to asItem.
type asImageItem struct {
	Path string `json:"path"` // imageView

	RevisedPrompt string `json:"-"` // imageGeneration: see unmarshalImageGeneration
	ImageResult   string `json:"-"`
	SavedPath     string `json:"-"`
	Failure       string `json:"-"`
}

// unmarshalImageGeneration reads an imageGeneration item, whose "result"
// (the image, base64) is a string where an mcpToolCall has an object.
func (it *asItem) unmarshalImageGeneration(b []byte) error {
	var g struct {
		Type          string  `json:"type"`
		ID            string  `json:"id"`
		Status        string  `json:"status"`
		RevisedPrompt *string `json:"revisedPrompt"`
		Result        string  `json:"result"`
		SavedPath     *string `json:"savedPath"`
		Failure       *struct {
			Type string `json:"type"`
		} `json:"failure"`
	}
	if err := json.Unmarshal(b, &g); err != nil {
		return err
	}
	it.Type, it.ID, it.Status, it.ImageResult = g.Type, g.ID, g.Status, g.Result
	if g.RevisedPrompt != nil {
		it.RevisedPrompt = *g.RevisedPrompt
	}
	if g.SavedPath != nil {
		it.SavedPath = *g.SavedPath
	}
	if g.Failure != nil {
		it.Failure = g.Failure.Type
		if it.Failure == "" {
			it.Failure = "failed"
		}
	}
	return nil
}

func (a *asItem) collabItem(it *Item) {
	it.Type = ItemCollabToolCall
	it.Tool, it.Status = camelToSnake(a.Tool), camelToSnake(a.Status)
	it.Prompt, it.Model = a.Prompt, a.Model
	it.SenderThreadID, it.ReceiverThreadIDs = a.SenderThreadID, a.ReceiverThreadIDs
	if len(a.AgentsStates) > 0 {
		it.AgentsStates = make(map[string]AgentState, len(a.AgentsStates))
		for id, st := range a.AgentsStates {
			s := AgentState{Status: camelToSnake(st.Status)}
			if st.Message != nil {
				s.Message = *st.Message
			}
			it.AgentsStates[id] = s
		}
	}
}

func (a *asItem) activityItem(it *Item) {
	it.Type, it.Activity = ItemSubAgentActivity, a.Kind
	it.AgentThreadID, it.AgentPath = a.AgentThreadID, a.AgentPath
}

func (a *asItem) imageItem(it *Item) {
	it.Type, it.Status = ItemImageGeneration, a.Status
	it.RevisedPrompt, it.ImageData, it.Path, it.Failure = a.RevisedPrompt, a.ImageResult, a.SavedPath, a.Failure
}

// camelToSnake turns the app-server's camelCase enum values (spawnAgent,
// inProgress, pendingInit) into exec's snake_case ones.
func camelToSnake(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
