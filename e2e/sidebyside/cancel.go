//go:build unix

package main

import (
	"context"
	"fmt"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/e2e/mockapi"
)

// The cancel case (issue 24): a fresh agent, the prompt right after
// session/new, and session/cancel -cancel (500 ms) after the prompt. Did the
// model request go out before the cancel? A user who stops a prompt that
// soon has mostly seen it do nothing; the request being out means the
// agent's start-up no longer stands between the prompt and the model.

// Metric keys of the cancel case.
const (
	// mCancelSent counts the runs whose model request arrived before the
	// cancel was sent: "k/n".
	mCancelSent = "model request before a cancel (cold)"
	mCancelReq  = "prompt → model request (cancel run)"
)

// countMetric reports whether m is a count of runs ("k/n"): its samples
// are 1 or 0, summed rather than taken the median of.
func countMetric(m string) bool { return m == mCancelSent }

// runCancel starts a fresh agent and a fresh mock whose answer never comes
// (held open), sends the prompt right after session/new, then
// session/cancel after `after`. It records whether the mock had received
// the model request when the cancel was sent, and when it came; the
// prompt must end with stopReason cancelled. The agent is then ended as
// runCold's are.
func (r *runner) runCancel(c candidate, s *sample, env []string, cwd string, after time.Duration) (err error) {
	m, err := startModel()
	if err != nil {
		return err
	}
	defer m.Close()
	resp, hold := mockapi.Hang(mockapi.Reasoning("thinking"))
	defer hold.Release()
	m.main.Enqueue(resp)
	argv, extra, err := c.command(r.paths, m.URL())
	if err != nil {
		return err
	}
	agent, err := startAgentProc(argv, append(env, extra...), cwd, &stderrTail{})
	if err != nil {
		return err
	}
	defer func() {
		hold.Release() // codex may still wait for the answer: let it end
		err = agent.end("cancel run", err)
	}()
	ed := connectEditor(agent.stdin, agent.stdout)
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
	defer cancel()
	sess, err := ed.openSession(ctx, cwd)
	if err != nil {
		return err
	}
	type answer struct {
		resp acpsdk.PromptResponse
		err  error
	}
	answered := make(chan answer, 1)
	asked := time.Now()
	go func() {
		resp, err := ed.conn.Prompt(ctx, acpsdk.PromptRequest{SessionId: sess.SessionId, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock("say something")}})
		answered <- answer{resp, err}
	}()
	select {
	case a := <-answered:
		return fmt.Errorf("the prompt ended before the cancel (the model never answers): %+v, %v", a.resp, a.err)
	case <-time.After(after):
	}
	cancelled := time.Now()
	if err := ed.conn.Cancel(ctx, acpsdk.CancelNotification{SessionId: sess.SessionId}); err != nil {
		return fmt.Errorf("session/cancel: %w", err)
	}
	var a answer
	select {
	case a = <-answered:
	case <-ctx.Done():
		return fmt.Errorf("no answer to the prompt %s after its cancel", r.timeout)
	}
	if a.err != nil {
		return fmt.Errorf("prompt: %w", a.err)
	}
	if a.resp.StopReason != acpsdk.StopReasonCancelled {
		return fmt.Errorf("prompt: stop reason %s after session/cancel, want cancelled", a.resp.StopReason)
	}
	reqs := m.requestsSince(asked)
	sent := len(reqs) > 0 && asked.Add(reqs[0]).Before(cancelled)
	s.Values[mCancelSent] = 0
	if sent {
		s.Values[mCancelSent] = 1
	}
	if len(reqs) > 0 {
		s.Values[mCancelReq] = ms(reqs[0])
	} else {
		s.NA[mCancelReq] = "the model was never asked"
	}
	r.logf("  cancel %s after the prompt (sent %.1f ms after it): model requests at %v; before the cancel: %v",
		after, ms(cancelled.Sub(asked)), reqs, sent)
	return nil
}
