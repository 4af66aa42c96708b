package acp

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestDecodeRecord(t *testing.T) {
	const id = sidHere
	for _, tc := range []struct {
		name, data, wantErr string
	}{
		{"good", `{"sessionId":"` + id + `","threadId":"` + loadThreadID + `","cwd":"/w","mode":"auto"}`, ""},
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
	st := &sessionStore{dir: t.TempDir()}
	rec := sessionRecord{SessionID: sidHere, Cwd: "/w", Mode: ModeAsk, Title: strings.Repeat("x", recordMax)}
	if err := st.save(rec); err == nil || !strings.Contains(err.Error(), "over the limit") {
		t.Fatalf("save: %v", err)
	}
	if _, err := st.load(sidHere); !errors.Is(err, errNoSession) {
		t.Errorf("load after a refused save: %v", err)
	}
	rec.Title = "ok"
	if err := st.save(rec); err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(rec); len(b) > 1024 {
		t.Errorf("an ordinary record is %d bytes", len(b))
	}
}
