package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codexacp/codexacp/codex/appserver"
	"github.com/codexacp/codexacp/e2e/replay/gates"
	"github.com/codexacp/codexacp/internal/bearer"
	"github.com/codexacp/codexacp/record"
)

// Environment variables the fake reads.
const (
	EnvTranscript = "CODEXACP_FAKE_TRANSCRIPT"
	EnvState      = "CODEXACP_FAKE_STATE"
	EnvRoot       = "CODEXACP_FAKE_ROOT"
	EnvGates      = "CODEXACP_FAKE_GATES"
)

// versionLine is what `--version` prints for a transcript that does not
// name codex's version; the agent names its cached model catalog after the
// version.
const versionLine = "codex-cli 0.169.0+replay"

// Exit statuses besides the recorded ones.
const (
	exitInterrupted = 1 // SIGINT, as codex
	exitMismatch    = 2 // the run does not match the recording, or bad usage
)

// run is the whole program; main only wires the process to it.
func run(args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer, sigs <-chan os.Signal) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "fakecodex: "+format+"\n", a...)
		return exitMismatch
	}
	path := getenv(EnvTranscript)
	if path == "" {
		return fail("%s is not set", EnvTranscript)
	}
	load := loadTranscript
	if catalogQuestion(args) {
		load = loadStart
	}
	entries, err := load(path)
	if err != nil {
		return fail("%v", err)
	}
	switch {
	case len(args) == 1 && args[0] == "--version":
		if len(entries) > 0 && entries[0].CodexVersion != "" {
			// The recorded agent showed it (/status).
			fmt.Fprintln(stdout, "codex-cli "+entries[0].CodexVersion)
			return 0
		}
		fmt.Fprintln(stdout, versionLine)
		return 0
	case len(args) >= 2 && args[0] == "login" && args[1] == "status":
		// The recorded agent ran its sessions, so codex had a sign-in.
		fmt.Fprintln(stderr, "Logged in using ChatGPT")
		return 0
	case len(args) >= 2 && args[0] == "debug" && args[1] == "models":
		b, _ := json.Marshal(catalog(&entries[0]))
		stdout.Write(append(b, '\n'))
		return 0
	case len(args) >= 1 && args[0] == "exec":
	case len(args) >= 1 && args[0] == "app-server" && getenv(appserver.ConfigReadEnv) == "1":
		return answerConfigRead(entries, getenv(EnvState), stdin, stdout)
	case len(args) >= 1 && args[0] == "app-server":
		state := getenv(EnvState)
		if state == "" {
			return fail("%s is not set", EnvState)
		}
		n, err := claimRun(state)
		if err != nil {
			return fail("%v", err)
		}
		r := &replayer{stdout: stdout, stderr: stderr, root: getenv(EnvRoot), state: state}
		if err := r.dialGates(getenv(EnvGates), n); err != nil {
			return fail("%v", err)
		}
		defer r.closeGates()
		return runAppServer(entries, n, r, stdin, sigs)
	default:
		return fail("unsupported arguments %q", args)
	}

	ex, err := parseExec(args[1:])
	if err != nil {
		return fail("%v", err)
	}
	state := getenv(EnvState)
	if state == "" {
		return fail("%s is not set", EnvState)
	}
	// The run is numbered once its prompt has come: the agent starts codex
	// ahead of the prompt, and may end one that never gets a prompt.
	prompt, err := io.ReadAll(stdin) // codex reads the whole prompt first
	if err != nil {
		return fail("reading the prompt: %v", err)
	}
	n, err := claimRun(state)
	if err != nil {
		return fail("%v", err)
	}
	p, err := planRun(entries, n)
	if err != nil {
		return fail("%v", err)
	}
	if ex.prompt != "" {
		prompt = []byte(ex.prompt)
	}
	if err := p.check(ex, string(prompt)); err != nil {
		return fail("run %d: %v", n, err)
	}
	r := &replayer{stdout: stdout, stderr: stderr, root: getenv(EnvRoot), state: state}
	if err := r.dialGates(getenv(EnvGates), n); err != nil {
		return fail("%v", err)
	}
	defer r.closeGates()
	return r.replay(p, ex, getenv, sigs)
}

// catalog is codex's model catalog as the recording agent knew it: the
// models the start entry lists, in their order (codex's default first),
// with their context windows and reasoning efforts, so that the agent
// offers the same model picker and reports the same usage_update sizes.
// A transcript without models gets one model of the recorded context
// window.
func catalog(start *record.Entry) map[string]any {
	if len(start.Models) == 0 {
		return map[string]any{"models": []map[string]any{{
			"slug":                  "replay",
			"display_name":          "replay",
			"context_window":        start.ContextWindow,
			"priority":              0,
			"visibility":            "list",
			"apply_patch_tool_type": "freeform",
		}}}
	}
	models := make([]map[string]any, 0, len(start.Models))
	for i, m := range start.Models {
		efforts := make([]map[string]string, 0, len(m.Efforts))
		for _, e := range m.Efforts {
			efforts = append(efforts, map[string]string{"effort": e})
		}
		tiers := make([]map[string]string, 0, len(m.ServiceTiers))
		for _, t := range m.ServiceTiers {
			tiers = append(tiers, map[string]string{"id": t.ID, "name": t.Name, "description": t.Description})
		}
		models = append(models, map[string]any{
			"service_tiers":              tiers,
			"slug":                       m.Slug,
			"display_name":               m.Name,
			"description":                m.Description,
			"context_window":             m.ContextWindow,
			"priority":                   i,
			"visibility":                 "list",
			"default_reasoning_level":    m.DefaultEffort,
			"supported_reasoning_levels": efforts,
			"apply_patch_tool_type":      "freeform",
		})
	}
	return map[string]any{"models": models}
}

// catalogQuestion reports whether args ask what the start entry alone
// answers: --version, login status, debug models.
func catalogQuestion(args []string) bool {
	return len(args) == 1 && args[0] == "--version" ||
		len(args) >= 2 && (args[0] == "login" && args[1] == "status" || args[0] == "debug" && args[1] == "models")
}

// loadStart reads the transcript's start entry alone: its first line and
// the blob lines right after it, where a catalog's models are stored (the
// whole transcript when they do not read on their own). The agent asks
// the catalog questions in every replay, and reading and decoding a whole
// transcript was a third of such a process's CPU.
func loadStart(path string) ([]record.Entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	var head bytes.Buffer
	for {
		line, err := br.ReadBytes('\n')
		var kind struct {
			Kind string `json:"kind"`
		}
		if head.Len() > 0 && (json.Unmarshal(line, &kind) != nil || kind.Kind != record.KindBlob) {
			break
		}
		head.Write(line)
		if err != nil {
			break
		}
	}
	if entries, err := record.Read(&head); err == nil && len(entries) > 0 && entries[0].Kind == record.KindStart {
		return entries[:1], nil
	}
	return loadTranscript(path)
}

func loadTranscript(path string) ([]record.Entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return record.Read(f)
}

// execArgs is what the fake needs from an `exec` command line.
type execArgs struct {
	resume   bool
	threadID string
	sandbox  string   // -s / --sandbox
	model    string   // -m / --model
	config   []string // -c values
	prompt   string   // a prompt given in argv rather than as "-" on stdin
}

// valueFlags are codex exec options that take a value.
var valueFlags = map[string]bool{
	"-C": true, "--cd": true, "-s": true, "--sandbox": true, "-m": true, "--model": true,
	"-c": true, "--config": true, "-p": true, "--profile": true, "--add-dir": true,
	"-o": true, "--output-last-message": true, "--output-schema": true, "--color": true,
	// exec review's: what to review (the fake replays the recorded review
	// whatever it names).
	"--base": true, "--commit": true, "--title": true,
	"--enable": true, "--disable": true,
}

// parseExec reads `exec` arguments as codex does:
// [options] [resume [options] <thread>] <prompt or ->.
func parseExec(args []string) (execArgs, error) {
	var ex execArgs
	var positional []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-" || !strings.HasPrefix(a, "-"):
			positional = append(positional, a)
		case strings.Contains(a, "=") && strings.HasPrefix(a, "--"):
			name, value, _ := strings.Cut(a, "=")
			switch name {
			case "--config":
				ex.config = append(ex.config, value)
			case "--sandbox":
				ex.sandbox = value
			case "--model":
				ex.model = value
			}
		case valueFlags[a]:
			if i+1 >= len(args) {
				return ex, fmt.Errorf("exec: %s needs a value", a)
			}
			i++
			switch a {
			case "-c", "--config":
				ex.config = append(ex.config, args[i])
			case "-s", "--sandbox":
				ex.sandbox = args[i]
			case "-m", "--model":
				ex.model = args[i]
			}
		}
	}
	if len(positional) > 0 && positional[0] == "resume" {
		ex.resume = true
		positional = positional[1:]
		if len(positional) == 0 {
			return ex, errors.New("exec resume: no thread id")
		}
		ex.threadID = positional[0]
		positional = positional[1:]
	}
	switch len(positional) {
	case 0:
		return ex, errors.New("exec: no prompt (want - to read it from stdin)")
	case 1:
		if positional[0] != "-" {
			ex.prompt = positional[0]
		}
	default:
		return ex, fmt.Errorf("exec: unexpected arguments %q", positional[1:])
	}
	return ex, nil
}

var (
	mcpURL      = regexp.MustCompile(`\burl\s*=\s*"([^"]*)"`)
	mcpTokenVar = regexp.MustCompile(`\bbearer_token_env_var\s*=\s*"([^"]*)"`)
)

// mcpServer returns the URL of the agent's embedded server (mcp_servers.acp)
// and the variable holding its bearer token, "" when not configured.
func (ex execArgs) mcpServer() (url, tokenVar string) {
	for _, kv := range ex.config {
		key, value, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(key) != "mcp_servers.acp" {
			continue
		}
		if m := mcpURL.FindStringSubmatch(value); m != nil {
			url = m[1]
		}
		if m := mcpTokenVar.FindStringSubmatch(value); m != nil {
			tokenVar = m[1]
		}
	}
	return url, tokenVar
}

// toolServer is the agent's embedded server as codex reaches it: over HTTP
// (mcpServer) or through the agent's relay, a stdio server.
func (ex execArgs) toolServer(getenv func(string) string) (mcpServer, bool) {
	if url, tokenVar := ex.mcpServer(); url != "" {
		return mcpServer{url: url, token: getenv(tokenVar)}, true
	}
	for _, kv := range ex.config {
		if key, value, ok := strings.Cut(kv, "="); ok && strings.TrimSpace(key) == "mcp_servers.acp" {
			return execStdioServer(value, getenv)
		}
	}
	return mcpServer{}, false
}

// claimRun numbers this process among the runs of one replay: the first
// exec (or app-server) is run 1. Concurrent claims get distinct numbers
// (O_EXCL).
func claimRun(state string) (int, error) { return claimCounter(state, "run") }

// claimCounter takes the next number of the counter called name in the
// state directory (1, 2, …), shared by every fake process of the replay.
func claimCounter(state, name string) (int, error) {
	for n := 1; ; n++ {
		f, err := os.OpenFile(filepath.Join(state, fmt.Sprintf("%s-%d", name, n)), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			f.Close()
			return n, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return 0, fmt.Errorf("counting %ss: %w", name, err)
		}
	}
}

// plan is one recorded run.
type plan struct {
	run   int
	start *record.Entry
	steps []step        // lines, files and tool calls, in recorded order
	exit  *record.Entry // nil when the recording ended during the run
	// results are the recorded results of tool calls, by call id.
	results map[string]*record.Entry
}

type step struct {
	index int // position in the transcript; names the gate of a tool call
	e     *record.Entry
	// afterExit marks a rollout record the agent read after codex exited.
	afterExit bool
}

// A rollout entry is a record the agent read from the rollout (codex's,
// under its home) when it handled the codex line recorded before it, or
// after codex exited: codex had written it before printing that line. So
// it is written before that line here, or, read after the exit, once every
// line is printed and the agent has sent what it sent before reading it
// (its gate, when gated).
func planRun(entries []record.Entry, n int) (*plan, error) {
	p := &plan{run: n, results: recordedResults(entries)}
	lastLine := -1 // the step of the run's latest codex line
	for i := range entries {
		e := &entries[i]
		if e.Run != n {
			continue
		}
		switch e.Kind {
		case record.KindCodexStart:
			p.start = e
		case record.KindCodexLine, record.KindFile, record.KindMCPCall:
			p.steps = append(p.steps, step{index: i, e: e})
			if e.Kind == record.KindCodexLine {
				lastLine = len(p.steps) - 1
			}
		case record.KindRollout:
			s := step{index: i, e: e}
			if p.exit != nil || lastLine < 0 {
				s.afterExit = p.exit != nil
				p.steps = append(p.steps, s)
				continue
			}
			p.steps = slices.Insert(p.steps, lastLine, s)
			lastLine++
		case record.KindCodexExit:
			p.exit = e
		}
	}
	if p.start == nil {
		return nil, fmt.Errorf("the transcript has no codex run %d", n)
	}
	return p, nil
}

// check compares the live run with the recorded one where a difference
// means the agent went another way: a new thread or a resumed one, which
// thread, the sandbox (a mode mapped wrongly would let shell commands
// write), the model, and the prompt.
func (p *plan) check(live execArgs, prompt string) error {
	rec, err := parseExec(stripExec(p.start.Args))
	if err != nil {
		return fmt.Errorf("recorded arguments: %w", err)
	}
	switch {
	case rec.resume != live.resume:
		return fmt.Errorf("recorded resume=%v, got resume=%v", rec.resume, live.resume)
	case rec.threadID != live.threadID:
		return fmt.Errorf("recorded thread %q, got %q", rec.threadID, live.threadID)
	case rec.sandbox != live.sandbox:
		return fmt.Errorf("recorded sandbox %q, got %q", rec.sandbox, live.sandbox)
	case rec.model != live.model:
		return fmt.Errorf("recorded model %q, got %q", rec.model, live.model)
	case !slices.Equal(policyConfig(rec.config), policyConfig(live.config)):
		return fmt.Errorf("recorded sandbox and approval settings %q, got %q", policyConfig(rec.config), policyConfig(live.config))
	case p.start.Prompt != "" && p.start.Prompt != prompt:
		return fmt.Errorf("recorded prompt %q, got %q", p.start.Prompt, prompt)
	}
	return nil
}

// policyConfig are the -c settings among config that say what codex may do
// without asking (approval_policy, sandbox_mode, sandbox_workspace_write:
// the writable roots of a mode, of additional directories and of the
// user's own settings), in order.
func policyConfig(config []string) []string {
	var out []string
	for _, kv := range config {
		key, _, _ := strings.Cut(kv, "=")
		if key = strings.TrimSpace(key); key == "approval_policy" || strings.HasPrefix(key, "sandbox_") {
			out = append(out, kv)
		}
	}
	return out
}

func stripExec(args []string) []string {
	if len(args) > 0 && args[0] == "exec" {
		return args[1:]
	}
	return args
}

// replayer plays one run.
type replayer struct {
	stdout, stderr io.Writer
	root           string
	state          string
	gates          *gates.Client // nil without a harness to keep in step with
}

// dialGates connects to the replay harness at addr (CODEXACP_FAKE_GATES;
// "" for none) and marks run n started.
func (r *replayer) dialGates(addr string, n int) error {
	if addr == "" {
		return nil
	}
	c, err := gates.Dial(addr)
	if err != nil {
		return err
	}
	r.gates = c
	r.mark(fmt.Sprintf("run-%d", n))
	return nil
}

func (r *replayer) closeGates() {
	if r.gates != nil {
		r.gates.Close()
	}
}

// maxRunTime bounds one replayed run: a fake whose agent died (and so never
// sends SIGINT or opens a gate) must not live on.
const maxRunTime = 2 * time.Minute

func (r *replayer) replay(p *plan, ex execArgs, getenv func(string) string, sigs <-chan os.Signal) int {
	ctx, cancel := context.WithTimeout(context.Background(), maxRunTime)
	defer cancel()
	var interrupted atomic.Bool
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-sigs:
			interrupted.Store(true)
			cancel()
		case <-done:
		}
	}()
	// A run recorded as cancelled prints everything codex printed before it
	// stopped; any other run stops at SIGINT, like codex.
	cancelledRun := p.exit == nil || p.exit.Cancelled

	var session *mcpsdk.ClientSession
	if srv, ok := ex.toolServer(getenv); ok {
		// Codex connects to a required server before anything else and
		// exits 1 without output when it cannot.
		// A cancelled run connects even when SIGINT came first: it still
		// prints what codex printed.
		connectCtx := ctx
		if cancelledRun {
			connectCtx = context.Background()
		}
		s, err := srv.connect(connectCtx)
		if err != nil {
			fmt.Fprintf(r.stderr, "fakecodex: MCP server acp: %v\n", err)
			return 1
		}
		session = s
		defer session.Close()
	}

	for _, s := range p.steps {
		if interrupted.Load() && !cancelledRun {
			return exitInterrupted
		}
		switch s.e.Kind {
		case record.KindCodexLine:
			line := []byte(s.e.Line)
			if len(line) == 0 {
				line = []byte(s.e.Text)
			}
			if _, err := r.stdout.Write(append(line, '\n')); err != nil {
				return exitInterrupted
			}
			if r.gates != nil {
				r.mark(fmt.Sprintf("line-%d", s.index))
			}
		case record.KindFile:
			if err := r.recreate(s.e); err != nil {
				fmt.Fprintf(r.stderr, "fakecodex: %v\n", err)
			}
		case record.KindRollout:
			if s.afterExit && r.gates != nil && !r.waitGate(ctx, s.index) {
				continue
			}
			if err := appendRollout(getenv("CODEX_HOME"), s.e); err != nil {
				fmt.Fprintf(r.stderr, "fakecodex: %v\n", err)
			}
		case record.KindMCPCall:
			if interrupted.Load() {
				continue
			}
			if session == nil {
				fmt.Fprintf(r.stderr, "fakecodex: recorded %s call, but no MCP server is configured\n", s.e.Tool)
				continue
			}
			if r.gates != nil && !r.waitGate(ctx, s.index) {
				continue
			}
			res, err := session.CallTool(ctx, &mcpsdk.CallToolParams{Name: s.e.Tool, Arguments: s.e.Arguments})
			if interrupted.Load() {
				continue // what a cancelled call returns is not compared
			}
			if err != nil {
				fmt.Fprintf(r.stderr, "fakecodex: %s call failed: %v\n", s.e.Tool, err)
			}
			if diff := checkResult(p.results[s.e.Call], res, err); diff != "" {
				r.reportMismatch(p.run, s.index, diff)
			}
		}
	}

	if cancelledRun {
		<-ctx.Done() // SIGINT, or maxRunTime
		if !interrupted.Load() {
			fmt.Fprintf(r.stderr, "fakecodex: no SIGINT within %v; giving up\n", maxRunTime)
		}
		return exitInterrupted
	}
	if interrupted.Load() {
		return exitInterrupted
	}
	if p.exit.Stderr != "" {
		fmt.Fprintln(r.stderr, p.exit.Stderr)
	}
	if p.exit.Error != "" {
		fmt.Fprintln(r.stderr, p.exit.Error)
		return 1
	}
	if p.exit.Code == nil {
		return 0
	}
	return *p.exit.Code
}

// mark tells the harness how far the run got (see CODEXACP_FAKE_GATES).
func (r *replayer) mark(name string) {
	if err := r.gates.Mark(name); err != nil {
		fmt.Fprintf(r.stderr, "fakecodex: %v\n", err)
	}
}

// waitGate waits for the harness to open the gate of the tool call at
// transcript position index; false when interrupted first.
func (r *replayer) waitGate(ctx context.Context, index int) bool {
	return r.gates.Wait(ctx, fmt.Sprintf("gate-%d", index))
}

// recreate puts a file back in the state the recording found it in, when it
// lies under the replay root (never anywhere else on this machine).
func (r *replayer) recreate(e *record.Entry) error {
	if r.root == "" {
		return nil
	}
	rel, err := filepath.Rel(r.root, e.Path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return fmt.Errorf("not recreating %s: outside the replay root", e.Path)
	}
	switch {
	case e.IsDir:
		return os.MkdirAll(e.Path, 0o755)
	case !e.Exists:
		if e.ParentExists {
			if err := os.MkdirAll(filepath.Dir(e.Path), 0o755); err != nil {
				return err
			}
		}
		if err := os.Remove(e.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	case e.Omitted:
		return fmt.Errorf("not recreating %s: its content (%d bytes) was not recorded", e.Path, e.Size)
	}
	var data []byte
	switch {
	case e.Content != nil:
		data = []byte(*e.Content)
	case e.Base64 != "":
		if data, err = base64.StdEncoding.DecodeString(e.Base64); err != nil {
			return fmt.Errorf("%s: %w", e.Path, err)
		}
	}
	mode := fs.FileMode(e.Mode)
	if mode == 0 {
		mode = 0o644
	}
	if err := os.MkdirAll(filepath.Dir(e.Path), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(e.Path, data, mode); err != nil {
		return err
	}
	return os.Chmod(e.Path, mode) // WriteFile keeps the mode of an existing file
}

// appendRollout appends a rollout record to the thread's rollout as codex
// does, when the file lies in codex's home (never anywhere else).
func appendRollout(codexHome string, e *record.Entry) error {
	if codexHome == "" {
		return fmt.Errorf("not writing the rollout %s: CODEX_HOME is not set", e.Path)
	}
	if rel, err := filepath.Rel(codexHome, e.Path); err != nil || !filepath.IsLocal(rel) {
		return fmt.Errorf("not writing the rollout %s: outside CODEX_HOME", e.Path)
	}
	line := []byte(e.Line)
	if len(line) == 0 {
		line = []byte(e.Text)
	}
	if err := os.MkdirAll(filepath.Dir(e.Path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(e.Path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(append(line, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// connect opens an MCP session on the agent's embedded server as codex does:
// streamable HTTP with the bearer token on every request.
func connect(ctx context.Context, url, token string) (*mcpsdk.ClientSession, error) {
	client := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "fakecodex", Version: "replay"}, nil)
	transport := &mcpsdk.StreamableClientTransport{
		Endpoint:             url,
		HTTPClient:           bearer.Client(token),
		MaxRetries:           -1,
		DisableStandaloneSSE: true,
	}
	return client.Connect(ctx, transport, nil)
}
