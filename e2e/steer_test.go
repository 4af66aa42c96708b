package e2e_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/e2e/mockapi"
)

// A prompt sent while a turn runs: steered into it on the app-server,
// queued after it on exec; with session/cancel, both end.

// awaitLog waits until the agent has logged line (debug log on stderr).
func (e *env) awaitLog(line string) {
	e.t.Helper()
	if !eventually(60*time.Second, func() bool { return strings.Contains(e.stderr.String(), line) }) {
		e.t.Fatalf("the agent never logged %q", line)
	}
}

// awaitAnswer waits for a prompt's answer.
func (e *env) awaitAnswer(done <-chan acpsdk.PromptResponse, what string) acpsdk.PromptResponse {
	e.t.Helper()
	select {
	case r := <-done:
		return r
	case <-time.After(90 * time.Second):
		e.t.Fatalf("%s did not answer", what)
		return acpsdk.PromptResponse{}
	}
}

// On the app-server the second prompt joins the running turn (turn/steer):
// the model sees it in the next request of that same turn, and both
// prompts answer when that turn ends.
func TestAppServerSteerReachesRunningTurn(t *testing.T) {
	e := start(t, setup{backend: "app-server", fs: true})
	first, hold := mockapi.Hang(mockapi.Message("Looking at it. "))
	e.mock.Enqueue(first, mockapi.Reply(mockapi.Message("Using the steer.")))
	done1 := e.promptAsync("first request")
	<-hold.Reached()
	done2 := e.promptAsync("also mention the tests")
	e.awaitLog("prompt steered into the running turn")
	hold.Release()

	r1 := e.awaitAnswer(done1, "the first prompt")
	// The first prompt answered only once the steered input was served:
	// the turn it started went on with it.
	if got := agentText(e); !strings.Contains(got, "Using the steer.") {
		t.Errorf("the first prompt answered before its turn took the steer: text %q", got)
	}
	r2 := e.awaitAnswer(done2, "the steered prompt")
	if r1.StopReason != acpsdk.StopReasonEndTurn || r2.StopReason != acpsdk.StopReasonEndTurn {
		t.Errorf("stop reasons = %q, %q; want end_turn for both", r1.StopReason, r2.StopReason)
	}
	reqs := e.mock.Requests()
	if len(reqs) != 2 {
		t.Fatalf("model requests = %d, want 2", len(reqs))
	}
	if users := reqs[1].Texts("user"); !slices.Contains(users, "also mention the tests") || !slices.Contains(users, "first request") {
		t.Errorf("the next request of the turn lacks the steered prompt: user texts %q", users)
	}
	// The session goes on normally.
	e.mock.Enqueue(mockapi.Reply(mockapi.Message("third")))
	if r := e.mustPrompt("third"); r.StopReason != acpsdk.StopReasonEndTurn {
		t.Errorf("third prompt stopReason = %q", r.StopReason)
	}
}

// A cancel after a steer ends the turn, and both prompts answer cancelled;
// a cancel before the second prompt leaves it a turn of its own.
func TestAppServerSteerAndCancel(t *testing.T) {
	t.Run("steer then cancel", func(t *testing.T) {
		e := start(t, setup{backend: "app-server", fs: true})
		first, hold := mockapi.Hang(mockapi.Message("Working. "))
		// The turn's next request, the one that carries the steer.
		next, hold2 := mockapi.Hang()
		defer hold.Release()
		defer hold2.Release()
		e.mock.Enqueue(first, next)
		done1 := e.promptAsync("first request")
		<-hold.Reached()
		done2 := e.promptAsync("steered")
		e.awaitLog("prompt steered into the running turn")
		hold.Release()
		<-hold2.Reached()
		e.cancelAndExpectCancelled(done1)
		if r := e.awaitAnswer(done2, "the steered prompt"); r.StopReason != acpsdk.StopReasonCancelled {
			t.Errorf("steered prompt stopReason = %q, want cancelled", r.StopReason)
		}
		e.mock.Enqueue(mockapi.Reply(mockapi.Message("fresh")))
		if r := e.mustPrompt("after the cancel"); r.StopReason != acpsdk.StopReasonEndTurn {
			t.Errorf("next prompt stopReason = %q", r.StopReason)
		}
	})
	t.Run("cancel then prompt", func(t *testing.T) {
		e := start(t, setup{backend: "app-server", fs: true})
		first, hold := mockapi.Hang(mockapi.Message("Working. "))
		defer hold.Release()
		e.mock.Enqueue(first, mockapi.Reply(mockapi.Message("A turn of its own.")))
		done1 := e.promptAsync("first request")
		<-hold.Reached()
		if err := e.editor.Conn.Cancel(e.ctx, acpsdk.CancelNotification{SessionId: e.session}); err != nil {
			t.Fatal(err)
		}
		done2 := e.promptAsync("after the cancel")
		if r := e.awaitAnswer(done1, "the cancelled prompt"); r.StopReason != acpsdk.StopReasonCancelled {
			t.Errorf("first prompt stopReason = %q, want cancelled", r.StopReason)
		}
		if r := e.awaitAnswer(done2, "the prompt after the cancel"); r.StopReason != acpsdk.StopReasonEndTurn {
			t.Errorf("second prompt stopReason = %q, want end_turn", r.StopReason)
		}
		if !strings.Contains(agentText(e), "A turn of its own.") {
			t.Errorf("the second prompt's turn did not run: %q", agentText(e))
		}
	})
}

// On exec the second prompt waits for the running turn and runs after it,
// continuing the same thread.
func TestExecQueuesPromptWhileTurnRuns(t *testing.T) {
	e := start(t, setup{backend: "exec", fs: true})
	first, hold := mockapi.Hang(mockapi.Message("First answer."))
	e.mock.Enqueue(first, mockapi.Reply(mockapi.Message("Second answer.")))
	done1 := e.promptAsync("first request")
	<-hold.Reached()
	done2 := e.promptAsync("queued request")
	e.awaitLog("prompt queued")
	hold.Release()
	r1 := e.awaitAnswer(done1, "the first prompt")
	r2 := e.awaitAnswer(done2, "the queued prompt")
	if r1.StopReason != acpsdk.StopReasonEndTurn || r2.StopReason != acpsdk.StopReasonEndTurn {
		t.Errorf("stop reasons = %q, %q; want end_turn for both", r1.StopReason, r2.StopReason)
	}
	if got := agentText(e); !strings.Contains(got, "First answer.") || !strings.Contains(got, "Second answer.") {
		t.Errorf("text = %q", got)
	}
	reqs := e.mock.Requests()
	if len(reqs) != 2 {
		t.Fatalf("model requests = %d, want 2", len(reqs))
	}
	if users := reqs[1].Texts("user"); !slices.Contains(users, "queued request") || !slices.Contains(users, "first request") {
		t.Errorf("the queued turn does not continue the thread: user texts %q", users)
	}
}
