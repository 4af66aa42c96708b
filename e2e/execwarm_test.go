package e2e_test

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/e2e/mockapi"
)

// waitingProcess waits until exactly one exec codex waits for the session's
// next prompt and returns its pid and command line.
func (e *env) waitingProcess() (int, string) {
	e.t.Helper()
	var pid int
	var cmdline string
	ok := eventually(20*time.Second, func() bool {
		waiting := e.waitingCodex()
		var live []string
		for _, p := range e.codexProcesses() {
			if id, _, _ := strings.Cut(p, ": "); waiting[id] {
				live = append(live, p)
			}
		}
		if len(live) != 1 {
			return false
		}
		id, c, _ := strings.Cut(live[0], ": ")
		pid, _ = strconv.Atoi(id)
		cmdline = c
		return true
	})
	if !ok {
		e.t.Fatalf("no single waiting codex; waiting %v among %v", e.waitingCodex(), e.codexProcesses())
	}
	return pid, cmdline
}

// awaitGone waits until no process has pid.
func awaitGone(t *testing.T, pid int) {
	t.Helper()
	if !eventually(5*time.Second, func() bool {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		return err != nil || strings.Contains(string(b), ") Z ")
	}) {
		t.Errorf("process %d still runs", pid)
	}
}

// With exec, each session's next codex is started before its prompt: after
// session/new, and after each turn for the next (a resume of the thread).
// The prompt is written to it; a turn behaves as before.
func TestExecStartsCodexAheadOfThePrompt(t *testing.T) {
	e := start(t, setup{backend: "exec", fs: true})
	first, cmdline := e.waitingProcess()
	if strings.Contains(cmdline, " resume ") {
		t.Errorf("the first turn's codex resumes: %s", cmdline)
	}
	e.mock.Enqueue(mockapi.Reply(mockapi.Message("first answer")))
	if r := e.mustPrompt("first question"); r.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("stopReason = %q", r.StopReason)
	}
	if !strings.Contains(e.stderr.String(), `msg="waiting codex takes its prompt" pid=`+strconv.Itoa(first)) {
		t.Errorf("the prompt did not go to the waiting codex %d", first)
	}
	if got := agentText(e); !strings.Contains(got, "first answer") {
		t.Errorf("agent text = %q", got)
	}
	next, cmdline := e.waitingProcess()
	if next == first || !strings.Contains(cmdline, " resume ") {
		t.Errorf("after the turn, waiting codex %d: %s; want a resume of the thread", next, cmdline)
	}
	e.mock.Enqueue(mockapi.Reply(mockapi.Message("second answer")))
	e.mustPrompt("second question")
	if !strings.Contains(e.stderr.String(), `msg="waiting codex takes its prompt" pid=`+strconv.Itoa(next)) {
		t.Errorf("the second prompt did not go to the waiting codex %d", next)
	}
	reqs := e.mock.Requests()
	if len(reqs) != 2 || !slices.ContainsFunc(reqs[1].Texts("assistant"), func(s string) bool { return strings.Contains(s, "first answer") }) {
		t.Errorf("the second turn did not continue the thread: %d requests", len(reqs))
	}
}

// A change of mode, model or effort changes codex's command line: the
// waiting codex is replaced, and the next turn runs with the new settings.
func TestExecWaitingCodexFollowsSettings(t *testing.T) {
	e := start(t, setup{backend: "exec", fs: true})
	pid, _ := e.waitingProcess()
	if _, err := e.editor.Conn.SetSessionMode(e.ctx, acpsdk.SetSessionModeRequest{SessionId: e.session, ModeId: "full-access"}); err != nil {
		t.Fatal(err)
	}
	awaitGone(t, pid)
	pid, cmdline := e.waitingProcess()
	if !strings.Contains(cmdline, "-s danger-full-access") {
		t.Errorf("after set_mode full-access the waiting codex runs %s", cmdline)
	}
	for option, value := range map[string]string{"model": "gpt-6-luna", "reasoning_effort": "high"} {
		if _, err := e.editor.Conn.SetSessionConfigOption(e.ctx, acpsdk.SetSessionConfigOptionRequest{ValueId: &acpsdk.SetSessionConfigOptionValueId{
			SessionId: e.session, ConfigId: acpsdk.SessionConfigId(option), Value: acpsdk.SessionConfigValueId(value)}}); err != nil {
			t.Fatalf("set %s: %v", option, err)
		}
		awaitGone(t, pid)
		pid, cmdline = e.waitingProcess()
	}
	if !strings.Contains(cmdline, "-m gpt-6-luna") || !strings.Contains(cmdline, `model_reasoning_effort="high"`) {
		t.Errorf("the waiting codex runs %s", cmdline)
	}
	e.mock.Enqueue(mockapi.Reply(mockapi.Message("ok")))
	e.mustPrompt("hi")
	if !strings.Contains(e.stderr.String(), `msg="waiting codex takes its prompt" pid=`+strconv.Itoa(pid)) {
		t.Errorf("the prompt did not go to the waiting codex %d", pid)
	}
	if m := string(e.mock.Requests()[0].Raw); !strings.Contains(m, `"gpt-6-luna"`) {
		t.Errorf("the model was not asked with the chosen model")
	}
}

// session/close, cancel and the agent's exit leave no codex behind; a
// waiting codex that died is replaced without the user noticing.
func TestExecWaitingCodexIsReaped(t *testing.T) {
	t.Run("close", func(t *testing.T) {
		e := start(t, setup{backend: "exec", fs: true})
		pid, _ := e.waitingProcess()
		if _, err := e.editor.Conn.CloseSession(e.ctx, acpsdk.CloseSessionRequest{SessionId: e.session}); err != nil {
			t.Fatal(err)
		}
		awaitGone(t, pid)
		if !eventually(5*time.Second, func() bool { return len(e.sessionProcesses()) == 0 }) {
			t.Errorf("codex processes after session/close: %v", e.sessionProcesses())
		}
	})
	t.Run("cancel", func(t *testing.T) {
		e := start(t, setup{backend: "exec", fs: true})
		resp, hold := mockapi.Hang(mockapi.Reasoning("working on it"))
		e.mock.Enqueue(resp)
		defer hold.Release()
		done := e.promptAsync("long task")
		select {
		case <-hold.Reached():
		case <-time.After(60 * time.Second):
			t.Fatal("codex never reached the model")
		}
		running := e.sessionProcesses()
		e.cancelAndExpectCancelled(done)
		for _, p := range running {
			id, _, _ := strings.Cut(p, ": ")
			pid, _ := strconv.Atoi(id)
			awaitGone(t, pid)
		}
		// What remains is the next turn's codex, waiting.
		if _, cmdline := e.waitingProcess(); !strings.Contains(cmdline, " resume ") {
			t.Errorf("after cancel the waiting codex runs %s", cmdline)
		}
		// The waiting codex's own start runs short-lived helpers
		// (lsb_release and its shells) that can lose their parent link for
		// a moment; what the cancelled turn left would stay.
		if !eventually(10*time.Second, func() bool { return len(e.turnProcesses()) == 0 }) {
			t.Errorf("codex processes left after cancel: %v", e.turnProcesses())
		}
	})
	t.Run("exit", func(t *testing.T) {
		e := start(t, setup{backend: "exec", fs: true})
		pid, _ := e.waitingProcess()
		e.stop()
		// Ended by the agent itself (codexexec.Backend.Close), not only by the
		// kernel's parent-death signal.
		if !strings.Contains(e.stderr.String(), `msg="waiting codex ended" pid=`+strconv.Itoa(pid)) {
			t.Errorf("the agent exited without ending its waiting codex %d", pid)
		}
		awaitGone(t, pid)
		if !eventually(5*time.Second, func() bool { return len(e.codexProcesses()) == 0 }) {
			t.Errorf("codex processes after the agent exited: %v", e.codexProcesses())
		}
	})
	t.Run("died while waiting", func(t *testing.T) {
		e := start(t, setup{backend: "exec", fs: true})
		pid, _ := e.waitingProcess()
		p, err := os.FindProcess(pid)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Kill(); err != nil {
			t.Fatal(err)
		}
		// Reaped by the agent, which then knows it is gone.
		if !eventually(5*time.Second, func() bool {
			_, err := os.Stat("/proc/" + strconv.Itoa(pid))
			return err != nil
		}) {
			t.Fatalf("the killed codex %d was not reaped", pid)
		}
		e.mock.Enqueue(mockapi.Reply(mockapi.Message("still here")))
		if r := e.mustPrompt("hello"); r.StopReason != acpsdk.StopReasonEndTurn {
			t.Errorf("stopReason = %q", r.StopReason)
		}
		if got := agentText(e); !strings.Contains(got, "still here") {
			t.Errorf("agent text = %q", got)
		}
	})
}
