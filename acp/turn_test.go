package acp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/codex/execrun"
	"github.com/codexacp/codexacp/internal/fakeeditor"
	"github.com/codexacp/codexacp/internal/syncbuf"
)

func TestTurnQueueOrder(t *testing.T) {
	t.Parallel()
	var q turnQueue
	if err := q.acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	gaveUp, giveUp := context.WithCancel(context.Background())
	for i := 1; i <= 3; i++ {
		ctx := context.Background()
		if i == 2 {
			ctx = gaveUp // leaves the queue before its turn
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := q.acquire(ctx); err != nil {
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			q.release()
		}()
		// Each waits before the next comes.
		for {
			q.mu.Lock()
			n := len(q.waiting)
			q.mu.Unlock()
			if n == i {
				break
			}
			runtime.Gosched()
		}
	}
	giveUp()
	q.release()
	wg.Wait()
	if !slices.Equal(order, []int{1, 3}) {
		t.Errorf("turns ran in order %v, want [1 3]", order)
	}
	if q.busy || len(q.waiting) != 0 {
		t.Errorf("queue not idle: busy %v, waiting %d", q.busy, len(q.waiting))
	}
}

// steeringBackend is fakeBackend with turn/steer: Steer answers steerErr,
// else records the text.
type steeringBackend struct {
	*fakeBackend
	steerErr error
	mu       sync.Mutex
	steered  []string
}

func (b *steeringBackend) Capabilities() backend.Capabilities { return backend.Steer }

func (b *steeringBackend) Steer(ctx context.Context, sessionID, text string, images []backend.Image) error {
	if b.steerErr != nil {
		return b.steerErr
	}
	b.mu.Lock()
	b.steered = append(b.steered, text)
	b.mu.Unlock()
	return nil
}

func (b *steeringBackend) steeredTexts() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.steered)
}

// What each of two prompts of a session answers when the second comes
// while the first one's turn runs, on a backend that steers and on one that
// queues, with and without a cancel before or after the second.
func TestPromptWhileTurnRuns(t *testing.T) {
	t.Parallel()
	const (
		cancelNone   = iota
		cancelAfter  // session/cancel after the second prompt
		cancelBefore // session/cancel before the second prompt
	)
	for _, tc := range []struct {
		name         string
		steer        bool  // the backend has Steer
		steerErr     error // what Steer answers
		cancel       int
		first, other acpsdk.StopReason
		runs         []string // prompts codex ran as turns, in order
		steered      []string
	}{
		{name: "steered", steer: true, first: acpsdk.StopReasonEndTurn, other: acpsdk.StopReasonEndTurn,
			runs: []string{"first"}, steered: []string{"second"}},
		{name: "steer refused: queued", steer: true, steerErr: errors.New("no active turn"),
			first: acpsdk.StopReasonEndTurn, other: acpsdk.StopReasonEndTurn, runs: []string{"first", "second"}},
		{name: "no steering: queued", first: acpsdk.StopReasonEndTurn, other: acpsdk.StopReasonEndTurn,
			runs: []string{"first", "second"}},
		{name: "steered then cancel", steer: true, cancel: cancelAfter,
			first: acpsdk.StopReasonCancelled, other: acpsdk.StopReasonCancelled, runs: []string{"first"}, steered: []string{"second"}},
		{name: "queued then cancel", cancel: cancelAfter,
			first: acpsdk.StopReasonCancelled, other: acpsdk.StopReasonCancelled, runs: []string{"first"}},
		{name: "cancel then steer: a new turn", steer: true, cancel: cancelBefore,
			first: acpsdk.StopReasonCancelled, other: acpsdk.StopReasonEndTurn, runs: []string{"first", "second"}},
		{name: "cancel then queue: a new turn", cancel: cancelBefore,
			first: acpsdk.StopReasonCancelled, other: acpsdk.StopReasonEndTurn, runs: []string{"first", "second"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			started := make(chan struct{}, 2)
			release := make(chan struct{})
			fb := &fakeBackend{script: func(ctx context.Context, n int, inv execrun.Invocation, onLine func([]byte)) error {
				onLine([]byte(`{"type":"thread.started","thread_id":"t"}`))
				onLine([]byte(`{"type":"turn.started"}`))
				if n == 0 {
					started <- struct{}{}
					<-release // the first turn runs until released (a cancel too)
					if ctx.Err() != nil {
						return ctx.Err()
					}
				}
				onLine([]byte(`{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":0,"output_tokens":1,"reasoning_output_tokens":0}}`))
				return nil
			}}
			var be backend.Backend = fb
			var sb *steeringBackend
			if tc.steer {
				sb = &steeringBackend{fakeBackend: fb, steerErr: tc.steerErr}
				be = sb
			}
			h := startAgent(t, be, fakeeditor.Options{})
			sid := h.newSession(t, t.TempDir())
			s, err := h.agent.session(sid)
			if err != nil {
				t.Fatal(err)
			}
			first := make(chan acpsdk.PromptResponse, 1)
			go func() {
				r, err := h.prompt(sid, "first")
				if err != nil {
					t.Errorf("first prompt: %v", err)
				}
				first <- r
			}()
			<-started
			cancel := func() {
				if err := h.editor.Conn.Cancel(h.ctx, acpsdk.CancelNotification{SessionId: sid}); err != nil {
					t.Fatal(err)
				}
				// A request after the notification is read after it.
				if _, err := h.editor.Conn.SetSessionMode(h.ctx, acpsdk.SetSessionModeRequest{SessionId: sid, ModeId: acpsdk.SessionModeId(backend.ModeAsk)}); err != nil {
					t.Fatal(err)
				}
			}
			if tc.cancel == cancelBefore {
				cancel()
			}
			other := make(chan acpsdk.PromptResponse, 1)
			go func() {
				r, err := h.prompt(sid, "second")
				if err != nil {
					t.Errorf("second prompt: %v", err)
				}
				other <- r
			}()
			// The second prompt has been steered or queued.
			for {
				s.mu.Lock()
				registered := s.latest == 2
				s.mu.Unlock()
				s.turns.mu.Lock()
				queued := len(s.turns.waiting) == 1
				s.turns.mu.Unlock()
				if registered && (queued || (sb != nil && len(sb.steeredTexts()) == 1)) {
					break
				}
				runtime.Gosched()
			}
			if tc.cancel == cancelAfter {
				cancel()
			}
			close(release)
			if r := <-first; r.StopReason != tc.first {
				t.Errorf("first prompt stopReason = %q, want %q", r.StopReason, tc.first)
			}
			if r := <-other; r.StopReason != tc.other {
				t.Errorf("second prompt stopReason = %q, want %q", r.StopReason, tc.other)
			}
			var runs []string
			for _, inv := range fb.invocations() {
				runs = append(runs, inv.Prompt)
			}
			if !slices.Equal(runs, tc.runs) {
				t.Errorf("turns run = %q, want %q", runs, tc.runs)
			}
			if sb != nil && !slices.Equal(sb.steeredTexts(), tc.steered) {
				t.Errorf("steered = %q, want %q", sb.steeredTexts(), tc.steered)
			}
		})
	}
}

// A session/cancel written right behind its prompt cancels it, however
// late the SDK starts the prompt's handler: the SDK runs each request on a
// goroutine of its own while the input guard handles the cancel at once.
// Here the handler is held back until the cancel has been read; before the
// guard noted prompts as it read them, the cancel found no prompt, and the
// turn ran to its end.
func TestCancelRightBehindItsPrompt(t *testing.T) {
	t.Parallel()
	be := &fakeBackend{script: cancelledOrDone(0)}
	var sid acpsdk.SessionId
	var h *harness
	// The cancel waits for the prompt however slow the machine: the bound
	// is not what this test is about.
	opts := Options{Backend: be, ContextWindow: 272000, promptRegisterBound: func() time.Duration { return time.Minute }}
	opts.beforePromptRegisters = func() {
		s, err := h.agent.session(sid)
		if err != nil {
			return
		}
		// Held until the cancel waits for this prompt (bounded: without the
		// guard's note nothing waits).
		deadline := time.Now().Add(2 * time.Second)
		for time.Now().Before(deadline) {
			s.mu.Lock()
			waited := s.caughtUp != nil
			s.mu.Unlock()
			if waited {
				return
			}
			time.Sleep(time.Millisecond)
		}
	}
	h = startAgentWith(t, opts, fakeeditor.Options{})
	sid = h.newSession(t, t.TempDir())
	lines := fmt.Sprintf(`{"jsonrpc":"2.0","id":900,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"go"}]}}`+"\n"+
		`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":%q}}`+"\n", sid, sid)
	if _, err := io.WriteString(h.agentIn, lines); err != nil {
		t.Fatal(err)
	}
	answer := h.awaitAnswer(900)
	// (The turn may have begun before the cancel went on: the cancel ends it.)
	if !bytes.Contains(answer, []byte(`"stopReason":"cancelled"`)) {
		t.Errorf("prompt answered %s, want stopReason cancelled", answer)
	}
}

// A prompt the SDK refuses never reaches the handler, so the guard does not
// count it: the cancel behind it does not wait for it, and the counts stay
// level for the next cancel.
func TestCancelBehindARefusedPrompt(t *testing.T) {
	t.Parallel()
	be := &fakeBackend{script: playLines(`{"type":"thread.started","thread_id":"t"}`, `{"type":"turn.started"}`,
		`{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":0,"output_tokens":1,"reasoning_output_tokens":0}}`)}
	logs := &syncbuf.Buffer{}
	h := startAgentWith(t, Options{Backend: be, ContextWindow: 272000, Logger: slog.New(slog.NewTextHandler(logs, nil))}, fakeeditor.Options{})
	sid := h.newSession(t, t.TempDir())
	lines := fmt.Sprintf(`{"jsonrpc":"2.0","id":901,"method":"session/prompt","params":{"sessionId":%q}}`+"\n"+
		`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":%q}}`+"\n", sid, sid)
	if _, err := io.WriteString(h.agentIn, lines); err != nil {
		t.Fatal(err)
	}
	resp, err := h.prompt(sid, "next")
	if err != nil || resp.StopReason != acpsdk.StopReasonEndTurn {
		t.Errorf("the prompt after the cancel = %+v, %v; want end_turn", resp, err)
	}
	if a := h.awaitAnswer(901); !bytes.Contains(a, []byte(`"code":-32602`)) {
		t.Errorf("the refused prompt was answered %s, want invalid params", a)
	}
	if strings.Contains(logs.String(), "went on without a prompt") {
		t.Errorf("the cancel waited for the refused prompt:\n%s", logs)
	}
	s, err := h.agent.session(sid)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.read != s.latest {
		t.Errorf("prompts read %d, registered %d: want them level", s.read, s.latest)
	}
}

// A prompt whose handler starts only after its cancel gave up waiting runs
// (it counts as sent after the cancel), and the next prompt and cancel
// right behind it are level again: the cancel covers that prompt.
func TestCancelGivesUpOnALatePrompt(t *testing.T) {
	t.Parallel()
	be := &fakeBackend{script: cancelledOrDone(1)}
	logs := &syncbuf.Buffer{}
	var sid acpsdk.SessionId
	var h *harness
	var prompts atomic.Int32
	var patient atomic.Bool // the second cancel waits as long as it takes
	opts := Options{Backend: be, ContextWindow: 272000, Logger: slog.New(slog.NewTextHandler(logs, nil)),
		promptRegisterBound: func() time.Duration {
			if patient.Load() {
				return time.Minute
			}
			return time.Millisecond
		}}
	opts.beforePromptRegisters = func() {
		switch prompts.Add(1) {
		case 1: // late: until its cancel gave up
			for !strings.Contains(logs.String(), "went on without a prompt") {
				time.Sleep(time.Millisecond)
			}
		case 2: // until its cancel waits for it (bounded: without the
			// levelled count it never does)
			s, _ := h.agent.session(sid)
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
				s.mu.Lock()
				waited := s.caughtUp != nil
				s.mu.Unlock()
				if waited {
					return
				}
			}
		}
	}
	h = startAgentWith(t, opts, fakeeditor.Options{})
	sid = h.newSession(t, t.TempDir())
	send := func(id int) {
		lines := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"go"}]}}`+"\n"+
			`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":%q}}`+"\n", id, sid, sid)
		if _, err := io.WriteString(h.agentIn, lines); err != nil {
			t.Fatal(err)
		}
	}
	send(910)
	if a := h.awaitAnswer(910); !bytes.Contains(a, []byte(`"stopReason":"end_turn"`)) {
		t.Errorf("the late prompt answered %s, want end_turn (registered after its cancel)", a)
	}
	patient.Store(true)
	send(911)
	if a := h.awaitAnswer(911); !bytes.Contains(a, []byte(`"stopReason":"cancelled"`)) {
		t.Errorf("the next prompt answered %s, want cancelled", a)
	}
}

// awaitAnswer returns the agent's answer to the request with id, one the
// test wrote to the agent's stdin itself.
func (h *harness) awaitAnswer(id int) []byte {
	key := []byte(fmt.Sprintf(`"id":%d,`, id))
	for {
		for _, line := range h.editor.Raw() {
			if bytes.Contains(line, key) {
				return line
			}
		}
		time.Sleep(time.Millisecond)
	}
}

// cancelledOrDone is a codex whose turns complete at once, except the one
// numbered held (from 0), which ends when it is cancelled or else completes
// after 10 s: a prompt whose cancel went missing then answers end_turn
// instead of cancelled, whether its turn had begun when the cancel came or
// not.
func cancelledOrDone(held int) func(context.Context, int, execrun.Invocation, func([]byte)) error {
	done := playLines(`{"type":"thread.started","thread_id":"t"}`, `{"type":"turn.started"}`,
		`{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":0,"output_tokens":1,"reasoning_output_tokens":0}}`)
	return func(ctx context.Context, n int, inv execrun.Invocation, onLine func([]byte)) error {
		if n == held {
			select {
			case <-ctx.Done():
				return context.Cause(ctx)
			case <-time.After(10 * time.Second):
			}
		}
		return done(ctx, n, inv, onLine)
	}
}
