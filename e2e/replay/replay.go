// Package replay turns a recorded session transcript (package record) into a
// deterministic test: it starts the codexacp binary with the fake codex
// (e2e/fakecodex) in place of codex, plays the editor's side of the
// recording — sends the editor's messages, each once the agent messages that
// preceded it in the recording have arrived, and answers the agent's fs and
// permission requests with the recorded answers — and compares every message
// the agent sends with the recording after normalising what legitimately
// differs between runs (session and tool call ids, the agent's request ids,
// the agent version, the workspace path).
//
// Nothing here needs codex or a network: the fake codex prints the recorded
// JSONL and makes the recorded tool calls against the agent's embedded MCP
// server, so the agent runs its real code paths.
package replay

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/codexacp/codexacp/e2e/replay/gates"
	"github.com/codexacp/codexacp/fsops"
	"github.com/codexacp/codexacp/internal/recovery"
	"github.com/codexacp/codexacp/internal/syncbuf"
	"github.com/codexacp/codexacp/record"
)

// DefaultStepTimeout is how long Run waits for the agent's next expected
// message before it gives up, when Options.StepTimeout is zero. A replay
// takes well under a second; the wait only runs out when the agent went
// another way than in the recording.
const DefaultStepTimeout = 10 * time.Second

// Options configure Run.
type Options struct {
	Agent       string        // the codexacp binary
	FakeCodex   string        // the fakecodex binary
	StepTimeout time.Duration // 0: DefaultStepTimeout
	AgentArgs   []string      // extra agent flags (e.g. --record FILE)
}

// Result is the outcome of one replay.
type Result struct {
	// Want and Got are the agent's messages, recorded and replayed,
	// normalised and indented; they are equal when the replay matched.
	Want, Got []string
	// Raw are the replayed agent messages as the agent wrote them.
	Raw [][]byte
	// Stderr is the agent's log output.
	Stderr string
	// Incomplete says why the replay stopped early ("" when it ran to the
	// end): the agent did not send an expected message in time, or exited.
	Incomplete string
	// ToolResults are the file tool results codex (the fake) received that
	// differ from the recorded ones, each with both results, in transcript
	// order; empty when every result matched.
	ToolResults []string
	Elapsed     time.Duration
}

// Match reports whether the replayed agent messages equal the recorded ones
// and every tool result the fake codex received equals the recorded one.
// A replay in which the agent recovered from a panic does not match either:
// the agent survived a bug, which is still a bug.
func (r *Result) Match() bool {
	return r.Incomplete == "" && len(r.ToolResults) == 0 && Diff(r.Want, r.Got) == "" && !r.Panicked()
}

// Panicked reports whether the agent logged a recovered panic.
func (r *Result) Panicked() bool {
	return strings.Contains(r.Stderr, recovery.LogPrefix)
}

// Report says how the replay differs from the recording: why it stopped
// early, the tool results that differ and the diff of the agent's
// messages; "" when it matched.
func (r *Result) Report() string {
	var parts []string
	if r.Incomplete != "" {
		parts = append(parts, "replay incomplete: "+r.Incomplete)
	}
	parts = append(parts, r.ToolResults...)
	if d := Diff(r.Want, r.Got); d != "" {
		parts = append(parts, d)
	}
	return strings.Join(parts, "\n")
}

// Run replays the transcript at path.
func Run(ctx context.Context, path string, opts Options) (*Result, error) {
	began := time.Now()
	if opts.StepTimeout == 0 {
		opts.StepTimeout = DefaultStepTimeout
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(memoryTempDir(), "codexacp-replay-*")
	if err != nil && memoryTempDir() != "" {
		tmp, err = os.MkdirTemp("", "codexacp-replay-*") // /dev/shm full, say
	}
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	// The directory the transcript's workspace paths are rewritten to, the
	// fake codex's run counters and reports, and the agent's state directory
	// and codex home (where stored files are recreated).
	root := filepath.Join(tmp, "root")
	state := filepath.Join(tmp, "state")
	dirs := storeDirs{state: filepath.Join(tmp, "agent-state"), codexHome: filepath.Join(tmp, "codex-home")}
	for _, d := range []string{root, state, dirs.state, dirs.codexHome} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return nil, err
		}
	}
	if root, err = filepath.EvalSymlinks(root); err != nil {
		return nil, err
	}

	recorded := headerRoot(data)
	if recorded == "" {
		// A user's recording: the root is the first session's cwd.
		entries, err := record.Read(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		recorded = recordedRoot(entries)
	}
	if recorded != "" {
		data = record.RebasePaths(data, recorded, root)
	}
	data = record.RebasePaths(data, record.StateDirPlaceholder, dirs.state)
	data = record.RebasePaths(data, record.CodexHomePlaceholder, dirs.codexHome)
	// The recording user's home (a catalog's path, say): the agent's own.
	data = record.RebasePaths(data, record.HomePlaceholder, filepath.Join(tmp, "home"))
	entries, err := record.Read(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s after moving it to %s: %w", path, root, err)
	}
	if err := writeUserConfig(entries, dirs.codexHome); err != nil {
		return nil, err
	}
	transcript := filepath.Join(tmp, "transcript.ndjson")
	if err := os.WriteFile(transcript, data, 0o644); err != nil {
		return nil, err
	}
	sc, err := newScript(entries)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := sc.makeDirs(root); err != nil {
		return nil, err
	}

	gs, err := gates.Listen()
	if err != nil {
		return nil, err
	}
	defer gs.Close()
	p := &player{script: sc, state: state, gates: gs, dirs: dirs, timeout: opts.StepTimeout, root: root, sessions: map[string]string{},
		arrived: make(chan struct{}, 1), answered: map[string]bool{}}
	opts.AgentArgs = append(agentArgs(entries), opts.AgentArgs...)
	if err := p.start(ctx, opts, transcript, root, tmp); err != nil {
		return nil, err
	}
	p.play()
	p.stop()

	res := &Result{Raw: p.got, Stderr: p.stderr.String(), Incomplete: p.incomplete}
	if res.ToolResults, err = toolResultMismatches(state); err != nil {
		return nil, err
	}
	res.Want = normaliseAll(sc.outs, root)
	res.Got = normaliseAll(p.got, root)
	res.Elapsed = time.Since(began)
	return res, nil
}

// agentArgs are the agent flags that make it the agent that was recorded:
// its backend, and the model and reasoning effort the user configured.
func agentArgs(entries []record.Entry) []string {
	start := &entries[0]
	// Named always: the agent's default backend is not the one transcripts
	// without a backend were recorded on (exec).
	args := []string{"--backend", cmp.Or(start.Backend, record.BackendExec)}
	for _, kv := range [][2]string{{"model", start.Model}, {"model_reasoning_effort", start.Effort}} {
		if kv[1] != "" {
			quoted, _ := json.Marshal(kv[1]) // a TOML basic string
			args = append(args, "-c", kv[0]+"="+string(quoted))
		}
	}
	if !offeredSignIn(entries) {
		// The recorded agent offered no sign-in: it had a custom model
		// provider (or predates sign-in); so does the replayed one.
		args = append(args, "-c", `model_provider="replay"`)
	}
	return args
}

// offeredSignIn reports whether the recorded agent's initialize response
// listed sign-in methods.
func offeredSignIn(entries []record.Entry) bool {
	for _, e := range entries {
		if e.Kind != record.KindACP || e.Dir != record.DirOut {
			continue
		}
		var m struct {
			Result struct {
				AgentInfo   json.RawMessage   `json:"agentInfo"`
				AuthMethods []json.RawMessage `json:"authMethods"`
			} `json:"result"`
		}
		if json.Unmarshal(e.Msg, &m) == nil && m.Result.AgentInfo != nil {
			return len(m.Result.AuthMethods) > 0
		}
	}
	return false
}

// headerRoot is the root the first line of a transcript (its start entry)
// names, read without reading the whole transcript; "" when it names none.
func headerRoot(data []byte) string {
	first, _, _ := bytes.Cut(data, []byte("\n"))
	var start struct {
		Kind string `json:"kind"`
		Root string `json:"root"`
	}
	if json.Unmarshal(first, &start) != nil || start.Kind != record.KindStart {
		return ""
	}
	return start.Root
}

// recordedRoot is the directory the recording's workspace paths lie under:
// the header's root, else the cwd of the first session/new or session/load.
func recordedRoot(entries []record.Entry) string {
	if entries[0].Root != "" {
		return entries[0].Root
	}
	for _, e := range entries {
		if e.Kind != record.KindACP || e.Dir != record.DirIn {
			continue
		}
		var m struct {
			Method string `json:"method"`
			Params struct {
				Cwd string `json:"cwd"`
			} `json:"params"`
		}
		if json.Unmarshal(e.Msg, &m) == nil && (m.Method == "session/new" || m.Method == methodLoad) && m.Params.Cwd != "" {
			return m.Params.Cwd
		}
	}
	return ""
}

// jsonText is s as it appears inside a JSON string.
func jsonText(s string) []byte {
	b, _ := json.Marshal(s)
	return b[1 : len(b)-1]
}

// script is what the recording says the editor side does.
type script struct {
	outs [][]byte // the agent's messages, in order
	// ordered counts the agent's messages but commands announcements, which
	// go out whenever a session's skills are listed (issue 24): the
	// editor's messages wait for the messages before them by this count,
	// so that an announcement arriving earlier than recorded never lets
	// the editor's next message overtake the answer it waited for. (The
	// fake codex's gates keep counting every message: the lines after an
	// announcement follow the listing that caused it.)
	ordered int
	actions []action // the editor's messages and the end of input, in order
	// answers are the editor's recorded answers to the agent's requests, by
	// method, in the order of the requests (nil: never answered).
	answers map[string][]*answer
	gates   []gate
	// responses are the agent's recorded responses by request id, for
	// mapping session ids and telling a replay that went another way.
	responses map[string][]byte
	// plain are the agent's recorded messages that keep their place in
	// the stream (neither answers, cancel requests nor commands
	// announcements, which normaliseAll may move), in order.
	plain [][]byte
	// reusedIDs are request ids the agent answered more than once in the
	// recording: their answers are not compared as they come.
	reusedIDs map[string]bool
}

type action struct {
	after int // agent messages that must have arrived first
	// stored are the files the agent read to serve this request (a
	// session/list or session/load), recreated just before it is sent.
	stored []*record.Entry
	// codex names the mark the fake codex makes once it has printed
	// the codex output that preceded the action in the recording (run-N for
	// a run or app-server process that has just started, line-I for the
	// line at transcript position I); "" when no run was in progress.
	codex string
	msg   []byte // nil with eof
	eof   bool
}

type answer struct {
	result, err json.RawMessage
}

// gate is the point of a tool call, or of a line of the app-server: the
// fake codex makes the call, or writes the line, once the agent messages
// before it in the recording have arrived.
type gate struct {
	after int
	name  string
}

// message is the part of a JSON-RPC message the player looks at.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

func (m *message) isRequest() bool  { return m.Method != "" && len(m.ID) > 0 }
func (m *message) isResponse() bool { return m.Method == "" && len(m.ID) > 0 }

func newScript(entries []record.Entry) (*script, error) {
	sc := &script{answers: map[string][]*answer{}, responses: map[string][]byte{}, reusedIDs: map[string]bool{}}
	pending := map[string]*answer{} // agent request id → its answer slot
	codex := ""                     // the fake codex's progress marker so far
	loading := -1                   // the last session/list or session/load action
	exited := map[int]bool{}        // exec runs whose codex_exit has come
	for i := range entries {
		e := &entries[i]
		switch {
		case e.Kind == record.KindCodexStart:
			codex = fmt.Sprintf("run-%d", e.Run)
		case e.Kind == record.KindCodexLine:
			codex = fmt.Sprintf("line-%d", i)
		case e.Kind == record.KindCodexExit:
			codex = ""
			exited[e.Run] = true
		case e.Kind == record.KindRollout && exited[e.Run]:
			// A record the agent read from the rollout after codex exited:
			// the fake writes it once the agent has sent what it sent
			// before (it handled codex's last line), so that the agent
			// finds it only in that last read.
			sc.gates = append(sc.gates, gate{after: len(sc.outs), name: fmt.Sprintf("gate-%d", i)})
		case e.Kind == record.KindAppServerStart:
			codex = fmt.Sprintf("run-%d", e.Run)
		case e.Kind == record.KindAppServer && e.Dir == record.DirIn:
			// The fake app-server marks each line it wrote, as exec's
			// fake marks each line it printed.
			codex = fmt.Sprintf("line-%d", i)
			if e.EOF {
				codex = "" // the process ended
			}
		case e.Kind == record.KindACP && e.Dir == record.DirOut:
			raw := []byte(e.Msg)
			if len(raw) == 0 {
				raw = []byte(e.Text)
			}
			sc.outs = append(sc.outs, raw)
			c := classify(raw)
			if !c.announcement {
				sc.ordered++
			}
			if c.keepsPlace() {
				sc.plain = append(sc.plain, raw)
			}
			var m message
			if json.Unmarshal(raw, &m) != nil {
				continue
			}
			switch {
			case m.isRequest():
				a := &answer{}
				sc.answers[m.Method] = append(sc.answers[m.Method], a)
				pending[string(m.ID)] = a
			case m.isResponse():
				if _, again := sc.responses[string(m.ID)]; again {
					sc.reusedIDs[string(m.ID)] = true
				}
				sc.responses[string(m.ID)] = raw
			}
		case e.Kind == record.KindACP && e.Dir == record.DirIn:
			if e.EOF {
				sc.actions = append(sc.actions, action{after: sc.ordered, codex: codex, eof: true})
				continue
			}
			raw := []byte(e.Msg)
			if len(raw) == 0 {
				raw = []byte(e.Text)
			}
			var m message
			if json.Unmarshal(raw, &m) == nil && m.isResponse() {
				if a := pending[string(m.ID)]; a != nil {
					a.result, a.err = m.Result, m.Error
					if a.result == nil && a.err == nil {
						a.result = json.RawMessage("null")
					}
					delete(pending, string(m.ID))
				}
				continue
			}
			if m.Method == methodList || m.Method == methodLoad {
				loading = len(sc.actions)
			}
			sc.actions = append(sc.actions, action{after: sc.ordered, codex: codex, msg: raw})
		case e.Kind == record.KindStored:
			// The agent read it while serving the last list or load
			// request (recorded when the request came in).
			target := loading
			if target < 0 {
				target = len(sc.actions) - 1
			}
			if target >= 0 {
				sc.actions[target].stored = append(sc.actions[target].stored, e)
			}
		case e.Kind == record.KindMCPCall:
			sc.gates = append(sc.gates, gate{after: len(sc.outs), name: fmt.Sprintf("gate-%d", i)})
		}
		if e.Kind == record.KindAppServer && e.Dir == record.DirIn && !e.EOF {
			// The fake app-server writes a line that came after agent
			// messages to the editor only once they have arrived, so
			// that the agent reads it at the recorded point.
			sc.gates = append(sc.gates, gate{after: len(sc.outs), name: fmt.Sprintf("gate-%d", i)})
		}
	}
	// Answers that never came stay nil: the agent's request goes unanswered,
	// as it did.
	for method, list := range sc.answers {
		for i, a := range list {
			if a.result == nil && a.err == nil {
				sc.answers[method][i] = nil
			}
		}
	}
	if len(sc.actions) == 0 {
		return nil, errors.New("the transcript has no message from the editor")
	}
	return sc, nil
}

// The editor's requests the agent serves from stored files.
const (
	methodList = "session/list"
	methodLoad = "session/load"
)

// makeDirs creates the session directories the editor's messages name
// (cwd, additionalDirectories) that lie under root.
func (sc *script) makeDirs(root string) error {
	for _, a := range sc.actions {
		var m struct {
			Params struct {
				Cwd  string   `json:"cwd"`
				Dirs []string `json:"additionalDirectories"`
			} `json:"params"`
		}
		if a.msg == nil || json.Unmarshal(a.msg, &m) != nil {
			continue
		}
		for _, d := range append([]string{m.Params.Cwd}, m.Params.Dirs...) {
			if d == "" || !filepath.IsAbs(d) || !fsops.Within(root, d) {
				continue
			}
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err
			}
		}
	}
	return nil
}

// player runs the agent and plays the editor's side of a script.
type player struct {
	script  *script
	state   string        // the fake codex's run counters and tool-result reports
	gates   *gates.Server // the fake codex's marks, and gates the player opens
	dirs    storeDirs
	timeout time.Duration
	root    string // the workspace, for normalising messages

	cmd        *exec.Cmd
	stdin      io.WriteCloser
	stderr     syncbuf.Buffer
	readerDone chan struct{}

	writeMu sync.Mutex // whole messages to the agent's stdin

	mu         sync.Mutex
	got        [][]byte
	ordered    int               // of got, the messages but commands announcements (script.ordered)
	sessions   map[string]string // recorded session id → live one
	asked      map[string]int    // agent requests seen, by method
	sent       map[string][]byte // the editor's requests sent, by id
	opened     int               // gates opened
	incomplete string
	arrived    chan struct{} // signalled when a message arrived or the agent's output ended

	plain    int             // of got, the messages that keep their place (script.plain)
	answered map[string]bool // the editor's requests answered, by id
	// wentAnotherWay says how the agent went another way than recorded
	// ("" while it has not; see diverge).
	wentAnotherWay string
}

func (p *player) start(ctx context.Context, opts Options, transcript, root, tmp string) error {
	args := append([]string{"--codex-path", opts.FakeCodex, "--log-level", "debug", "--state-dir", p.dirs.state}, opts.AgentArgs...)
	cmd := exec.CommandContext(ctx, opts.Agent, args...)
	// The agent's caches and state (model catalog, session records) go to
	// the temporary directory, never the user's.
	isolated := map[string]string{
		"HOME":            filepath.Join(tmp, "home"),
		"XDG_CACHE_HOME":  filepath.Join(tmp, "cache"),
		"XDG_STATE_HOME":  filepath.Join(tmp, "state-home"),
		"XDG_DATA_HOME":   filepath.Join(tmp, "data"),
		"XDG_CONFIG_HOME": filepath.Join(tmp, "config"),
	}
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if _, ok := isolated[name]; ok || strings.HasPrefix(name, "CODEXACP_") || name == "CODEX_HOME" {
			continue
		}
		env = append(env, kv)
	}
	for name, dir := range isolated {
		env = append(env, name+"="+dir)
	}
	cmd.Env = append(env,
		"CODEX_HOME="+p.dirs.codexHome,
		"CODEXACP_FAKE_TRANSCRIPT="+transcript,
		"CODEXACP_FAKE_STATE="+p.state,
		"CODEXACP_FAKE_ROOT="+root,
		"CODEXACP_FAKE_GATES="+p.gates.Addr(),
	)
	cmd.Stderr = &p.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the agent: %w", err)
	}
	p.cmd, p.stdin = cmd, stdin
	p.asked = map[string]int{}
	p.sent = map[string][]byte{}
	p.readerDone = make(chan struct{})
	go p.read(stdout)
	p.openGates()
	return nil
}

// read collects the agent's messages, answers its requests and opens gates.
func (p *player) read(stdout io.Reader) {
	defer close(p.readerDone)
	r := bufio.NewReader(stdout)
	for {
		line, err := r.ReadBytes('\n')
		if line = bytes.TrimSpace(line); len(line) > 0 {
			p.received(line)
		}
		if err != nil {
			p.signal()
			return
		}
	}
}

func (p *player) received(line []byte) {
	var m message
	isJSON := json.Unmarshal(line, &m) == nil
	var c msgClass
	if isJSON {
		c = m.class()
	}
	var reply []byte
	p.mu.Lock()
	p.got = append(p.got, line)
	if !c.announcement {
		p.ordered++
	}
	if isJSON && m.isRequest() {
		n := p.asked[m.Method]
		p.asked[m.Method]++
		if list := p.script.answers[m.Method]; n < len(list) && list[n] != nil {
			reply = answerMessage(m.ID, list[n])
		}
	}
	if isJSON && m.isResponse() {
		if req := p.sent[string(m.ID)]; req != nil {
			p.mapSessions(p.script.responses[string(m.ID)], line)
			p.answered[string(m.ID)] = true
		}
	}
	why := p.anotherWay(line, c)
	p.mu.Unlock()
	if reply != nil {
		p.write(reply)
	}
	if why != "" {
		p.diverge(why)
	}
	p.openGates()
	p.signal()
}

// anotherWay says how the agent message line (of class c), just
// received, shows that the agent went another way than recorded ("" when
// it does not): an
// answer to the editor's request that differs from the recorded answer to
// that request, or a message that keeps its place in the stream and
// differs from the recorded one at that place (or comes past the
// recorded ones). Each is compared normalised on its own: when the
// streams are equal as Diff compares them, so is every such pair, so only
// a replay that fails anyway is told apart. p.mu is held.
func (p *player) anotherWay(line []byte, c msgClass) string {
	if id := c.answerID; id != "" {
		recorded, ok := p.script.responses[id]
		if ok && p.sent[id] != nil && !p.script.reusedIDs[id] && normaliseOne(recorded, p.root) != normaliseOne(line, p.root) {
			return "its answer to request " + id + " differs from the recorded one"
		}
		return ""
	}
	if !c.keepsPlace() {
		return ""
	}
	k := p.plain
	p.plain++
	switch {
	case k >= len(p.script.plain):
		return fmt.Sprintf("it sent more than the %d messages recorded (commands announcements, answers and cancel requests not counted)", len(p.script.plain))
	case normaliseOne(p.script.plain[k], p.root) != normaliseOne(line, p.root):
		return fmt.Sprintf("its message %d (commands announcements, answers and cancel requests not counted) differs from the recorded one", k+1)
	}
	return ""
}

// diverge notes that the agent went another way than recorded. The
// replay fails then whatever follows, so nothing needs to come at its
// recorded point any more: every gate opens, so that no fake codex waits
// for agent messages that will not come, gates.AnotherWay too (the fake
// app-server answers skills listings at once then), and the editor's steps
// stop waiting once its requests are answered (see waitFor).
func (p *player) diverge(why string) {
	p.mu.Lock()
	if p.wentAnotherWay != "" {
		p.mu.Unlock()
		return
	}
	p.wentAnotherWay = why
	open := p.script.gates[p.opened:]
	p.opened = len(p.script.gates)
	p.mu.Unlock()
	for _, g := range open {
		p.gates.Open(g.name)
	}
	p.gates.Open(gates.AnotherWay)
}

// settled reports whether the agent went another way than recorded and
// has answered every request of the editor: then the rest of the
// recording will not come, and a step need not wait for it. p.mu is held.
func (p *player) settled() bool {
	if p.wentAnotherWay == "" {
		return false
	}
	for id := range p.sent {
		if !p.answered[id] {
			return false
		}
	}
	return true
}

func answerMessage(id json.RawMessage, a *answer) []byte {
	m := map[string]any{"jsonrpc": "2.0", "id": id}
	if a.err != nil {
		m["error"] = a.err
	} else {
		m["result"] = a.result
	}
	b, _ := json.Marshal(m)
	return b
}

var sessionIDField = regexp.MustCompile(`"sessionId":"([^"]+)"`)

// mapSessions pairs the session ids in a recorded response with those in
// the live one, so that later editor messages name the live sessions.
func (p *player) mapSessions(recorded, live []byte) {
	r := sessionIDField.FindAllSubmatch(recorded, -1)
	l := sessionIDField.FindAllSubmatch(live, -1)
	for i := 0; i < len(r) && i < len(l); i++ {
		p.sessions[string(r[i][1])] = string(l[i][1])
	}
}

func (p *player) signal() {
	select {
	case p.arrived <- struct{}{}:
	default:
	}
}

// openGates lets the fake codex make each tool call whose preceding agent
// messages have all arrived.
func (p *player) openGates() {
	p.mu.Lock()
	n := len(p.got)
	var open []gate
	for p.opened < len(p.script.gates) && p.script.gates[p.opened].after <= n {
		open = append(open, p.script.gates[p.opened])
		p.opened++
	}
	p.mu.Unlock()
	for _, g := range open {
		p.gates.Open(g.name)
	}
}

func (p *player) write(msg []byte) {
	p.writeMu.Lock()
	defer p.writeMu.Unlock()
	p.stdin.Write(append(msg, '\n'))
}

// waitFor waits until n agent messages (commands announcements not
// counted) have arrived; false when the step
// timed out or the agent's output ended first.
func (p *player) waitFor(n int) bool {
	timer := time.NewTimer(p.timeout)
	defer timer.Stop()
	for {
		p.mu.Lock()
		have, settled, why := p.ordered, p.settled(), p.wentAnotherWay
		p.mu.Unlock()
		if have >= n {
			return true
		}
		if settled {
			p.setIncomplete(fmt.Sprintf("the agent went another way than recorded (%s) and answered every request; not waiting for agent message %d of %d (commands announcements not counted), got %d", why, n, p.script.ordered, have))
			return false
		}
		select {
		case <-p.arrived:
		case <-p.readerDone:
			p.mu.Lock()
			have = p.ordered
			p.mu.Unlock()
			if have >= n {
				return true
			}
			p.setIncomplete(fmt.Sprintf("the agent's output ended after %d messages (commands announcements not counted); the recording expects %d before the next step", have, n))
			return false
		case <-timer.C:
			p.setIncomplete(fmt.Sprintf("waited %v for agent message %d of %d (commands announcements not counted); got %d", p.timeout, n, p.script.ordered, have))
			return false
		}
	}
}

// waitCodex waits for the fake codex's progress marker; false when the step
// timed out, or when the agent went another way and answered every request
// (the fake may never get there then).
func (p *player) waitCodex(marker string) bool {
	if marker == "" {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.timeout)
	defer cancel()
	marked := make(chan bool, 1)
	go func() { marked <- p.gates.WaitMark(ctx, marker) }()
	for {
		p.mu.Lock()
		settled, why := p.settled(), p.wentAnotherWay
		p.mu.Unlock()
		if settled {
			p.setIncomplete(fmt.Sprintf("the agent went another way than recorded (%s) and answered every request; not waiting for the fake codex to reach %s", why, marker))
			return false
		}
		select {
		case ok := <-marked:
			if !ok {
				p.setIncomplete(fmt.Sprintf("waited %v for the fake codex to reach %s", p.timeout, marker))
			}
			return ok
		case <-p.arrived:
		}
	}
}

func (p *player) setIncomplete(why string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.incomplete == "" {
		p.incomplete = why
	}
}

// play sends the editor's messages at their recorded points.
func (p *player) play() {
	closed := false
	for _, a := range p.script.actions {
		if !p.waitFor(a.after) || !p.waitCodex(a.codex) {
			return
		}
		if a.eof {
			p.writeMu.Lock()
			p.stdin.Close()
			p.writeMu.Unlock()
			closed = true
			continue
		}
		p.recreateStored(a.stored)
		msg := a.msg
		var m message
		p.mu.Lock()
		for rec, live := range p.sessions {
			msg = bytes.ReplaceAll(msg, []byte(`"`+rec+`"`), []byte(`"`+live+`"`))
		}
		if json.Unmarshal(msg, &m) == nil && m.isRequest() {
			p.sent[string(m.ID)] = msg
		}
		p.mu.Unlock()
		p.write(msg)
	}
	if !closed {
		// The recording ended with the editor still connected.
		p.waitFor(len(p.script.outs))
	}
}

// stop ends the agent: its input closes (if the recording did not close it
// already), it gets time to finish, then it is killed.
func (p *player) stop() {
	p.writeMu.Lock()
	p.stdin.Close()
	p.writeMu.Unlock()
	// The agent's output ends when it exits; only then may Wait close the pipe.
	select {
	case <-p.readerDone:
	case <-time.After(p.timeout):
		p.cmd.Process.Kill()
		<-p.readerDone
		// Said even when the replay stopped early for another reason.
		p.mu.Lock()
		p.incomplete = strings.TrimPrefix(p.incomplete+"; the agent did not exit after its input closed", "; ")
		p.mu.Unlock()
	}
	p.cmd.Wait()
}

// resultMismatchPrefix names the files in which the fake codex reports a tool
// result that differs from the recorded one (fakecodex's
// ResultMismatchPrefix): tool-result-<transcript position of the call>.
const resultMismatchPrefix = "tool-result-"

// toolResultMismatches reads the fake codex's reports of tool results that
// differ from the recording, in transcript order. Every fake has exited:
// the agent waits for its codex processes before it exits.
func toolResultMismatches(state string) ([]string, error) {
	des, err := os.ReadDir(state)
	if err != nil {
		return nil, err
	}
	type report struct {
		index int
		text  string
	}
	var reports []report
	for _, de := range des {
		rest, ok := strings.CutPrefix(de.Name(), resultMismatchPrefix)
		index, err := strconv.Atoi(rest)
		if !ok || err != nil {
			continue // not a report, or one being written (.tmp)
		}
		b, err := os.ReadFile(filepath.Join(state, de.Name()))
		if err != nil {
			return nil, err
		}
		reports = append(reports, report{index, strings.TrimSpace(string(b))})
	}
	slices.SortFunc(reports, func(a, b report) int { return a.index - b.index })
	out := make([]string, len(reports))
	for i, r := range reports {
		out[i] = r.text
	}
	return out, nil
}
