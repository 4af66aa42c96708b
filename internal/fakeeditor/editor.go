// Package fakeeditor is an ACP client for tests, in the spirit of gopls's fake
// editor: it drives an agent the way Zed does, keeps an in-memory overlay of
// open buffers that its fs methods read and write (falling back to the disk
// for reads, like an editor opening a file), answers permission requests and
// (when told to declare them) elicitations by a policy, and records every
// message the agent sent, raw and decoded.
package fakeeditor

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"

	acpsdk "github.com/coder/acp-go-sdk"
)

// Options configure an Editor.
type Options struct {
	// FS advertises fs/read_text_file and fs/write_text_file. When false the
	// editor answers them with "method not found", like a client without them.
	FS bool
	// FSNotImplemented advertises the fs methods (with FS) but answers them
	// with "method not found", like a client that claims more than it has.
	FSNotImplemented bool
	// WriteThrough makes fs/write_text_file write the disk (following
	// symlinks, as os.WriteFile does) besides the buffer, like an editor
	// that saves at once (acpx does).
	WriteThrough bool
	// BeforeFS, when set, runs before each fs request is answered (a test
	// can hold the answer back; ctx ends when the agent gives up).
	BeforeFS func(ctx context.Context, method, path string)
	// AfterFS, when set, runs after an fs request was carried out (the
	// buffer changed, the disk written through) and before it is answered.
	AfterFS func(method, path string)
	// Permission picks the answer to a permission request. Nil: allow once.
	Permission func(req acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse
	// Elicitation, when set, advertises form elicitation
	// (clientCapabilities.elicitation.form) and answers elicitation/create:
	// with its response, or with its error as the editor's error answer. ctx
	// ends when the agent withdraws the request ($/cancel_request). Nil: no
	// elicitation, and elicitation/create is "method not found".
	Elicitation func(ctx context.Context, req acpsdk.UnstableCreateElicitationRequest) (acpsdk.UnstableCreateElicitationResponse, error)
	// ElicitationResult, when set, advertises form elicitation too and
	// answers elicitation/create with the result it returns for the
	// request's params, as it is: an answer the SDK could not encode (a
	// malformed one). The SDK does not see those requests.
	ElicitationResult func(params json.RawMessage) json.RawMessage
	// ElicitationURL advertises URL elicitation
	// (clientCapabilities.elicitation.url) besides form elicitation; the
	// answers come from Elicitation.
	ElicitationURL bool
	// Logger receives the client connection's logs. Nil: discarded.
	Logger *slog.Logger
}

// Call is an agent→editor request the editor handled.
type Call struct {
	Method string
	Params any
}

// Editor is the client side of an ACP connection.
type Editor struct {
	Conn    *acpsdk.ClientSideConnection
	opts    Options
	agentIn *lockedWriter // shared with the SDK: ElicitationResult's answers

	mu          sync.Mutex
	buffers     map[string]string // path → buffer content (unsaved edits included)
	fsErrors    map[string]error  // path → error to answer fs calls with
	updates     []acpsdk.SessionNotification
	calls       []Call
	raw         [][]byte // every line the agent wrote, in order
	updateAdded chan struct{}
}

// Connect starts a client on the agent's stdio: agentIn is the agent's stdin,
// agentOut its stdout.
func Connect(agentIn io.Writer, agentOut io.Reader, opts Options) *Editor {
	e := &Editor{
		opts:        opts,
		buffers:     map[string]string{},
		fsErrors:    map[string]error{},
		updateAdded: make(chan struct{}, 1),
	}
	e.agentIn = &lockedWriter{w: agentIn}
	pr, pw := io.Pipe()
	go e.tee(agentOut, pw)
	e.Conn = acpsdk.NewClientSideConnection(e, e.agentIn, pr)
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	e.Conn.SetLogger(log)
	return e
}

// tee records each raw line from the agent and passes it on to the SDK.
func (e *Editor) tee(from io.Reader, to *io.PipeWriter) {
	r := bufio.NewReader(from)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			e.mu.Lock()
			e.raw = append(e.raw, bytes.TrimRight(append([]byte(nil), line...), "\n"))
			e.mu.Unlock()
			if e.answerRaw(line) {
				continue
			}
			if _, werr := to.Write(line); werr != nil {
				return
			}
		}
		if err != nil {
			to.CloseWithError(err)
			return
		}
	}
}

// answerRaw answers an elicitation/create request in line by
// Options.ElicitationResult; false: line is not one, or there is none.
func (e *Editor) answerRaw(line []byte) bool {
	if e.opts.ElicitationResult == nil {
		return false
	}
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(line, &req) != nil || req.Method != "elicitation/create" || len(req.ID) == 0 {
		return false
	}
	e.record(req.Method, req.Params)
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
	}{"2.0", req.ID, e.opts.ElicitationResult(req.Params)})
	if err == nil {
		_, _ = e.agentIn.Write(append(b, '\n')) // a closed agent: its test fails on its own
	}
	return true
}

// lockedWriter serialises whole messages (the SDK writes one per Write).
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Capabilities is what the editor advertises in initialize.
func (e *Editor) Capabilities() acpsdk.ClientCapabilities {
	caps := acpsdk.ClientCapabilities{Fs: acpsdk.FileSystemCapabilities{ReadTextFile: e.opts.FS, WriteTextFile: e.opts.FS}}
	if e.opts.Elicitation != nil || e.opts.ElicitationResult != nil {
		caps.Elicitation = &acpsdk.ElicitationCapabilities{Form: &acpsdk.ElicitationFormCapabilities{}}
		if e.opts.ElicitationURL {
			caps.Elicitation.Url = &acpsdk.ElicitationUrlCapabilities{}
		}
	}
	return caps
}

// Initialize sends initialize with the editor's capabilities.
func (e *Editor) Initialize(ctx context.Context) (acpsdk.InitializeResponse, error) {
	return e.Conn.Initialize(ctx, acpsdk.InitializeRequest{
		ProtocolVersion:    acpsdk.ProtocolVersionNumber,
		ClientCapabilities: e.Capabilities(),
		ClientInfo:         &acpsdk.Implementation{Name: "fakeeditor", Version: "1"},
	})
}

// SetBuffer opens path in the editor with the given (possibly unsaved) content.
func (e *Editor) SetBuffer(path, content string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.buffers[path] = content
}

// Buffer returns the editor's buffer for path, and whether one is open.
func (e *Editor) Buffer(path string) (string, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s, ok := e.buffers[path]
	return s, ok
}

// FailFS makes fs calls on path answer err.
func (e *Editor) FailFS(path string, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.fsErrors[path] = err
}

// Updates returns the session updates received so far but the
// available_commands_update ones, which every session gets once it is
// open (Commands has them; AllUpdates has every update).
func (e *Editor) Updates() []acpsdk.SessionNotification {
	e.mu.Lock()
	defer e.mu.Unlock()
	var us []acpsdk.SessionNotification
	for _, u := range e.updates {
		if u.Update.AvailableCommandsUpdate == nil {
			us = append(us, u)
		}
	}
	return us
}

// AllUpdates returns every session update received so far.
func (e *Editor) AllUpdates() []acpsdk.SessionNotification {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]acpsdk.SessionNotification(nil), e.updates...)
}

// Commands returns the commands of the session's latest
// available_commands_update; ok is false when none has arrived.
func (e *Editor) Commands(sid acpsdk.SessionId) (cmds []acpsdk.AvailableCommand, ok bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, u := range e.updates {
		if u.SessionId == sid && u.Update.AvailableCommandsUpdate != nil {
			cmds, ok = u.Update.AvailableCommandsUpdate.AvailableCommands, true
		}
	}
	return cmds, ok
}

// Calls returns the fs and permission requests handled so far.
func (e *Editor) Calls() []Call {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Call(nil), e.calls...)
}

// Raw returns every line the agent wrote so far.
func (e *Editor) Raw() [][]byte {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([][]byte(nil), e.raw...)
}

// Sync returns once every notification the agent wrote before answering a
// request sent now has been handled and recorded: after it, an update the
// agent did not send before this call will not turn up late. (The SDK hands
// over a response only after the notifications that preceded it; the agent
// answers this extension request with "method not found".)
func (e *Editor) Sync(ctx context.Context) error {
	_, err := e.Conn.CallExtension(ctx, "_fakeeditor/sync", nil)
	var re *acpsdk.RequestError
	if errors.As(err, &re) && re.Code == acpsdk.NewMethodNotFound("").Code {
		return nil
	}
	if err == nil {
		return errors.New("fakeeditor: the agent answered the sync request")
	}
	return err
}

// WaitForCommands blocks until the session's first
// available_commands_update has arrived or ctx ends, and returns its
// commands.
func (e *Editor) WaitForCommands(ctx context.Context, sid acpsdk.SessionId) ([]acpsdk.AvailableCommand, error) {
	for {
		if cmds, ok := e.Commands(sid); ok {
			return cmds, nil
		}
		select {
		case <-e.updateAdded:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// WaitForUpdate blocks until an update satisfying match has arrived or ctx ends.
func (e *Editor) WaitForUpdate(ctx context.Context, match func(acpsdk.SessionUpdate) bool) error {
	for {
		for _, u := range e.AllUpdates() {
			if match(u.Update) {
				return nil
			}
		}
		select {
		case <-e.updateAdded:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (e *Editor) record(method string, params any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls = append(e.calls, Call{Method: method, Params: params})
}

// SessionUpdate implements acpsdk.Client.
func (e *Editor) SessionUpdate(ctx context.Context, n acpsdk.SessionNotification) error {
	e.mu.Lock()
	e.updates = append(e.updates, n)
	e.mu.Unlock()
	select {
	case e.updateAdded <- struct{}{}:
	default:
	}
	return nil
}

// fsRequest records an fs request and runs the BeforeFS hook; it fails
// with method not found when the editor offers no fs methods.
func (e *Editor) fsRequest(ctx context.Context, method, path string, req any) error {
	e.record(method, req)
	if !e.opts.FS || e.opts.FSNotImplemented {
		return acpsdk.NewMethodNotFound(method)
	}
	if e.opts.BeforeFS != nil {
		e.opts.BeforeFS(ctx, method, path)
	}
	return nil
}

// ReadTextFile implements acpsdk.Client: the buffer if open, else the disk.
func (e *Editor) ReadTextFile(ctx context.Context, req acpsdk.ReadTextFileRequest) (acpsdk.ReadTextFileResponse, error) {
	if err := e.fsRequest(ctx, "fs/read_text_file", req.Path, req); err != nil {
		return acpsdk.ReadTextFileResponse{}, err
	}
	e.mu.Lock()
	ferr := e.fsErrors[req.Path]
	content, open := e.buffers[req.Path]
	e.mu.Unlock()
	if ferr != nil {
		return acpsdk.ReadTextFileResponse{}, ferr
	}
	if !open {
		b, err := os.ReadFile(req.Path)
		if errors.Is(err, os.ErrNotExist) {
			// What Zed answers for a missing file.
			return acpsdk.ReadTextFileResponse{}, &acpsdk.RequestError{Code: -32002, Message: "Resource not found", Data: map[string]any{"uri": req.Path}}
		}
		if err != nil {
			return acpsdk.ReadTextFileResponse{}, acpsdk.NewInternalError(map[string]any{"error": err.Error()})
		}
		content = string(b)
	}
	return acpsdk.ReadTextFileResponse{Content: SliceLines(content, req.Line, req.Limit)}, nil
}

// WriteTextFile implements acpsdk.Client: the buffer changes; the disk does not
// (the user saves).
func (e *Editor) WriteTextFile(ctx context.Context, req acpsdk.WriteTextFileRequest) (acpsdk.WriteTextFileResponse, error) {
	if err := e.fsRequest(ctx, "fs/write_text_file", req.Path, req); err != nil {
		return acpsdk.WriteTextFileResponse{}, err
	}
	if err := e.writeBuffer(req); err != nil {
		return acpsdk.WriteTextFileResponse{}, err
	}
	if e.opts.AfterFS != nil {
		e.opts.AfterFS("fs/write_text_file", req.Path)
	}
	return acpsdk.WriteTextFileResponse{}, nil
}

func (e *Editor) writeBuffer(req acpsdk.WriteTextFileRequest) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if ferr := e.fsErrors[req.Path]; ferr != nil {
		return ferr
	}
	if e.opts.WriteThrough {
		if err := os.WriteFile(req.Path, []byte(req.Content), 0o644); err != nil {
			return acpsdk.NewInternalError(map[string]any{"error": err.Error()})
		}
	}
	e.buffers[req.Path] = req.Content
	return nil
}

// RequestPermission implements acpsdk.Client.
func (e *Editor) RequestPermission(ctx context.Context, req acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
	e.record("session/request_permission", req)
	if e.opts.Permission != nil {
		return e.opts.Permission(req), nil
	}
	return Select("allow_once"), nil
}

// Select is a permission answer choosing optionID.
func Select(optionID string) acpsdk.RequestPermissionResponse {
	return acpsdk.RequestPermissionResponse{Outcome: acpsdk.RequestPermissionOutcome{
		Selected: &acpsdk.RequestPermissionOutcomeSelected{OptionId: acpsdk.PermissionOptionId(optionID), Outcome: "selected"},
	}}
}

// UnstableCreateElicitation answers elicitation/create by Options.Elicitation.
func (e *Editor) UnstableCreateElicitation(ctx context.Context, req acpsdk.UnstableCreateElicitationRequest) (acpsdk.UnstableCreateElicitationResponse, error) {
	e.record("elicitation/create", req)
	if e.opts.Elicitation == nil {
		return acpsdk.UnstableCreateElicitationResponse{}, acpsdk.NewMethodNotFound("elicitation/create")
	}
	return e.opts.Elicitation(ctx, req)
}

// Accept is an elicitation answer: the user filled in the form.
func Accept(content map[string]any) acpsdk.UnstableCreateElicitationResponse {
	return acpsdk.UnstableCreateElicitationResponse{Accept: &acpsdk.UnstableCreateElicitationAccept{Action: "accept", Content: content}}
}

// Decline is an elicitation answer: the user declined the form.
func Decline() acpsdk.UnstableCreateElicitationResponse {
	return acpsdk.UnstableCreateElicitationResponse{Decline: &acpsdk.UnstableCreateElicitationDecline{Action: "decline"}}
}

// Dismiss is an elicitation answer: the form was cancelled (closed).
func Dismiss() acpsdk.UnstableCreateElicitationResponse {
	return acpsdk.UnstableCreateElicitationResponse{Cancel: &acpsdk.UnstableCreateElicitationCancel{Action: "cancel"}}
}

// CreateTerminal implements acpsdk.Client; the fake editor has no terminals.
func (e *Editor) CreateTerminal(ctx context.Context, req acpsdk.CreateTerminalRequest) (acpsdk.CreateTerminalResponse, error) {
	return acpsdk.CreateTerminalResponse{}, acpsdk.NewMethodNotFound("terminal/create")
}

// KillTerminal implements acpsdk.Client.
func (e *Editor) KillTerminal(ctx context.Context, req acpsdk.KillTerminalRequest) (acpsdk.KillTerminalResponse, error) {
	return acpsdk.KillTerminalResponse{}, acpsdk.NewMethodNotFound("terminal/kill")
}

// TerminalOutput implements acpsdk.Client.
func (e *Editor) TerminalOutput(ctx context.Context, req acpsdk.TerminalOutputRequest) (acpsdk.TerminalOutputResponse, error) {
	return acpsdk.TerminalOutputResponse{}, acpsdk.NewMethodNotFound("terminal/output")
}

// ReleaseTerminal implements acpsdk.Client.
func (e *Editor) ReleaseTerminal(ctx context.Context, req acpsdk.ReleaseTerminalRequest) (acpsdk.ReleaseTerminalResponse, error) {
	return acpsdk.ReleaseTerminalResponse{}, acpsdk.NewMethodNotFound("terminal/release")
}

// WaitForTerminalExit implements acpsdk.Client.
func (e *Editor) WaitForTerminalExit(ctx context.Context, req acpsdk.WaitForTerminalExitRequest) (acpsdk.WaitForTerminalExitResponse, error) {
	return acpsdk.WaitForTerminalExitResponse{}, acpsdk.NewMethodNotFound("terminal/wait_for_exit")
}

// SliceLines applies fs/read_text_file's optional 1-based line and limit
// to content, as an editor does.
func SliceLines(content string, line, limit *int) string {
	if line == nil && limit == nil {
		return content
	}
	lines := bytes.SplitAfter([]byte(content), []byte("\n"))
	start := 0
	if line != nil && *line > 1 {
		start = min(*line-1, len(lines))
	}
	end := len(lines)
	if limit != nil && start+*limit < end {
		end = start + *limit
	}
	return string(bytes.Join(lines[start:end], nil))
}

// UpdateKinds lists the sessionUpdate discriminators of updates, in order,
// for compact assertions about ordering.
func UpdateKinds(updates []acpsdk.SessionNotification) []string {
	kinds := make([]string, 0, len(updates))
	for _, n := range updates {
		b, err := json.Marshal(n.Update)
		if err != nil {
			kinds = append(kinds, fmt.Sprintf("error: %v", err))
			continue
		}
		var d struct {
			SessionUpdate string `json:"sessionUpdate"`
		}
		_ = json.Unmarshal(b, &d)
		kinds = append(kinds, d.SessionUpdate)
	}
	return kinds
}
