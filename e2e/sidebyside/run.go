//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/e2e/mockapi"
)

// Metric keys, in table order.
const (
	mInitialize  = "initialize"
	mSessionNew  = "session/new"
	mFirstTurn   = "first turn"
	mWarmTurn    = "warm text turn"
	mFirstChunk  = "prompt → first chunk (warm)"
	mFirstChunk1 = "prompt → first chunk (first turn)"
	mFirstReq    = "prompt → model request (warm)"
	mTwoTurns    = "session/new + 2 turns"
	mShellTurn   = "shell turn"
	mEditTurn    = "edit turn"
	mChunks      = "message chunks (warm turn)"
	mAgentRSS    = "peak RSS, agent"
	mTreeRSS     = "peak RSS, process tree"
	mTreePss     = "peak PSS, process tree"
	mTreeProcs   = "processes in tree (max)"
	mExit        = "stdin closed → exit"
)

var metricOrder = []string{
	mInitialize, mSessionNew, mFirstTurn, mWarmTurn, mFirstReq, mFirstChunk1, mFirstChunk, mTwoTurns, mShellTurn, mEditTurn,
	mColdStart, mColdReq, mColdPrompt, mPacedReq, mPacedChunk, mCancelSent, mCancelReq, mShellBig,
	mChunks, mAgentRSS, mTreeRSS, mTreePss, mTreeProcs, mExit,
}

// metricUnit is "ms", "MiB" or "" (a count).
func metricUnit(m string) string {
	switch m {
	case mAgentRSS, mTreeRSS, mTreePss:
		return "MiB"
	case mChunks, mTreeProcs:
		return ""
	case mCancelSent:
		return "k/n"
	}
	return "ms"
}

// sample is what one run of one candidate measured. A metric missing from
// Values was not measured; NA says why.
type sample struct {
	Values map[string]float64 `json:"values"`
	NA     map[string]string  `json:"na,omitempty"`
	Notes  []string           `json:"notes,omitempty"`
	// Mem is the process tree at its peak, by process label (MiB, and
	// "… processes" counts).
	Mem map[string]float64 `json:"mem,omitempty"`
	// Waits are codexacp's log milestones around a cold and a paced first
	// prompt (-waits): ms from the prompt.
	Waits map[string]map[string]float64 `json:"waits,omitempty"`
	Err   string                        `json:"error,omitempty"`
}

func newSample() *sample {
	return &sample{Values: map[string]float64{}, NA: map[string]string{}}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// home is one candidate's isolated CODEX_HOME (HOME and XDG inside it),
// kept across its runs like a user's machine.
type home struct {
	dir string
}

// runner holds what all runs share.
type runner struct {
	paths   paths
	gap     time.Duration
	every   time.Duration // memory sampling interval
	timeout time.Duration // per turn
	verbose bool
	tmp     string        // parent of every temporary directory
	bigRepo string        // the repository of the large shell turn ("": not run)
	cold    bool          // run the cold start case
	waits   bool          // keep codexacp's log timeline in the cold cases
	cancel  time.Duration // the cancel case's session/cancel after the prompt (0: not run)
	seq     int
	log     io.Writer
}

func (r *runner) logf(format string, args ...any) {
	if r.verbose {
		fmt.Fprintf(r.log, format+"\n", args...)
	}
}

// workspace makes a fresh workspace with the file the edit turn changes.
func (r *runner) workspace() (cwd, file string, err error) {
	cwd, err = os.MkdirTemp(r.tmp, "ws-")
	if err != nil {
		return "", "", err
	}
	if cwd, err = filepath.EvalSymlinks(cwd); err != nil {
		return "", "", err
	}
	file = filepath.Join(cwd, "notes.txt")
	return cwd, file, os.WriteFile(file, []byte("[server]\nport = 8080\n"), 0o644)
}

const (
	editOld = "port = 8080"
	editNew = "port = 3000"
)

// runOne runs candidate c once in h and returns what it measured.
func (r *runner) runOne(c candidate, h home) *sample {
	s := newSample()
	r.seq++
	marker := markerPrefix() + strconv.Itoa(r.seq)
	m, err := startModel()
	if err != nil {
		s.Err = err.Error()
		return s
	}
	defer m.Close()
	cwd, file, err := r.workspace()
	if err != nil {
		s.Err = err.Error()
		return s
	}
	defer os.RemoveAll(cwd)
	env := isolatedEnv(h.dir, r.paths.bwrapDir, marker)
	if c.Raw {
		err = r.runRaw(s, m, env, cwd, file)
	} else {
		err = r.runACP(c, s, m, env, cwd, file)
		if err == nil && r.cold {
			err = r.runCold(c, s, env, cwd, 0)
		}
		if err == nil && r.cold {
			err = r.runCold(c, s, env, cwd, r.gap)
		}
		if err == nil && r.cold && r.cancel > 0 {
			err = r.runCancel(c, s, env, cwd, r.cancel)
		}
	}
	if err != nil {
		s.Err = err.Error()
	}
	// Every process the run started carries the marker; none may remain.
	time.Sleep(100 * time.Millisecond)
	if left := reapLeftovers(func(kv string) bool { return kv == marker }); len(left) > 0 {
		s.Notes = append(s.Notes, "left running after the agent exited (killed): "+strings.Join(left, "; "))
	}
	if u := m.Unscripted(); len(u) > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("%d model requests without a scripted answer: %q", len(u), u))
	}
	if n := m.titleCount.Load(); n > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("%d title request(s) answered outside the script", n))
	}
	return s
}

// stderrTail keeps the last max bytes (default 64 KiB) an agent wrote to
// stderr.
type stderrTail struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (t *stderrTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	limit := t.max
	if limit == 0 {
		limit = 64 << 10
	}
	if len(t.buf) > limit {
		t.buf = t.buf[len(t.buf)-limit:]
	}
	return len(p), nil
}

func (t *stderrTail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// exitWait is how long an agent has to exit after its stdin closed (and
// again after SIGTERM).
const exitWait = 5 * time.Second

// runACP drives one ACP agent through initialize, session/new and the four
// turns, then closes its stdin and waits for it to exit.
func (r *runner) runACP(c candidate, s *sample, m *model, env []string, cwd, file string) (err error) {
	argv, extra, err := c.command(r.paths, m.URL())
	if err != nil {
		return err
	}
	stderr := &stderrTail{}
	agent, err := startAgentProc(argv, append(env, extra...), cwd, stderr)
	if err != nil {
		return err
	}
	pid, stdin, exited := agent.pid, agent.stdin, agent.exited
	sampler := startSampler(pid, r.every)
	stopped := false
	defer func() {
		if !stopped {
			sampler.Stop(pid)
		}
		// An editor ends an agent by closing its stdin; one that is still
		// there after exitWait gets SIGTERM, then its process group SIGKILL.
		children := snapshot(pid)
		closed := time.Now()
		stdin.Close()
		select {
		case <-exited:
			if stopped {
				s.Values[mExit] = ms(time.Since(closed))
			}
		case <-time.After(exitWait):
			_ = syscall.Kill(pid, syscall.SIGTERM)
			s.NA[mExit] = fmt.Sprintf("still running %s after its stdin closed (then SIGTERM)", exitWait)
			select {
			case <-exited:
				s.Notes = append(s.Notes, fmt.Sprintf("still running %s after its stdin closed; exited on SIGTERM", exitWait))
			case <-time.After(exitWait):
				s.Notes = append(s.Notes, fmt.Sprintf("still running %s after its stdin closed and %[1]s after SIGTERM; process group killed", exitWait))
				_ = syscall.Kill(-pid, syscall.SIGKILL)
				<-exited
			}
		}
		time.Sleep(100 * time.Millisecond)
		if left := survivors(children); len(left) > 0 {
			s.Notes = append(s.Notes, "its processes outlived it (killed): "+strings.Join(left, "; "))
		}
		if err != nil {
			tail := stderr.String()
			if len(tail) > 4000 {
				tail = tail[len(tail)-4000:]
			}
			err = fmt.Errorf("%w\nagent stderr (tail):\n%s", err, tail)
		}
	}()

	ed := connectEditor(stdin, agent.stdout)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	t0 := time.Now()
	initResp, err := ed.initialize(ctx)
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	s.Values[mInitialize] = ms(time.Since(t0))
	r.logf("  initialize: protocol %d, auth methods %d", initResp.ProtocolVersion, len(initResp.AuthMethods))

	t0 = time.Now()
	sess, err := ed.conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: cwd, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		return fmt.Errorf("session/new: %w", err)
	}
	newDur := time.Since(t0)
	s.Values[mSessionNew] = ms(newDur)
	if sess.Modes != nil {
		var ids []string
		for _, md := range sess.Modes.AvailableModes {
			ids = append(ids, string(md.Id))
		}
		r.logf("  modes %v, current %s", ids, sess.Modes.CurrentModeId)
	}
	if c.Mode != "" {
		if _, err := ed.conn.SetSessionMode(ctx, acpsdk.SetSessionModeRequest{SessionId: sess.SessionId, ModeId: acpsdk.SessionModeId(c.Mode)}); err != nil {
			return fmt.Errorf("session/set_mode %s: %w", c.Mode, err)
		}
	}

	var firstReq time.Duration // of the last turn
	sid := sess.SessionId      // the session turn prompts
	// turn sends one prompt after the idle gap and times it; the agent's
	// message text must be answer, the scripted model's last message.
	turn := func(text, answer string, script ...mockapi.Response) (d, first time.Duration, chunks int, err error) {
		time.Sleep(r.gap)
		m.waitTitlesIdle(10 * time.Second)
		m.main.Enqueue(script...)
		tctx, tcancel := context.WithTimeout(ctx, r.timeout)
		defer tcancel()
		start := ed.startTurn()
		resp, err := ed.conn.Prompt(tctx, acpsdk.PromptRequest{SessionId: sid, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock(text)}})
		d = time.Since(start)
		if err != nil {
			return 0, 0, 0, fmt.Errorf("prompt %q: %w", text, err)
		}
		if resp.StopReason != acpsdk.StopReasonEndTurn {
			return 0, 0, 0, fmt.Errorf("prompt %q: stop reason %s", text, resp.StopReason)
		}
		if n := m.main.Pending(); n != 0 {
			return 0, 0, 0, fmt.Errorf("prompt %q answered with %d scripted responses unused", text, n)
		}
		fc, chunks, texts, kinds := ed.turnObservations()
		if said := strings.Join(texts, ""); said != answer {
			s.Notes = append(s.Notes, fmt.Sprintf("prompt %q: the agent's message chunks say %q, the model said %q", text, said, answer))
		}
		reqs := m.requestsSince(start)
		if len(reqs) > 0 {
			firstReq = reqs[0]
		}
		perms, fs := ed.requestCounts()
		r.logf("  %q: %.1f ms, model requests at %v, updates %v, message chunks %q; so far %d permission and %d fs requests",
			text, ms(d), reqs, kinds, texts, perms, fs)
		if !fc.IsZero() {
			first = fc.Sub(start)
		}
		return d, first, chunks, nil
	}

	d, first, _, err := turn("say something", "first answer", mockapi.Reply(mockapi.Message("first answer")))
	if err != nil {
		return err
	}
	s.Values[mFirstTurn] = ms(d)
	setFirst(s, mFirstChunk1, first)
	tools := offeredTools(m.main.Requests()[0])
	r.logf("  tools offered: %v", tools)

	d2, first, chunks, err := turn("say something again", "warm answer", mockapi.Reply(mockapi.Message("warm answer")))
	if err != nil {
		return err
	}
	s.Values[mWarmTurn] = ms(d2)
	s.Values[mFirstReq] = ms(firstReq)
	s.Values[mTwoTurns] = ms(newDur + d + d2)
	s.Values[mChunks] = float64(chunks)
	setFirst(s, mFirstChunk, first)

	shell, err := shellCall(tools, "call_shell")
	if err != nil {
		s.NA[mShellTurn] = err.Error()
	} else {
		d, _, _, err := turn("run echo x", "it printed x", mockapi.Reply(shell), mockapi.Reply(mockapi.Message("it printed x")))
		if err != nil {
			return err
		}
		if out, ok := callOutput(m.main.Requests(), "call_shell"); !ok || !strings.Contains(out, "x") {
			return fmt.Errorf("shell turn: the model got %q", out)
		}
		s.Values[mShellTurn] = ms(d)
	}

	var edit mockapi.Item
	if c.ACPEdit {
		edit = acpEditCall("call_edit", file, editOld, editNew)
	} else if edit, err = applyPatchCall(tools, "call_edit", file, editOld, editNew); err != nil {
		s.NA[mEditTurn] = err.Error()
	}
	if edit != nil {
		d, _, _, err := turn("change the port to 3000", "changed it", mockapi.Reply(edit), mockapi.Reply(mockapi.Message("changed it")))
		if err != nil {
			return err
		}
		if b, _ := os.ReadFile(file); !bytes.Contains(b, []byte(editNew)) {
			out, _ := callOutput(m.main.Requests(), "call_edit")
			return fmt.Errorf("edit turn: the file is %q; the model got %q", b, out)
		}
		s.Values[mEditTurn] = ms(d)
	}
	if r.bigRepo != "" && s.NA[mShellTurn] == "" {
		// A second session in a large repository: a text turn (not
		// counted: the thread's start), then the shell turn.
		big, err := ed.conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: r.bigRepo, McpServers: []acpsdk.McpServer{}})
		if err != nil {
			return fmt.Errorf("session/new in the large repository: %w", err)
		}
		if c.Mode != "" {
			if _, err := ed.conn.SetSessionMode(ctx, acpsdk.SetSessionModeRequest{SessionId: big.SessionId, ModeId: acpsdk.SessionModeId(c.Mode)}); err != nil {
				return fmt.Errorf("session/set_mode %s: %w", c.Mode, err)
			}
		}
		sid = big.SessionId
		if _, _, _, err := turn("say something", "big answer", mockapi.Reply(mockapi.Message("big answer"))); err != nil {
			return err
		}
		d, _, _, err := turn("run echo x", "it printed x", mockapi.Reply(shell), mockapi.Reply(mockapi.Message("it printed x")))
		if err != nil {
			return err
		}
		s.Values[mShellBig] = ms(d)
	}
	m.waitTitlesIdle(10 * time.Second)
	if perms, _ := ed.requestCounts(); perms > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("the agent asked %d permission requests (each allowed once)", perms))
	}

	agentPeak, _ := statusKB(pid, "VmHWM")
	peaks := sampler.Stop(pid)
	stopped = true
	for _, c := range sampler.Seen() {
		r.logf("  child %s", c)
	}
	s.Values[mAgentRSS] = float64(max(agentPeak, peaks.root)) / 1024
	setMemPeaks(s, peaks)
	s.Mem = memBreakdown(sampler.Parts())
	r.logMem(s.Mem)
	return nil
}

// setMemPeaks stores the tree's peaks (MiB) in s.
func setMemPeaks(s *sample, p memPeaks) {
	s.Values[mTreeRSS] = float64(p.tree) / 1024
	if p.treePss > 0 {
		s.Values[mTreePss] = float64(p.treePss) / 1024
	} else {
		s.NA[mTreePss] = "no /proc/PID/smaps_rollup"
	}
	s.Values[mTreeProcs] = float64(p.procs)
}

// logMem logs (-v) the tree at its peak by process label, largest first.
func (r *runner) logMem(mem map[string]float64) {
	for _, line := range memLines(mem) {
		r.logf("  at the peak: %s", line)
	}
}

// memBreakdown turns the sampler's peak parts into MiB by label.
func memBreakdown(parts map[string]memPart) map[string]float64 {
	out := map[string]float64{}
	for label, p := range parts {
		out[label] = float64(p.KiB) / 1024
		out[label+" anon"] = float64(p.AnonKiB) / 1024
		out[label+" pss"] = float64(p.PssKiB) / 1024
		out[label+" processes"] = float64(p.Procs)
	}
	return out
}

func setFirst(s *sample, key string, d time.Duration) {
	if d == 0 {
		s.NA[key] = "no agent_message_chunk"
		return
	}
	s.Values[key] = ms(d)
}

// callOutput finds what a tool call returned to the model (function or
// custom tool output).
func callOutput(reqs []mockapi.Request, callID string) (string, bool) {
	for _, r := range reqs {
		for _, item := range r.Input() {
			typ, _ := item["type"].(string)
			if item["call_id"] != callID || !strings.HasSuffix(typ, "_output") {
				continue
			}
			if s, ok := item["output"].(string); ok {
				return s, true
			}
			b, _ := json.Marshal(item["output"])
			return string(b), true
		}
	}
	return "", false
}

// rawTurn is one `codex exec` process: spawn → turn.completed.
type rawTurn struct {
	d, first time.Duration
	firstReq time.Duration // spawn → first model request
	thread   string
	peaks    memPeaks
}

func (r *runner) rawExec(m *model, env []string, cwd, thread, prompt string, script ...mockapi.Response) (t rawTurn, err error) {
	time.Sleep(r.gap)
	m.main.Enqueue(script...)
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.paths.codex, rawArgs(cwd, thread, m.URL())...)
	cmd.Env = env
	cmd.Dir = cwd
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stdin = strings.NewReader(prompt)
	stderr := &stderrTail{}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return rawTurn{}, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return rawTurn{}, err
	}
	pid := cmd.Process.Pid
	sampler := startSampler(pid, r.every)
	defer func() {
		reqs := m.requestsSince(start)
		if len(reqs) > 0 {
			t.firstReq = reqs[0]
		}
		r.logf("  %q: %.1f ms, model requests at %v", prompt, ms(t.d), reqs)
	}()
	completed := false
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var ev struct {
			Type     string `json:"type"`
			ThreadID string `json:"thread_id"`
			Item     struct {
				Type string `json:"type"`
			} `json:"item"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		switch {
		case ev.Type == "thread.started":
			t.thread = ev.ThreadID
		case ev.Type == "item.completed" && ev.Item.Type == "agent_message" && t.first == 0:
			t.first = time.Since(start)
		case ev.Type == "turn.completed":
			t.d = time.Since(start)
			completed = true
		}
	}
	// The last sample before the process is reaped holds its high-water mark.
	t.peaks = sampler.Stop(pid)
	werr := cmd.Wait()
	_ = syscall.Kill(-pid, syscall.SIGKILL) // nothing of the turn outlives it
	if !completed {
		return t, fmt.Errorf("codex exec: no turn.completed (%v): %s", werr, lastLines(stderr.String(), 20))
	}
	if n := m.main.Pending(); n != 0 {
		return t, fmt.Errorf("codex exec: %d scripted responses unused", n)
	}
	if thread == "" && t.thread == "" {
		return t, errors.New("codex exec: no thread.started")
	}
	return t, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// runRaw runs the same four turns as raw `codex exec` processes.
func (r *runner) runRaw(s *sample, m *model, env []string, cwd, file string) error {
	var peaks memPeaks
	note := func(t rawTurn) {
		peaks.root, peaks.tree, peaks.treePss = max(peaks.root, t.peaks.root), max(peaks.tree, t.peaks.tree), max(peaks.treePss, t.peaks.treePss)
		peaks.procs = max(peaks.procs, t.peaks.procs)
	}
	t1, err := r.rawExec(m, env, cwd, "", "say something", mockapi.Reply(mockapi.Message("first answer")))
	if err != nil {
		return err
	}
	note(t1)
	s.Values[mFirstTurn] = ms(t1.d)
	setFirst(s, mFirstChunk1, t1.first)
	s.NA[mInitialize], s.NA[mSessionNew], s.NA[mExit] = "no ACP", "no ACP", "no ACP"
	s.NA[mColdStart], s.NA[mColdPrompt], s.NA[mColdReq] = "no ACP", "no ACP", "no ACP"
	s.NA[mPacedChunk], s.NA[mPacedReq] = "no ACP", "no ACP"
	s.NA[mCancelSent], s.NA[mCancelReq] = "no ACP", "no ACP"
	s.NA[mShellBig] = "not run (a thread per process)"
	tools := offeredTools(m.main.Requests()[0])
	r.logf("  tools offered: %v", tools)
	thread := t1.thread

	t2, err := r.rawExec(m, env, cwd, thread, "say something again", mockapi.Reply(mockapi.Message("warm answer")))
	if err != nil {
		return err
	}
	note(t2)
	s.Values[mWarmTurn] = ms(t2.d)
	s.Values[mFirstReq] = ms(t2.firstReq)
	setFirst(s, mFirstChunk, t2.first)
	s.Values[mTwoTurns] = ms(t1.d + t2.d)
	s.NA[mChunks] = "exec JSONL has whole messages only"

	if shell, err := shellCall(tools, "call_shell"); err != nil {
		s.NA[mShellTurn] = err.Error()
	} else {
		t, err := r.rawExec(m, env, cwd, thread, "run echo x", mockapi.Reply(shell), mockapi.Reply(mockapi.Message("it printed x")))
		if err != nil {
			return err
		}
		note(t)
		if out, ok := callOutput(m.main.Requests(), "call_shell"); !ok || !strings.Contains(out, "x") {
			return fmt.Errorf("shell turn: the model got %q", out)
		}
		s.Values[mShellTurn] = ms(t.d)
	}

	if edit, err := applyPatchCall(tools, "call_edit", file, editOld, editNew); err != nil {
		s.NA[mEditTurn] = err.Error()
	} else {
		t, err := r.rawExec(m, env, cwd, thread, "change the port to 3000", mockapi.Reply(edit), mockapi.Reply(mockapi.Message("changed it")))
		if err != nil {
			return err
		}
		note(t)
		if b, _ := os.ReadFile(file); !bytes.Contains(b, []byte(editNew)) {
			out, _ := callOutput(m.main.Requests(), "call_edit")
			return fmt.Errorf("edit turn: the file is %q; the model got %q", b, out)
		}
		s.Values[mEditTurn] = ms(t.d)
	}
	s.Values[mAgentRSS] = float64(peaks.root) / 1024
	setMemPeaks(s, peaks)
	return nil
}
