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
	"syscall"
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
// (as a scripted client does) and times the first message chunk from the
// process start and from the prompt, and the model request from the prompt.
// The agent is then ended (stdin closed, then its process group signalled).
func (r *runner) runCold(c candidate, s *sample, env []string, cwd string) (err error) {
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
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(env, extra...)
	cmd.Dir = cwd
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr := &stderrTail{}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return err
	}
	pid := cmd.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		stdin.Close()
		select {
		case <-exited:
		case <-time.After(time.Second):
			_ = syscall.Kill(-pid, syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(exitWait):
				_ = syscall.Kill(-pid, syscall.SIGKILL)
				<-exited
			}
		}
		if err != nil {
			err = fmt.Errorf("cold start: %w\nagent stderr (tail):\n%s", err, lastLines(stderr.String(), 20))
		}
	}()
	ed := connectEditor(stdin, stdout)
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
	defer cancel()
	if _, err := ed.initialize(ctx); err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	sess, err := ed.conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: cwd, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		return fmt.Errorf("session/new: %w", err)
	}
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
	if first.IsZero() {
		s.NA[mColdStart], s.NA[mColdPrompt] = "no agent_message_chunk", "no agent_message_chunk"
	} else {
		s.Values[mColdStart] = ms(first.Sub(start))
		s.Values[mColdPrompt] = ms(first.Sub(asked))
	}
	if reqs := m.requestsSince(asked); len(reqs) > 0 {
		s.Values[mColdReq] = ms(reqs[0])
	}
	r.logf("  cold: first chunk %.1f ms after the start, %.1f ms after the prompt", s.Values[mColdStart], s.Values[mColdPrompt])
	return nil
}
