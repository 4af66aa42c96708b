package replay

import (
	"strings"
	"testing"

	"github.com/codexacp/codexacp/record"
)

// TestAnotherWay: a replayed stream that differs from the recording only
// in what normaliseAll leaves open (random ids, answers due at once in
// either order, a cancel request moved within its stretch, commands
// announcements anywhere) never counts as gone another way; a changed
// message or answer, or one message more, does, at once.
func TestAnotherWay(t *testing.T) {
	const (
		root     = "/r"
		answer2  = `{"jsonrpc":"2.0","id":2,"result":{"sessionId":"sess_%s"}}`
		update   = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_%s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"%s"}}}}`
		ask      = `{"jsonrpc":"2.0","id":%s,"method":"session/request_permission","params":{"sessionId":"sess_%s","toolCall":{"toolCallId":"acp_%s"}}}`
		cancel   = `{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":%s}}`
		answer3  = `{"jsonrpc":"2.0","id":3,"result":{"stopReason":"cancelled"}}`
		answer4  = `{"jsonrpc":"2.0","id":4,"result":{}}`
		announce = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_%s","update":{"sessionUpdate":"available_commands_update","availableCommands":[]}}}`
	)
	rec, live := "aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb"
	msg := func(format string, args ...string) string {
		for _, a := range args {
			format = strings.Replace(format, "%s", a, 1)
		}
		return format
	}
	recorded := []string{
		msg(answer2, rec),
		msg(update, rec, "hi"),
		msg(ask, "0", rec, "cccccccccccccccccccccccc"),
		msg(cancel, "0"),
		msg(update, rec, "there"),
		msg(answer3),
		msg(answer4),
		msg(announce, rec),
	}
	var entries []record.Entry
	entries = append(entries, record.Entry{Kind: record.KindStart})
	for _, id := range []string{"2", "3", "4"} {
		entries = append(entries, record.Entry{Kind: record.KindACP, Dir: record.DirIn, Msg: []byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"x"}`)})
	}
	for _, m := range recorded {
		entries = append(entries, record.Entry{Kind: record.KindACP, Dir: record.DirOut, Msg: []byte(m)})
	}
	sc, err := newScript(entries)
	if err != nil {
		t.Fatal(err)
	}
	player := func() *player {
		p := &player{script: sc, root: root, sent: map[string][]byte{}}
		for _, id := range []string{"2", "3", "4"} {
			p.sent[id] = []byte("x")
		}
		return p
	}
	same := []string{
		msg(announce, live),
		msg(answer2, live),
		msg(cancel, "7"),
		msg(update, live, "hi"),
		msg(ask, "7", live, "dddddddddddddddddddddddd"),
		msg(update, live, "there"),
		msg(answer4),
		msg(answer3),
	}
	p := player()
	for _, m := range same {
		if why := p.anotherWay([]byte(m), classify([]byte(m))); why != "" {
			t.Fatalf("%s: gone another way (%s), though the streams compare equal", m, why)
		}
	}
	if d := Diff(normaliseAll(sc.outs, root), normaliseAll(bytesOf(same), root)); d != "" {
		t.Fatalf("the streams of the test differ:\n%s", d)
	}
	for _, tt := range []struct {
		name string
		live []string
	}{
		{"another text", []string{msg(answer2, live), msg(update, live, "ho")}},
		{"another answer", []string{msg(answer2, live), msg(update, live, "hi"), msg(ask, "7", live, "dddddddddddddddddddddddd"), msg(update, live, "there"), msg(`{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"no"}}`)}},
		{"one message more", []string{msg(update, live, "hi"), msg(ask, "7", live, "dddddddddddddddddddddddd"), msg(update, live, "there"), msg(update, live, "!")}},
	} {
		p := player()
		why := ""
		for i, m := range tt.live {
			why = p.anotherWay([]byte(m), classify([]byte(m)))
			if last := i == len(tt.live)-1; (why != "") != last {
				t.Errorf("%s: message %d: gone another way = %q, want it at the last message only", tt.name, i+1, why)
			}
		}
	}
}

func bytesOf(msgs []string) [][]byte {
	out := make([][]byte, len(msgs))
	for i, m := range msgs {
		out[i] = []byte(m)
	}
	return out
}

// TestAnotherWayReusedID: answers to a request id the recording answered
// twice are not compared as they come (which recorded answer is whose is
// not known then).
func TestAnotherWayReusedID(t *testing.T) {
	entries := []record.Entry{{Kind: record.KindStart}}
	for _, m := range []struct{ dir, msg string }{
		{record.DirIn, `{"jsonrpc":"2.0","id":2,"method":"x"}`},
		{record.DirOut, `{"jsonrpc":"2.0","id":2,"result":{"n":1}}`},
		{record.DirIn, `{"jsonrpc":"2.0","id":2,"method":"x"}`},
		{record.DirOut, `{"jsonrpc":"2.0","id":2,"result":{"n":2}}`},
	} {
		entries = append(entries, record.Entry{Kind: record.KindACP, Dir: m.dir, Msg: []byte(m.msg)})
	}
	sc, err := newScript(entries)
	if err != nil {
		t.Fatal(err)
	}
	p := &player{script: sc, root: "/r", sent: map[string][]byte{"2": []byte("x")}}
	for _, m := range []string{`{"jsonrpc":"2.0","id":2,"result":{"n":1}}`, `{"jsonrpc":"2.0","id":2,"result":{"n":2}}`} {
		if why := p.anotherWay([]byte(m), classify([]byte(m))); why != "" {
			t.Errorf("%s: gone another way (%s)", m, why)
		}
	}
}
