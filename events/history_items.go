package events

import (
	"encoding/json"
	"net/url"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"
)

// historyTool replays a rollout's web search, image view, generated
// image or subagent item as the completed tool call a live turn ends with
// (the same states: webSearchState, agentImageState). Nothing for an item
// that does not decode.
func historyTool(id acpsdk.ToolCallId, typ string, raw json.RawMessage) []acpsdk.SessionUpdate {
	it, ok := rolloutToolItem(typ, raw)
	if !ok {
		return nil
	}
	var st toolState
	if it.Type == ItemWebSearch {
		st = webSearchState(true, it)
	} else {
		st = agentImageState(true, it)
	}
	return []acpsdk.SessionUpdate{{ToolCall: st.announce(id)}}
}

// rolloutToolItem converts a rollout item (codex's TurnItem: snake_case
// fields for WebSearch, ImageView and ImageGeneration, camelCase for the
// subagent items) to the exec item shape.
func rolloutToolItem(typ string, raw json.RawMessage) (*Item, bool) {
	it := &Item{}
	switch typ {
	case "WebSearch":
		var r struct {
			Query  string           `json:"query"`
			Action *WebSearchAction `json:"action"` // already exec's snake_case
		}
		if json.Unmarshal(raw, &r) != nil {
			return nil, false
		}
		it.Type, it.Query, it.Action = ItemWebSearch, r.Query, r.Action
	case "ImageView":
		var r struct {
			Path string `json:"path"`
		}
		if json.Unmarshal(raw, &r) != nil {
			return nil, false
		}
		it.Type, it.Path = ItemImageView, uriPath(r.Path)
	case "ImageGeneration":
		var r struct {
			Status        string `json:"status"`
			RevisedPrompt string `json:"revised_prompt"`
			Result        string `json:"result"`
			SavedPath     string `json:"saved_path"`
		}
		if json.Unmarshal(raw, &r) != nil {
			return nil, false
		}
		it.Type, it.Status, it.RevisedPrompt, it.ImageData, it.Path = ItemImageGeneration, r.Status, r.RevisedPrompt, r.Result, uriPath(r.SavedPath)
	case "CollabAgentToolCall", "SubAgentActivity":
		// Released codex writes these with snake_case keys, its later
		// source with camelCase ones (docs/codex.md#pinned-codex-facts):
		// both are read.
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return nil, false
		}
		str := func(key string) string {
			var v string
			_ = json.Unmarshal(rolloutField(m, key), &v)
			return v
		}
		if typ == "SubAgentActivity" {
			it.Type, it.Activity, it.AgentThreadID, it.AgentPath = ItemSubAgentActivity, str("kind"), str("agent_thread_id"), str("agent_path")
			break
		}
		it.Type, it.Tool, it.Status = ItemCollabToolCall, camelToSnake(str("tool")), camelToSnake(str("status"))
		it.SenderThreadID, it.Prompt, it.Model = str("sender_thread_id"), str("prompt"), str("model")
		_ = json.Unmarshal(rolloutField(m, "receiver_thread_ids"), &it.ReceiverThreadIDs)
		var states map[string]json.RawMessage
		_ = json.Unmarshal(rolloutField(m, "agents_states"), &states)
		for agent, v := range states {
			if it.AgentsStates == nil {
				it.AgentsStates = map[string]AgentState{}
			}
			it.AgentsStates[agent] = rolloutAgentStatus(v)
		}
	default:
		return nil, false
	}
	return it, true
}

// rolloutField is m's value under the snake_case key or its camelCase
// form.
func rolloutField(m map[string]json.RawMessage, key string) json.RawMessage {
	if v, ok := m[key]; ok {
		return v
	}
	parts := strings.Split(key, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return m[strings.Join(parts, "")]
}

// rolloutAgentStatus reads a subagent's status as the rollout stores it:
// a bare name ("running"), a name holding its message ({"completed":
// "answer"}, {"errored": "why"}), or the app-server's {status, message}.
func rolloutAgentStatus(v json.RawMessage) AgentState {
	var name string
	if json.Unmarshal(v, &name) == nil {
		return AgentState{Status: camelToSnake(name)}
	}
	var st struct {
		Status  string  `json:"status"`
		Message *string `json:"message"`
	}
	if json.Unmarshal(v, &st) == nil && st.Status != "" {
		s := AgentState{Status: camelToSnake(st.Status)}
		if st.Message != nil {
			s.Message = *st.Message
		}
		return s
	}
	var m map[string]*string
	if json.Unmarshal(v, &m) == nil && len(m) == 1 {
		for k, msg := range m {
			s := AgentState{Status: camelToSnake(k)}
			if msg != nil {
				s.Message = *msg
			}
			return s
		}
	}
	return AgentState{Status: "unknown"}
}

// uriPath is the path of a file:// URI (how codex's rollout stores an
// image view's path), or s itself.
func uriPath(s string) string {
	if u, err := url.Parse(s); err == nil && u.Scheme == "file" && u.Path != "" {
		return u.Path
	}
	return s
}
