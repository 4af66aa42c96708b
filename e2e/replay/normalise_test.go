package replay

import (
	"regexp"
	"strings"
	"testing"

	"github.com/codexacp/codexacp/internal/recovery"
)

func TestNormalise(t *testing.T) {
	const root = "/tmp/replay-123/root"
	msgs := [][]byte{
		[]byte(`{"jsonrpc":"2.0","id":1,"result":{"agentInfo":{"name":"codexacp","version":"v1.2.3"}}}`),
		[]byte(`{"jsonrpc":"2.0","id":2,"result":{"sessionId":"sess_0123456789abcdef0123456789abcdef"}}`),
		[]byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_0123456789abcdef0123456789abcdef","update":{"toolCallId":"acp_aaaaaaaaaaaaaaaaaaaaaaaa","locations":[{"path":"/tmp/replay-123/root/002/a.txt"}],"updatedAt":"2026-01-01T00:00:00Z"}}}`),
		[]byte(`{"jsonrpc":"2.0","id":7,"method":"session/request_permission","params":{"toolCall":{"toolCallId":"acp_bbbbbbbbbbbbbbbbbbbbbbbb"}}}`),
		[]byte(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":7}}`),
		[]byte(`{"jsonrpc":"2.0","id":8,"method":"fs/read_text_file","params":{"toolCallId":"acp_aaaaaaaaaaaaaaaaaaaaaaaa"}}`),
		[]byte(`not json`),
	}
	got := normaliseAll(msgs, root)
	want := []string{
		`"version": "<version>"`,
		`"sessionId": "sess_1"`,
		`"toolCallId": "acp_1"`,
		`"path": "$ROOT/002/a.txt"`,
		`"updatedAt": "<time>"`,
		`"id": "<agent request 1>"`,
		`"toolCallId": "acp_2"`,
		`"requestId": "<agent request 1>"`,
		`"id": "<agent request 2>"`,
	}
	all := strings.Join(got, "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("normalised messages lack %s:\n%s", w, all)
		}
	}
	if strings.Contains(all, "v1.2.3") || strings.Contains(all, "0123456789abcdef") || strings.Contains(all, root) {
		t.Errorf("run-specific values left:\n%s", all)
	}
	// The $/cancel_request went to the end of its stretch (no answer
	// follows it): the others moved up one.
	if !strings.Contains(got[4], `"toolCallId": "acp_1"`) {
		t.Errorf("the same tool call id got another placeholder: %s", got[4])
	}
	if got[5] != "not json" {
		t.Errorf("non-JSON message = %q", got[5])
	}
	if !strings.Contains(got[6], `"$/cancel_request"`) {
		t.Errorf("last message = %s, want the cancel request", got[6])
	}
	// Client request ids (in responses) are kept: the harness sends the
	// recorded ones.
	if !strings.Contains(got[1], `"id": 2`) {
		t.Errorf("response id changed: %s", got[1])
	}
	// Keys are sorted, so field order does not matter.
	a := normaliseAll([][]byte{[]byte(`{"b":1,"a":2}`)}, root)
	b := normaliseAll([][]byte{[]byte(`{"a":2,"b":1}`)}, root)
	if a[0] != b[0] {
		t.Errorf("field order matters: %s vs %s", a[0], b[0])
	}
}

func TestDiff(t *testing.T) {
	want := []string{"{\n  \"a\": 1\n}", "{\n  \"b\": 2\n}"}
	if d := Diff(want, want); d != "" {
		t.Errorf("equal streams differ:\n%s", d)
	}
	got := []string{"{\n  \"a\": 1\n}", "{\n  \"b\": 3\n}", "{\n  \"c\": 4\n}"}
	d := Diff(want, got)
	for _, s := range []string{"(2 recorded, 3 replayed)", "--- recorded\n+++ replayed\n@@", "-  \"b\": 2", "+  \"b\": 3", "+  \"c\": 4"} {
		if !strings.Contains(d, s) {
			t.Errorf("diff lacks %q:\n%s", s, d)
		}
	}
	if d := Diff(nil, want); !strings.Contains(d, "+  \"a\": 1") {
		t.Errorf("diff against nothing:\n%s", d)
	}
}

// Answers due at the same moment may come in either order (the SDK answers
// each request on its own goroutine), and so may a $/cancel_request and
// what follows it up to the next answer; everything else keeps its order.
func TestNormaliseAnswerOrder(t *testing.T) {
	update := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s"}}`)
	update2 := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"t"}}`)
	cancel := []byte(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":1}}`)
	answer := func(id string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":` + id + `,"result":{"stopReason":"end_turn"}}`)
	}
	tests := []struct {
		name      string
		a, b      [][]byte
		wantEqual bool
	}{
		{"answers swapped", [][]byte{update, answer("3"), answer("4")}, [][]byte{update, answer("4"), answer("3")}, true},
		{"ids by value, strings last", [][]byte{answer("9"), answer("10"), answer(`"x"`)}, [][]byte{answer(`"x"`), answer("10"), answer("9")}, true},
		{"answer before an update", [][]byte{update, answer("3")}, [][]byte{answer("3"), update}, false},
		{"answers apart", [][]byte{answer("3"), update, answer("4")}, [][]byte{answer("4"), update, answer("3")}, false},
		{"cancel request before an update", [][]byte{cancel, update, answer("3")}, [][]byte{update, cancel, answer("3")}, true},
		{"cancel request after the answer", [][]byte{cancel, update, answer("3")}, [][]byte{update, answer("3"), cancel}, false},
		{"updates keep their order", [][]byte{update, update2, cancel}, [][]byte{update2, update, cancel}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			equal := Diff(normaliseAll(tt.a, "/r"), normaliseAll(tt.b, "/r")) == ""
			if equal != tt.wantEqual {
				t.Errorf("equal = %v, want %v", equal, tt.wantEqual)
			}
		})
	}
}

// A replay whose agent survived a panic is not a match: the recovery keeps
// users' sessions alive, it must not hide the bug from the corpus.
func TestRecoveredPanicIsNoMatch(t *testing.T) {
	r := &Result{Want: []string{"a"}, Got: []string{"a"}}
	if !r.Match() {
		t.Fatal("equal messages do not match")
	}
	r.Stderr = `level=ERROR msg="` + recovery.LogPrefix + `: a turn failed, the agent goes on"`
	if r.Match() {
		t.Fatal("a replay with a recovered panic matches")
	}
}

// A session's commands announcement may come anywhere after the answer
// that opened it: two streams that differ only in where the announcements
// came normalise alike, and what they announce is still compared.
func TestNormaliseAnnouncementsApart(t *testing.T) {
	const (
		newA   = `{"jsonrpc":"2.0","id":2,"result":{"sessionId":"sess_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}}`
		newB   = `{"jsonrpc":"2.0","id":3,"result":{"sessionId":"sess_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"}}`
		cmdA   = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","update":{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"status"}]}}}`
		cmdB   = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb","update":{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"greet"}]}}}`
		chunk  = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`
		answer = `{"jsonrpc":"2.0","id":4,"result":{"stopReason":"end_turn"}}`
	)
	recorded := [][]byte{[]byte(newA), []byte(cmdA), []byte(newB), []byte(cmdB), []byte(chunk), []byte(answer)}
	replayed := [][]byte{[]byte(newA), []byte(newB), []byte(chunk), []byte(cmdB), []byte(answer), []byte(cmdA)}
	want, got := normaliseAll(recorded, "/r"), normaliseAll(replayed, "/r")
	if d := Diff(want, got); d != "" {
		t.Errorf("announcements moved: %s", d)
	}
	if !strings.Contains(want[4], `"sess_1"`) || !strings.Contains(want[5], `"sess_2"`) {
		t.Errorf("announcements not after the stream in session order:\n%s", strings.Join(want, "\n"))
	}
	other := [][]byte{[]byte(newA), []byte(newB), []byte(chunk), []byte(answer), []byte(cmdA), []byte(cmdA)}
	if Diff(want, normaliseAll(other, "/r")) == "" {
		t.Error("a session announcing twice, the other never, compared equal")
	}
}

// TestReplaceRandomIDs checks the hand-written scan against the regular
// expression it stands for.
func TestReplaceRandomIDs(t *testing.T) {
	re := regexp.MustCompile(`\b(sess_|acp_)[0-9a-f]{8,}\b`)
	for _, in := range []string{
		``,
		`{"sessionId":"sess_0123456789abcdef"}`,
		`sess_0123456789abcdef`,
		`xsess_0123456789abcdef "sess_0123456` + `7" sess_0123456789abcdefg sess_0123456789abcdef_ sess_0123456789ABCDEF`,
		`acp_aaaaaaaa,acp_bbbbbbbbb acp_aaaaaaaa sess_acp_aaaaaaaaa _acp_aaaaaaaaa 9acp_aaaaaaaaa -acp_aaaaaaaaa`,
		`"toolCallId":"acp_aaaaaaaaaaaaaaaaaaaaaaaa","path":"/r/sess_0123456789abcdef/a.txt"`,
		`sess_sess_0123456789 acp_acp_0123456789 sess_`,
		"é sess_0123456789abcdef\u00e9",
	} {
		mark := func(id []byte, prefix string) []byte { return []byte("<" + prefix + "|" + string(id) + ">") }
		want := re.ReplaceAllFunc([]byte(in), func(id []byte) []byte { return mark(id, string(re.FindSubmatch(id)[1])) })
		if got := replaceRandomIDs([]byte(in), mark); string(got) != string(want) {
			t.Errorf("%q:\ngot  %s\nwant %s", in, got, want)
		}
	}
}
