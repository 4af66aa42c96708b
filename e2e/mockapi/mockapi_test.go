package mockapi

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// event is one parsed server-sent event.
type event struct {
	name string
	data map[string]any
}

func post(t *testing.T, ctx context.Context, url, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/responses", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// readEvents parses an SSE body, calling each(e) as events arrive. It may
// run on a goroutine of its own, so it reports with t.Errorf only.
func readEvents(t *testing.T, r io.Reader, each func(event)) {
	t.Helper()
	sc := bufio.NewScanner(r)
	var cur event
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &cur.data); err != nil {
				t.Errorf("data is not JSON: %v", err) // may run outside the test goroutine
			}
		case line == "":
			if cur.name != "" {
				if cur.data["type"] != cur.name {
					t.Errorf("event %q carries type %v", cur.name, cur.data["type"])
				}
				each(cur)
			}
			cur = event{}
		}
	}
}

func TestReplyStream(t *testing.T) {
	s := New(t)
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") || !strings.HasSuffix(s.URL(), "/v1") {
		t.Errorf("URL = %q", s.URL())
	}
	s.Enqueue(Reply(Reasoning("hmm"), Message("hello"), NamespacedCall("c1", "mcp__acp", "edit_text_file", `{"path":"/a"}`)))
	resp := post(t, context.Background(), s.URL(), `{"model":"m","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}]}`)
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var names []string
	var done []map[string]any
	var completed map[string]any
	readEvents(t, resp.Body, func(e event) {
		names = append(names, e.name)
		switch e.name {
		case "response.output_item.done":
			done = append(done, e.data["item"].(map[string]any))
		case "response.output_text.delta":
			if e.data["delta"] != "hello" {
				t.Errorf("delta = %v", e.data["delta"])
			}
		case "response.completed":
			completed = e.data["response"].(map[string]any)
		}
	})
	want := []string{
		"response.created",
		"response.output_item.added", "response.output_item.done",
		"response.output_item.added", "response.output_text.delta", "response.output_item.done",
		"response.output_item.added", "response.output_item.done",
		"response.completed",
	}
	if !slices.Equal(names, want) {
		t.Errorf("events\n got %q\nwant %q", names, want)
	}
	if len(done) != 3 || done[0]["type"] != "reasoning" || done[1]["type"] != "message" ||
		done[2]["namespace"] != "mcp__acp" || done[2]["name"] != "edit_text_file" || done[2]["call_id"] != "c1" {
		t.Errorf("items = %v", done)
	}
	if completed["id"] != "resp_1" {
		t.Errorf("completed id = %v", completed["id"])
	}
	usage, _ := completed["usage"].(map[string]any)
	details, _ := usage["input_tokens_details"].(map[string]any)
	if usage["input_tokens"] != float64(DefaultUsage.InputTokens) || details["cached_tokens"] != float64(DefaultUsage.CachedTokens) {
		t.Errorf("usage = %v", usage)
	}

	reqs := s.Requests()
	if len(reqs) != 1 || reqs[0].Body["model"] != "m" || !slices.Equal(reqs[0].Texts("user"), []string{"hi"}) {
		t.Errorf("recorded %+v", reqs)
	}
}

func TestHTTPErrorAndUnscripted(t *testing.T) {
	s := New(t)
	s.Enqueue(HTTPError(400, "bad input"))
	for i, want := range []struct {
		status int
		msg    string
	}{{400, "bad input"}, {500, "no scripted response"}} {
		resp := post(t, context.Background(), s.URL(), `{}`)
		var body struct {
			Error struct{ Message string } `json:"error"`
		}
		json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != want.status || !strings.Contains(body.Error.Message, want.msg) {
			t.Errorf("request %d: %d %q, want %d %q", i, resp.StatusCode, body.Error.Message, want.status, want.msg)
		}
	}
	if len(s.Requests()) != 2 || s.Pending() != 0 {
		t.Errorf("%d requests recorded, %d pending", len(s.Requests()), s.Pending())
	}
}

func TestHangRelease(t *testing.T) {
	s := New(t)
	resp, hold := Hang(Message("partial"))
	s.Enqueue(resp)
	r := post(t, context.Background(), s.URL(), `{}`)
	defer r.Body.Close()
	events := make(chan string, 16)
	go func() {
		defer close(events)
		readEvents(t, r.Body, func(e event) { events <- e.name })
	}()
	select {
	case <-hold.Reached():
	case <-time.After(10 * time.Second):
		t.Fatal("hang point not reached")
	}
	var got []string
	for len(got) < 4 {
		got = append(got, <-events)
	}
	if got[3] != "response.output_item.done" {
		t.Fatalf("events before the hang = %q", got)
	}
	hold.Release()
	hold.Release() // idempotent
	for name := range events {
		got = append(got, name)
	}
	if got[len(got)-1] != "response.completed" {
		t.Errorf("after release: %q", got)
	}
}

// A hang nobody releases ends with its request (codex went away) or with
// the server: the stream stops after the items before the hang, without a
// completion, and Close does not wait for it.
func TestHangEndsWithRequest(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(s *Server, cancel context.CancelFunc)
	}{
		{"request cancelled", func(_ *Server, cancel context.CancelFunc) { cancel() }},
		{"server closed", func(s *Server, _ context.CancelFunc) { s.Close() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(t)
			resp, hold := Hang(Message("partial"))
			s.Enqueue(resp)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			r := post(t, ctx, s.URL(), `{}`)
			defer r.Body.Close()
			events := make(chan string, 16)
			go func() {
				defer close(events)
				readEvents(t, r.Body, func(e event) { events <- e.name })
			}()
			<-hold.Reached()
			// The client has the 4 events flushed before the hang before
			// the request ends (a cancelled request drops what is unread).
			var got []string
			for len(got) < 4 {
				name, ok := <-events
				if !ok {
					t.Fatalf("the stream ended after %q", got)
				}
				got = append(got, name)
			}
			tc.end(s, cancel)
			for name := range events { // the stream ended: nothing else would end it
				got = append(got, name)
			}
			if len(got) != 4 || got[3] != "response.output_item.done" {
				t.Errorf("events = %q, want the 4 before the hang and no more", got)
			}
			if slices.Contains(got, "response.completed") {
				t.Error("a hang that was never released completed")
			}
		})
	}
}

func TestRequestHelpers(t *testing.T) {
	var r Request
	err := json.Unmarshal([]byte(`{
		"tools":[{"type":"function","name":"exec_command"},{"type":"web_search"},{"type":"custom","name":"apply_patch"}],
		"input":[
			{"type":"message","role":"developer","content":[{"type":"input_text","text":"dev"}]},
			{"type":"message","role":"user","content":[{"type":"input_text","text":"q1"}]},
			{"type":"message","role":"user","content":[{"type":"input_text","text":"<image>"},{"type":"input_image","image_url":"data:image/png;base64,AA=="},{"type":"input_text","text":"q2"}]},
			{"type":"message","role":"assistant","content":[{"type":"output_text","text":"a1"}]},
			{"type":"function_call","call_id":"c1","name":"exec_command","arguments":"{}"},
			{"type":"function_call_output","call_id":"c1","output":"Exit code: 0"},
			{"type":"function_call_output","call_id":"c2","output":[{"type":"input_text","text":"x"}]}
		]}`), &r.Body)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.ToolNames(); !slices.Equal(got, []string{"exec_command", "web_search", "apply_patch"}) {
		t.Errorf("ToolNames = %q", got)
	}
	if !r.HasTool("apply_patch") || r.HasTool("edit_text_file") {
		t.Error("HasTool is wrong")
	}
	if got := r.Texts("assistant"); !slices.Equal(got, []string{"a1"}) {
		t.Errorf("Texts(assistant) = %q", got)
	}
	if got := r.Images("user"); !slices.Equal(got, []string{"data:image/png;base64,AA=="}) {
		t.Errorf("Images(user) = %q", got)
	}
	if got := r.Images("assistant"); len(got) != 0 {
		t.Errorf("Images(assistant) = %q", got)
	}
	if got := r.Texts("user"); !slices.Equal(got, []string{"q1", "<image>", "q2"}) {
		t.Errorf("Texts(user) = %q", got)
	}
	if out, ok := r.FunctionCallOutput("c1"); !ok || out != "Exit code: 0" {
		t.Errorf("FunctionCallOutput(c1) = %q, %v", out, ok)
	}
	if out, ok := r.FunctionCallOutput("c2"); !ok || out != `[{"text":"x","type":"input_text"}]` {
		t.Errorf("FunctionCallOutput(c2) = %q, %v", out, ok)
	}
	if _, ok := r.FunctionCallOutput("c3"); ok {
		t.Error("FunctionCallOutput(c3) found")
	}
}

func TestCodexConfig(t *testing.T) {
	got := CodexConfig("http://127.0.0.1:1234/v1")
	want := []string{
		"model_provider=mock",
		`model_providers.mock={name="mock", base_url="http://127.0.0.1:1234/v1", wire_api="responses", request_max_retries=0, stream_max_retries=0}`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("CodexConfig =\n%q\nwant\n%q", got, want)
	}
}
