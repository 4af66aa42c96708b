//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/internal/fakeeditor"
)

// editor is the ACP client side: it advertises fs like Zed, answers fs
// requests from the disk (writes go to the disk at once, so every candidate's
// edit is checked the same way), allows each permission request once, has no
// terminals, and timestamps every line the agent writes as it arrives.
type editor struct {
	conn *acpsdk.ClientSideConnection

	mu          sync.Mutex
	mark        time.Time // start of the current turn
	firstChunk  time.Time // first agent_message_chunk after mark
	chunks      int       // agent_message_chunk updates since mark
	texts       []string  // their texts
	kinds       map[string]int
	permissions int
	fsCalls     int
	lines       int
}

func connectEditor(agentIn io.Writer, agentOut io.Reader) *editor {
	e := &editor{kinds: map[string]int{}}
	pr, pw := io.Pipe()
	go e.tee(agentOut, pw)
	e.conn = acpsdk.NewClientSideConnection(e, agentIn, pr)
	e.conn.SetLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	return e
}

// tee notes the arrival time of each line before the SDK sees it.
func (e *editor) tee(from io.Reader, to *io.PipeWriter) {
	r := bufio.NewReaderSize(from, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			now := time.Now()
			e.note(line, now)
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

func (e *editor) note(line []byte, at time.Time) {
	if !bytes.Contains(line, []byte(`"session/update"`)) {
		e.mu.Lock()
		e.lines++
		e.mu.Unlock()
		return
	}
	var msg struct {
		Params struct {
			Update struct {
				SessionUpdate string `json:"sessionUpdate"`
				Content       struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"update"`
		} `json:"params"`
	}
	_ = json.Unmarshal(line, &msg)
	kind := msg.Params.Update.SessionUpdate
	e.mu.Lock()
	defer e.mu.Unlock()
	e.lines++
	e.kinds[kind]++
	if kind == "agent_message_chunk" {
		e.chunks++
		e.texts = append(e.texts, msg.Params.Update.Content.Text)
		if e.firstChunk.IsZero() {
			e.firstChunk = at
		}
	}
}

// startTurn resets the per-turn observations and returns the turn's start.
func (e *editor) startTurn() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.mark = time.Now()
	e.firstChunk = time.Time{}
	e.chunks = 0
	e.texts = nil
	e.kinds = map[string]int{}
	return e.mark
}

// turnObservations returns the first chunk's time (zero if none), the number
// of message chunks, their texts and the update kinds seen since startTurn.
func (e *editor) turnObservations() (first time.Time, chunks int, texts []string, kinds map[string]int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	k := make(map[string]int, len(e.kinds))
	for n, c := range e.kinds {
		k[n] = c
	}
	return e.firstChunk, e.chunks, append([]string(nil), e.texts...), k
}

func (e *editor) initialize(ctx context.Context) (acpsdk.InitializeResponse, error) {
	return e.conn.Initialize(ctx, acpsdk.InitializeRequest{
		ProtocolVersion:    acpsdk.ProtocolVersionNumber,
		ClientCapabilities: acpsdk.ClientCapabilities{Fs: acpsdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}},
		ClientInfo:         &acpsdk.Implementation{Name: "sidebyside", Version: "1"},
	})
}

// SessionUpdate implements acpsdk.Client; updates are observed in tee.
func (e *editor) SessionUpdate(context.Context, acpsdk.SessionNotification) error { return nil }

// ReadTextFile implements acpsdk.Client from the disk.
func (e *editor) ReadTextFile(_ context.Context, req acpsdk.ReadTextFileRequest) (acpsdk.ReadTextFileResponse, error) {
	e.count(&e.fsCalls)
	b, err := os.ReadFile(req.Path)
	if errors.Is(err, os.ErrNotExist) {
		return acpsdk.ReadTextFileResponse{}, &acpsdk.RequestError{Code: -32002, Message: "Resource not found", Data: map[string]any{"uri": req.Path}}
	}
	if err != nil {
		return acpsdk.ReadTextFileResponse{}, acpsdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	return acpsdk.ReadTextFileResponse{Content: fakeeditor.SliceLines(string(b), req.Line, req.Limit)}, nil
}

// WriteTextFile implements acpsdk.Client: written to the disk at once.
func (e *editor) WriteTextFile(_ context.Context, req acpsdk.WriteTextFileRequest) (acpsdk.WriteTextFileResponse, error) {
	e.count(&e.fsCalls)
	if err := os.WriteFile(req.Path, []byte(req.Content), 0o644); err != nil {
		return acpsdk.WriteTextFileResponse{}, acpsdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	return acpsdk.WriteTextFileResponse{}, nil
}

// RequestPermission implements acpsdk.Client: the agent's allow-once option
// (each adapter names its options differently), else its first allow option.
func (e *editor) RequestPermission(_ context.Context, req acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
	e.count(&e.permissions)
	pick := ""
	for _, kind := range []acpsdk.PermissionOptionKind{acpsdk.PermissionOptionKindAllowOnce, acpsdk.PermissionOptionKindAllowAlways} {
		for _, o := range req.Options {
			if o.Kind == kind && pick == "" {
				pick = string(o.OptionId)
			}
		}
	}
	if pick == "" && len(req.Options) > 0 {
		pick = string(req.Options[0].OptionId)
	}
	return acpsdk.RequestPermissionResponse{Outcome: acpsdk.RequestPermissionOutcome{
		Selected: &acpsdk.RequestPermissionOutcomeSelected{OptionId: acpsdk.PermissionOptionId(pick), Outcome: "selected"},
	}}, nil
}

// requestCounts returns the permission and fs requests answered so far.
func (e *editor) requestCounts() (permissions, fs int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.permissions, e.fsCalls
}

func (e *editor) count(n *int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	*n++
}

// CreateTerminal implements acpsdk.Client; this editor has no terminals.
func (e *editor) CreateTerminal(context.Context, acpsdk.CreateTerminalRequest) (acpsdk.CreateTerminalResponse, error) {
	return acpsdk.CreateTerminalResponse{}, acpsdk.NewMethodNotFound("terminal/create")
}

// KillTerminal implements acpsdk.Client.
func (e *editor) KillTerminal(context.Context, acpsdk.KillTerminalRequest) (acpsdk.KillTerminalResponse, error) {
	return acpsdk.KillTerminalResponse{}, acpsdk.NewMethodNotFound("terminal/kill")
}

// TerminalOutput implements acpsdk.Client.
func (e *editor) TerminalOutput(context.Context, acpsdk.TerminalOutputRequest) (acpsdk.TerminalOutputResponse, error) {
	return acpsdk.TerminalOutputResponse{}, acpsdk.NewMethodNotFound("terminal/output")
}

// ReleaseTerminal implements acpsdk.Client.
func (e *editor) ReleaseTerminal(context.Context, acpsdk.ReleaseTerminalRequest) (acpsdk.ReleaseTerminalResponse, error) {
	return acpsdk.ReleaseTerminalResponse{}, acpsdk.NewMethodNotFound("terminal/release")
}

// WaitForTerminalExit implements acpsdk.Client.
func (e *editor) WaitForTerminalExit(context.Context, acpsdk.WaitForTerminalExitRequest) (acpsdk.WaitForTerminalExitResponse, error) {
	return acpsdk.WaitForTerminalExitResponse{}, acpsdk.NewMethodNotFound("terminal/wait_for_exit")
}
