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
