package record

import (
	"bytes"
	"encoding/base64"
	"strconv"
	"strings"
	"testing"

	"github.com/codexacp/codexacp/fsops"
)

// TestScrubRecomputesHashes: a password in a file, replaced everywhere the
// transcript holds it (the file entry, the tool's result, the editor's
// answer, a base64 content, a rollout's JSON text), with the hashes and
// byte counts of the contents it was in recomputed and the keys of
// untouched lines kept in order.
func TestScrubRecomputesHashes(t *testing.T) {
	const pw = "hunter2-pw"
	content := "user = bob\npassword = " + pw + "\n"
	scrubbed := "user = bob\npassword = XXX\n"
	h, hNew := fsops.HashOf([]byte(content)), fsops.HashOf([]byte(scrubbed))
	lines := []string{
		`{"t":0,"kind":"start","format":1,"agent":"codexacp test"}`,
		`{"t":1,"kind":"file","run":1,"path":"/w/.env","exists":true,"parent_exists":true,"mode":384,"content":"` + strings.ReplaceAll(content, "\n", `\n`) + `"}`,
		`{"t":2,"kind":"mcp_result","run":1,"session":"sess_0123456789abcdef","call":"acp_0123456789abcdef01234567","tool":"read_text_file","result":{"content":"` + strings.ReplaceAll(content, "\n", `\n`) + `","hash":"` + h + `","total_lines":2,"start_line":1,"end_line":2}}`,
		`{"t":3,"kind":"acp","dir":"out","msg":{"jsonrpc":"2.0","method":"session/update","params":{"update":{"rawOutput":{"hash":"` + h + `","content_bytes":` + itoa(len(content)) + `,"start_line":1,"end_line":2},"text":"Read /w/.env, hash ` + h + `"}}}}`,
		`{"t":4,"kind":"mcp_result","run":1,"tool":"write_text_file","result":{"success":true,"bytes_written":` + itoa(len(content)) + `,"hash":"` + h + `"}}`,
		`{"t":5,"kind":"stored","path":"$CODEX_HOME/r.jsonl","exists":true,"content":"{\"output\":\"password = ` + pw + `\"}\n"}`,
		`{"t":6,"kind":"file","path":"/w/bin","exists":true,"base64":"` + base64.StdEncoding.EncodeToString([]byte("\x00\xff"+pw)) + `"}`,
		`{"t":7,"kind":"acp","dir":"in","msg":{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"prompt":[{"type":"text","text":"hello"}]}}}`,
	}
	data := []byte(strings.Join(lines, "\n") + "\n")
	res, err := Scrub(data, []Replacement{{Old: pw, New: "XXX"}})
	if err != nil {
		t.Fatal(err)
	}
	out := string(res.Data)
	if strings.Contains(out, pw) || strings.Contains(out, base64.StdEncoding.EncodeToString([]byte("\x00\xff"+pw))) {
		t.Errorf("the password is still there:\n%s", out)
	}
	if strings.Contains(out, h) || strings.Count(out, hNew) != 4 {
		t.Errorf("hash %s not replaced by %s in all four places:\n%s", h, hNew, out)
	}
	for _, want := range []string{`"content_bytes":` + itoa(len(scrubbed)), `"bytes_written":` + itoa(len(scrubbed)), `password = XXX\"}\n"`,
		// The ids the replay maps stay as they were.
		`"session":"sess_0123456789abcdef"`} {
		if !strings.Contains(out, want) {
			t.Errorf("scrubbed transcript lacks %s:\n%s", want, out)
		}
	}
	if res.Hashes != 1 || res.Lines != 6 || len(res.Unknown) != 0 {
		t.Errorf("result: %d hashes, %d lines, unknown %v; want 1, 6, none", res.Hashes, res.Lines, res.Unknown)
	}
	got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if got[0] != lines[0] || got[7] != lines[7] {
		t.Errorf("untouched lines changed:\n%s\n%s", got[0], got[7])
	}
	// A changed line keeps its keys in order.
	if !strings.HasPrefix(got[1], `{"t":1,"kind":"file","run":1,"path":"/w/.env",`) {
		t.Errorf("file entry = %s", got[1])
	}
	if _, err := Read(bytes.NewReader(res.Data)); err != nil {
		t.Error(err)
	}
}

func TestScrubRefuses(t *testing.T) {
	data := []byte(`{"t":0,"kind":"start","format":1}` + "\n")
	for _, r := range []Replacement{
		{Old: "", New: "x"},
		{Old: "a\nb", New: "ab"}, // a diff's lines would move
		{Old: "02db0d2659c9d48bc15f81a388594fc0e3cf4c780fdc27ea21e0671afc37de19", New: "x"}, // a hash
	} {
		if _, err := Scrub(data, []Replacement{r}); err == nil {
			t.Errorf("Scrub(%q → %q) succeeded", r.Old, r.New)
		}
	}
	if _, err := Scrub([]byte("not a transcript\n"), []Replacement{{Old: "a", New: "b"}}); err == nil {
		t.Error("Scrub of a non-transcript succeeded")
	}
}

// TestCheckFindsPlantedItems: --check finds each kind of private thing a
// transcript may hold, and not the placeholders and hashes of a clean one.
func TestCheckFindsPlantedItems(t *testing.T) {
	m := Machine{Home: "/home/alice", User: "alice", Host: "alice-laptop"}
	lines := []string{
		`{"t":0,"kind":"start","format":1}`,
		`{"t":1,"kind":"acp","dir":"in","msg":{"params":{"cwd":"/home/alice/proj"}}}`,
		`{"t":2,"kind":"codex_line","line":{"text":"alice@alice-laptop:~$ cat /Users/bob/x"}}`,
		`{"t":3,"kind":"file","content":"GITHUB=ghp_abcdefghijklmnopqrstuvwxyz0123\nmail carol@corp.io\napi_key = \"Zq81mNn0pLk3vB7x\"\n"}`,
		`{"t":4,"kind":"appserver","msg":{"params":{"serverName":"vm","installationId":"110424a3-5b7c-4d2e-9f10-abcdef012345"}}}`,
		`{"t":5,"kind":"acp","msg":{"text":"ok [REDACTED] $HOME/proj /home/user/x noreply@example.com hash 02db0d2659c9d48bc15f81a388594fc0e3cf4c780fdc27ea21e0671afc37de19 bearer_token_env_var=\"CODEXACP_MCP_TOKEN\""}}`,
	}
	findings := Check([]byte(strings.Join(lines, "\n")), m)
	var got []string
	for _, f := range findings {
		got = append(got, f.String())
	}
	for _, must := range []string{"home path: /home/alice", "user name: alice", "host name: alice-laptop", "home path: /Users/bob",
		"key: ghp_abcdefghijklmnopqrstuvwxyz0123", "email: carol@corp.io", `Zq81mNn0pLk3vB7x`, "installation id: 110424a3-5b7c-4d2e-9f10-abcdef012345"} {
		if !strings.Contains(strings.Join(got, "\n"), must) {
			t.Errorf("findings lack %q:\n%s", must, strings.Join(got, "\n"))
		}
	}
	for _, f := range findings {
		if f.Line == 5 && f.Kind != "installation id" || f.Line == 6 {
			t.Errorf("a clean line was flagged: %s", f)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
