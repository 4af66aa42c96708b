package e2e_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/e2e/mockapi"
)

// What a first prompt waits for (issue 24, point 1), with the real codex:
// a prompt sent right after session/new races the session's skills
// listing and, on app-server, the thread's start.

// A prompt sent right after session/new runs its turn: on app-server the
// turn takes the thread Warm is starting while the skills are listed on
// the same codex; the commands announcement still comes.
func TestPromptRightAfterSessionNew(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		e := start(t, setup{backend: backend})
		e.mock.Enqueue(mockapi.Reply(mockapi.Message("right away")))
		resp := e.mustPrompt("answer at once")
		if resp.StopReason != acpsdk.StopReasonEndTurn {
			t.Errorf("stopReason = %q, want end_turn", resp.StopReason)
		}
		if got := agentText(e); got != "right away" {
			t.Errorf("agent text = %q, want the model's answer", got)
		}
		ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
		defer cancel()
		cmds, err := e.editor.WaitForCommands(ctx, e.session)
		if err != nil {
			t.Fatalf("no commands announced: %v", err)
		}
		if !slices.ContainsFunc(cmds, func(c acpsdk.AvailableCommand) bool { return c.Name == "status" }) {
			t.Errorf("announced commands lack /status: %+v", cmds)
		}
	})
}

// A session/cancel 500 ms after a prompt sent right after session/new
// cancels it, whether or not codex had asked the model yet. Whether it had
// is a matter of speed, which a test does not assert (machines are noisy):
// the test logs it, and BenchmarkColdPrompt counts it.
func TestCancelSoonAfterFirstPrompt(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		e := start(t, setup{backend: backend})
		resp, hold := mockapi.Hang(mockapi.Message("started"))
		e.mock.Enqueue(resp)
		t.Cleanup(hold.Release)
		sent := time.Now()
		answer := make(chan acpsdk.PromptResponse, 1)
		go func() {
			r, err := e.prompt("a long answer please")
			if err != nil {
				t.Errorf("prompt: %v", err)
			}
			answer <- r
		}()
		time.Sleep(500 * time.Millisecond)
		requested := len(e.mock.Requests())
		if err := e.editor.Conn.Cancel(e.ctx, acpsdk.CancelNotification{SessionId: e.session}); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: model requests when the cancel was sent, %v after the prompt: %d", backend, time.Since(sent).Round(time.Millisecond), requested)
		select {
		case r := <-answer:
			if r.StopReason != acpsdk.StopReasonCancelled {
				t.Errorf("stopReason = %q, want cancelled", r.StopReason)
			}
		case <-time.After(60 * time.Second):
			t.Fatal("the cancelled prompt did not answer")
		}
		if requested > 0 {
			select {
			case <-hold.Abandoned():
			case <-time.After(30 * time.Second):
				t.Error("codex kept the model request open after the cancel")
			}
		}
		if n := len(e.mock.Requests()); n > 1 {
			t.Errorf("%d model requests, want at most the cancelled one", n)
		}
	})
}

// BenchmarkColdPrompt measures a fresh agent's first prompt sent right
// after session/new, as a scripted client sends it: process start → first
// chunk, prompt → model request and prompt → first chunk, and how many
// runs had the model request out within 500 ms of the prompt (a
// session/cancel then finds it sent). Each iteration starts one agent per
// backend and per candidate, interleaved.
//
// CODEXACP_BENCH_AGENTS=name=path,… compares codexacp binaries (default:
// the one built from the working tree, "current"); CODEXACP_BENCH_LOAD=N
// runs N busy processes beside the whole benchmark. Run with a fixed count:
//
//	CODEXACP_E2E=1 go test -run '^$' -bench ColdPrompt -benchtime 5x ./e2e/
func BenchmarkColdPrompt(b *testing.B) {
	type candidate struct{ name, bin string }
	cands := []candidate{{"current", agentBin(b)}}
	if list := os.Getenv("CODEXACP_BENCH_AGENTS"); list != "" {
		cands = nil
		for _, kv := range strings.Split(list, ",") {
			name, bin, ok := strings.Cut(kv, "=")
			if !ok {
				b.Fatalf("CODEXACP_BENCH_AGENTS: %q is not name=path", kv)
			}
			cands = append(cands, candidate{name, bin})
		}
	}
	if n, _ := strconv.Atoi(os.Getenv("CODEXACP_BENCH_LOAD")); n > 0 {
		busyWorkers(b, n)
	}
	// One cache for every run, as a user's: codexacp keeps the model
	// catalog it derives from codex's there, per codex version, and a
	// fresh agent of a user who ran it before finds it.
	cache := []string{"XDG_CACHE_HOME=" + b.TempDir()}
	defer func() { agentOverride = "" }()
	type key struct{ backend, cand string }
	type samples struct{ startChunk, promptReq, promptChunk, promptTurn, startServer, startReady, threadStart []float64 }
	got := map[key]*samples{}
	b.ResetTimer()
	for i := range b.N {
		for j := range cands {
			c := cands[(i+j)%len(cands)] // the first candidate rotates
			for _, backend := range backends {
				agentOverride = c.bin
				s := got[key{backend, c.name}]
				if s == nil {
					s = &samples{}
					got[key{backend, c.name}] = s
				}
				r := coldPrompt(b, backend, cache)
				s.startChunk = append(s.startChunk, ms(r.startChunk))
				s.promptReq = append(s.promptReq, ms(r.promptReq))
				s.promptChunk = append(s.promptChunk, ms(r.promptChunk))
				s.promptTurn = append(s.promptTurn, ms(r.promptTurn))
				if backend == "app-server" {
					s.startServer = append(s.startServer, ms(r.startServer))
					s.startReady = append(s.startReady, ms(r.startReady))
					s.threadStart = append(s.threadStart, ms(r.threadStart))
				}
			}
		}
	}
	b.StopTimer()
	for _, backend := range backends {
		for _, c := range cands {
			s := got[key{backend, c.name}]
			within := 0
			for _, v := range s.promptReq {
				if v <= 500 {
					within++
				}
			}
			fmt.Fprintf(os.Stderr, "%s %s: start→chunk %s; prompt→request %s; prompt→chunk %s; prompt→turn started %s; start→app-server started %s, ready %s; thread/start %s; request within 500 ms: %d/%d\n",
				backend, c.name, spread(s.startChunk), spread(s.promptReq), spread(s.promptChunk), spread(s.promptTurn),
				spread(s.startServer), spread(s.startReady), spread(s.threadStart), within, len(s.promptReq))
			prefix := backend + "/" + c.name + "/"
			b.ReportMetric(midpoint(s.startChunk), prefix+"start-chunk-ms")
			b.ReportMetric(midpoint(s.promptReq), prefix+"prompt-request-ms")
			b.ReportMetric(midpoint(s.promptChunk), prefix+"prompt-chunk-ms")
			b.ReportMetric(midpoint(s.promptTurn), prefix+"prompt-turn-ms")
			if backend == "app-server" {
				b.ReportMetric(midpoint(s.threadStart), prefix+"thread-start-ms")
			}
		}
	}
}

// coldRun is what coldPrompt measured: from the process start to the first
// chunk, to codex app-server's start and to its answer to initialize; from
// the prompt to the turn's start in the agent, to the model request and to
// the first chunk; on app-server, thread/start sent → answered (codex's
// start of the thread, its tool server's handshake included). The agent's
// own milestones are read from its log.
type coldRun struct {
	startChunk, startServer, startReady, threadStart time.Duration
	promptTurn, promptReq, promptChunk               time.Duration
}

// coldPrompt starts an agent, opens a session and prompts right away.
func coldPrompt(b *testing.B, backend string, env []string) (r coldRun) {
	began := time.Now()
	e := start(b, setup{backend: backend, env: env})
	defer e.stop()
	resp, hold := mockapi.Hang(mockapi.Message("cold answer"))
	e.mock.Enqueue(resp)
	defer hold.Release()
	prompted := time.Now()
	answer := make(chan error, 1)
	go func() {
		_, err := e.prompt("say something")
		answer <- err
	}()
	ctx, cancel := context.WithTimeout(e.ctx, time.Minute)
	defer cancel()
	select {
	case <-hold.Reached():
		r.promptReq = time.Since(prompted)
	case <-ctx.Done():
		b.Fatalf("%s: no model request within a minute", backend)
	}
	if err := e.editor.WaitForUpdate(ctx, func(u acpsdk.SessionUpdate) bool { return u.AgentMessageChunk != nil }); err != nil {
		b.Fatalf("%s: no first chunk: %v", backend, err)
	}
	now := time.Now()
	hold.Release()
	if err := <-answer; err != nil {
		b.Fatalf("%s: prompt: %v", backend, err)
	}
	r.startChunk, r.promptChunk = now.Sub(began), now.Sub(prompted)
	log := e.stderr.String()
	r.promptTurn = logTime(b, log, `msg="turn started"`).Sub(prompted)
	if backend == "app-server" {
		r.startServer = logTime(b, log, `msg="codex app-server started"`).Sub(began)
		r.startReady = logTime(b, log, `msg="codex app-server ready"`).Sub(began)
		r.threadStart = logElapsed(b, log, `msg="codex app-server answer" method=thread/start`)
	}
	return r
}

// logElapsed is the elapsed= field of the first line of the agent's log
// that contains msg.
func logElapsed(b *testing.B, log, msg string) time.Duration {
	for _, line := range strings.Split(log, "\n") {
		if !strings.Contains(line, msg) {
			continue
		}
		_, field, ok := strings.Cut(line, " elapsed=")
		if !ok {
			break
		}
		field, _, _ = strings.Cut(field, " ")
		d, err := time.ParseDuration(field)
		if err != nil {
			b.Fatalf("log line %q: %v", line, err)
		}
		return d
	}
	b.Fatalf("the agent's log has no %s with its elapsed time", msg)
	return 0
}

// logTime is the time of the first line of the agent's log that contains
// msg (slog's text format: time=RFC 3339 with milliseconds).
func logTime(b *testing.B, log, msg string) time.Time {
	for _, line := range strings.Split(log, "\n") {
		if !strings.Contains(line, msg) {
			continue
		}
		field, _, _ := strings.Cut(strings.TrimPrefix(line, "time="), " ")
		t, err := time.Parse(time.RFC3339Nano, field)
		if err != nil {
			b.Fatalf("log line %q: %v", line, err)
		}
		return t
	}
	b.Fatalf("the agent's log has no %s", msg)
	return time.Time{}
}

// busyWorkers runs n processes that keep a CPU busy until the benchmark
// ends.
func busyWorkers(b *testing.B, n int) {
	for range n {
		cmd := exec.Command("sh", "-c", "while :; do :; done")
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// midpoint is the median of v.
func midpoint(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// spread is "median (min–max) ms" of v.
func spread(v []float64) string {
	if len(v) == 0 {
		return "none"
	}
	return fmt.Sprintf("%.0f (%.0f–%.0f) ms", midpoint(v), slices.Min(v), slices.Max(v))
}
