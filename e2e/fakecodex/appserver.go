package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codexacp/codexacp/e2e/replay/gates"
	"github.com/codexacp/codexacp/record"
)

// The app-server replay: `fakecodex app-server ...` is the transcript's
// next app-server process (runs are numbered as exec runs are). It plays
// the recorded conversation as a script, in recorded order: it writes what
// codex wrote (notifications, server requests such as approvals, the
// answers to the agent's requests with the agent's live ids), and waits
// where the agent spoke, for the agent's request, notification or answer
// that the recording has there. The agent's requests are matched to the
// recorded ones by method and order as they arrive and checked (see
// checkedParams); one that does not match gets an error answer at once
// and takes the recorded one's place (the script goes on past it), and an
// answer to a server request that differs from the recorded one
// ends the process (status 2): either way the reason goes to stderr and
// reaches the replay's diff through the agent. File tool calls are made
// at their recorded points against the MCP server that the thread's
// thread/start (or thread/resume, thread/fork) config names, with the bearer token the
// agent gave there (the transcript has it redacted). The end of stdin ends
// the process (0), as it ends codex app-server.

// checkedParams are the params the agent's requests must have as recorded:
// where a difference means the agent went another way (another thread, a
// mode mapped to another sandbox or approval policy, another prompt).
var checkedParams = map[string][]string{
	"thread/start":    {"cwd", "sandbox", "approvalPolicy"},
	"thread/resume":   {"threadId", "cwd", "sandbox", "approvalPolicy"},
	"thread/fork":     {"threadId", "cwd", "sandbox", "approvalPolicy", "excludeTurns"},
	"thread/delete":   {"threadId"},
	"thread/name/set": {"threadId", "name"},
	"turn/start":      {"threadId", "input", "cwd", "sandboxPolicy", "approvalPolicy"},
	// A prompt steered into a running turn: which turn, and what.
	"turn/steer":     {"threadId", "expectedTurnId", "input"},
	"turn/interrupt": {"threadId", "turnId"},
}

// threadConfigMethods are the agent's requests whose config names the
// thread's tool server (see learnServer).
var threadConfigMethods = map[string]bool{"thread/start": true, "thread/resume": true, "thread/fork": true}

// sessionTagKey is the thread config entry that names the agent's session
// (the tag its cancel finds the session's commands by): it tells which
// thread a recorded tool call of a session went through.
const sessionTagKey = "shell_environment_policy.set.CODEXACP_SESSION"

// codeMismatch is the JSON-RPC error code of an answer to a request that
// does not match the recording.
const codeMismatch = -32600

// rpcMessage is a JSON-RPC message as the fake reads it.
type rpcMessage struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

func (m *rpcMessage) hasID() bool { return len(m.ID) > 0 && string(m.ID) != "null" }

// asStepKind is what a step of the script does.
type asStepKind int

const (
	stepWrite      asStepKind = iota // write a line codex wrote
	stepAnswer                       // write codex's answer to an agent request, with the live id
	stepAwait                        // wait for the agent's request or notification
	stepAwaitReply                   // wait for the agent's answer to a server request
	stepFile                         // recreate a file as the recording found it
	stepCall                         // start a file tool call
	stepResult                       // wait for a tool call's result
	stepDied                         // the recorded process ended by itself
	stepClosed                       // the agent closed stdin
)

type asStep struct {
	kind  asStepKind
	index int // position in the transcript (markers, gates, messages)
	// gated: with gates, a line written only once gate-<index> is open
	// (the agent's messages to the editor that came before it in the
	// recording have arrived). Only lines with more such messages before
	// them than the codex line before them wait.
	gated bool
	e     *record.Entry
	slot  *agentMsg  // stepAwait, stepAnswer
	reply *serverReq // stepAwaitReply; stepWrite of a request of codex
}

// agentMsg is one request or notification the agent sent in the recording,
// and the live one matched to it.
type agentMsg struct {
	index    int
	method   string
	params   json.RawMessage
	liveID   json.RawMessage
	arrived  chan struct{} // closed once matched
	recorded json.RawMessage
	answered bool // answered already (guarded by asPlayer.mu)
}

// serverReq is a request codex sent (an approval) and the agent's answer.
type serverReq struct {
	index    int
	id       string
	method   string
	answer   *rpcMessage   // as recorded; nil: the agent never answered
	sent     bool          // written to the agent (guarded by asPlayer.mu)
	answered chan struct{} // closed once the agent answered as recorded
}

// asPlan is one recorded app-server process.
type asPlan struct {
	run     int
	steps   []asStep
	byMeth  map[string][]*agentMsg // the agent's requests and notifications, by method, in order
	servReq map[string]*serverReq  // codex's requests, by id
	calls   map[string]*toolCall   // tool calls, by call id
}

type toolCall struct {
	done   chan struct{}
	result *record.Entry // the recorded mcp_result; nil when there is none
}

func planAppServer(entries []record.Entry, n int) (*asPlan, error) {
	p := &asPlan{run: n, byMeth: map[string][]*agentMsg{}, servReq: map[string]*serverReq{}, calls: map[string]*toolCall{}}
	started := false
	requests := map[string]*agentMsg{} // by recorded id
	closed := false
	outs, gatedAt := 0, 0 // the agent's messages to the editor so far; at the last codex line
	for i := range entries {
		e := &entries[i]
		if e.Kind == record.KindACP && e.Dir == record.DirOut {
			outs++
		}
		gated := false
		if e.Kind == record.KindAppServer && e.Dir == record.DirIn && !e.EOF {
			// Codex lines of any process count: the harness opens a gate
			// for each.
			gated, gatedAt = outs > gatedAt, outs
		}
		if e.Run != n {
			continue
		}
		switch e.Kind {
		case record.KindAppServerStart:
			started = true
		case record.KindAppServer:
			if e.EOF {
				if e.Dir == record.DirOut {
					closed = true
					p.steps = append(p.steps, asStep{kind: stepClosed, index: i, e: e})
				} else if !closed {
					p.steps = append(p.steps, asStep{kind: stepDied, index: i, e: e})
				}
				continue
			}
			var m rpcMessage
			if len(e.Msg) == 0 || json.Unmarshal(e.Msg, &m) != nil {
				if e.Dir == record.DirIn {
					p.steps = append(p.steps, asStep{kind: stepWrite, index: i, e: e, gated: gated})
				}
				continue // the agent writes JSON only
			}
			switch {
			case e.Dir == record.DirOut && m.Method != "":
				a := &agentMsg{index: i, method: m.Method, params: m.Params, arrived: make(chan struct{}), recorded: e.Msg}
				p.byMeth[m.Method] = append(p.byMeth[m.Method], a)
				if m.hasID() {
					requests[string(m.ID)] = a
				}
				if floating[m.Method] {
					continue // awaited where its answer is written
				}
				p.steps = append(p.steps, asStep{kind: stepAwait, index: i, e: e, slot: a})
			case e.Dir == record.DirOut && m.hasID():
				r := p.servReq[string(m.ID)]
				if r == nil || r.answer != nil {
					return nil, fmt.Errorf("transcript line %d: an answer to no request of codex", i+1)
				}
				r.answer = &m
				p.steps = append(p.steps, asStep{kind: stepAwaitReply, index: i, e: e, reply: r})
			case e.Dir == record.DirIn && m.Method == "" && m.hasID():
				a := requests[string(m.ID)]
				if a == nil {
					return nil, fmt.Errorf("transcript line %d: codex answers no request of the agent", i+1)
				}
				delete(requests, string(m.ID))
				p.steps = append(p.steps, asStep{kind: stepAnswer, index: i, e: e, slot: a, gated: gated})
			case e.Dir == record.DirIn:
				var r *serverReq
				if m.Method != "" && m.hasID() {
					r = &serverReq{index: i, id: string(m.ID), method: m.Method, answered: make(chan struct{})}
					p.servReq[string(m.ID)] = r
				}
				p.steps = append(p.steps, asStep{kind: stepWrite, index: i, e: e, reply: r, gated: gated})
			}
		case record.KindFile:
			p.steps = append(p.steps, asStep{kind: stepFile, index: i, e: e})
		case record.KindMCPCall:
			p.calls[e.Call] = &toolCall{done: make(chan struct{})}
			p.steps = append(p.steps, asStep{kind: stepCall, index: i, e: e})
		case record.KindMCPResult:
			if c := p.calls[e.Call]; c != nil {
				c.result = e
				p.steps = append(p.steps, asStep{kind: stepResult, index: i, e: e})
			}
		}
	}
	if !started {
		return nil, fmt.Errorf("the transcript has no app-server run %d", n)
	}
	return p, nil
}

// asPlayer plays one app-server process.
type asPlayer struct {
	*replayer
	plan *asPlan
	// configRead answers config/read, which the agent's trace leaves out
	// (appserver.Server.CallUnrecorded): the settings the recorded agent
	// read at start, as the settings-only process answers them.
	configRead any
	stdin      io.Reader
	ctx        context.Context
	cancel     context.CancelFunc

	writeMu sync.Mutex

	mu        sync.Mutex
	matched   map[string]int       // agent messages matched so far, by method
	endpoints map[string]mcpServer // by recorded session id (sessionTagKey)
	latest    *mcpServer           // of the last thread/start, thread/resume or thread/fork

	connMu   sync.Mutex
	sessions map[mcpServer]*mcpsdk.ClientSession

	eof   chan struct{} // stdin ended
	fatal chan string   // the agent answered a server request otherwise than recorded
}

// floating are the agent's requests that it sends at no fixed point of
// codex's output: the fake waits for them only where it writes their
// answer, not at their recorded place. The agent lists a session's skills
// on a goroutine of its own once the app-server is up (issue 24), before
// or after thread/start is answered as the processes happen to run; a
// recording that caught it before would otherwise hold back codex's lines
// for a request that comes after them (seen replaying the recording of a
// replay, TestRecordingOfAReplayReplays).
var floating = map[string]bool{"skills/list": true}

func runAppServer(entries []record.Entry, n int, r *replayer, stdin io.Reader, sigs <-chan os.Signal) int {
	p, err := planAppServer(entries, n)
	if err != nil {
		fmt.Fprintf(r.stderr, "fakecodex: %v\n", err)
		return exitMismatch
	}
	ctx, cancel := context.WithTimeout(context.Background(), maxRunTime)
	defer cancel()
	a := &asPlayer{
		replayer: r, plan: p, configRead: recordedConfigRead(entries), stdin: stdin, ctx: ctx, cancel: cancel,
		matched: map[string]int{}, endpoints: map[string]mcpServer{}, sessions: map[mcpServer]*mcpsdk.ClientSession{},
		eof: make(chan struct{}), fatal: make(chan string, 1),
	}
	defer a.closeSessions()
	go a.read()
	go a.answerFloating()
	return a.play(sigs)
}

// answerFloating answers the agent's floating requests (skills/list) with
// their recorded answers as they come, once the harness has opened
// gates.AnotherWay: the replay went another way, and the script may wait
// for good at a request the agent will not send, while codex answers a
// listing whatever became of a turn — and the agent, at its exit, waits
// for a listing it started before it closes codex's stdin.
func (a *asPlayer) answerFloating() {
	if a.gates == nil || !a.gates.Wait(a.ctx, gates.AnotherWay) {
		return
	}
	for _, s := range a.plan.steps {
		if s.kind != stepAnswer || !floating[s.slot.method] {
			continue
		}
		select {
		case <-s.slot.arrived:
		case <-a.eof:
			return
		case <-a.ctx.Done():
			return
		}
		if !a.answer(s) {
			return
		}
	}
}

// play walks the script; it returns the exit status.
func (a *asPlayer) play(sigs <-chan os.Signal) int {
	// wait waits for ch; a status ≥ 0 ends the process.
	wait := func(ch <-chan struct{}, what string, index int) int {
		timer := time.NewTimer(waitNotice)
		defer timer.Stop()
		for {
			select {
			case <-ch:
				return -1
			case <-a.eof:
				return 0
			case <-sigs:
				return exitInterrupted
			case why := <-a.fatal:
				fmt.Fprintf(a.stderr, "fakecodex: %s\n", why)
				return exitMismatch
			case <-a.ctx.Done():
				fmt.Fprintf(a.stderr, "fakecodex: app-server run %d: gave up after %v waiting for %s (transcript line %d)\n", a.plan.run, maxRunTime, what, index+1)
				return exitMismatch
			case <-timer.C:
				fmt.Fprintf(a.stderr, "fakecodex: app-server run %d: still waiting for %s (transcript line %d)\n", a.plan.run, what, index+1)
			}
		}
	}
	for _, s := range a.plan.steps {
		if s.gated && a.gates != nil {
			if code := wait(a.gate(s.index), "the agent's messages to the editor before this line (gate)", s.index); code >= 0 {
				return code
			}
		}
		switch s.kind {
		case stepWrite:
			line := []byte(s.e.Msg)
			if len(line) == 0 {
				line = []byte(s.e.Text)
			}
			if s.reply != nil {
				a.mu.Lock()
				s.reply.sent = true
				a.mu.Unlock()
			}
			if !a.write(line, s.index) {
				return 0
			}
		case stepAnswer:
			// Arrived at its recorded place, unless floating.
			if code := wait(s.slot.arrived, "the agent's "+s.slot.method, s.index); code >= 0 {
				return code
			}
			if !a.answer(s) {
				return 0
			}
		case stepAwait:
			if code := wait(s.slot.arrived, "the agent's "+s.slot.method, s.index); code >= 0 {
				return code
			}
		case stepAwaitReply:
			if code := wait(s.reply.answered, "the agent's answer to "+s.reply.method, s.index); code >= 0 {
				return code
			}
		case stepFile:
			if err := a.recreate(s.e); err != nil {
				fmt.Fprintf(a.stderr, "fakecodex: %v\n", err)
			}
		case stepCall:
			go a.call(s)
		case stepResult:
			if code := wait(a.plan.calls[s.e.Call].done, "the result of "+s.e.Tool, s.index); code >= 0 {
				return code
			}
		case stepClosed:
			if code := wait(nil, "the end of stdin", s.index); code >= 0 {
				return code
			}
		case stepDied:
			fmt.Fprintf(a.stderr, "fakecodex: app-server run %d ended here in the recording (transcript line %d)\n", a.plan.run, s.index+1)
			return 1
		}
	}
	return wait(nil, "the end of stdin", len(a.plan.steps))
}

// answer writes the recorded answer of a stepAnswer under the live id,
// unless it was answered already (refused by agentMessage, or a floating
// one answered by answerFloating); false when stdout is gone.
func (a *asPlayer) answer(s asStep) bool {
	a.mu.Lock()
	done := s.slot.answered
	s.slot.answered = true
	id := s.slot.liveID
	a.mu.Unlock()
	return done || a.write(withID(s.e.Msg, id), s.index)
}

// gate is closed once the harness has opened the gate of the line at
// transcript position index.
func (a *asPlayer) gate(index int) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		if a.waitGate(a.ctx, index) {
			close(ch)
		}
	}()
	return ch
}

// waitNotice is how long a wait lasts before the fake says what it waits for.
const waitNotice = 10 * time.Second

// write writes one line to stdout and, with gates, marks it written; false
// when stdout is gone.
func (a *asPlayer) write(line []byte, index int) bool {
	a.writeMu.Lock()
	_, err := a.stdout.Write(append(line[:len(line):len(line)], '\n'))
	a.writeMu.Unlock()
	if err != nil {
		return false
	}
	if a.gates != nil {
		a.mark(fmt.Sprintf("line-%d", index))
	}
	return true
}

// withID is the JSON-RPC message msg with id in place of its own.
func withID(msg json.RawMessage, id json.RawMessage) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(msg, &m) != nil {
		return msg
	}
	m["id"] = id
	b, err := json.Marshal(m)
	if err != nil {
		return msg
	}
	return b
}

// read takes in what the agent writes, matching each message to the
// recording as it arrives.
func (a *asPlayer) read() {
	defer close(a.eof)
	br := bufio.NewReaderSize(a.stdin, 1<<16)
	for {
		line, err := br.ReadBytes('\n')
		if line = bytes.TrimSpace(line); len(line) > 0 {
			a.received(line)
		}
		if err != nil {
			return
		}
	}
}

func (a *asPlayer) received(line []byte) {
	var m rpcMessage
	if err := json.Unmarshal(line, &m); err != nil {
		fmt.Fprintf(a.stderr, "fakecodex: app-server run %d: unreadable line from the agent: %v\n", a.plan.run, err)
		return
	}
	switch {
	case m.Method == "config/read" && m.hasID():
		b, _ := json.Marshal(map[string]any{"id": m.ID, "result": a.configRead})
		a.writeMu.Lock()
		a.stdout.Write(append(b, '\n'))
		a.writeMu.Unlock()
	case m.Method != "":
		a.agentMessage(&m)
	case m.hasID():
		a.serverReqAnswer(&m)
	}
}

// agentMessage matches a request or notification of the agent to the
// recorded one of its method and place; a request that does not match is
// answered with an error at once.
func (a *asPlayer) agentMessage(m *rpcMessage) {
	a.mu.Lock()
	n := a.matched[m.Method]
	recorded := a.plan.byMeth[m.Method]
	var why string
	switch {
	case n >= len(recorded):
		why = fmt.Sprintf("the recording has %d of them from the agent; this is one more", len(recorded))
	default:
		why = compareParams(m.Method, recorded[n].params, m.Params)
	}
	if why != "" {
		var refused *agentMsg
		if n < len(recorded) {
			// The refused request takes the recorded one's place, its
			// error answer that of the recorded answer: the script goes
			// on past it as codex goes on past a request it refused (a
			// turn runs on when a steer was refused), rather than wait
			// for a request that is not coming.
			refused = recorded[n]
			a.matched[m.Method] = n + 1
			refused.liveID = m.ID
			refused.answered = true
		}
		a.mu.Unlock()
		if refused != nil {
			defer close(refused.arrived)
		}
		why = fmt.Sprintf("app-server run %d: %s #%d: %s", a.plan.run, m.Method, n+1, why)
		fmt.Fprintf(a.stderr, "fakecodex: %s\n", why)
		if m.hasID() {
			a.answerError(m.ID, "fakecodex: "+why)
		}
		return
	}
	slot := recorded[n]
	a.matched[m.Method] = n + 1
	slot.liveID = m.ID
	if threadConfigMethods[m.Method] {
		a.learnServer(slot.params, m.Params)
	}
	a.mu.Unlock()
	close(slot.arrived)
}

func (a *asPlayer) answerError(id json.RawMessage, message string) {
	b, _ := json.Marshal(map[string]any{"id": id, "error": map[string]any{"code": codeMismatch, "message": message}})
	a.writeMu.Lock()
	defer a.writeMu.Unlock()
	a.stdout.Write(append(b, '\n'))
}

// serverReqAnswer checks the agent's answer to a request of codex against
// the recorded answer.
func (a *asPlayer) serverReqAnswer(m *rpcMessage) {
	r := a.plan.servReq[string(m.ID)]
	a.mu.Lock()
	sent := r != nil && r.sent
	a.mu.Unlock()
	if !sent || r.answer == nil {
		fmt.Fprintf(a.stderr, "fakecodex: app-server run %d: an answer to no request of codex sent or recorded (id %s)\n", a.plan.run, m.ID)
		return
	}
	select {
	case <-r.answered:
		fmt.Fprintf(a.stderr, "fakecodex: app-server run %d: a second answer to %s (id %s)\n", a.plan.run, r.method, m.ID)
		return
	default:
	}
	got, want := canonical(m.Result)+canonical(m.Error), canonical(r.answer.Result)+canonical(r.answer.Error)
	if got != want {
		select {
		case a.fatal <- fmt.Sprintf("app-server run %d: the agent answered %s (transcript line %d) with %s, recorded %s", a.plan.run, r.method, r.index+1, got, want):
		default:
		}
		return
	}
	close(r.answered)
}

// compareParams says how the live params of a request differ from the
// recorded ones in the checked fields ("" when they do not).
func compareParams(method string, recorded, live json.RawMessage) string {
	var rec, got map[string]json.RawMessage
	json.Unmarshal(recorded, &rec)
	json.Unmarshal(live, &got)
	for _, field := range checkedParams[method] {
		if r, l := canonical(rec[field]), canonical(got[field]); r != l {
			return fmt.Sprintf("recorded %s %s, got %s", field, r, l)
		}
	}
	return ""
}

// canonical is a JSON value re-encoded with sorted keys ("" for none).
func canonical(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// learnServer notes the tool server a thread's config names, for the tool
// calls of the recorded session the thread belongs to. a.mu is held.
func (a *asPlayer) learnServer(recorded, live json.RawMessage) {
	srv, ok := threadServer(live)
	if !ok {
		return
	}
	a.latest = &srv
	var rec struct {
		Config map[string]any `json:"config"`
	}
	json.Unmarshal(recorded, &rec)
	if session, ok := rec.Config[sessionTagKey].(string); ok && session != "" {
		a.endpoints[session] = srv
	}
}

// threadServer reads the agent's tool server from thread/start,
// thread/resume or thread/fork params: config mcp_servers.acp (a dotted key, or nested)
// with its url and its "Authorization: Bearer <token>" header, or the
// agent's relay as a stdio server (command, args, env).
func threadServer(params json.RawMessage) (mcpServer, bool) {
	var p struct {
		Config map[string]any `json:"config"`
	}
	if json.Unmarshal(params, &p) != nil {
		return mcpServer{}, false
	}
	acp, _ := p.Config["mcp_servers.acp"].(map[string]any)
	if acp == nil {
		servers, _ := p.Config["mcp_servers"].(map[string]any)
		acp, _ = servers["acp"].(map[string]any)
	}
	url, _ := acp["url"].(string)
	if command, _ := acp["command"].(string); url == "" && command != "" {
		var args []string
		list, _ := acp["args"].([]any)
		for _, a := range list {
			s, _ := a.(string)
			args = append(args, s)
		}
		env := map[string]string{}
		vars, _ := acp["env"].(map[string]any)
		for k, v := range vars {
			env[k], _ = v.(string)
		}
		return stdioServer(command, args, env), true
	}
	if url == "" {
		return mcpServer{}, false
	}
	srv := mcpServer{url: url}
	headers, _ := acp["http_headers"].(map[string]any)
	for name, v := range headers {
		if s, ok := v.(string); ok && strings.EqualFold(name, "Authorization") {
			if prefix, token, ok := strings.Cut(s, " "); ok && strings.EqualFold(prefix, "bearer") {
				srv.token = strings.TrimSpace(token)
			}
		}
	}
	return srv, true
}

// call makes a recorded tool call once its gate opens, through the tool
// server of the call's session, and marks it done when the result is back.
func (a *asPlayer) call(s asStep) {
	defer close(a.plan.calls[s.e.Call].done)
	if a.gates != nil && !a.waitGate(a.ctx, s.index) {
		return
	}
	session, err := a.session(s.e.Session)
	if err != nil {
		fmt.Fprintf(a.stderr, "fakecodex: app-server run %d: %s call (transcript line %d): %v\n", a.plan.run, s.e.Tool, s.index+1, err)
		return
	}
	res, err := session.CallTool(a.ctx, &mcpsdk.CallToolParams{Name: s.e.Tool, Arguments: s.e.Arguments})
	if a.ctx.Err() != nil {
		return // the process is ending: nothing to compare
	}
	if err != nil {
		fmt.Fprintf(a.stderr, "fakecodex: %s call failed: %v\n", s.e.Tool, err)
	}
	if diff := checkResult(a.plan.calls[s.e.Call].result, res, err); diff != "" {
		a.reportMismatch(a.plan.run, s.index, diff)
	}
}

// session is an MCP session on the tool server of the recorded session id
// (else of the last thread started), connected on first use as codex does
// at thread start.
func (a *asPlayer) session(recorded string) (*mcpsdk.ClientSession, error) {
	a.mu.Lock()
	srv, ok := a.endpoints[recorded]
	if !ok && a.latest != nil {
		srv, ok = *a.latest, true
	}
	a.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("no thread/start, thread/resume or thread/fork named the tool server")
	}
	a.connMu.Lock()
	defer a.connMu.Unlock()
	if s := a.sessions[srv]; s != nil {
		return s, nil
	}
	s, err := srv.connect(a.ctx)
	if err != nil {
		return nil, fmt.Errorf("MCP server acp: %w", err)
	}
	a.sessions[srv] = s
	return s, nil
}

func (a *asPlayer) closeSessions() {
	a.cancel()
	a.connMu.Lock()
	defer a.connMu.Unlock()
	for _, s := range a.sessions {
		s.Close()
	}
}
