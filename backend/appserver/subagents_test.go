package appserver

import (
	"encoding/json"
	"testing"

	"github.com/codexacp/codexacp/backend/backendtest"
	codexapp "github.com/codexacp/codexacp/codex/appserver"
	"github.com/codexacp/codexacp/events"
	"github.com/codexacp/codexacp/internal/testkit"
)

// eventLog is a TurnOutput that keeps the events it is given.
type eventLog struct {
	backendtest.NopOutput
	evs []events.Event
}

func (l *eventLog) Event(ev events.Event) { l.evs = append(l.evs, ev) }

// A parent item naming a child thread routes it to the turn: the child's
// tool calls come as they are, its messages for the parent's call that
// named it, its reasoning and turn not at all.
func TestSubagentRouting(t *testing.T) {
	out := &eventLog{}
	h := NewTurnHandler(out, testkit.DiscardLogger())
	routed := map[string]codexapp.Handler{}
	h.subagents.route = func(thread string, c codexapp.Handler) func() {
		routed[thread] = c
		return func() {}
	}
	notify := func(to codexapp.Handler, method, params string) {
		to.Notify(method, json.RawMessage(params))
	}
	notify(h, "item/completed", `{"threadId":"th_p","turnId":"tu","item":{"type":"subAgentActivity","id":"call_spawn","kind":"started","agentThreadId":"th_c","agentPath":"/root/c"}}`)
	notify(h, "item/started", `{"threadId":"th_p","turnId":"tu","item":{"type":"subAgentActivity","id":"call_again","kind":"interacted","agentThreadId":"th_c"}}`)
	child := routed["th_c"]
	if child == nil || len(routed) != 1 {
		t.Fatalf("routed threads: %v", routed)
	}
	notify(child, "turn/started", `{"threadId":"th_c","turn":{"id":"tu_c","items":[],"status":"inProgress","error":null}}`)
	notify(child, "item/completed", `{"threadId":"th_c","turnId":"tu_c","item":{"type":"reasoning","id":"r","summary":["hmm"],"content":[]}}`)
	notify(child, "item/completed", `{"threadId":"th_c","turnId":"tu_c","item":{"type":"commandExecution","id":"cmd","command":"ls","cwd":"/w","status":"completed","aggregatedOutput":"a\n","exitCode":0}}`)
	notify(child, "item/completed", `{"threadId":"th_c","turnId":"tu_c","item":{"type":"agentMessage","id":"m","text":"3 files."}}`)
	notify(child, "turn/completed", `{"threadId":"th_c","turn":{"id":"tu_c","items":[],"status":"completed","error":null}}`)

	var got []string
	for _, ev := range out.evs {
		got = append(got, ev.Type+" "+ev.Item.Type+" "+ev.Item.ID+" "+ev.Item.ParentCallID)
	}
	want := []string{
		"item.completed sub_agent_activity call_spawn ",
		"item.started sub_agent_activity call_again ",
		"item.completed command_execution cmd ",
		"item.completed agent_message m call_spawn",
	}
	if len(got) != len(want) {
		t.Fatalf("events:\n got  %q\n want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d = %q, want %q", i, got[i], want[i])
		}
	}
}
