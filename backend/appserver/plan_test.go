package appserver

import (
	"encoding/json"
	"testing"

	"github.com/codexacp/codexacp/backend"
	codexapp "github.com/codexacp/codexacp/codex/appserver"
	"github.com/codexacp/codexacp/codex/appserver/protocol"
)

// The collaborationMode each turn of a thread sends: plan while planning,
// default once right after (codex keeps a thread's mode), then nothing.
func TestCollaborationModeSequence(t *testing.T) {
	b := New(codexapp.Options{})
	defer b.Close()
	b.noteSettings("th", threadSettings{Model: "gpt-x"})
	for i, tc := range []struct {
		turn backend.Turn
		want string // JSON; "null": none sent
	}{
		{backend.Turn{}, `null`},
		{backend.Turn{Plan: true}, `{"mode":"plan","settings":{"developer_instructions":null,"model":"gpt-x"}}`},
		{backend.Turn{Plan: true, Model: "m2", Effort: "high"}, `{"mode":"plan","settings":{"developer_instructions":null,"model":"m2","reasoning_effort":"high"}}`},
		{backend.Turn{}, `{"mode":"default","settings":{"developer_instructions":null,"model":"gpt-x"}}`},
		{backend.Turn{}, `null`},
	} {
		got, err := json.Marshal(b.collaborationMode(tc.turn, "th"))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tc.want {
			t.Errorf("turn %d: collaborationMode = %s, want %s", i, got, tc.want)
		}
	}
	// A thread resumed in plan mode is put back to default.
	b.noteSettings("old", threadSettings{Model: "gpt-x", CollaborationMode: &protocol.CollaborationMode{Mode: protocol.ModePlan}})
	if got, _ := json.Marshal(b.collaborationMode(backend.Turn{}, "old")); string(got) != `{"mode":"default","settings":{"developer_instructions":null,"model":"gpt-x"}}` {
		t.Errorf("resumed plan-mode thread: %s", got)
	}
}
