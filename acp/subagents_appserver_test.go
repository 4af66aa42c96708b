package acp

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/codexacp/codexacp/events"
)

// The child threads a parent's notification names, and which of a child's
// events the session shows.
func TestChildThreads(t *testing.T) {
	for _, tc := range []struct {
		name, method, params string
		want                 []string
	}{
		{"spawn call", "item/started", `{"item":{"type":"collabAgentToolCall","id":"c","receiverThreadIds":["th_a","th_b"]}}`, []string{"th_a", "th_b"}},
		{"activity", "item/completed", `{"item":{"type":"subAgentActivity","id":"c","kind":"started","agentThreadId":"th_c"}}`, []string{"th_c"}},
		{"activity without thread", "item/started", `{"item":{"type":"subAgentActivity","id":"c"}}`, nil},
		{"another item", "item/started", `{"item":{"type":"commandExecution","id":"c","agentThreadId":"th_x"}}`, nil},
		{"not an item", "turn/started", `{"item":{"type":"subAgentActivity","agentThreadId":"th_x"}}`, nil},
		{"unreadable", "item/started", `[1]`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := readNotice(json.RawMessage(tc.params)).childThreads(tc.method); !slices.Equal(got, tc.want) {
				t.Errorf("childThreads = %v, want %v", got, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		ev   events.Event
		want bool
	}{
		{events.Event{Type: events.TypeItemStarted, Item: &events.Item{Type: events.ItemMCPToolCall}}, true},
		{events.Event{Type: events.TypeItemCompleted, Item: &events.Item{Type: events.ItemCommandExecution}}, true},
		{events.Event{Type: events.TypeItemCompleted, Item: &events.Item{Type: events.ItemAgentMessage}}, false},
		{events.Event{Type: events.TypeItemCompleted, Item: &events.Item{Type: events.ItemReasoning}}, false},
		{events.Event{Type: events.TypeTurnCompleted}, false},
	} {
		if got := childShown(tc.ev); got != tc.want {
			t.Errorf("childShown(%s %v) = %v", tc.ev.Type, tc.ev.Item, got)
		}
	}
}
