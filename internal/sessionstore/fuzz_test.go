package sessionstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzStateFiles puts arbitrary bytes in a state directory as a session
// record and as its write log, and reads them as session/list and
// session/load do. Reading never panics and never returns more than the
// bounds allow; what loads round-trips: a record saved again loads the
// same, a log's entries written again read back the same.
// Fuzz it: go test ./internal/sessionstore/ -run '^$' -fuzz '^FuzzStateFiles$' -fuzztime=10s (CI: .ci/run)
func FuzzStateFiles(f *testing.F) {
	f.Add([]byte(`{"sessionId":"` + sidHere + `","threadId":"` + threadID + `","cwd":"/w","mode":"auto","updatedAt":"2026-11-23T01:25:33+01:00","threadUsage":{"input_tokens":3}}`))
	f.Add([]byte(`{"path":"/w/a.txt","hash":"h","content":[{"type":"diff","path":"/w/a.txt","oldText":"a","newText":"b"}]}` + "\n" + `{"path":"/w/b`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		st := &Store{dir: dir, log: discardLogger()}
		p := filepath.Join(dir, sidHere+".json")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(WriteLogPath(p), data, 0o600); err != nil {
			t.Fatal(err)
		}
		recs, err := st.List("")
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		rec, err := st.Load(sidHere)
		switch {
		case err == nil:
			if len(data) > recordMax {
				t.Fatalf("loaded a record of %d bytes, over %d", len(data), recordMax)
			}
			if len(recs) != 1 {
				t.Fatalf("load works, list gives %d records", len(recs))
			}
			checkRecordRoundTrip(t, st, rec)
		case errors.Is(err, ErrBadRecord):
			if len(recs) != 0 {
				t.Fatalf("load fails (%v), list gives %d records", err, len(recs))
			}
		default:
			t.Fatalf("load: %v, want a record or ErrBadRecord", err)
		}
		ws, err := st.Writes(sidHere)
		if err != nil {
			t.Fatalf("writes: %v", err)
		}
		if len(ws) > bytes.Count(data, []byte("\n"))+1 {
			t.Fatalf("%d entries from %d lines", len(ws), bytes.Count(data, []byte("\n"))+1)
		}
		var again []byte
		for _, w := range ws {
			line, err := json.Marshal(w)
			if err != nil {
				t.Fatalf("an entry that decoded does not encode: %v", err)
			}
			again = append(append(again, line...), '\n')
		}
		if got := decodeWriteLog(again); !sameJSON(got, ws) {
			t.Fatalf("write log round trip:\n%s\n%s", mustJSON(got), mustJSON(ws))
		}
	})
}

func checkRecordRoundTrip(t *testing.T, st *Store, rec Record) {
	t.Helper()
	if err := st.Save(rec); err != nil {
		t.Fatalf("a record that loaded does not save: %v", err)
	}
	again, err := st.Load(rec.SessionID)
	if err != nil {
		t.Fatalf("a saved record does not load: %v", err)
	}
	if !sameJSON(again, rec) {
		t.Fatalf("record round trip:\n%s\n%s", mustJSON(again), mustJSON(rec))
	}
}

// sameJSON compares what a and b encode to (a time decoded from another
// zone is another Location pointer, the same instant and text).
func sameJSON(a, b any) bool {
	return mustJSON(a) == mustJSON(b)
}
