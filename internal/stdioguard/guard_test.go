package stdioguard

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codexacp/codexacp/internal/stress"
	"github.com/codexacp/codexacp/internal/testkit"
)

func TestReadLine(t *testing.T) {
	r := bufio.NewReaderSize(strings.NewReader("short\n"+`{"id":7,`+strings.Repeat("x", 40)+"\nexactly-10\nlast-no-newline"), 16)
	var big topLevel
	line, err := readLine(r, 10, &big)
	if err != nil || string(line) != "short\n" {
		t.Fatalf("first = %q, %v", line, err)
	}
	if _, err := readLine(r, 10, &big); !errors.Is(err, errLineTooLong) {
		t.Fatalf("long line: err = %v, want errLineTooLong", err)
	}
	if !big.object || string(big.id) != "7" {
		t.Errorf("the long line was not scanned: %+v", big)
	}
	line, err = readLine(r, 10, &big)
	if err != nil || string(line) != "exactly-10\n" {
		t.Fatalf("a line of the limit, newline not counted = %q, %v", line, err)
	}
	line, err = readLine(r, 20, &big)
	if err != nil || string(line) != "last-no-newline" {
		t.Fatalf("last = %q, %v", line, err)
	}
	if _, err := readLine(r, 20, &big); err != io.EOF {
		t.Fatalf("after the end: %v", err)
	}
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		line    string
		verdict verdict
		code    int
		id      string // answered or failed
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, pass, 0, ""},
		{`{"jsonrpc":"2.0","method":"session/cancel","params":{}}`, notify, 0, ""},
		{`{"jsonrpc":"2.0","method":"_zed/anything"}`, notify, 0, ""},
		{`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":3}}`, pass, 0, ""},
		{`{"jsonrpc":"2.0","method":"$/cancel_request","params":{}}`, ignore, 0, ""},
		{`{"jsonrpc":"2.0","id":"a","result":{}}`, pass, 0, ""},
		{`{"jsonrpc":"2.0","id":"a","result":null}`, pass, 0, ""},
		{`{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"x"}}`, pass, 0, ""},
		{`{"jsonrpc":"2.0","id":3`, reject, -32700, ""},
		{`"just a string"`, reject, -32600, ""},
		{`{"jsonrpc":"2.0","id":4}`, reject, -32600, "4"},
		{`{"jsonrpc":"2.0","id":5,"method":""}`, reject, -32600, "5"},
		{`{"jsonrpc":"2.0","id":[1],"method":"x"}`, reject, -32600, ""},
		{`{"jsonrpc":"2.0","id":1,"method":7}`, reject, -32600, "1"},
		// The SDK takes these for notifications, or drops them: nobody would answer.
		{`{"jsonrpc":"2.0","id":null,"method":"initialize"}`, reject, -32600, ""},
		{`{"jsonrpc":2,"id":6,"method":"initialize"}`, reject, -32600, "6"},
		// A response the SDK cannot decode fails the request it answers.
		{`{"jsonrpc":"2.0","id":8,"error":"boom"}`, failReply, 0, "8"},
		{`{"jsonrpc":"2.0","id":"r","result":{},"error":{"code":"x"}}`, failReply, 0, `"r"`},
		// Responses are never answered, even when they cannot be routed.
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`, ignore, 0, ""},
		{`{"jsonrpc":"2.0","id":1e999,"result":{}}`, ignore, 0, ""},
	} {
		m := classify([]byte(tc.line))
		code := 0
		if m.err != nil {
			code = m.err.Code
		}
		if m.verdict != tc.verdict || code != tc.code || string(m.id) != tc.id {
			t.Errorf("%s: verdict %d code %d id %q, want %d %d %q", tc.line, m.verdict, code, m.id, tc.verdict, tc.code, tc.id)
		}
	}
}

func TestTopLevelScan(t *testing.T) {
	long := strings.Repeat("9", maxIDBytes+1)
	for _, tc := range []struct {
		in             string
		object, idSeen bool
		id             string
		method, reply  bool
		name           string
	}{
		{`{"jsonrpc":"2.0","id":12,"method":"x","params":{"id":99,"method":null}}`, true, true, "12", true, false, "x"},
		{`{"params":{"method":"x"},"method":"session/prompt","id":1}`, true, true, "1", true, false, "session/prompt"},
		{`{"method":"session/prompt/too-long","id":1}`, true, true, "1", true, false, ""},
		{`{"method":"a","method":null,"id":1}`, true, true, "1", false, false, ""},
		{`{"id":"a\"b}","result":{"content":"{\"id\":3,\"method\":1}"}}`, true, true, `"a\"b}"`, false, true, ""},
		{`{"params":[{"id":1}],"ID":7,"error":null}`, true, true, "7", false, true, ""},
		{` { "method" : null , "id" : -1.5e3 } `, true, true, "-1.5e3", false, false, ""},
		{`{"id":{"x":[1]},"result":1}`, true, true, `{"x":[1]}`, false, true, ""},
		{`{"id":` + long + `,"result":1}`, true, true, "", false, true, ""},
		{`{"id":12abc,"result":1}`, true, true, "", false, true, ""},                             // not JSON: no id
		{`{"i\u0064":1,"result":1}`, true, false, "", false, true, ""},                           // escaped keys are not read
		{`{"identifier":1,"methods":"x","id":2,"result":"abc`, true, true, "2", false, true, ""}, // cut short
		{`[{"id":1,"method":"x"}]`, false, false, "", false, false, ""},
		{`"id"`, false, false, "", false, false, ""},
	} {
		for _, size := range []int{1, 7, len(tc.in)} {
			var s topLevel
			for in := []byte(tc.in); len(in) > 0; in = in[min(size, len(in)):] {
				s.scan(in[:min(size, len(in))])
			}
			if s.object != tc.object || s.idSeen != tc.idSeen || string(s.id) != tc.id || s.method != tc.method || s.reply != tc.reply || string(s.name) != tc.name {
				t.Errorf("%.60s in %d-byte chunks: object %v idSeen %v id %q method %v %q reply %v", tc.in, size, s.object, s.idSeen, s.id, s.method, s.name, s.reply)
			}
		}
	}
}

func TestNumericProtocolVersion(t *testing.T) {
	msg := func(v string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":` + v + `,"clientInfo":{"name":"<a&b>","version":"1"}}}`
	}
	for _, tc := range []struct{ in, want string }{
		{msg(`"1"`), `{"id":1,"jsonrpc":"2.0","method":"initialize","params":{"clientInfo":{"name":"<a&b>","version":"1"},"protocolVersion":1}}`},
		{msg(`"007"`), `{"id":1,"jsonrpc":"2.0","method":"initialize","params":{"clientInfo":{"name":"<a&b>","version":"1"},"protocolVersion":7}}`},
		{msg(`1`), msg(`1`)},
		{msg(`"one"`), msg(`"one"`)},
		{msg(`"-1"`), msg(`"-1"`)},
		{msg(`"1.0"`), msg(`"1.0"`)},
		{msg(`""`), msg(`""`)},
		{msg(`"12345678901"`), msg(`"12345678901"`)},
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":null}`, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":null}`},
	} {
		if got := numericProtocolVersion([]byte(tc.in), maxLineBytes); string(got) != tc.want {
			t.Errorf("%s\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
}

// runGuard feeds input through a guard with the given line limit and
// returns the lines it passed to the SDK and answered to the editor, and the
// sessions it was asked to cancel.
func runGuard(tb testing.TB, input []byte, limit int, log *slog.Logger) (toSDK, toEditor [][]byte, cancelled []string) {
	tb.Helper()
	pr, pw := io.Pipe()
	var editor bytes.Buffer
	g := newInputGuard(pw, &editor, log, func(id string) { cancelled = append(cancelled, id) })
	g.limit = limit
	passed := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(pr)
		passed <- b
	}()
	g.Run(bytes.NewReader(input))
	return splitLines(<-passed), splitLines(editor.Bytes()), cancelled
}

func splitLines(b []byte) [][]byte {
	var lines [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return append(lines, b)
		}
		lines = append(lines, b[:i])
		b = b[i+1:]
	}
	return lines
}

// A line over the SDK's limit is answered with an error and skipped; the
// next message still gets through.
func TestGuardInputOversizedLine(t *testing.T) {
	big := `{"jsonrpc":"2.0","id":1,"method":"x","params":"` + strings.Repeat("a", maxLineBytes) + `"}`
	toSDK, toEditor, _ := runGuard(t, []byte(big+"\n"+`{"jsonrpc":"2.0","id":2,"method":"initialize"}`+"\n"), maxLineBytes, discardLogger())
	if len(toSDK) != 1 || string(toSDK[0]) != `{"jsonrpc":"2.0","id":2,"method":"initialize"}` {
		t.Errorf("passed on %q", toSDK)
	}
	if len(toEditor) != 1 || string(toEditor[0]) != `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Invalid Request: message larger than 10 MiB"}}` {
		t.Errorf("answered %q", toEditor)
	}
}

// What is left of an oversized line decides its fate: a response fails the
// request it answers (through the SDK, not to the editor), a request is
// answered with its own id, a notification is dropped.
func TestGuardOversizedLines(t *testing.T) {
	const limit = 64
	pad := strings.Repeat("x", limit)
	const next = `{"jsonrpc":"2.0","id":2,"method":"x"}`
	for _, tc := range []struct {
		name, line      string
		toSDK, toEditor string // "" for nothing, besides next
	}{
		{"request", `{"jsonrpc":"2.0","id":1,"method":"x","params":"` + pad + `"}`,
			"", `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Invalid Request: message larger than 10 MiB"}}`},
		{"prompt", `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"image","mimeType":"image/png","data":"` + pad + `"}]}}`,
			"", `{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"Invalid Request: prompt larger than 10 MiB: attach large images as files (file:// URI) rather than inline, and large text as a file reference"}}`},
		{"prompt, method last", `{"jsonrpc":"2.0","id":3,"params":{"sessionId":"s","method":"x","prompt":[{"type":"image","mimeType":"image/png","data":"` + pad + `"}]},"method":"session/prompt"}`,
			"", `{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"Invalid Request: prompt larger than 10 MiB: attach large images as files (file:// URI) rather than inline, and large text as a file reference"}}`},
		{"prompt-like method", `{"jsonrpc":"2.0","id":3,"method":"session/prompt2","params":"` + pad + `"}`,
			"", `{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"Invalid Request: message larger than 10 MiB"}}`},
		{"request with id null", `{"jsonrpc":"2.0","id":null,"method":"x","params":"` + pad + `"}`,
			"", `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: message larger than 10 MiB"}}`},
		{"response", `{"jsonrpc":"2.0","result":{"content":"` + pad + `"},"id":7}`,
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"response larger than 10 MiB: the editor's answer was dropped"}}`, ""},
		{"error response", `{"jsonrpc":"2.0","id":"q","error":{"code":1,"message":"` + pad + `"}}`,
			`{"jsonrpc":"2.0","id":"q","error":{"code":-32600,"message":"response larger than 10 MiB: the editor's answer was dropped"}}`, ""},
		{"response without id", `{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"` + pad + `"}}`, "", ""},
		{"notification", `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"` + pad + `"}}`, "", ""},
		{"not an object", `["` + pad + `"]`,
			"", `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: message larger than 10 MiB"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			toSDK, toEditor, cancelled := runGuard(t, []byte(tc.line+"\n"+next+"\n"), limit, discardLogger())
			wantSDK := []string{next}
			if tc.toSDK != "" {
				wantSDK = []string{tc.toSDK, next}
			}
			var wantEditor []string
			if tc.toEditor != "" {
				wantEditor = []string{tc.toEditor}
			}
			if fmt.Sprintf("%q", toSDK) != fmt.Sprintf("%q", wantSDK) {
				t.Errorf("to the SDK: %q\nwant %q", toSDK, wantSDK)
			}
			if fmt.Sprintf("%q", toEditor) != fmt.Sprintf("%q", wantEditor) {
				t.Errorf("to the editor: %q\nwant %q", toEditor, wantEditor)
			}
			if len(cancelled) != 0 {
				t.Errorf("cancelled %q", cancelled)
			}
		})
	}
}

// A burst of notifications never reaches the SDK's bounded queue: only
// requests and $/cancel_request (handled inline by the SDK) pass, and every
// session/cancel reaches the agent. The log gets a summary, not a line each.
func TestGuardNotificationBurst(t *testing.T) {
	n := stress.Size(t, 20_000, 100_000)
	burst, requests := testkit.NotificationBurst(n, "sess_known")
	var logged bytes.Buffer
	toSDK, toEditor, cancelled := runGuard(t, burst, maxLineBytes, slog.New(slog.NewTextHandler(&logged, nil)))

	var passedRequests, cancelRequests int
	for _, line := range toSDK {
		var m sdkMessage
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("passed on %s: %v", line, err)
		}
		switch {
		case m.ID != nil && m.Method == "initialize":
			passedRequests++
		case m.ID == nil && m.Method == "$/cancel_request":
			cancelRequests++
		default:
			t.Errorf("passed on %s", line)
		}
	}
	if passedRequests != requests || cancelRequests != n/5 {
		t.Errorf("passed on %d requests and %d $/cancel_request, want %d and %d", passedRequests, cancelRequests, requests, n/5)
	}
	if len(toEditor) != 0 {
		t.Errorf("answered %d notifications, first %s", len(toEditor), toEditor[0])
	}
	known := 0
	for _, id := range cancelled {
		if id == "sess_known" {
			known++
		}
	}
	if len(cancelled) != 2*n/5 || known != n/5 {
		t.Errorf("session/cancel reached the agent %d times (%d for the known session), want %d (%d)", len(cancelled), known, 2*n/5, n/5)
	}
	// One report when the burst starts and one when the input ends, give or
	// take one per 30 s on a slow machine: nowhere near a line each.
	if lines := bytes.Count(logged.Bytes(), []byte("\n")); lines > 10 {
		t.Errorf("%d log lines for %d notifications:\n%.1000s", lines, n, logged.String())
	}
}

// discardLogger is testkit.DiscardLogger, under the name these tests use.
var discardLogger = testkit.DiscardLogger

// BenchmarkGuardLargeResponse: the guard's cost on a large editor answer
// (fs/read_text_file of a 9 MiB file), which it checks before passing on.
func BenchmarkGuardLargeResponse(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":12,"result":{"content":"` + strings.Repeat("line of text\\n", 9<<20/14) + `"}}` + "\n")
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		runGuard(b, line, maxLineBytes, discardLogger())
	}
}

// BenchmarkGuardOversizedResponse: scanning a 12 MiB answer for its id.
func BenchmarkGuardOversizedResponse(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":12,"result":{"content":"` + strings.Repeat("line of text\\n", 12<<20/14) + `"}}` + "\n")
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		runGuard(b, line, maxLineBytes, discardLogger())
	}
}

// An editor answering our read with `{}` (no content) fails the read instead
// of passing for an empty file; `{"content":""}` is an empty file.
func TestGuardReadAnswerWithoutContentFails(t *testing.T) {
	var out bytes.Buffer
	w := &Writer{w: &out}
	for _, id := range []string{"7", "8"} {
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/w/a"}}`+"\n", id)
	}
	pr, pw := io.Pipe()
	g := newInputGuard(pw, io.Discard, discardLogger(), nil)
	g.reads = &w.reads
	passed := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(pr)
		passed <- b
	}()
	g.Run(strings.NewReader(`{"jsonrpc":"2.0","id":7,"result":{}}` + "\n" + `{"jsonrpc":"2.0","id":8,"result":{"content":""}}` + "\n" +
		`{"jsonrpc":"2.0","id":9,"result":{}}` + "\n"))
	got := splitLines(<-passed)
	if len(got) != 3 || !strings.Contains(string(got[0]), `"id":7,"error"`) || !strings.Contains(string(got[0]), "without content") ||
		string(got[1]) != `{"jsonrpc":"2.0","id":8,"result":{"content":""}}` || string(got[2]) != `{"jsonrpc":"2.0","id":9,"result":{}}` {
		t.Errorf("passed on %q", got)
	}
}

// The agent hears of each prompt the SDK will pass on before the SDK reads
// it, in the order of the input: a session/cancel right behind a prompt then
// covers it however late the SDK starts the prompt's handler.
func TestGuardNotesPromptsBeforeTheSDK(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	type hearing struct {
		event      string
		sdkPrompts int // prompts the SDK had read by then
	}
	var heard []hearing
	sdkPrompts := 0
	note := func(e string) {
		mu.Lock()
		heard = append(heard, hearing{e, sdkPrompts})
		mu.Unlock()
	}
	pr, pw := io.Pipe()
	var editor bytes.Buffer
	g := newInputGuard(pw, &editor, discardLogger(), func(id string) { note("cancel " + id) })
	// The SDK reads nothing before the first prompt was heard (or 10 s
	// passed): were the prompt passed on first, the guard would wait here
	// and the agent hear of it after the SDK read it.
	heardFirst := make(chan struct{})
	g.prompt = func(id string) {
		note("prompt " + id)
		if id == "s1" {
			close(heardFirst)
		}
	}
	read := make(chan int)
	go func() {
		select {
		case <-heardFirst:
		case <-time.After(10 * time.Second):
		}
		sc := bufio.NewScanner(pr)
		n := 0
		for sc.Scan() {
			n++
			if bytes.Contains(sc.Bytes(), []byte(`"session/prompt"`)) {
				mu.Lock()
				sdkPrompts++
				mu.Unlock()
			}
		}
		read <- n
	}()
	input := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`,
		`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}`,
		// Prompts the SDK answers with an error itself: no session, no
		// prompt, the wrong types.
		`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"prompt":[]}}`,
		`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1"}}`,
		`{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":7,"prompt":[]}}`,
		`{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"sessionId":"s1","prompt":[1]}}`,
		`{"jsonrpc":"2.0","id":6,"method":"session/set_mode","params":{"sessionId":"s2","modeId":"ask"}}`,
		`{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"sessionId":"s2","prompt":[{"type":"text","text":"hi"}]}}`,
		`{"jsonrpc":"2.0","method":"session/cancel","params":{}}`,
	}, "\n") + "\n"
	if err := g.Run(strings.NewReader(input)); err != nil {
		t.Fatal(err)
	}
	if n := <-read; n != 7 {
		t.Errorf("the SDK read %d lines, want the 7 requests", n)
	}
	mu.Lock()
	defer mu.Unlock()
	var got []string
	for _, h := range heard {
		got = append(got, h.event)
	}
	if want := []string{"prompt s1", "cancel s1", "prompt s2"}; !slices.Equal(got, want) {
		t.Fatalf("heard %q, want %q", got, want)
	}
	// The SDK may lag behind the guard, never lead it.
	if heard[0].sdkPrompts > 0 || heard[2].sdkPrompts > 5 {
		t.Errorf("the SDK had read %d and %d prompts when the agent heard of the first and the last", heard[0].sdkPrompts, heard[2].sdkPrompts)
	}
}
