package sessionstore

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDecodeRecord(t *testing.T) {
	const id = sidHere
	for _, tc := range []struct {
		name, data, wantErr string
	}{
		{"good", `{"sessionId":"` + id + `","threadId":"` + threadID + `","cwd":"/w","mode":"auto"}`, ""},
		{"never prompted", `{"sessionId":"` + id + `","cwd":"/w","mode":"ask"}`, ""},
		{"other id", `{"sessionId":"` + sidGone + `","cwd":"/w"}`, "holds session"},
		{"thread id a flag", `{"sessionId":"` + id + `","threadId":"--dangerously-bypass-approvals-and-sandbox"}`, "malformed thread id"},
		{"thread id a path", `{"sessionId":"` + id + `","threadId":"../x"}`, "malformed thread id"},
		{"thread id with a space", `{"sessionId":"` + id + `","threadId":"a b"}`, "malformed thread id"},
		{"thread id too long", `{"sessionId":"` + id + `","threadId":"` + strings.Repeat("a", 129) + `"}`, "malformed thread id"},
		{"not JSON", `{"sessionId":`, "unexpected end"},
		{"not an object", `[]`, "cannot unmarshal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeRecord([]byte(tc.data), id)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// A record over recordMax is not written: it could not be loaded again.
func TestSaveRefusesOversizedRecord(t *testing.T) {
	st := &Store{dir: t.TempDir()}
	rec := Record{SessionID: sidHere, Cwd: "/w", Mode: "ask", Title: strings.Repeat("x", recordMax)}
	if err := st.Save(rec); err == nil || !strings.Contains(err.Error(), "over the limit") {
		t.Fatalf("save: %v", err)
	}
	if _, err := st.Load(sidHere); !errors.Is(err, ErrNoSession) {
		t.Errorf("load after a refused save: %v", err)
	}
	rec.Title = "ok"
	if err := st.Save(rec); err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(rec); len(b) > 1024 {
		t.Errorf("an ordinary record is %d bytes", len(b))
	}
}

// TestSessionStoreStaysInItsDirectory: no session id, and no record naming
// another id than its file's, makes the store read or write outside its
// directory or hand out an id it would not accept.
func TestSessionStoreStaysInItsDirectory(t *testing.T) {
	root := t.TempDir()
	st := New(filepath.Join(root, "state"), nil)
	for _, id := range malformedSessionIDs {
		if err := st.Save(Record{SessionID: string(id), Cwd: "/w"}); !errors.Is(err, ErrBadSessionID) {
			t.Errorf("save %q: %v", id, err)
		}
		if _, err := st.Load(string(id)); !errors.Is(err, ErrBadSessionID) {
			t.Errorf("load %q: %v", id, err)
		}
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("created %v", entries)
	}

	// A record whose sessionId is not its file's name (edited, or planted)
	// is neither loaded nor listed.
	if err := st.Save(Record{SessionID: sidHere, ThreadID: threadID, Cwd: "/w"}); err != nil {
		t.Fatal(err)
	}
	for name, id := range map[string]string{sidGone + ".json": "../../evil", "notes.json": "notes"} {
		b := `{"sessionId":"` + id + `","threadId":"` + threadID + `","cwd":"/w"}`
		if err := os.WriteFile(filepath.Join(st.dir, name), []byte(b), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.Load(sidGone); err == nil {
		t.Errorf("loaded a record naming another session")
	}
	recs, err := st.List("")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].SessionID != sidHere {
		t.Errorf("list = %+v, want only %s", recs, sidHere)
	}
}
