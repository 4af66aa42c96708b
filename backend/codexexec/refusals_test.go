package codexexec

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/codexacp/codexacp/events"
	"github.com/codexacp/codexacp/internal/testkit"
)

// BenchmarkRefusalTailPoll is a turn's poll before each JSONL event: one
// short record appended, read and scanned. The read buffer is the tail's,
// made once per turn (before: 64 KiB allocated per poll).
func BenchmarkRefusalTailPoll(b *testing.B) {
	rollout := filepath.Join(b.TempDir(), "rollout.jsonl")
	f, err := os.OpenFile(rollout, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	tail := newRefusalTail(func(string) (string, error) { return rollout, nil }, "th-1", testkit.DiscardLogger(), nil)
	defer tail.close()
	record := []byte(`{"type":"event_msg","payload":{"type":"token_count","info":null}}` + "\n")
	emit := func(events.Event) {}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.Write(record); err != nil {
			b.Fatal(err)
		}
		tail.poll(emit, false)
	}
}

// The tail names codex's turn from its turn_context record (codex exec
// prints no turn id), once, and tells a recording a record of the id
// only; after a revert the turn's records go to a newer file, which the
// last poll follows from its start.
func TestRefusalTailTurnID(t *testing.T) {
	dir := t.TempDir()
	first, revision := filepath.Join(dir, "rollout-a.jsonl"), filepath.Join(dir, "rollout-b.jsonl")
	writeLines := func(path string, lines ...string) {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for _, l := range lines {
			f.WriteString(l + "\n")
		}
	}
	ctx := `{"type":"turn_context","payload":{"turn_id":"tu-1","cwd":"/w","model":"m"}}`
	writeLines(first, `{"type":"session_meta","payload":{}}`, ctx)
	path := first
	var observed []string
	tail := newRefusalTail(func(string) (string, error) { return path, nil }, "", testkit.DiscardLogger(),
		func(_, _ string, rec []byte) { observed = append(observed, string(rec)) })
	defer tail.close()
	tail.started("th-1")
	var ids []string
	emit := func(ev events.Event) {
		if ev.Type == events.TypeTurnStarted {
			ids = append(ids, ev.TurnID)
		}
	}
	tail.poll(emit, false)
	writeLines(first, ctx) // codex may write it again in the turn
	tail.poll(emit, true)
	if len(ids) != 1 || ids[0] != "tu-1" {
		t.Errorf("turn ids %q, want [tu-1]", ids)
	}
	if len(observed) != 1 || observed[0] != `{"payload":{"turn_id":"tu-1"},"type":"turn_context"}` {
		t.Errorf("observed %q", observed)
	}

	// A turn of the thread after a revert: the tail started on the old
	// file, codex wrote to the revision.
	tail2 := newRefusalTail(func(string) (string, error) { return path, nil }, "th-1", testkit.DiscardLogger(), nil)
	defer tail2.close()
	path = revision
	writeLines(revision, `{"type":"session_meta","payload":{}}`, `{"type":"turn_context","payload":{"turn_id":"tu-2"}}`)
	ids = nil
	tail2.poll(emit, false)
	tail2.poll(emit, true)
	if len(ids) != 1 || ids[0] != "tu-2" {
		t.Errorf("after a revert: turn ids %q, want [tu-2]", ids)
	}
}
