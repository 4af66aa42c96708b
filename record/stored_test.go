package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRebasePaths(t *testing.T) {
	tests := []struct {
		name, in, from, to, want string
	}{
		{"path", `{"p":"/h/.codex/sessions/a.jsonl"}`, "/h/.codex", "$CODEX_HOME", `{"p":"$CODEX_HOME/sessions/a.jsonl"}`},
		{"the directory itself", `{"p":"/h/.codex"}`, "/h/.codex", "$CODEX_HOME", `{"p":"$CODEX_HOME"}`},
		{"before an escaped quote", `{"s":"home(\"/h/.codex\")"}`, "/h/.codex", "$CODEX_HOME", `{"s":"home(\"$CODEX_HOME\")"}`},
		{"not a longer name", `{"p":"/h/.codex-old/x","q":"/h/.codexfoo"}`, "/h/.codex", "$CODEX_HOME", `{"p":"/h/.codex-old/x","q":"/h/.codexfoo"}`},
		{"not in the middle of a path", `{"p":"/x/h/.codex/y"}`, "/h/.codex", "$C", `{"p":"/x/h/.codex/y"}`},
		{"in text", `{"s":"cd /h/.codex && ls /h/.codex/x: ok\n/h/.codex\n"}`, "/h/.codex", "$C", `{"s":"cd $C && ls $C/x: ok\n$C\n"}`},
		{"after an escaped backslash", `{"s":"\\n/h/x"}`, "/h", "$C", `{"s":"\\n/h/x"}`},
		{"twice in a row", `["/h","/h/a","/h"]`, "/h", "/r/t", `["/r/t","/r/t/a","/r/t"]`},
		{"back to a directory", `{"p":"$CODEX_HOME/sessions"}`, "$CODEX_HOME", "/tmp/r/codex", `{"p":"/tmp/r/codex/sessions"}`},
		{"HTML characters", `{"p":"/h/a&b/x"}`, "/h/a&b", "$S", `{"p":"$S/x"}`},
		{"nothing to do", `{"p":"/w/x"}`, "/h", "$S", `{"p":"/w/x"}`},
		{"end of a sentence", `{"s":"run x in /h.\nok, in /h."}`, "/h", "$S", `{"s":"run x in $S.\nok, in $S."}`},
		{"a name with a dot", `{"p":"/h.d/x","q":"/h..","r":"/h.txt"}`, "/h", "$S", `{"p":"/h.d/x","q":"/h..","r":"/h.txt"}`},
	}
	for _, tt := range tests {
		if got := string(RebasePaths([]byte(tt.in), tt.from, tt.to)); got != tt.want {
			t.Errorf("%s: RebasePaths(%s, %s, %s) = %s, want %s", tt.name, tt.in, tt.from, tt.to, got, tt.want)
		}
	}
}

// TestStoredFilesUnderPlaceholders records a session record and a rollout
// as session/load reads them: each becomes a stored entry with its content,
// and the state directory (inside codex's home here, as in the e2e suite)
// and codex's home are written as placeholders everywhere.
func TestStoredFilesUnderPlaceholders(t *testing.T) {
	codexHome := t.TempDir()
	state := filepath.Join(codexHome, "user", "state", "codexacp")
	recordPath := filepath.Join(state, "sessions", "sess_1.json")
	rollout := filepath.Join(codexHome, "sessions", "2026", "11", "23", "rollout-x-thread.jsonl")
	for path, content := range map[string]string{
		recordPath: `{"sessionId":"sess_1","threadId":"thread"}` + "\n",
		rollout:    `{"type":"session_meta","payload":{"cwd":"/w"}}` + "\n",
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	binary := filepath.Join(state, "sessions", "bin.json")
	if err := os.WriteFile(binary, []byte{0xff, 0xfe}, 0o600); err != nil {
		t.Fatal(err)
	}

	var buf bytes.Buffer
	r := New(&buf)
	r.SetDirs(state, codexHome+"/")
	r.Start("codexacp test", 0)
	r.Stored(recordPath)
	r.Stored(rollout)
	r.Stored(binary)
	r.Stored(filepath.Join(codexHome, "missing.jsonl"))
	fmt.Fprintf(r.Output(io.Discard), `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"no rollout for thread t under %s/sessions"}}`+"\n", codexHome)

	if strings.Contains(buf.String(), codexHome) {
		t.Errorf("the transcript names the recording's codex home:\n%s", buf.String())
	}
	entries := readAll(t, buf.Bytes())
	if got, want := kinds(entries), "start,stored,stored,stored,stored,acp:out"; got != want {
		t.Fatalf("entries = %s, want %s", got, want)
	}
	tests := []struct {
		e       Entry
		path    string
		content string
	}{
		{entries[1], "$CODEXACP_STATE/sessions/sess_1.json", `{"sessionId":"sess_1","threadId":"thread"}` + "\n"},
		{entries[2], "$CODEX_HOME/sessions/2026/11/23/rollout-x-thread.jsonl", `{"type":"session_meta","payload":{"cwd":"/w"}}` + "\n"},
		{entries[3], "$CODEXACP_STATE/sessions/bin.json", "\xff\xfe"},
	}
	for _, tt := range tests {
		data, err := tt.e.Data()
		if tt.e.Path != tt.path || !tt.e.Exists || tt.e.Mode != 0o600 || err != nil || string(data) != tt.content {
			t.Errorf("stored entry = %+v (data %q, %v), want %s with %q", tt.e, data, err, tt.path, tt.content)
		}
	}
	if e := entries[4]; e.Exists || e.Path != "$CODEX_HOME/missing.jsonl" {
		t.Errorf("missing file = %+v", e)
	}
	if msg := string(entries[5].Msg); !strings.Contains(msg, "under $CODEX_HOME/sessions") {
		t.Errorf("agent message = %s", msg)
	}
}

func TestSetDirsIgnoresUnusableDirs(t *testing.T) {
	var buf bytes.Buffer
	r := New(&buf)
	r.SetDirs("", "/")
	r.Start("codexacp test", 0)
	fmt.Fprintln(r.Output(io.Discard), `{"p":"/usr/bin"}`)
	if !strings.Contains(buf.String(), `"/usr/bin"`) {
		t.Errorf("the root was replaced:\n%s", buf.String())
	}
}

func TestEntryData(t *testing.T) {
	text := "a\n"
	tests := []struct {
		e       Entry
		want    string
		wantErr bool
	}{
		{Entry{Content: &text}, "a\n", false},
		{Entry{Base64: "/wAB"}, "\xff\x00\x01", false},
		{Entry{Base64: "!"}, "", true},
		{Entry{Omitted: true, Size: 5}, "", true},
		{Entry{}, "", false},
	}
	for _, tt := range tests {
		got, err := tt.e.Data()
		if string(got) != tt.want || (err != nil) != tt.wantErr {
			b, _ := json.Marshal(tt.e)
			t.Errorf("Data of %s = %q, %v", b, got, err)
		}
	}
}
