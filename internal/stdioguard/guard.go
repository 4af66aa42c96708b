// Package stdioguard stands between an ACP agent's stdio and acp-go-sdk's
// connection, so that no input from the editor can close the connection or
// leave a request unanswered.
//
// The SDK's reader closes the whole connection on a line over 10 MiB or once
// 1024 notifications wait in its queue, and silently drops lines it cannot
// decode. A [Guard] reads the editor's input line by line and passes on only
// what the SDK handles safely; it answers the rest with JSON-RPC errors
// itself, and fails our own requests whose answers the SDK could not read.
// The [Writer] it is paired with serialises the SDK's output with the
// guard's answers and rewrites the few outbound lines the SDK's types cannot
// express.
//
//	w, guard := stdioguard.New(os.Stdout, sdkIn, stdioguard.Options{...})
//	conn := acpsdk.NewAgentSideConnection(agent, w, sdkOut)
//	go guard.Run(os.Stdin)
package stdioguard

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
)

// maxLineBytes is the largest inbound message passed on to the SDK. The SDK
// closes the whole connection on a longer line; we answer it with an error
// instead and keep serving.
const maxLineBytes = 10*1024*1024 - 1

// Options configures a Guard and its Writer.
type Options struct {
	Log *slog.Logger
	// Cancel handles a session/cancel notification; nil: ignored. It runs
	// on the reading goroutine: no input is read until it returns, which
	// lets it wait (briefly) for the prompts read before it.
	Cancel func(sessionID string)
	// Prompt, when set, is called with the session of each session/prompt
	// request the SDK will hand to the agent (a sessionId, and a prompt
	// that is an array of objects: what the SDK checks short of each
	// block's fields), as it is read, before the SDK sees it. The
	// SDK starts a request's handler on a goroutine of its own while the
	// guard handles a session/cancel at once, so a cancel right behind its
	// prompt could otherwise be handled before the prompt's handler
	// started: with Prompt the agent knows the prompt is coming. It runs on
	// the reading goroutine and must not block.
	Prompt func(sessionID string)
	// Rename maps inbound request methods the SDK does not route to the
	// extension methods it routes them under.
	Rename map[string]string
	// Rewrite rewrites each outbound message; nil: none.
	Rewrite func(line []byte) []byte
	// DeleteCapability adds sessionCapabilities.delete to the initialize
	// response: acp-go-sdk v0.13.0's type has no field for it.
	DeleteCapability bool
	// Initialized, when set, is called once, after the answer to the
	// editor's first initialize request has been written (whether or not
	// the write succeeded): start-up work the answer does not need waits
	// for it. It runs on the writing goroutine and must not block.
	Initialized func()
}

// New returns the Writer the SDK writes to (out: the editor) and the Guard
// that feeds the SDK's input (sdkIn) from the editor's.
func New(out io.Writer, sdkIn *io.PipeWriter, opts Options) (*Writer, *Guard) {
	w := &Writer{w: out, rewrite: opts.Rewrite, deleteCap: opts.DeleteCapability, initialized: opts.Initialized}
	g := newInputGuard(sdkIn, w, opts.Log, opts.Cancel)
	g.prompt = opts.Prompt
	g.rename = opts.Rename
	g.reads = &w.reads
	g.inits = &w.inits
	return w, g
}

// Writer serialises whole-message writes from the SDK and from the input
// guard, so a guard error response never interleaves with an SDK message.
type Writer struct {
	mu      sync.Mutex
	w       io.Writer
	rewrite func([]byte) []byte // Options.Rewrite
	// reads are the ids of our fs/read_text_file requests awaiting an
	// answer: the guard checks that their answer carries content.
	reads pendingReads
	// deleteCap adds sessionCapabilities.delete to the initialize
	// response: acp-go-sdk v0.13.0's type has no field for it. inits are
	// the ids of the editor's initialize requests (noted by the guard):
	// only their answers are rewritten.
	deleteCap bool
	inits     pendingInits
	// initialized is Options.Initialized; initOnce calls it once.
	initialized func()
	initOnce    sync.Once
}

// pendingInits holds the ids of initialize requests not yet answered.
type pendingInits struct {
	mu  sync.Mutex
	ids map[string]bool
}

// sent notes an initialize request's id; nil (no id) is ignored.
func (p *pendingInits) sent(id json.RawMessage) {
	if p == nil || len(id) == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ids == nil || len(p.ids) >= maxPendingReads { // an editor flooding initialize
		p.ids = map[string]bool{}
	}
	p.ids[string(bytes.TrimSpace(id))] = true
}

// answer reports whether the outbound line answers a pending initialize
// request, and forgets it. Once initialize is answered the table is empty
// and no line is decoded.
func (p *pendingInits) answer(line []byte) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.ids) == 0 {
		return false
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(line, &m) != nil || m.Method != "" || !p.ids[string(m.ID)] {
		return false
	}
	delete(p.ids, string(m.ID))
	return true
}

// withDeleteCapability advertises session/delete in an initialize response
// (result.agentCapabilities.sessionCapabilities gets "delete": {}). Any
// other line, or one it cannot decode, comes back unchanged.
func withDeleteCapability(p []byte) []byte {
	var msg, result, caps, session map[string]json.RawMessage
	if json.Unmarshal(p, &msg) != nil || json.Unmarshal(msg["result"], &result) != nil ||
		json.Unmarshal(result["agentCapabilities"], &caps) != nil ||
		json.Unmarshal(caps["sessionCapabilities"], &session) != nil || session == nil {
		return p
	}
	if _, ok := session["delete"]; ok {
		return p
	}
	session["delete"] = json.RawMessage(`{}`)
	var err error
	set := func(m map[string]json.RawMessage, key string, v any) {
		if err == nil {
			m[key], err = marshalCompact(v)
		}
	}
	set(caps, "sessionCapabilities", session)
	set(result, "agentCapabilities", caps)
	set(msg, "result", result)
	out, err2 := marshalCompact(msg)
	if err != nil || err2 != nil {
		return p
	}
	if bytes.HasSuffix(p, []byte{'\n'}) {
		out = append(out, '\n')
	}
	return out
}

// renameMethod gives a request line another method name (a method the SDK
// does not know, under an extension name it routes).
func renameMethod(line []byte, method string) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil {
		return line
	}
	m["method"], _ = json.Marshal(method)
	out, err := json.Marshal(m)
	if err != nil {
		return line
	}
	return out
}

// Write writes one whole message. It reports len(p) on success even when
// the message went out rewritten (io.Writer's contract: n <= len(p)).
func (s *Writer) Write(p []byte) (int, error) {
	s.reads.sent(p)
	out := p
	if s.rewrite != nil {
		out = s.rewrite(p)
	}
	isInit := (s.deleteCap || s.initialized != nil) && s.inits.answer(p)
	if isInit && s.deleteCap {
		out = withDeleteCapability(p)
	}
	s.mu.Lock()
	_, err := s.w.Write(out)
	s.mu.Unlock()
	if isInit && s.initialized != nil {
		s.initOnce.Do(s.initialized)
	}
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// pendingReads tracks our fs/read_text_file requests. The SDK decodes an
// answer `{}` as `{"content":""}` (an empty file); the guard fails such an
// answer instead, so a broken editor cannot make codex see a file as empty.
type pendingReads struct {
	mu  sync.Mutex
	ids map[string]bool
}

// maxPendingReads bounds the table against an editor that never answers.
const maxPendingReads = 4096

// sent notes an outbound read request. The SDK writes "jsonrpc", "id" and
// "method" first, so the method sits near the start of the line.
func (r *pendingReads) sent(line []byte) {
	if !bytes.Contains(line[:min(len(line), 160)], []byte(`"method":"fs/read_text_file"`)) {
		return
	}
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(line, &m) != nil || len(m.ID) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ids == nil || len(r.ids) >= maxPendingReads {
		r.ids = map[string]bool{}
	}
	r.ids[string(m.ID)] = true
}

// answered reports whether id was a pending read, and forgets it.
func (r *pendingReads) answered(id json.RawMessage) bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	was := r.ids[string(bytes.TrimSpace(id))]
	delete(r.ids, string(bytes.TrimSpace(id)))
	return was
}

// Guard stands between the editor and the SDK's reader, which closes
// the connection on a line over 10 MiB or once 1024 notifications wait in its
// queue, and silently drops lines it cannot decode (a request among them is
// never answered; a response among them leaves our request waiting forever).
// The guard passes on only what the SDK handles safely: requests, responses
// and $/cancel_request (which the SDK handles inline, without the queue). It
// answers bad lines itself, handles session/cancel itself, and ignores the
// other notifications: the agent implements none of them.
type Guard struct {
	sdk    *io.PipeWriter // the SDK's input
	editor io.Writer      // error answers
	log    *slog.Logger
	cancel func(sessionID string) // session/cancel; nil: ignored
	prompt func(sessionID string) // Options.Prompt; nil: none
	rename map[string]string      // Options.Rename
	reads  *pendingReads          // our pending fs reads; nil: not checked
	inits  *pendingInits          // the editor's initialize requests; nil: not noted
	limit  int                    // longest line passed on: maxLineBytes but in tests

	ignored  burst // notifications nobody handles
	rejected burst // lines answered with an error
	failed   burst // responses the SDK could not read
}

func newInputGuard(sdkIn *io.PipeWriter, editor io.Writer, log *slog.Logger, cancel func(sessionID string)) *Guard {
	return &Guard{
		sdk: sdkIn, editor: editor, log: log, cancel: cancel, limit: maxLineBytes,
		ignored:  burst{level: slog.LevelInfo, msg: "inbound notifications ignored"},
		rejected: burst{level: slog.LevelWarn, msg: "inbound messages rejected"},
		failed:   burst{level: slog.LevelWarn, msg: "inbound responses unreadable; failing the requests they answer"},
	}
}

// Run copies in to the SDK line by line until in ends or the SDK stops
// reading, then closes the SDK's input. It returns nil when in ended, else
// the error that stopped it.
func (g *Guard) Run(in io.Reader) error {
	r := bufio.NewReaderSize(in, 64*1024)
	var big topLevel
	var err error
	for err == nil {
		var line []byte
		line, err = readLine(r, g.limit, &big)
		switch {
		case errors.Is(err, errLineTooLong):
			err = g.oversized(&big)
		case err == nil:
			err = g.handle(line)
		}
	}
	g.ignored.flush(g.log)
	g.rejected.flush(g.log)
	g.failed.flush(g.log)
	if !errors.Is(err, io.EOF) {
		g.sdk.CloseWithError(err)
		return err
	}
	g.sdk.Close()
	return nil
}

// handle routes one line of at most g.limit bytes. It fails only when the
// SDK no longer reads.
func (g *Guard) handle(line []byte) error {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	m := classify(line)
	switch m.verdict {
	case pass:
		if m.method == "initialize" {
			line = numericProtocolVersion(line, g.limit)
			g.inits.sent(requestID(line))
		}
		if to, ok := g.rename[m.method]; ok {
			line = renameMethod(line, to)
		}
		if m.method == string(acpsdk.AgentMethodSessionPrompt) && g.prompt != nil {
			if sid, ok := promptSession(m.params); ok {
				g.prompt(sid)
			}
		}
		if m.answers != nil && g.reads.answered(m.answers) && m.result != nil && !hasContent(m.result) {
			return g.failResponse(m.answers, "the editor answered fs/read_text_file without content")
		}
		return g.forward(line)
	case notify:
		g.notification(m.method, m.params)
	case reject:
		g.reject(m.id, m.err)
	case failReply:
		return g.failResponse(m.id, m.reason)
	case ignore:
		g.ignored.add(g.log, "reason", m.reason)
	}
	return nil
}

// requestID is a request line's id (nil when it has none).
func requestID(line []byte) json.RawMessage {
	var env envelope
	if json.Unmarshal(line, &env) != nil || isNull(env.ID) {
		return nil
	}
	return env.ID
}

func (g *Guard) forward(line []byte) error {
	_, err := g.sdk.Write(append(line, '\n'))
	return err
}

func (g *Guard) reject(id json.RawMessage, e *acpsdk.RequestError) {
	g.rejected.add(g.log, "code", e.Code, "reason", e.Message)
	writeError(g.editor, id, e)
}

// failResponse hands the SDK an error response in place of a response it
// could not read, so that our request waiting for it fails now instead of
// never. The editor gets no answer: nobody answers a response.
func (g *Guard) failResponse(id json.RawMessage, reason string) error {
	g.failed.add(g.log, "id", string(id), "reason", reason)
	return writeError(g.sdk, id, withMessage(acpsdk.NewInvalidRequest(nil), reason))
}

func (g *Guard) notification(method string, params json.RawMessage) {
	if method != string(acpsdk.AgentMethodSessionCancel) || g.cancel == nil {
		g.ignored.add(g.log, "method", method)
		return
	}
	sid, ok := sessionOf(params)
	if !ok {
		g.ignored.add(g.log, "method", method, "reason", "no sessionId")
		return
	}
	g.cancel(sid)
}

// promptSession is the session of a session/prompt the SDK will pass to
// the agent; ok is false for one it answers with an error itself (its
// handler would never see it): no sessionId, no prompt, a block that is
// not an object. The blocks are skipped, not decoded: an inline image
// makes a prompt megabytes long, and the SDK decodes it once more (a typed
// decode here cost 200 ms on 7 MiB, this one 50). A prompt the SDK refuses
// only for a block's fields is counted; the next cancel of its session
// then waits its bound for it.
func promptSession(params json.RawMessage) (string, bool) {
	var p struct {
		SessionID *string     `json:"sessionId"`
		Prompt    *[]struct{} `json:"prompt"`
	}
	if json.Unmarshal(params, &p) != nil || p.SessionID == nil || *p.SessionID == "" || p.Prompt == nil {
		return "", false
	}
	return *p.SessionID, true
}

// sessionOf reads params' sessionId; ok is false when params have none that
// is a string.
func sessionOf(params json.RawMessage) (string, bool) {
	var p struct {
		SessionID *string `json:"sessionId"`
	}
	if json.Unmarshal(params, &p) != nil || p.SessionID == nil {
		return "", false
	}
	return *p.SessionID, true
}

// oversized deals with a line over the limit, of which only what big saw is
// left. A response to one of our requests fails that request at once; a
// request is answered with its own id when it could be read.
func (g *Guard) oversized(big *topLevel) error {
	tooLarge := invalidRequest("message larger than 10 MiB")
	if string(big.name) == string(acpsdk.AgentMethodSessionPrompt) {
		// An inline image over ~7.5 MiB is what makes a prompt this large;
		// the same image as a file:// URI is read from disk instead.
		tooLarge = invalidRequest("prompt larger than 10 MiB: attach large images as files (file:// URI) rather than inline, and large text as a file reference")
	}
	g.log.Error("inbound message too large", "limit", g.limit, "method", string(big.name), "response", big.reply, "id", string(big.id))
	switch {
	case big.object && !big.method && big.reply:
		if routableID(big.id) {
			return g.failResponse(big.id, "response larger than 10 MiB: the editor's answer was dropped")
		}
	case big.object && big.method && !big.idSeen:
		// A notification: never answered.
	case validID(big.id) && !isNull(big.id):
		writeError(g.editor, big.id, tooLarge)
	default:
		writeError(g.editor, nil, tooLarge)
	}
	return nil
}

var errLineTooLong = errors.New("line too long")

// readLine reads one '\n'-terminated line of at most max bytes (the newline
// not counted). A longer line is consumed to its end, fed to big as it goes
// instead of being kept, and reported as errLineTooLong.
func readLine(r *bufio.Reader, max int, big *topLevel) ([]byte, error) {
	var line []byte
	tooLong := false
	for {
		chunk, err := r.ReadSlice('\n')
		n := len(line) + len(chunk)
		if bytes.HasSuffix(chunk, []byte{'\n'}) {
			n--
		}
		switch {
		case tooLong:
			big.scan(chunk)
		case n > max:
			tooLong = true
			*big = topLevel{}
			big.scan(line)
			big.scan(chunk)
			line = nil
		default:
			line = append(line, chunk...)
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err != nil && len(line) == 0 && !tooLong:
			return nil, err
		case tooLong:
			if err != nil && !errors.Is(err, io.EOF) {
				return nil, err
			}
			return nil, errLineTooLong
		default:
			// A final line without '\n' is still a message; EOF comes next call.
			return line, nil
		}
	}
}

// verdict is what the guard does with an inbound line.
type verdict int

const (
	pass      verdict = iota // a request, response or $/cancel_request: to the SDK
	notify                   // a notification: handled or ignored by the guard
	reject                   // answered with a JSON-RPC error
	failReply                // a response the SDK cannot read: fails our request
	ignore                   // nobody to answer and nobody to tell
)

type inbound struct {
	verdict verdict
	method  string
	params  json.RawMessage
	id      json.RawMessage      // the id to answer (nil: null) or to fail
	answers json.RawMessage      // a response's id
	result  json.RawMessage      // a response's result
	err     *acpsdk.RequestError // the answer to a rejected line
	reason  string               // why a line is ignored or fails our request
}

// sdkMessage mirrors the SDK's anyMessage (connection.go): what does not
// decode into it, the SDK drops without an answer, and what does is routed
// by its view of id and method, which this mirror gives us.
type sdkMessage struct {
	JSONRPC string               `json:"jsonrpc"`
	ID      *json.RawMessage     `json:"id,omitempty"`
	Method  string               `json:"method,omitempty"`
	Params  json.RawMessage      `json:"params,omitempty"`
	Result  json.RawMessage      `json:"result,omitempty"`
	Error   *acpsdk.RequestError `json:"error,omitempty"`
}

// envelope reads any JSON object: it names the id to answer when the SDK's
// decoding fails.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method json.RawMessage `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// classify decides the fate of one trimmed, non-empty line. It decodes the
// line as the SDK will, and only small lines a second time (a large one is a
// request or response that the first decoding settles).
func classify(line []byte) inbound {
	if line[0] != '{' {
		if !json.Valid(line) {
			return inbound{verdict: reject, err: parseError("invalid JSON")}
		}
		return inbound{verdict: reject, err: invalidRequest("a JSON-RPC message must be an object")}
	}
	var m sdkMessage
	if err := json.Unmarshal(line, &m); err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			return inbound{verdict: reject, err: parseError("invalid JSON")}
		}
		return malformed(line, err)
	}
	switch {
	case m.Method != "" && m.ID == nil:
		var env envelope
		if json.Unmarshal(line, &env) == nil && env.ID != nil {
			// The SDK takes "id": null for a notification and never answers it.
			return inbound{verdict: reject, err: invalidRequest("id must not be null")}
		}
		if m.Method != "$/cancel_request" {
			return inbound{verdict: notify, method: m.Method, params: m.Params}
		}
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(m.Params, &p) != nil || !routableID(p.RequestID) {
			return inbound{verdict: ignore, reason: "$/cancel_request without a usable requestId"}
		}
		return inbound{verdict: pass, method: m.Method}
	case m.Method != "" && !validID(*m.ID):
		return inbound{verdict: reject, err: invalidRequest("id must be a string, number or null")}
	case m.Method != "":
		return inbound{verdict: pass, method: m.Method, params: m.Params}
	case m.Result != nil || m.Error != nil || hasErrorKey(line): // a response
		switch {
		case m.ID == nil || !routableID(*m.ID):
			return inbound{verdict: ignore, reason: "response without a usable id"}
		case m.Result == nil && m.Error == nil:
			// "error": null alone, which the SDK takes for success.
			return inbound{verdict: failReply, id: *m.ID, reason: "malformed response: neither result nor error"}
		}
		return inbound{verdict: pass, answers: *m.ID, result: m.Result}
	}
	var id json.RawMessage
	if m.ID != nil && validID(*m.ID) {
		id = *m.ID
	}
	return inbound{verdict: reject, id: id, err: invalidRequest("no method")}
}

// hasContent reports whether a read's result carries a string content.
func hasContent(result json.RawMessage) bool {
	var r struct {
		Content *string `json:"content"`
	}
	return json.Unmarshal(result, &r) == nil && r.Content != nil
}

// malformed judges a JSON object the SDK cannot decode (a field of the wrong
// type): a response fails the request it answers, a request is answered.
func malformed(line []byte, err error) inbound {
	var env envelope
	if json.Unmarshal(line, &env) != nil {
		return inbound{verdict: reject, err: invalidRequest(err.Error())}
	}
	if (env.Method == nil || isNull(env.Method)) && (env.Result != nil || env.Error != nil) {
		if !routableID(env.ID) {
			return inbound{verdict: ignore, reason: "malformed response without a usable id"}
		}
		return inbound{verdict: failReply, id: env.ID, reason: "malformed response: " + err.Error()}
	}
	id := env.ID
	if !validID(id) || isNull(id) {
		id = nil
	}
	return inbound{verdict: reject, id: id, err: invalidRequest(err.Error())}
}

// hasErrorKey reports an "error" key whose value is null, which the SDK
// decodes as no error at all.
func hasErrorKey(line []byte) bool {
	var env envelope
	return json.Unmarshal(line, &env) == nil && env.Error != nil
}

func validID(id json.RawMessage) bool {
	if len(id) == 0 {
		return false
	}
	switch id[0] {
	case '"', 'n':
		return true
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return true
	}
	return false
}

func isNull(raw json.RawMessage) bool { return string(raw) == "null" }

// routableID reports whether id can name one of our requests: a string, or
// a short number without exponent (the SDK's ids are small integers; it
// cannot even key a number such as 1e99999, and logs an error each time).
func routableID(id json.RawMessage) bool {
	if len(id) == 0 || isNull(id) || !validID(id) {
		return false
	}
	return id[0] == '"' || (len(id) <= 64 && !bytes.ContainsAny(id, "eE"))
}

// numericProtocolVersion turns the "1" of an initialize request's
// "protocolVersion": "1" into 1. Some clients send a string (Zed's codex-acp
// accepts it); the SDK's type is an integer and would refuse the request.
// Any other line comes back unchanged.
func numericProtocolVersion(line []byte, limit int) []byte {
	var msg map[string]json.RawMessage
	var params map[string]json.RawMessage
	var v string
	if json.Unmarshal(line, &msg) != nil || json.Unmarshal(msg["params"], &params) != nil ||
		json.Unmarshal(params["protocolVersion"], &v) != nil {
		return line
	}
	if len(v) == 0 || len(v) > 9 {
		return line
	}
	for _, c := range []byte(v) {
		if c < '0' || c > '9' {
			return line
		}
	}
	n, _ := strconv.Atoi(v)
	params["protocolVersion"] = json.RawMessage(strconv.Itoa(n))
	p, err := marshalCompact(params)
	if err != nil {
		return line
	}
	msg["params"] = p
	out, err := marshalCompact(msg)
	// Re-encoding sorts keys, so of keys differing only in case another may
	// now win: keep the result only if it still passes.
	if err != nil || len(out) > limit || classify(out).verdict != pass {
		return line
	}
	return out
}

// marshalCompact marshals without HTML escaping, so the result is never
// longer than the compact JSON it came from.
func marshalCompact(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'}), nil
}

func withMessage(e *acpsdk.RequestError, msg string) *acpsdk.RequestError {
	e.Message = msg
	return e
}

// parseError and invalidRequest are the guard's answers; they keep
// JSON-RPC's own titles ("Invalid Request").
func parseError(detail string) *acpsdk.RequestError {
	return withMessage(acpsdk.NewParseError(nil), "Parse error: "+detail)
}

func invalidRequest(detail string) *acpsdk.RequestError {
	return withMessage(acpsdk.NewInvalidRequest(nil), "Invalid Request: "+detail)
}

type errorResponse struct {
	JSONRPC string               `json:"jsonrpc"`
	ID      json.RawMessage      `json:"id"`
	Error   *acpsdk.RequestError `json:"error"`
}

// writeError writes an error response itself: the guard answers lines the
// SDK never sees.
func writeError(w io.Writer, id json.RawMessage, e *acpsdk.RequestError) error {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, err := json.Marshal(errorResponse{JSONRPC: "2.0", ID: id, Error: e})
	if err != nil {
		return nil
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// burstEvery is how often a burst of like log events is summarised.
const burstEvery = 30 * time.Second

// burst logs a repeating event at most once per burstEvery, with the number
// of events since the last report, so that a flood of input does not flood
// the log. The events in between are logged at debug level.
type burst struct {
	level slog.Level
	msg   string
	last  time.Time
	n     int
}

func (b *burst) add(log *slog.Logger, args ...any) {
	b.n++
	now := time.Now()
	if !b.last.IsZero() && now.Sub(b.last) < burstEvery {
		log.Debug(b.msg, args...)
		return
	}
	log.Log(context.Background(), b.level, b.msg, append(args, "count", b.n)...)
	b.n, b.last = 0, now
}

// flush reports the events not yet counted in a report.
func (b *burst) flush(log *slog.Logger) {
	if b.n > 0 {
		log.Log(context.Background(), b.level, b.msg, "count", b.n)
		b.n = 0
	}
}

const (
	maxIDBytes  = 1024 // the longest id topLevel reads
	maxKeyBytes = 16   // keys it matches are shorter
)

// topLevel scans a JSON object too large to keep, chunk by chunk, for what
// routing it needs: its top-level "id" and which of "method", "result" and
// "error" it has. It tracks nesting, strings and escapes; keys are matched
// like encoding/json does (case-insensitively), except that keys written
// with escapes are not recognised. Invalid JSON gives some answer, never a
// panic.
type topLevel struct {
	// What the scan found.
	object bool   // the first byte was '{'
	idSeen bool   // a top-level "id" was complete
	id     []byte // its raw value; nil when not valid JSON or longer than maxIDBytes
	method bool   // a top-level "method" other than null
	name   []byte // the method's name, when a string of at most maxKeyBytes bytes
	reply  bool   // a top-level "result" or "error"

	started, done bool
	depth         int
	inString      bool
	escaped       bool
	wantKey       bool // at depth 1 the next string is a key
	inKey         bool
	key           []byte
	inName        bool // in the method's string value
	field         byte // the key whose value comes: 'i'd, 'm'ethod, 'r'esult/error, 0 other
	valueNext     bool // the next byte at depth 1 starts the field's value
	capture       bool // copying the id's value
	raw           []byte
	rawOver       bool
}

func (t *topLevel) scan(p []byte) {
	for i := 0; i < len(p) && !t.done; i++ {
		c := p[i]
		if t.inString {
			if !t.inKey && !t.inName && !t.capture && !t.escaped {
				// Skip the string's body: the bulk of a big message.
				j := bytes.IndexAny(p[i:], `"\`)
				if j < 0 {
					return
				}
				i += j
				c = p[i]
			}
			switch {
			case t.escaped:
				t.escaped = false
			case c == '\\':
				t.escaped = true
			case c == '"':
				t.inString = false
				if t.inKey {
					t.inKey = false
					continue
				}
				if t.inName {
					t.inName = false
					if len(t.name) > maxKeyBytes {
						t.name = nil
					}
					continue
				}
			}
			if t.inKey && len(t.key) <= maxKeyBytes {
				t.key = append(t.key, c) // one byte over: too long to match
			}
			if t.inName && len(t.name) <= maxKeyBytes {
				t.name = append(t.name, c)
			}
			t.keep(c)
			continue
		}
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		if !t.started {
			t.started = true
			t.object = c == '{'
			t.done = !t.object
			t.depth, t.wantKey = 1, true
			continue
		}
		if t.depth == 1 && t.valueNext {
			t.valueNext = false
			switch t.field {
			case 'i':
				t.capture, t.raw, t.rawOver = true, t.raw[:0], false
			case 'm':
				t.method = c != 'n'
				t.inName, t.name = c == '"', t.name[:0]
			case 'r':
				t.reply = true
			}
		}
		switch c {
		case '"':
			t.inString = true
			if t.depth == 1 && t.wantKey {
				t.wantKey, t.inKey, t.key = false, true, t.key[:0]
				continue
			}
		case ':':
			if t.depth == 1 && !t.capture {
				t.field, t.valueNext = fieldOf(t.key), true
				t.key = t.key[:0]
				continue
			}
		case ',':
			if t.depth == 1 {
				t.endValue()
				t.wantKey = true
				continue
			}
		case '{', '[':
			t.depth++
		case '}', ']':
			t.depth--
			if t.depth == 0 {
				t.endValue()
				t.done = true
				continue
			}
		}
		t.keep(c)
	}
}

func (t *topLevel) keep(c byte) {
	if !t.capture {
		return
	}
	if len(t.raw) < maxIDBytes {
		t.raw = append(t.raw, c)
	} else {
		t.rawOver = true
	}
}

func (t *topLevel) endValue() {
	if t.capture {
		t.idSeen = true
		t.id = nil
		if !t.rawOver && json.Valid(t.raw) {
			t.id = append([]byte(nil), t.raw...)
		}
	}
	t.capture, t.field, t.valueNext = false, 0, false
}

func fieldOf(key []byte) byte {
	switch {
	case bytes.EqualFold(key, []byte("id")):
		return 'i'
	case bytes.EqualFold(key, []byte("method")):
		return 'm'
	case bytes.EqualFold(key, []byte("result")), bytes.EqualFold(key, []byte("error")):
		return 'r'
	}
	return 0
}
