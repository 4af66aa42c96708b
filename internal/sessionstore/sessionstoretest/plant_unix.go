//go:build unix

package sessionstoretest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/codexacp/codexacp/internal/sessionstore"
)

// The session ids of what Plant puts in a state directory.
const (
	FIFO    = "sess_00000000000000000000000000000010" // a FIFO named like a record
	Zero    = "sess_00000000000000000000000000000011" // a link to /dev/zero named like a record
	Huge    = "sess_00000000000000000000000000000012" // a record of HugeSize bytes and more
	Corrupt = "sess_00000000000000000000000000000013" // a record cut short
	FIFOLog = "sess_00000000000000000000000000000014" // a good record whose write log is a FIFO
	ZeroLog = "sess_00000000000000000000000000000015" // a good record whose write log links to /dev/zero
	Linked  = "sess_00000000000000000000000000000016" // a link to a good record elsewhere
)

// HugeSize is the length of the Huge record's title: past the store's
// bound on a record's file (256 KiB).
const HugeSize = 256 << 10

// Plant fills state with what a local process could put there: a FIFO and
// a link to /dev/zero named like records, an oversized and a corrupt
// record, a link to a good record elsewhere, and two good records (FIFOLog,
// ZeroLog: thread threadID in cwd, mode ask) whose write logs are a FIFO
// and a link to /dev/zero.
func Plant(t testing.TB, state, cwd, threadID string) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	rec := func(id string) sessionstore.Record {
		return sessionstore.Record{SessionID: id, ThreadID: threadID, Cwd: cwd, Mode: "ask", UpdatedAt: time.Now()}
	}
	st := sessionstore.New(state, nil)
	must(st.Save(rec(FIFOLog)))
	must(st.Save(rec(ZeroLog)))
	must(syscall.Mkfifo(filepath.Join(state, FIFO+".json"), 0o600))
	must(os.Symlink("/dev/zero", filepath.Join(state, Zero+".json")))
	cwdJSON, err := json.Marshal(cwd)
	must(err)
	huge := `{"sessionId":"` + Huge + `","threadId":"` + threadID + `","cwd":` + string(cwdJSON) +
		`,"mode":"ask","title":"` + strings.Repeat("x", HugeSize) + `"}`
	must(os.WriteFile(filepath.Join(state, Huge+".json"), []byte(huge), 0o600))
	must(os.WriteFile(filepath.Join(state, Corrupt+".json"), []byte(`{"sessionId":`), 0o600))
	elsewhere := t.TempDir()
	must(sessionstore.New(elsewhere, nil).Save(rec(Linked)))
	must(os.Symlink(filepath.Join(elsewhere, Linked+".json"), filepath.Join(state, Linked+".json")))
	must(syscall.Mkfifo(filepath.Join(state, FIFOLog+".writes.jsonl"), 0o600))
	must(os.Symlink("/dev/zero", filepath.Join(state, ZeroLog+".writes.jsonl")))
}
