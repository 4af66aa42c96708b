// Package mockapi is a scripted stand-in for the OpenAI Responses API that
// codex talks to, for end-to-end tests on loopback.
//
// A test enqueues one Response per model request codex will make (a turn with
// a tool call makes two: the call, then the answer after the tool output).
// Each request is answered from the head of the queue as a server-sent event
// stream in the shape codex 0.169 accepts, and its JSON body is recorded so the
// test can assert what the model was shown: the history after resume, the
// function_call_output a tool produced, the tools on offer.
//
// Point codex at the server with the -c flags from CodexConfig.
package mockapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
)

// Usage is the token usage reported in response.completed.
type Usage struct {
	InputTokens     int
	CachedTokens    int
	OutputTokens    int
	ReasoningTokens int
}

// DefaultUsage is reported when a Response leaves Usage zero.
var DefaultUsage = Usage{InputTokens: 100, CachedTokens: 20, OutputTokens: 10, ReasoningTokens: 3}

// Response is the scripted answer to one model request.
type Response struct {
	// Items are streamed in order, each as output_item.added and
	// output_item.done (messages also get an output_text delta).
	Items []Item
	// Usage is reported in response.completed; zero means DefaultUsage.
	Usage Usage
	// Status, when not 0 or 200, answers with that HTTP status and an OpenAI
	// style JSON error body carrying ErrorMessage instead of a stream.
	Status       int
	ErrorMessage string
	// ErrorBody, when set, is the "error" object of the HTTP error answer
	// instead of the default invalid_request_error carrying ErrorMessage.
	ErrorBody map[string]any
	// Header is added to the answer (a stream or an HTTP error): codex
	// reads the account's usage limits from x-codex-* headers
	// (RateLimitHeaders).
	Header http.Header
	// When, if set, keeps the response for a request it matches: a request
	// takes the first queued response that matches it (one without When
	// matches any). Concurrent requests, such as a subagent's and its
	// parent's, then get their own answers whatever their order.
	When func(Request) bool

	hold *Hold
}

// For is r kept for the requests match accepts (Response.When).
func (r Response) For(match func(Request) bool) Response {
	r.When = match
	return r
}

// Reply is a completed response with the given output items.
func Reply(items ...Item) Response {
	return Response{Items: items}
}

// HTTPError answers with an HTTP error status and a JSON body
// {"error":{"message":message,...}}, which codex reports verbatim.
func HTTPError(status int, message string) Response {
	return Response{Status: status, ErrorMessage: message}
}

// Hang streams items and then blocks until the test calls Release (the
// response then completes normally) or the request ends (codex went away, or
// the server was closed), in which case the stream ends without completion.
func Hang(items ...Item) (Response, *Hold) {
	h := &Hold{reached: make(chan struct{}), release: make(chan struct{}), abandoned: make(chan struct{})}
	return Response{Items: items, hold: h}, h
}

// Hold is the blocking point of a Hang response.
type Hold struct {
	reached     chan struct{}
	release     chan struct{}
	abandoned   chan struct{}
	reachOnce   sync.Once
	releaseOnce sync.Once
}

// Abandoned is closed when the request ended (codex gave it up) while the
// response hung, before Release.
func (h *Hold) Abandoned() <-chan struct{} { return h.abandoned }

// Reached is closed once the hang's items have been flushed to codex.
func (h *Hold) Reached() <-chan struct{} { return h.reached }

// Release lets the hanging response complete. Safe to call more than once.
func (h *Hold) Release() { h.releaseOnce.Do(func() { close(h.release) }) }

// Server is a running mock. Its methods are safe for concurrent use.
type Server struct {
	t    testing.TB // nil when made by Start
	ln   net.Listener
	http *http.Server
	stop chan struct{} // closed by Close: ends hanging responses
	once sync.Once

	// handlers counts the requests being served: Close waits for them, so
	// none logs to t after its test ended (testing panics then).
	handlers sync.WaitGroup
	closed   bool // guarded by mu: no handler starts once set

	mu       sync.Mutex
	queue    []Response
	requests []Request
	served   int
}

// New starts a Server for the test and closes it when the test ends.
// Unscripted requests are logged to t and answered with HTTP 500.
func New(t testing.TB) *Server {
	t.Helper()
	s, err := Start()
	if err != nil {
		t.Fatalf("mockapi: %v", err)
	}
	s.t = t
	t.Cleanup(s.Close)
	return s
}

// Start starts a Server on 127.0.0.1 with an ephemeral port, for use outside
// a test function; the caller must Close it.
func Start() (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen on loopback: %w", err)
	}
	s := &Server{ln: ln, stop: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/responses", s.serveResponses)
	s.http = &http.Server{Handler: mux}
	go s.http.Serve(ln) //nolint:errcheck // returns ErrServerClosed after Close
	return s, nil
}

// URL is the API base URL, ending in /v1, for a codex model provider's base_url.
func (s *Server) URL() string {
	return "http://" + s.ln.Addr().String() + "/v1"
}

// Enqueue appends scripted responses; requests consume them in order.
func (s *Server) Enqueue(rs ...Response) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, rs...)
}

// Pending reports how many enqueued responses have not been served yet.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Requests returns the requests received so far, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Close ends hanging responses, closes all connections, stops the server
// and waits for the requests being served to end.
func (s *Server) Close() {
	s.once.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		close(s.stop)
		s.http.Close()
		s.handlers.Wait()
	})
}

// enter registers a request being served; false once the server closed.
func (s *Server) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.handlers.Add(1)
	return true
}

func (s *Server) logf(format string, args ...any) {
	if s.t != nil {
		s.t.Logf("mockapi: "+format, args...)
	}
}

func (s *Server) serveResponses(w http.ResponseWriter, r *http.Request) {
	if !s.enter() {
		writeError(w, http.StatusServiceUnavailable, "mockapi: server closed")
		return
	}
	defer s.handlers.Done()
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "read body: "+err.Error(), http.StatusBadRequest)
		return
	}
	req := Request{Header: r.Header.Clone(), Raw: raw}
	if enc := r.Header.Get("Content-Encoding"); enc != "" && enc != "identity" {
		s.logf("request body has Content-Encoding %q, not parsed", enc)
	} else if err := json.Unmarshal(raw, &req.Body); err != nil {
		s.logf("request body is not JSON: %v", err)
	}

	s.mu.Lock()
	s.requests = append(s.requests, req)
	var resp Response
	scripted := false
	for i, r := range s.queue {
		if r.When == nil || r.When(req) {
			resp, scripted = r, true
			s.queue = append(s.queue[:i:i], s.queue[i+1:]...)
			break
		}
	}
	s.served++
	id := fmt.Sprintf("resp_%d", s.served)
	s.mu.Unlock()

	if !scripted {
		s.logf("request %d has no scripted response", len(s.Requests()))
		writeError(w, http.StatusInternalServerError, "mockapi: no scripted response left")
		return
	}
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	if resp.Status != 0 && resp.Status != http.StatusOK {
		if resp.ErrorBody != nil {
			writeJSONError(w, resp.Status, resp.ErrorBody)
			return
		}
		writeError(w, resp.Status, resp.ErrorMessage)
		return
	}
	if err := s.stream(r.Context(), w, id, resp); err != nil {
		s.logf("stream %s: %v", id, err)
	}
}

func writeError(w http.ResponseWriter, status int, message string) {
	writeJSONError(w, status, map[string]any{
		"message": message,
		"type":    "invalid_request_error",
		"param":   nil,
		"code":    nil,
	})
}

func writeJSONError(w http.ResponseWriter, status int, errObj map[string]any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": errObj}) //nolint:errcheck // the client may be gone
}

// errHangEnded reports a hanging response whose request or server ended first.
var errHangEnded = errors.New("hang ended before release")

// stream writes resp as the event sequence of one streamed response.
func (s *Server) stream(ctx context.Context, w http.ResponseWriter, id string, resp Response) error {
	flusher, ok := w.(http.Flusher)
	if !ok {
		return errors.New("response writer cannot flush")
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)

	ev := eventWriter{w: w, f: flusher}
	ev.send("response.created", map[string]any{"response": responseObject(id, "in_progress", nil, nil)})
	for i, item := range resp.Items {
		ev.sendItem(i, item)
	}
	if ev.err != nil {
		return ev.err
	}
	if h := resp.hold; h != nil {
		h.reachOnce.Do(func() { close(h.reached) })
		select {
		case <-h.release:
		case <-ctx.Done():
			close(h.abandoned)
			return errHangEnded
		case <-s.stop:
			return errHangEnded
		}
	}
	usage := resp.Usage
	if usage == (Usage{}) {
		usage = DefaultUsage
	}
	ev.send("response.completed", map[string]any{"response": responseObject(id, "completed", resp.Items, &usage)})
	return ev.err
}

func responseObject(id, status string, output []Item, usage *Usage) map[string]any {
	if output == nil {
		output = []Item{}
	}
	obj := map[string]any{"id": id, "object": "response", "status": status, "output": output}
	if usage != nil {
		obj["usage"] = map[string]any{
			"input_tokens":          usage.InputTokens,
			"input_tokens_details":  map[string]any{"cached_tokens": usage.CachedTokens},
			"output_tokens":         usage.OutputTokens,
			"output_tokens_details": map[string]any{"reasoning_tokens": usage.ReasoningTokens},
			"total_tokens":          usage.InputTokens + usage.OutputTokens,
		}
	}
	return obj
}

// eventWriter writes server-sent events and keeps the first error.
type eventWriter struct {
	w   io.Writer
	f   http.Flusher
	seq int
	err error
}

func (e *eventWriter) send(typ string, fields map[string]any) {
	if e.err != nil {
		return
	}
	fields["type"] = typ
	fields["sequence_number"] = e.seq
	e.seq++
	data, err := json.Marshal(fields)
	if err != nil {
		e.err = fmt.Errorf("encode %s: %w", typ, err)
		return
	}
	if _, err := fmt.Fprintf(e.w, "event: %s\ndata: %s\n\n", typ, data); err != nil {
		e.err = fmt.Errorf("write %s: %w", typ, err)
		return
	}
	e.f.Flush()
}

// sendItem streams one output item: added, text deltas for messages, done.
func (e *eventWriter) sendItem(index int, item Item) {
	added := Item{}
	for k, v := range item {
		added[k] = v
	}
	added["status"] = "in_progress"
	texts := messageTexts(item)
	if item["type"] == "message" {
		added["content"] = []any{}
	}
	e.send("response.output_item.added", map[string]any{"output_index": index, "item": added})
	itemID, _ := item["id"].(string)
	for part, text := range texts {
		for _, delta := range chunks(text, DeltaSize) {
			e.send("response.output_text.delta", map[string]any{
				"item_id": itemID, "output_index": index, "content_index": part, "delta": delta,
			})
		}
	}
	e.send("response.output_item.done", map[string]any{"output_index": index, "item": item})
}

// DeltaSize is how many characters of a message's text each
// output_text.delta carries, so that streaming clients see several chunks.
const DeltaSize = 8

// chunks splits s into pieces of n runes (one empty piece for "").
func chunks(s string, n int) []string {
	r := []rune(s)
	if len(r) == 0 {
		return []string{""}
	}
	var out []string
	for len(r) > 0 {
		k := min(n, len(r))
		out = append(out, string(r[:k]))
		r = r[k:]
	}
	return out
}

// messageTexts returns the output_text parts of a message item.
func messageTexts(item Item) []string {
	if item["type"] != "message" {
		return nil
	}
	var texts []string
	parts, _ := item["content"].([]any)
	for _, p := range parts {
		if m, ok := p.(map[string]any); ok && m["type"] == "output_text" {
			if s, ok := m["text"].(string); ok {
				texts = append(texts, s)
			}
		}
	}
	return texts
}
