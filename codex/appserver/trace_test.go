package appserver

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/codexacp/codexacp/codex"
)

// tracer keeps what Options.Trace was told, one string per call:
// "> line" sent, "< line" read, "> EOF" / "< EOF" the ends of the streams.
type tracer struct {
	mu    sync.Mutex
	lines []string
}

func (tr *tracer) trace(sent bool, line []byte) {
	dir := "<"
	if sent {
		dir = ">"
	}
	text := string(line)
	if line == nil {
		text = "EOF"
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.lines = append(tr.lines, dir+" "+text)
}

func (tr *tracer) got() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]string(nil), tr.lines...)
}

// TestAppServerTrace: the trace holds the whole conversation, both ways,
// each in order, including the answers to server requests and the ends of both
// streams, and the lines are exactly what went over the pipes.
func TestAppServerTrace(t *testing.T) {
	tr := &tracer{}
	c, _ := startFake(t, "", func(o *Options) { o.Trace = tr.trace })
	r := &recorder{request: func(context.Context, string, json.RawMessage) (any, error) {
		return map[string]string{"decision": "accept"}, nil
	}}
	remove := c.Route("t1", r)
	call(t, c, "echo", map[string]int{"a": 1}, nil)
	call(t, c, "ask", map[string]any{"threadId": "t1", "count": 1, "method": "item/commandExecution/requestApproval"}, nil)
	remove()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`> {"id":1,"method":"initialize","params":{"capabilities":{"experimentalApi":true},"clientInfo":{"name":"codexacp","version":"0"}}}`,
		`< {"id":1,"result":{"userAgent":"fake/0"}}`,
		`< {"method":"configWarning","params":{"summary":"unrouted"}}`,
		`> {"method":"initialized"}`,
		`> {"id":2,"method":"echo","params":{"a":1}}`,
		`< {"id":2,"result":{"a":1}}`,
		`> {"id":3,"method":"ask","params":{"count":1,"method":"item/commandExecution/requestApproval","threadId":"t1"}}`,
		`< {"method":"item/agentMessage/delta","params":{"seq":0,"threadId":"t1"}}`,
		`< {"id":"srv-1","method":"item/commandExecution/requestApproval","params":{"threadId":"t1"}}`,
		`> {"id":"srv-1","result":{"decision":"accept"}}`,
		`< {"id":3,"result":{"id":"srv-1","result":{"decision":"accept"}}}`,
		`> EOF`,
		`< EOF`,
	}
	// Each direction in order; how the two interleave depends on timing
	// (the fake's configWarning races the client's initialized).
	for _, dir := range []string{">", "<"} {
		if got, want := direction(tr.got(), dir), direction(want, dir); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("trace %s:\n%s\nwant:\n%s", dir, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// direction keeps the trace lines of one direction (">" sent, "<" read).
func direction(lines []string, dir string) []string {
	var out []string
	for _, l := range lines {
		if strings.HasPrefix(l, dir+" ") {
			out = append(out, l)
		}
	}
	return out
}

// ReadUserConfig's config/read (CallUnrecorded) reaches neither way of the
// trace — codex answers with the user's whole configuration — while the
// calls around it do.
func TestAppServerTraceLeavesOutUnrecordedCalls(t *testing.T) {
	tr := &tracer{}
	c, _ := startFake(t, "", func(o *Options) { o.Trace = tr.trace })
	call(t, c, "echo", map[string]int{"a": 1}, nil)
	uc, err := ReadUserConfig(context.Background(), c, "/w")
	if err != nil || uc.SandboxMode != codex.SandboxWorkspaceWrite {
		t.Fatalf("ReadUserConfig = %+v, %v", uc, err)
	}
	call(t, c, "echo", map[string]int{"b": 2}, nil)
	got := strings.Join(tr.got(), "\n")
	if strings.Contains(got, "config/read") || strings.Contains(got, "workspace-write") {
		t.Errorf("the trace holds config/read:\n%s", got)
	}
	for _, want := range []string{`"id":2,"method":"echo"`, `< {"id":2,"result":{"a":1}}`, `"id":4,"method":"echo"`, `< {"id":4,"result":{"b":2}}`} {
		if !strings.Contains(got, want) {
			t.Errorf("the trace lacks %s:\n%s", want, got)
		}
	}
}
