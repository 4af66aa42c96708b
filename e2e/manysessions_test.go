//go:build linux

package e2e_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/e2e/codextest"
	"github.com/codexacp/codexacp/e2e/mockapi"
	"github.com/codexacp/codexacp/internal/recovery"
	"github.com/codexacp/codexacp/internal/syncbuf"
)

// burst is one codexacp process (the built binary, real codex, the mock
// model) driven over raw JSON-RPC lines, so that many session/new can be
// written at once, as an editor restoring its sessions or a script does:
// the SDK's client would wait for nothing either, but it hides when each
// answer arrived.
type burst struct {
	tb      testing.TB
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	stderr  *syncbuf.Buffer
	cwd     string
	exited  chan struct{} // closed once cmd.Wait returned
	answers chan answer   // every answer to a request, as read
	procs   *childSampler
}

// answer is the agent's answer to one of our requests.
type answer struct {
	id  int
	at  time.Time
	err string // the JSON-RPC error's message; "": a result
}

// startBurst starts the agent on backend and initializes it.
func startBurst(tb testing.TB, backend string) *burst {
	tb.Helper()
	codexPath := codextest.Binary(tb)
	mock := mockapi.New(tb)
	baseEnv, _ := codextest.Env(tb)
	cwd, err := filepath.EvalSymlinks(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	args := []string{"--codex-path", codexPath, "--log-level", "info", "--backend", backend, "-c", `model="gpt-5.5"`}
	for _, c := range append(mockapi.CodexConfig(mock.URL()), codextest.OfflineConfig...) {
		args = append(args, "-c", c)
	}
	cmd := exec.Command(agentBin(tb), args...)
	cmd.Env = baseEnv
	b := &burst{tb: tb, cmd: cmd, stderr: &syncbuf.Buffer{}, cwd: cwd, exited: make(chan struct{}), answers: make(chan answer, 4096)}
	cmd.Stderr = b.stderr
	stdin, stdout := startPiped(tb, cmd)
	b.stdin = stdin
	b.procs = startChildSampler(cmd.Process.Pid, 50*time.Millisecond)
	go func() {
		defer close(b.answers)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			var msg struct {
				ID     *int            `json:"id"`
				Method string          `json:"method"`
				Result json.RawMessage `json:"result"`
				Error  *struct {
					Message string `json:"message"`
				} `json:"error"`
			}
			if json.Unmarshal(sc.Bytes(), &msg) != nil || msg.ID == nil || msg.Method != "" {
				continue // a notification, or a request of the agent's (none comes here)
			}
			a := answer{id: *msg.ID, at: time.Now()}
			if msg.Error != nil {
				a.err = msg.Error.Message
			}
			b.answers <- a
		}
	}()
	go func() {
		cmd.Wait()
		close(b.exited)
	}()
	tb.Cleanup(func() {
		b.stdin.Close()
		select {
		case <-b.exited:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-b.exited
			tb.Error("codexacp did not exit after its stdin closed")
		}
		b.procs.stop()
		if strings.Contains(b.stderr.String(), recovery.LogPrefix) {
			tb.Error("codexacp recovered from a panic: a bug (internal/recovery), see its stderr")
		}
		if left := b.procs.survivors(); len(left) > 0 {
			tb.Errorf("codex processes left after the agent exited: %v", left)
		}
		if tb.Failed() {
			tb.Logf("codexacp stderr:\n%s", b.stderr.String())
		}
	})
	b.send(1, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	if a := b.next(time.Minute); a.id != 1 || a.err != "" {
		tb.Fatalf("initialize: %+v", a)
	}
	return b
}

func (b *burst) send(id int, method string, params any) {
	b.tb.Helper()
	line, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		b.tb.Fatal(err)
	}
	if _, err := b.stdin.Write(append(line, '\n')); err != nil {
		b.tb.Fatalf("writing %s: %v", method, err)
	}
}

// next is the next answer, failing the test after d.
func (b *burst) next(d time.Duration) answer {
	b.tb.Helper()
	select {
	case a, ok := <-b.answers:
		if !ok {
			b.tb.Fatalf("the agent's stdout ended")
		}
		return a
	case <-time.After(d):
		b.tb.Fatalf("no answer within %v", d)
	}
	return answer{}
}

// burstFigures is what one burst of session/new measured.
type burstFigures struct {
	firstAnswer time.Duration  // from the write of the burst to its first answer
	lastAnswer  time.Duration  // … to its last answer
	maxGap      time.Duration  // the longest wait for the next answer (the first counts from the write)
	settled     time.Duration  // from the write until the codex processes stopped changing
	peakRSS     int64          // KiB, the codex processes' summed VmRSS at its highest
	peakProcs   int            // most codex processes alive at once
	kinds       map[string]int // the processes seen, by command
	exit        time.Duration  // from closing stdin until the agent exited
}

// sessions writes n session/new requests at once (ids from firstID) and reads their answers,
// failing the test on an error answer or after a generous bound.
func (b *burst) sessions(firstID, n int) (start, first, last time.Time, maxGap time.Duration) {
	b.tb.Helper()
	var lines bytes.Buffer
	for i := range n {
		line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": firstID + i, "method": "session/new",
			"params": map[string]any{"cwd": b.cwd, "mcpServers": []any{}}})
		lines.Write(append(line, '\n'))
	}
	start = time.Now()
	if _, err := b.stdin.Write(lines.Bytes()); err != nil {
		b.tb.Fatalf("writing the session/new burst: %v", err)
	}
	prev := start
	for range n {
		a := b.next(5 * time.Minute)
		if a.err != "" {
			b.tb.Fatalf("session/new %d: %s", a.id, a.err)
		}
		if first.IsZero() {
			first = a.at
		}
		maxGap = max(maxGap, a.at.Sub(prev))
		prev = a.at
	}
	return start, first, prev, maxGap
}

// settle waits until the agent's codex processes have stopped changing
// (their number, and their memory within 16 MiB) for quiet, up to bound.
func (b *burst) settle(quiet, bound time.Duration) {
	deadline := time.Now().Add(bound)
	var count int
	var rss int64
	since := time.Now()
	for time.Now().Before(deadline) {
		c, r := b.procs.now()
		if c != count || r-rss > 16<<10 || rss-r > 16<<10 {
			count, rss, since = c, r, time.Now()
		} else if time.Since(since) >= quiet {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// closeAndWait closes the agent's stdin and returns how long it took to
// exit (bounded: a hang fails the test).
func (b *burst) closeAndWait(bound time.Duration) time.Duration {
	b.tb.Helper()
	t0 := time.Now()
	b.stdin.Close()
	select {
	case <-b.exited:
		return time.Since(t0)
	case <-time.After(bound):
		b.tb.Fatalf("the agent still runs %v after its stdin closed", bound)
	}
	return 0
}

// measureBurst opens one session on backend, as an editor does at
// start, then writes n session/new requests at once and measures them.
// With settle, stdin is closed once the codex processes stopped changing;
// without, right after the last answer, while the agent is still busy.
func measureBurst(tb testing.TB, backend string, n int, settle bool) burstFigures {
	b := startBurst(tb, backend)
	b.sessions(2, 1)
	start, first, last, gap := b.sessions(3, n)
	f := burstFigures{firstAnswer: first.Sub(start), lastAnswer: last.Sub(start), maxGap: gap}
	if settle {
		b.settle(2*time.Second, 2*time.Minute)
		f.settled = time.Since(start)
	}
	f.exit = b.closeAndWait(time.Minute)
	f.peakRSS, f.peakProcs = b.procs.peaks()
	f.kinds = b.procs.kinds()
	return f
}

// BenchmarkManySessions opens a session, then writes 120 session/new
// requests at once (CODEXACP_BENCH_SESSIONS to change it) to the agent on
// each backend and reports the time to the last answer, the longest wait
// between two answers, when the codex processes stopped changing, the
// peak of their summed resident memory and their number, and how long the
// agent took to exit once its stdin closed after that (s-exit). A second
// agent gets the same burst and has its stdin closed right after the last
// answer, while it still works for the new sessions (s-exit-busy). Run it
// with -benchtime=1x: each iteration is two new agents.
func BenchmarkManySessions(b *testing.B) {
	n := 120
	if v, err := strconv.Atoi(os.Getenv("CODEXACP_BENCH_SESSIONS")); err == nil && v > 0 {
		n = v
	}
	for _, backend := range backends {
		b.Run(backend, func(b *testing.B) {
			var f, busy burstFigures
			for range b.N {
				f = measureBurst(b, backend, n, true)
				busy = measureBurst(b, backend, n, false)
			}
			b.ReportMetric(f.firstAnswer.Seconds(), "s-first-answer")
			b.ReportMetric(f.lastAnswer.Seconds(), "s-last-answer")
			b.ReportMetric(f.maxGap.Seconds(), "s-max-gap")
			b.ReportMetric(f.settled.Seconds(), "s-settled")
			b.ReportMetric(float64(f.peakRSS)/1024, "MiB-codex-peak")
			b.ReportMetric(float64(f.peakProcs), "codex-procs-peak")
			b.ReportMetric(f.exit.Seconds(), "s-exit")
			b.ReportMetric(busy.exit.Seconds(), "s-exit-busy")
			b.Logf("%s, %d sessions: first answer %v, last answer %v, longest gap %v, settled %v, codex peak %d MiB in %d processes, exit %v; processes seen: %v",
				backend, n, f.firstAnswer.Round(time.Millisecond), f.lastAnswer.Round(time.Millisecond), f.maxGap.Round(time.Millisecond), f.settled.Round(time.Millisecond),
				f.peakRSS/1024, f.peakProcs, f.exit.Round(time.Millisecond), f.kinds)
			b.Logf("%s, %d sessions, stdin closed at the last answer: first answer %v, last answer %v, longest gap %v, codex peak %d MiB in %d processes, exit %v",
				backend, n, busy.firstAnswer.Round(time.Millisecond), busy.lastAnswer.Round(time.Millisecond), busy.maxGap.Round(time.Millisecond),
				busy.peakRSS/1024, busy.peakProcs, busy.exit.Round(time.Millisecond))
		})
	}
}

// Many pipelined session/new on the exec backend never have more than
// backend.DefaultMaxWarm `codex exec` processes alive (none runs a turn here:
// each is one waiting for its session's prompt), counted in /proc from the
// burst until they stop changing; closing stdin ends the agent and every
// codex it started.
func TestManySessionsExecBoundsWaitingCodex(t *testing.T) {
	b := startBurst(t, "exec")
	b.sessions(2, 1)
	b.sessions(3, 40)
	b.settle(2*time.Second, time.Minute)
	if n := b.procs.execPeak(); n > backend.DefaultMaxWarm || n == 0 {
		t.Errorf("%d codex exec processes alive at once for 41 sessions, want 1 to %d", n, backend.DefaultMaxWarm)
	}
	b.closeAndWait(30 * time.Second)
	b.procs.stop()
	if left := b.procs.survivors(); len(left) > 0 {
		t.Errorf("processes left after the agent exited: %v", left)
	}
}

// Closing stdin right after a burst of session/new, while the agent still
// works for the new sessions, ends the agent and every codex it started.
func TestManySessionsExitWhenStdinCloses(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		b := startBurst(t, backend)
		b.sessions(2, 1)
		b.sessions(3, 40)
		b.closeAndWait(30 * time.Second)
		b.procs.stop()
		if left := b.procs.survivors(); len(left) > 0 {
			t.Errorf("processes left after the agent exited: %v", left)
		}
	})
}

// childSampler follows the agent's descendants (its codex processes) in
// /proc: the peak of their summed VmRSS and of their number, the number
// running a `codex exec` at once, and every one seen.
type childSampler struct {
	root  int
	agent string // the agent's command line
	quit  chan struct{}
	done  chan struct{}

	mu        sync.Mutex
	count     int
	rss       int64 // KiB, the last sample's
	peakRSS   int64
	peakProcs int
	peakExec  int
	seen      map[int]proc // by pid
}

func startChildSampler(root int, every time.Duration) *childSampler {
	agent, _ := os.ReadFile("/proc/" + strconv.Itoa(root) + "/cmdline")
	s := &childSampler{root: root, agent: strings.TrimSpace(strings.ReplaceAll(string(agent), "\x00", " ")), quit: make(chan struct{}), done: make(chan struct{}), seen: map[int]proc{}}
	go func() {
		defer close(s.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			s.sample()
			select {
			case <-s.quit:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *childSampler) sample() {
	var kids []proc
	for _, p := range descendants(s.root) {
		// A child not yet past exec still shows the agent's command line
		// and shares its memory.
		if p.cmdline != s.agent {
			kids = append(kids, p)
		}
	}
	var rss int64
	execs := 0
	for _, p := range kids {
		if kb, ok := statusKiB(p.pid, "VmRSS"); ok {
			rss += kb
		}
		if f := strings.Fields(p.cmdline); len(f) > 1 && filepath.Base(f[0]) == "codex" && f[1] == "exec" {
			execs++
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range kids {
		s.seen[p.pid] = p
	}
	s.count, s.rss = len(kids), rss
	s.peakRSS = max(s.peakRSS, rss)
	s.peakProcs = max(s.peakProcs, len(kids))
	s.peakExec = max(s.peakExec, execs)
}

func (s *childSampler) now() (int, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.count, s.rss
}

func (s *childSampler) peaks() (rss int64, procs int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peakRSS, s.peakProcs
}

func (s *childSampler) execPeak() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peakExec
}

func (s *childSampler) stop() {
	select {
	case <-s.quit:
	default:
		close(s.quit)
	}
	<-s.done
}

// kinds counts the processes seen by their command (the executable's name
// and its first argument).
func (s *childSampler) kinds() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for _, p := range s.seen {
		f := strings.Fields(p.cmdline)
		if len(f) > 2 {
			f = f[:2]
		}
		if len(f) > 0 {
			f[0] = filepath.Base(f[0])
		}
		out[strings.Join(f, " ")]++
	}
	return out
}

// survivors lists, and kills, the descendants seen that still run.
func (s *childSampler) survivors() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var left []string
	for _, p := range s.seen {
		if !p.alive() {
			continue
		}
		left = append(left, p.String())
		if pr, err := os.FindProcess(p.pid); err == nil {
			pr.Kill()
		}
	}
	return left
}

// statusKiB reads a "Key:   N kB" line of /proc/PID/status.
func statusKiB(pid int, key string) (int64, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, key+":"); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				return 0, false
			}
			n, err := strconv.ParseInt(f[0], 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}
