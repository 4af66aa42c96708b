package events

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	acpsdk "github.com/coder/acp-go-sdk"
)

func TestChildThreads(t *testing.T) {
	for _, tc := range []struct {
		name string
		item Item
		want []string
	}{
		{"spawn call", Item{Type: ItemCollabToolCall, ReceiverThreadIDs: []string{"th_a", "th_b"}}, []string{"th_a", "th_b"}},
		{"activity", Item{Type: ItemSubAgentActivity, AgentThreadID: "th_c"}, []string{"th_c"}},
		{"activity without thread", Item{Type: ItemSubAgentActivity}, nil},
		{"another item", Item{Type: ItemCommandExecution, AgentThreadID: "th_x", ReceiverThreadIDs: []string{"th_y"}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.item.ChildThreads(); !slices.Equal(got, tc.want) {
				t.Errorf("ChildThreads = %v, want %v", got, tc.want)
			}
		})
	}
}

// Which of a subagent's events the parent's session shows, and how.
func TestChildEvent(t *testing.T) {
	for _, tc := range []struct {
		name       string
		ev         Event
		callID     string
		want       bool
		wantParent string // the shown item's ParentCallID
	}{
		{"MCP call started", Event{Type: TypeItemStarted, Item: &Item{Type: ItemMCPToolCall}}, "c1", true, ""},
		{"command completed", Event{Type: TypeItemCompleted, Item: &Item{Type: ItemCommandExecution}}, "c1", true, ""},
		{"message completed: in the call", Event{Type: TypeItemCompleted, Item: &Item{Type: ItemAgentMessage, Text: "done"}}, "c1", true, "c1"},
		{"message started", Event{Type: TypeItemStarted, Item: &Item{Type: ItemAgentMessage}}, "c1", false, ""},
		{"message without a call", Event{Type: TypeItemCompleted, Item: &Item{Type: ItemAgentMessage, Text: "done"}}, "", false, ""},
		{"message delta", Event{Type: TypeItemDelta, Delta: &Delta{ItemID: "m", Kind: DeltaMessage, Text: "d"}}, "c1", false, ""},
		{"reasoning", Event{Type: TypeItemCompleted, Item: &Item{Type: ItemReasoning}}, "c1", false, ""},
		{"plan", Event{Type: TypeItemUpdated, Item: &Item{Type: ItemTodoList}}, "c1", false, ""},
		{"turn end", Event{Type: TypeTurnCompleted}, "c1", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ChildEvent(tc.ev, tc.callID)
			if ok != tc.want {
				t.Fatalf("shown = %v, want %v", ok, tc.want)
			}
			if ok && got.Item.ParentCallID != tc.wantParent {
				t.Errorf("ParentCallID = %q, want %q", got.Item.ParentCallID, tc.wantParent)
			}
			if tc.ev.Item != nil && tc.ev.Item.ParentCallID != "" {
				t.Errorf("the child's own event was changed: %+v", tc.ev.Item)
			}
		})
	}
}

// A subagent's messages show in the content of the tool call that started
// it, after the call's own content, bounded; not as the agent's text.
func TestTranslateSubagentMessages(t *testing.T) {
	tr := NewTranslator(Options{MaxOutputBytes: 40})
	tr.BeginTurn()
	spawn := &Item{ID: "call_spawn", Type: ItemCollabToolCall, Tool: "spawn_agent", Status: "in_progress", Prompt: "Count"}
	say := func(text string) []acpsdk.SessionUpdate {
		ev, ok := ChildEvent(Event{Type: TypeItemCompleted, Item: &Item{ID: "msg_1", Type: ItemAgentMessage, Text: text}}, "call_spawn")
		if !ok {
			t.Fatal("a subagent's message is not shown")
		}
		return tr.Translate(ev)
	}
	var got [][]string
	record := func(us []acpsdk.SessionUpdate) {
		for _, u := range us {
			checkUpdate(t, u)
			if u.AgentMessageChunk != nil {
				t.Errorf("a subagent's message is the agent's text: %q", u.AgentMessageChunk.Content.Text.Text)
			}
			got = append(got, contentTexts(u))
		}
	}
	record(tr.Translate(Event{Type: TypeItemStarted, Item: spawn}))
	record(say("Counting."))
	record(say("3 files."))
	done := *spawn
	done.Status = "completed"
	record(tr.Translate(Event{Type: TypeItemCompleted, Item: &done})) // status only: the messages stay
	record(say(strings.Repeat("x", 50)))                              // past MaxOutputBytes: head and tail
	record(say("  "))                                                 // nothing to show
	orphan, _ := ChildEvent(Event{Type: TypeItemCompleted, Item: &Item{Type: ItemAgentMessage, Text: "lost"}}, "call_gone")
	record(tr.Translate(orphan))
	want := [][]string{
		{"Count"},
		{"Count", "Counting."},
		{"Count", "Counting.\n\n3 files."},
		nil,
		{"Count", limitText("Counting.\n\n3 files.\n\n"+strings.Repeat("x", 50), 40)},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("tool call content:\n got  %q\n want %q", got, want)
	}
	if !strings.Contains(want[4][1], "bytes omitted") {
		t.Errorf("the long messages are not cut: %q", want[4][1])
	}
}

// However many messages a subagent sends, its call keeps at most
// MaxOutputBytes of them (head and tail), and shows what limitText shows of
// all of them joined. (Measured as the heap the translator holds after 1 MB
// of messages: all of it when they were kept whole.)
func TestTranslateSubagentMessagesBounded(t *testing.T) {
	const limit = 1000
	tr := NewTranslator(Options{MaxOutputBytes: limit})
	tr.BeginTurn()
	tr.Translate(Event{Type: TypeItemStarted, Item: &Item{ID: "call_spawn", Type: ItemCollabToolCall, Tool: "spawn_agent", Status: "in_progress", Prompt: "Count"}})
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	var all strings.Builder
	var last []acpsdk.SessionUpdate
	for i := range 2000 {
		// 2-byte runes: some cuts fall inside them.
		msg := fmt.Sprintf("message %d: %s", i, strings.Repeat("é", 250-i%7))
		if i > 0 {
			all.WriteString("\n\n")
		}
		all.WriteString(msg)
		ev, _ := ChildEvent(Event{Type: TypeItemCompleted, Item: &Item{ID: "m", Type: ItemAgentMessage, Text: msg}}, "call_spawn")
		last = tr.Translate(ev)
	}
	want := []string{"Count", limitText(all.String(), limit)}
	all.Reset()
	if held := int64(heap()) - int64(before); held > 100*limit {
		t.Errorf("the translator holds %d more bytes after %d messages, want at most %d", held, 2000, 100*limit)
	}
	runtime.KeepAlive(tr)
	if len(last) != 1 {
		t.Fatalf("last message: %d updates", len(last))
	}
	if got := contentTexts(last[0]); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("shown:\n got  %q\n want %q", got, want)
	}
}

// keptText built piece by piece shows what the one-shot cut of the whole
// text shows.
func TestKeptTextMatchesWhole(t *testing.T) {
	pieces := []string{"ab", "ç", "日本語", "", "x", strings.Repeat("y", 30), "€", "z"}
	for limit := 1; limit <= 40; limit++ {
		for start := range pieces {
			var k keptText
			whole := ""
			for i := range 3 * len(pieces) {
				p := pieces[(start+i)%len(pieces)]
				k.add(p, limit)
				whole += p
				if got, want := k.String(), wholeLimit(whole, limit); got != want {
					t.Fatalf("limit %d, after %q: %q, want %q", limit, whole, got, want)
				}
			}
		}
	}
}

// wholeLimit is limitText's cut of a whole text as it was written before
// keptText: the reference for it.
func wholeLimit(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	head := limit / 2
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	tail := len(s) - (limit - head)
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	return fmt.Sprintf("%s\n… %d bytes omitted …\n%s", s[:head], tail-head, s[tail:])
}
