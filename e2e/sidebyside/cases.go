//go:build unix

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/e2e/mockapi"
)

// The cases beyond runACP's four turns: a cold start (a fresh agent asked
// right after session/new), a shell turn in a repository of many files,
// and the busy workers of a loaded run.

// busyVar set in its environment makes this program a busy worker: it
// spins on one CPU until killed.
const busyVar = "CODEXACP_SIDEBYSIDE_BUSY"

// busyMain spins when this process is a busy worker; it returns otherwise.
func busyMain() {
	if os.Getenv(busyVar) != "1" {
		return
	}
	x := uint64(1)
	for {
		x = x*6364136223846793005 + 1442695040888963407 // never ends: killed by the bench
		if x == 0 {
			fmt.Print("")
		}
	}
}

// load is a set of busy worker processes.
type load struct {
	procs []*exec.Cmd
}

// startLoad starts n busy workers (this program, re-run), each spinning on
// one CPU, tagged with the run's marker so that none can be left behind.
func startLoad(n int) (*load, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	l := &load{}
	for range n {
		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), busyVar+"=1", markerPrefix()+"busy")
		if err := cmd.Start(); err != nil {
			l.stop()
			return nil, err
		}
		l.procs = append(l.procs, cmd)
	}
	return l, nil
}

// stop kills the workers, each by its id, and reaps them.
func (l *load) stop() {
	if l == nil {
		return
	}
	for _, c := range l.procs {
		_ = c.Process.Kill()
		_ = c.Wait()
	}
	l.procs = nil
}

// Metric keys of the extra cases.
const (
	mColdStart  = "process start → first chunk (cold)"
	mColdPrompt = "prompt → first chunk (cold)"
	mColdReq    = "prompt → model request (cold)"
	mShellBig   = "shell turn, 10k-file repository"
	mPacedReq   = "prompt → model request (first, 1.5 s after session/new)"
	mPacedChunk = "prompt → first chunk (first, 1.5 s after session/new)"
)

// makeBigRepo writes a git repository of n small Go files in 100
// directories of 10 subdirectories (as internal/shelledits' benchmark),
// committed, for the shell turn in a large workspace.
func makeBigRepo(dir string, n int) error {
	body := "package p\n\n" + strings.Repeat("// a line of the generated file\n", 20)
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("d%03d", i/100), fmt.Sprintf("s%d", i/10%10), fmt.Sprintf("f%05d.go", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(body+"var v = "+strconv.Itoa(i)+"\n"), 0o644); err != nil {
			return err
		}
	}
	for _, args := range [][]string{{"init", "-q", "."}, {"add", "."}, {"commit", "-q", "-m", "generated"}} {
		cmd := exec.Command("git", append([]string{"-c", "user.name=bench", "-c", "user.email=bench@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %w: %s", args[0], err, out)
		}
	}
	return nil
}

// runCold starts a fresh agent, sends the prompt right after session/new
// (as a scripted client does; pace 0) or pace after it (a user typing), and
// times the first message chunk from the process start and from the
// prompt, and the model request from the prompt. The agent is then ended
// (stdin closed, then its process group signalled). With r.waits, codexacp
// runs with debug logs, and the timeline of its log is kept (waits).
func (r *runner) runCold(c candidate, s *sample, env []string, cwd string, pace time.Duration) (err error) {
	m, err := startModel()
	if err != nil {
		return err
	}
	defer m.Close()
	argv, extra, err := c.command(r.paths, m.URL())
	if err != nil {
		return err
	}
	m.main.Enqueue(mockapi.Reply(mockapi.Message("cold answer")))
	timeline := r.waits && strings.HasPrefix(c.Name, "codexacp")
	if timeline {
		argv = append(argv, "--log-level", "debug")
	}
	stderr := &stderrTail{max: 4 << 20}
	start := time.Now()
	agent, err := startAgentProc(argv, append(env, extra...), cwd, stderr)
	if err != nil {
		return err
	}
	defer func() { err = agent.end("cold start", err) }()
	ed := connectEditor(agent.stdin, agent.stdout)
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
	defer cancel()
	sess, err := ed.openSession(ctx, cwd)
	if err != nil {
		return err
	}
	time.Sleep(pace)
	m.waitTitlesIdle(10 * time.Second)
	asked := ed.startTurn()
	resp, err := ed.conn.Prompt(ctx, acpsdk.PromptRequest{SessionId: sess.SessionId, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock("say something")}})
	if err != nil {
		return fmt.Errorf("prompt: %w", err)
	}
	if resp.StopReason != acpsdk.StopReasonEndTurn {
		return fmt.Errorf("prompt: stop reason %s", resp.StopReason)
	}
	first, _, texts, _ := ed.turnObservations()
	if said := strings.Join(texts, ""); said != "cold answer" {
		s.Notes = append(s.Notes, fmt.Sprintf("cold prompt: the agent's message chunks say %q", said))
	}
	reqs := m.requestsSince(asked)
	if pace > 0 {
		if !first.IsZero() {
			s.Values[mPacedChunk] = ms(first.Sub(asked))
		}
		if len(reqs) > 0 {
			s.Values[mPacedReq] = ms(reqs[0])
		}
	} else {
		if first.IsZero() {
			s.NA[mColdStart], s.NA[mColdPrompt] = "no agent_message_chunk", "no agent_message_chunk"
		} else {
			s.Values[mColdStart] = ms(first.Sub(start))
			s.Values[mColdPrompt] = ms(first.Sub(asked))
		}
		if len(reqs) > 0 {
			s.Values[mColdReq] = ms(reqs[0])
		}
	}
	if timeline {
		w := logTimeline(stderr.String(), asked)
		w["process start"] = ms(start.Sub(asked))
		if len(reqs) > 0 {
			w["model request"] = ms(reqs[0])
		}
		if !first.IsZero() {
			w["first chunk"] = ms(first.Sub(asked))
		}
		key := "cold"
		if pace > 0 {
			key = "paced"
		}
		if s.Waits == nil {
			s.Waits = map[string]map[string]float64{}
		}
		s.Waits[key] = w
	}
	r.logf("  cold (pace %s): first chunk %.1f ms after the prompt", pace, ms(first.Sub(asked)))
	return nil
}

// logTimeline reads codexacp's debug log (slog text lines) and returns when
// its milestones happened, in ms from the prompt (negative: before it): its
// turn's start and end, each codex app-server call sent and answered (the
// first of each method), the app-server ready, exec codex started or taken.
func logTimeline(log string, asked time.Time) map[string]float64 {
	out := map[string]float64{}
	set := func(key string, at time.Time) {
		if _, seen := out[key]; !seen {
			out[key] = ms(at.Sub(asked))
		}
	}
	for _, line := range strings.Split(log, "\n") {
		f := logFields(line)
		at, err := time.Parse(time.RFC3339Nano, f["time"])
		if err != nil {
			continue
		}
		switch msg := f["msg"]; msg {
		case "turn started", "turn completed":
			set("agent: "+msg, at)
		case "codex app-server call":
			set("app-server "+f["method"]+" sent", at)
		case "codex app-server answer", "codex app-server call failed":
			set("app-server "+f["method"]+" answered", at)
		case "codex app-server started", "codex app-server ready":
			set(msg, at)
		case "codex started", "waiting codex takes its prompt", "codex waiting for its prompt":
			set("exec: "+msg, at)
		}
	}
	return out
}

// logFields splits a slog text line into its keys and values (quoted
// values unquoted).
func logFields(line string) map[string]string {
	out := map[string]string{}
	for line != "" {
		line = strings.TrimLeft(line, " ")
		key, rest, ok := strings.Cut(line, "=")
		if !ok {
			break
		}
		var val string
		if strings.HasPrefix(rest, `"`) {
			q, err := strconv.QuotedPrefix(rest)
			if err != nil {
				break
			}
			val, _ = strconv.Unquote(q)
			rest = rest[len(q):]
		} else {
			val, rest, _ = strings.Cut(rest, " ")
		}
		out[key] = val
		line = rest
	}
	return out
}

// baseCommand runs command with the codexacp binary replaced by bin: the
// -codexacp-base candidate.
func baseCommand(bin string, command func(p paths, url string) ([]string, []string, error)) func(p paths, url string) ([]string, []string, error) {
	return func(p paths, url string) ([]string, []string, error) {
		p.codexacp = bin
		return command(p, url)
	}
}

// baseCandidates are codexacp's two backends run from the binary bin (the
// -codexacp-base candidates).
func baseCandidates(bin string) []candidate {
	var out []candidate
	for _, backend := range []string{"app-server", "exec"} {
		c := codexacpCandidate("codexacp "+backend+" (base)", backend)
		c.command = baseCommand(bin, c.command)
		out = append(out, c)
	}
	return out
}
