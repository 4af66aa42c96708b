package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codexacp/codexacp/fsops"
	"github.com/codexacp/codexacp/fsops/fsopstest"
	"github.com/codexacp/codexacp/internal/recovery"
	"github.com/codexacp/codexacp/internal/syncbuf"
)

func TestObserverSeesEditInOrder(t *testing.T) {
	t.Parallel()
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			mem := fsopstest.NewMemFiles()
			setFile(mem, "/w/config.toml", configToml)
			rec := &recorder{}
			cs := tr.connect(t, NewServer(fsops.NewEngine(mem), rec))

			args := map[string]any{"path": "/w/./config.toml", "old_string": "port = 8080", "new_string": "port = 3000"}
			res, sc := call(t, cs, fsops.ToolEditTextFile, args)
			if res.IsError {
				t.Fatalf("edit failed: %v", sc)
			}
			ev := rec.snapshot()
			if got := rec.kinds(); strings.Join(got, ",") != "started,before-write,finished" {
				t.Fatalf("events %v, want started,before-write,finished", got)
			}
			started, bw, fin := ev[0], ev[1], ev[2]
			if started.call.ID == "" || started.call.ID != bw.call.ID || bw.call.ID != fin.call.ID {
				t.Errorf("call ids %q %q %q, want one non-empty id", started.call.ID, bw.call.ID, fin.call.ID)
			}
			if started.call.Tool != fsops.ToolEditTextFile || started.call.Path != "/w/config.toml" {
				t.Errorf("call = %+v", started.call)
			}
			var gotArgs map[string]any
			if err := json.Unmarshal(started.call.Arguments, &gotArgs); err != nil || gotArgs["new_string"] != "port = 3000" || gotArgs["path"] != "/w/./config.toml" {
				t.Errorf("raw arguments = %s", started.call.Arguments)
			}
			ch := bw.change
			if ch == nil || ch.Path != "/w/config.toml" || string(ch.Old) != configToml ||
				string(ch.New) != strings.Replace(configToml, "8080", "3000", 1) || ch.Created {
				t.Fatalf("change = %+v", ch)
			}
			for _, l := range []string{"--- /w/config.toml", "+++ /w/config.toml", "-port = 8080", "+port = 3000"} {
				if !strings.Contains(ch.Diff, l+"\n") {
					t.Errorf("change diff lacks %q:\n%s", l, ch.Diff)
				}
			}
			if sc["diff"] != ch.Diff {
				t.Errorf("model's diff differs from the observer's:\n%s\n%s", sc["diff"], ch.Diff)
			}
			er, ok := fin.result.(*fsops.EditResult)
			if !ok || fin.err != nil || er.LineRange != (fsops.LineRange{Start: 3, End: 3}) {
				t.Errorf("finished with %#v, %v", fin.result, fin.err)
			}
		})
	}
}

func TestObserverRead(t *testing.T) {
	t.Parallel()
	mem := fsopstest.NewMemFiles()
	setFile(mem, "/w/a.txt", "one\ntwo\n")
	rec := &recorder{}
	cs := connectInMemory(t, NewServer(fsops.NewEngine(mem), rec))
	_, sc := call(t, cs, fsops.ToolReadTextFile, map[string]any{"path": "/w/a.txt"})
	if sc["hash"] != sha("one\ntwo\n") || sc["total_lines"] != 2.0 {
		t.Errorf("read result %v", sc)
	}
	ev := rec.snapshot()
	if strings.Join(rec.kinds(), ",") != "started,finished" {
		t.Fatalf("events %v", rec.kinds())
	}
	if _, ok := ev[1].result.(*fsops.ReadResult); !ok {
		t.Errorf("result %T, want *fsops.ReadResult", ev[1].result)
	}
}

// TestVeto checks that a BeforeWrite error leaves the file untouched and
// tells the model Permission denied with a hint.
func TestVeto(t *testing.T) {
	t.Parallel()
	custom := &fsops.Error{Code: fsops.CodePermission, Message: "Session is read-only: /w/a.txt", Hint: "Switch the session to a writing mode."}
	tests := []struct {
		name     string
		veto     error
		wantMsg  string
		wantHint string
	}{
		{"plain error", errors.New("user rejected"), "Permission denied: /w/a.txt", ""},
		{"tool error", custom, custom.Message, custom.Hint},
	}
	calls := []struct {
		tool string
		args map[string]any
	}{
		{fsops.ToolWriteTextFile, map[string]any{"path": "/w/a.txt", "content": "new\n"}},
		{fsops.ToolEditTextFile, map[string]any{"path": "/w/a.txt", "old_string": "old", "new_string": "new"}},
		{fsops.ToolMultiEditTextFile, map[string]any{"path": "/w/a.txt", "edits": []any{map[string]any{"old_string": "old", "new_string": "new"}}}},
		{fsops.ToolReplaceTextLines, map[string]any{"path": "/w/a.txt", "hash": sha("old\n"), "lines": []int{1, 2}, "old": "old\n", "new": "new\n"}},
		{fsops.ToolInsertTextLines, map[string]any{"path": "/w/a.txt", "hash": sha("old\n"), "line": 1, "anchor": "old", "content": "new\n"}},
		{fsops.ToolAppendTextFile, map[string]any{"path": "/w/a.txt", "hash": sha("old\n"), "content": "new\n"}},
	}
	for _, tr := range transports {
		for _, tt := range tests {
			for _, c := range calls {
				t.Run(tr.name+"/"+tt.name+"/"+c.tool, func(t *testing.T) {
					mem := fsopstest.NewMemFiles()
					setFile(mem, "/w/a.txt", "old\n")
					rec := &recorder{veto: tt.veto}
					cs := tr.connect(t, NewServer(fsops.NewEngine(mem), rec))
					res, sc := call(t, cs, c.tool, c.args)
					code, msg, hint := toolErr(t, res, sc)
					if code != fsops.CodePermission || msg != tt.wantMsg {
						t.Errorf("error %d %q, want %d %q", code, msg, fsops.CodePermission, tt.wantMsg)
					}
					if tt.wantHint != "" && hint != tt.wantHint {
						t.Errorf("hint %q, want %q", hint, tt.wantHint)
					}
					if got, _ := getFile(mem, "/w/a.txt"); got != "old\n" {
						t.Errorf("file = %q after veto", got)
					}
					if strings.Join(rec.kinds(), ",") != "started,before-write,finished" {
						t.Errorf("events %v", rec.kinds())
					}
					if fin := rec.snapshot()[2]; fin.result != nil || fin.err == nil || fin.err.Code != fsops.CodePermission {
						t.Errorf("finished with %v, %v", fin.result, fin.err)
					}
				})
			}
		}
	}
}

// TestConcurrentCalls runs calls from several clients of one server at
// once (run with -race): every call gets its own id and its events in order.
func TestConcurrentCalls(t *testing.T) {
	t.Parallel()
	mem := fsopstest.NewMemFiles()
	const n = 8
	for i := range n {
		setFile(mem, fmt.Sprintf("/w/f%d.txt", i), "v0\n")
	}
	rec := &recorder{}
	srv := NewServer(fsops.NewEngine(mem), rec)
	h := newTestHost(t, nil)
	token, unregister := h.Register(srv)
	t.Cleanup(unregister)

	var wg sync.WaitGroup
	for i := range n {
		cs := dialHTTP(t, h.URL(), token)
		wg.Go(func() {
			path := fmt.Sprintf("/w/f%d.txt", i)
			for v := range 5 {
				res, err := cs.CallTool(context.Background(), &mcpsdk.CallToolParams{Name: fsops.ToolEditTextFile,
					Arguments: map[string]any{"path": path, "old_string": fmt.Sprintf("v%d\n", v), "new_string": fmt.Sprintf("v%d\n", v+1)}})
				if err != nil || res.IsError {
					t.Errorf("%s v%d: %v %v", path, v, err, res)
					return
				}
			}
		})
	}
	wg.Wait()
	for i := range n {
		if got, _ := getFile(mem, fmt.Sprintf("/w/f%d.txt", i)); got != "v5\n" {
			t.Errorf("f%d = %q", i, got)
		}
	}
	byID := make(map[string][]string)
	for _, e := range rec.snapshot() {
		byID[e.call.ID] = append(byID[e.call.ID], e.kind)
	}
	if len(byID) != n*5 {
		t.Errorf("%d distinct call ids, want %d", len(byID), n*5)
	}
	for id, kinds := range byID {
		if strings.Join(kinds, ",") != "started,before-write,finished" {
			t.Errorf("call %s: %v", id, kinds)
		}
	}
}

// blockingObserver holds BeforeWrite until the call's context ends, like a
// permission request the user never answers.
type blockingObserver struct {
	recorder
	reached  chan struct{}
	finished chan struct{}
}

func (b *blockingObserver) CallFinished(ctx context.Context, c *Call, result any, err *fsops.Error) {
	b.recorder.CallFinished(ctx, c, result, err)
	if c.Tool == fsops.ToolWriteTextFile {
		close(b.finished)
	}
}

func (b *blockingObserver) BeforeWrite(ctx context.Context, c *Call, ch *fsops.Change) error {
	b.recorder.BeforeWrite(ctx, c, ch)
	close(b.reached)
	<-ctx.Done()
	return context.Cause(ctx)
}

// TestClientCancel checks that a client cancelling a call (MCP
// notifications/cancelled) ends the call's context: a write waiting for
// permission is abandoned and nothing is written.
func TestClientCancel(t *testing.T) {
	t.Parallel()
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			mem := fsopstest.NewMemFiles()
			setFile(mem, "/w/a.txt", "old\n")
			obs := &blockingObserver{reached: make(chan struct{}), finished: make(chan struct{})}
			cs := tr.connect(t, NewServer(fsops.NewEngine(mem), obs))
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: fsops.ToolWriteTextFile, Arguments: map[string]any{"path": "/w/a.txt", "content": "new\n"}})
				done <- err
			}()
			<-obs.reached
			cancel()
			if err := <-done; err == nil {
				t.Error("cancelled call returned no error")
			}
			// The server side finishes once its context is cancelled.
			select {
			case <-obs.finished:
			case <-time.After(10 * time.Second):
				t.Fatal("the call did not end after the client cancelled it")
			}
			if strings.Join(obs.kinds(), ",") != "started,before-write,finished" {
				t.Fatalf("events %v", obs.kinds())
			}
			if fin := obs.snapshot()[2]; fin.err == nil {
				t.Errorf("finished without error")
			}
			if got, _ := getFile(mem, "/w/a.txt"); got != "old\n" {
				t.Errorf("file = %q after cancel", got)
			}
			// The session is still usable.
			if _, sc := call(t, cs, fsops.ToolReadTextFile, map[string]any{"path": "/w/a.txt"}); sc["content"] == nil {
				t.Errorf("read after cancel: %v", sc)
			}
		})
	}
}

// panicFiles is a Files whose reads panic, standing in for a bug.
type panicFiles struct{ fsops.Files }

func (panicFiles) ReadFile(context.Context, string) ([]byte, error) { panic(recovery.Injected("boom")) }

// panicObserver panics where it is told to, standing in for a bug in the
// ACP layer's reports.
type panicObserver struct {
	recorder
	in string // "started" or "finished"
}

func (o *panicObserver) CallStarted(ctx context.Context, c *Call) context.Context {
	if o.in == "started" {
		panic(recovery.Injected("observer"))
	}
	return o.recorder.CallStarted(ctx, c)
}

func (o *panicObserver) CallFinished(ctx context.Context, c *Call, result any, err *fsops.Error) {
	if o.in == "finished" {
		panic(recovery.Injected("observer"))
	}
	o.recorder.CallFinished(ctx, c, result, err)
}

// A panic outside the tool itself (the observer's reports, which run on
// the go-sdk's goroutine for the call) is that call's internal error; the
// server keeps serving, and the panic is logged with its stack.
func TestObserverPanicBecomesError(t *testing.T) {
	for _, in := range []string{"started", "finished"} {
		t.Run(in, func(t *testing.T) {
			var log syncbuf.Buffer
			prev := slog.Default()
			slog.SetDefault(slog.New(slog.NewTextHandler(&log, nil)))
			t.Cleanup(func() { slog.SetDefault(prev) })
			mem := fsopstest.NewMemFiles()
			setFile(mem, "/w/a.txt", "a\n")
			obs := &panicObserver{in: in}
			cs := connectInMemory(t, NewServer(fsops.NewEngine(mem), obs))
			res, sc := call(t, cs, fsops.ToolReadTextFile, map[string]any{"path": "/w/a.txt"})
			if code, msg, _ := toolErr(t, res, sc); code != fsops.CodeInternal || !strings.Contains(msg, "Internal error in read_text_file") {
				t.Errorf("code %d %q", code, msg)
			}
			if got := log.String(); !strings.Contains(got, "recovered from a panic") || !strings.Contains(got, "panicObserver") {
				t.Errorf("log = %.300q, want the panic with its stack", got)
			}
			obs.in = ""
			if _, sc := call(t, cs, fsops.ToolReadTextFile, map[string]any{"path": "/w/a.txt"}); sc["content"] != "a\n" {
				t.Errorf("server stopped serving after a panic: %v", sc)
			}
		})
	}
}

// A panic in a tool becomes an error result; the server keeps serving.
func TestToolPanicBecomesError(t *testing.T) {
	t.Parallel()
	cs := connectInMemory(t, NewServer(fsops.NewEngine(panicFiles{fsopstest.NewMemFiles()}), nil))
	res, sc := call(t, cs, fsops.ToolReadTextFile, map[string]any{"path": "/w/a.txt"})
	if code, msg, _ := toolErr(t, res, sc); code != fsops.CodeInternal || !strings.Contains(msg, "Internal error") {
		t.Errorf("code %d %q", code, msg)
	}
	res, sc = call(t, cs, fsops.ToolReadTextFile, map[string]any{"path": "relative"})
	if code, _, _ := toolErr(t, res, sc); code != fsops.CodeInvalidRequest {
		t.Errorf("server stopped serving after a panic: code %d", code)
	}
}
