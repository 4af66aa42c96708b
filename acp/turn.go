package acp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/codex/proc"
)

// The turn: everything between a prompt having the session's turn and its
// answer. runTurn hands one turn to the backend and ends it (tool calls,
// translator, record); the queue lets one prompt at a time run; a prompt
// sent meanwhile is steered into the running turn or queued; cancel
// generations decide which prompts a session/cancel covers; an approved
// plan runs its follow-up turn (afterPlanTurn) within the same prompt.
//
// A prompt sent while one of the session's turns runs is never lost and
// never cancels that turn (see docs/codex-app-server.md, "Steering"):
//   - steered: on a backend that can (the app-server, turn/steer), it joins
//     the running turn, and answers when that turn ends, with its stop
//     reason (or its error);
//   - queued: otherwise (the exec backend, or the turn did not start, or
//     codex refused the steer: the turn was ending), it waits and runs as
//     the next turn, prompts in the order they came.
//
// session/cancel ends the running turn and every prompt sent before it:
// steered ones answer cancelled with the turn they joined, queued ones
// answer cancelled without running. A prompt sent after a cancel (while the
// cancelled turn winds down) is not cancelled: it queues, and runs.

// turnQueue lets one prompt at a time run a session's turn, and the waiting
// ones go in the order they came (a sync.Mutex does not promise that).
type turnQueue struct {
	mu      sync.Mutex
	busy    bool
	waiting []chan struct{} // closed when its prompt is handed the turn
}

// acquire waits for the session's turn, or ctx. On success the caller must
// release.
func (q *turnQueue) acquire(ctx context.Context) error {
	q.mu.Lock()
	if !q.busy {
		q.busy = true
		q.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	q.waiting = append(q.waiting, ch)
	q.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
	}
	q.mu.Lock()
	for i, w := range q.waiting {
		if w == ch {
			q.waiting = append(q.waiting[:i], q.waiting[i+1:]...)
			q.mu.Unlock()
			return context.Cause(ctx)
		}
	}
	q.mu.Unlock()
	// Handed the turn while giving up: pass it on.
	q.release()
	return context.Cause(ctx)
}

// tryAcquire takes the session's turn if no prompt has it or waits for
// it; on success the caller must release.
func (q *turnQueue) tryAcquire() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.busy {
		return false
	}
	q.busy = true
	return true
}

// isBusy reports whether a prompt has the turn.
func (q *turnQueue) isBusy() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.busy
}

// release hands the turn to the prompt that waited longest.
func (q *turnQueue) release() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.waiting) == 0 {
		q.busy = false
		return
	}
	ch := q.waiting[0]
	q.waiting = q.waiting[1:]
	close(ch)
}

// runningTurn is one Prompt's turn (with the follow-up turn a plan's
// approval starts) as prompts that join it see it.
type runningTurn struct {
	ctx  context.Context // the turn's: done once it is cancelled
	done chan struct{}   // closed when the Prompt running it has its answer
	resp acpsdk.PromptResponse
	err  error
}

// joinable is the running turn a new prompt may be steered into: nil when
// none runs or it is being cancelled (a prompt after a cancel is a new turn).
func (s *session) joinable() *runningTurn {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running == nil || s.running.ctx.Err() != nil {
		return nil
	}
	return s.running
}

// steer tries to hand the prompt to the running turn. ok is false when it
// was not (nothing runs, the backend cannot steer, codex refused): the
// prompt then queues for a turn of its own.
func (a *Agent) steer(ctx context.Context, s *session, text string, images []backend.Image) (resp acpsdk.PromptResponse, err error, ok bool) {
	if !a.can(backend.Steer) {
		return resp, nil, false
	}
	rt := s.joinable()
	if rt == nil {
		return resp, nil, false
	}
	log := a.log.With("session", s.id)
	if err := a.opts.Backend.Steer(ctx, s.id, text, images); err != nil {
		log.Info("the running turn cannot take the prompt", "err", err)
		return resp, nil, false
	}
	log.Info("prompt steered into the running turn")
	select {
	case <-rt.done:
	case <-ctx.Done():
		return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonCancelled}, nil, true
	}
	// The usage is the turn's: the prompt that started it reports it.
	return acpsdk.PromptResponse{StopReason: rt.resp.StopReason}, rt.err, true
}

// newPrompt registers a prompt and returns its generation, and a context
// done at the next session/cancel (which covers the prompt from now on,
// whatever it is waiting for). It does not touch the running turn: the
// prompt joins it or waits for it (turn.go).
func (s *session) newPrompt() (gen uint64, cancelled context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.latest++
	if s.latest > s.read {
		// A prompt the guard did not count (a handler later than the
		// cancel's bound, or one counted on a session object a load then
		// replaced): without this, the next cancel would find its own
		// prompt counted as registered and not wait for it.
		s.read = s.latest
	}
	if s.latest >= s.read && s.caughtUp != nil {
		close(s.caughtUp)
		s.caughtUp = nil
	}
	if s.nextCancel == nil {
		s.nextCancel, s.fireCancel = context.WithCancel(context.Background())
	}
	return s.latest, s.nextCancel
}

// promptCancelled reports whether a session/cancel came after the prompt
// of generation gen was registered, or the session closed.
func (s *session) promptCancelled(gen uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed || gen <= s.cancelledTo
}

// beginTurn is called with the session's turn acquired. It reports false
// when a session/cancel came after the prompt was sent, or the session
// closed; otherwise the turn is the session's running one until endTurn.
func (s *session) beginTurn(ctx context.Context, gen uint64, cancel context.CancelCauseFunc) (*runningTurn, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || gen <= s.cancelledTo {
		return nil, false
	}
	s.cancel = cancel
	s.running = &runningTurn{ctx: ctx, done: make(chan struct{})}
	return s.running, true
}

// endTurn records the turn's answer for the prompts that joined it.
func (s *session) endTurn(rt *runningTurn, resp acpsdk.PromptResponse, err error) {
	s.mu.Lock()
	s.cancel = nil
	s.running = nil
	s.mu.Unlock()
	rt.resp, rt.err = resp, err
	close(rt.done)
}

func (s *session) cancelTurn(cause error) {
	s.mu.Lock()
	cancel := s.cancel
	s.mu.Unlock()
	if cancel != nil {
		cancel(cause)
	}
}

// promptRead notes a session/prompt the input guard read and passed on:
// its handler, started later on a goroutine of the SDK's, registers it
// (newPrompt).
func (s *session) promptRead() {
	s.mu.Lock()
	s.read++
	s.mu.Unlock()
}

// promptRegisterBound is how long a session/cancel waits for the handlers of
// the prompts read before it to register them: microseconds as a rule. The
// wait holds the editor's whole input (the guard reads on after the cancel).
const promptRegisterBound = time.Second

// awaitReadPrompts returns once every prompt read so far has registered, or
// after bound: then the prompts still missing are given up on (one that
// registers later counts as sent after the cancel). It reports whether it
// gave up.
func (s *session) awaitReadPrompts(bound time.Duration) (gaveUp bool) {
	s.mu.Lock()
	if s.latest >= s.read {
		s.mu.Unlock()
		return false
	}
	if s.caughtUp == nil {
		s.caughtUp = make(chan struct{})
	}
	caughtUp := s.caughtUp
	s.mu.Unlock()
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case <-caughtUp:
		return false
	case <-t.C:
		s.mu.Lock()
		if s.latest < s.read {
			s.read = s.latest
		}
		if s.caughtUp != nil {
			close(s.caughtUp)
			s.caughtUp = nil
		}
		s.mu.Unlock()
		return true
	}
}

// cancelPrompts is session/cancel: the running turn ends, and a prompt
// still waiting for it to finish answers cancelled instead of starting. It
// covers every prompt the input guard read before it, registered or not
// yet (awaitReadPrompts).
func (s *session) cancelPrompts(registerBound time.Duration) (gaveUp bool) {
	gaveUp = s.awaitReadPrompts(registerBound)
	s.mu.Lock()
	s.cancelledTo = s.latest
	if s.fireCancel != nil {
		s.fireCancel()
		s.nextCancel, s.fireCancel = nil, nil
	}
	s.mu.Unlock()
	s.cancelTurn(errCancelledByClient)
	return gaveUp
}

// runTurn runs spec as the session's next turn, with the prompt's images;
// text is what the user typed.
func (a *Agent) runTurn(ctx context.Context, s *session, text string, images []backend.Image, spec turnSpec) (_ acpsdk.PromptResponse, err error) {
	defer a.answerPanic("prompt turn", &err) // the turn still ends (endTurn)
	turn, window := a.turn(ctx, s, text)
	spec.apply(&turn)
	if spec.review == nil && !spec.compact {
		turn.Images = images
	}
	s.trMu.Lock()
	s.translator.SetContextWindow(window)
	s.trMu.Unlock()
	log := a.log.With("session", s.id)
	log.Info("turn started", "resume", turn.ThreadID != "", "mode", turn.Mode, "images", len(turn.Images))

	s.trMu.Lock()
	s.translator.BeginTurn()
	s.trMu.Unlock()
	// What the turn changes is recorded for /undo (undo.go) until after
	// its answer, however it ends.
	a.beginUndoTurn(s)
	defer a.endUndoTurn(s)
	s.startToolCalls(ctx)
	out := &turnOutput{a: a, s: s, ctx: ctx, log: log}
	runErr := a.opts.Backend.Run(ctx, turn, out)
	// The backend is done with the turn; its tool calls end with it, before the answer.
	grace := toolCallGrace
	if a.opts.toolCallGrace > 0 {
		grace = a.opts.toolCallGrace
	}
	for _, id := range s.finishToolCalls(grace) {
		log.Warn("file-tool call still running at the end of the turn", "call", id)
		a.sendUpdate(ctx, s.id, failedUpdate(id, "The turn ended before this tool call finished; nothing more will be written."))
	}
	end := out.endTurn()
	for _, u := range end.Updates {
		a.sendUpdate(ctx, s.id, u)
	}
	if changed, title := s.turnEnded(text, end); changed {
		// A new thread or title: stored before the answer, so that the
		// conversation can be listed and loaded (by another agent process,
		// after a crash) once the editor has shown it.
		a.persist(s)
		if title != "" {
			// The automatic title (the first prompt's first line), as
			// session/list shows it; /rename changes it the same way.
			a.sendUpdate(ctx, s.id, titleUpdate(title))
		}
	} else {
		// Only the token totals and the time changed: stored while the
		// answer goes out. A crash in between leaves the previous totals.
		a.persistSoon(s)
	}
	a.prepareNext(context.WithoutCancel(ctx), s, true)

	if err := turnPanicked(ctx); err != nil {
		return acpsdk.PromptResponse{}, err
	}
	if ctx.Err() != nil {
		log.Info("turn cancelled", "cause", context.Cause(ctx))
		return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonCancelled}, nil
	}
	if end.Interrupted {
		// Codex ended the turn itself: the user cancelled a question.
		log.Info("turn interrupted by codex")
		return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonCancelled, Usage: end.Usage.ACP()}, nil
	}
	if end.FailedMessage != "" {
		return a.turnFailure(ctx, s, end, log)
	}
	if runErr != nil {
		log.Warn("codex run failed", "err", runErr)
		return acpsdk.PromptResponse{}, turnError(runErrorMessage(runErr))
	}
	if !end.Completed {
		return acpsdk.PromptResponse{}, turnError("Codex exited without completing the turn")
	}
	log.Info("turn completed")
	return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonEndTurn, Usage: end.Usage.ACP()}, nil
}

// prepareNext lets the backend get the session's next turn ready (the exec
// backend starts its codex, which then waits for the prompt). Outside a
// turn (afterTurn false) nothing happens while one runs: its end prepares.
func (a *Agent) prepareNext(ctx context.Context, s *session, afterTurn bool) {
	if !a.can(backend.Prepare) {
		return
	}
	t, _ := a.turn(ctx, s, "")
	// Checked and prepared under s.mu: close sets closed under it before
	// it makes the backend forget the session, so a closed session never
	// gets a waiting codex back.
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || (!afterTurn && s.cancel != nil) {
		return
	}
	a.opts.Backend.Prepare(t)
}

// turn describes the next turn of the session for the backend.
func (a *Agent) turn(ctx context.Context, s *session, text string) (backend.Turn, int) {
	t := backend.Turn{
		SessionID: s.id,
		Cwd:       s.cwd,
		Dirs:      s.dirs,
		ThreadID:  s.thread(),
		Prompt:    text,
		Mode:      s.currentMode(),
		Plan:      s.planning(),
		User:      s.user,
		EditorMCP: s.mcp,
	}
	// Codex's model catalog is ready by now unless the session was made
	// before it was (creating one waits for it). The wait ends with ctx:
	// the turn then lacks the model settings and the tools, and is not
	// run (its context is done).
	if !a.modelInfoReady(ctx) {
		return t, 0
	}
	var window int
	t.Model, t.Effort, window = a.turnModel(s)
	t.ServiceTier = a.turnServiceTier(s)
	if a.opts.Tools != nil {
		t.Tools = &backend.TurnTools{URL: a.opts.Tools.URL(), Token: s.toolsToken}
		if r := a.opts.Tools.Relay(); r != nil {
			t.Tools.Relay = &backend.ToolsRelay{Command: r.Command, Args: r.Args, Env: r.Env, TokenEnv: r.TokenEnv}
		}
		t.Catalog = a.modelInfo().Catalog
	}
	return t, window
}

func runErrorMessage(err error) string {
	var exit *proc.ExitError
	if errors.As(err, &exit) {
		return exit.Error()
	}
	return err.Error()
}

func turnError(msg string) *acpsdk.RequestError {
	return internalError(msg)
}

// takeProposedPlan returns the plan the last turn proposed, once.
func (s *session) takeProposedPlan() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.proposed
	s.proposed = ""
	return p
}

// afterPlanTurn runs once a turn of the prompt ended: when it was a
// plan-mode turn that proposed a plan, the editor is asked whether to carry
// it out, and on yes the implementing turn runs; its answer is the prompt's.
func (a *Agent) afterPlanTurn(ctx context.Context, s *session, resp acpsdk.PromptResponse, err error) (acpsdk.PromptResponse, error) {
	plan := s.takeProposedPlan()
	if err != nil || resp.StopReason != acpsdk.StopReasonEndTurn || plan == "" || !s.planning() {
		return resp, err
	}
	mode, ok := a.askImplement(ctx, s, plan)
	if ctx.Err() != nil {
		return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonCancelled, Usage: resp.Usage}, nil
	}
	if !ok {
		a.log.Info("plan kept; the session stays in plan mode", "session", s.id)
		return resp, nil
	}
	a.log.Info("plan approved; implementing", "session", s.id, "mode", mode)
	s.setPlanning(false)
	s.setMode(mode)
	a.persist(s)
	a.sendUpdate(ctx, s.id, acpsdk.SessionUpdate{CurrentModeUpdate: &acpsdk.SessionCurrentModeUpdate{
		SessionUpdate: "current_mode_update",
		CurrentModeId: acpsdk.SessionModeId(mode),
	}})
	a.sendUpdate(ctx, s.id, configUpdate(a.configOptions(s)))
	return a.runTurn(ctx, s, implementPrompt, nil, turnSpec{prompt: implementPrompt})
}

// askImplement asks the editor whether to leave plan mode and implement
// plan, and in which mode. ok is false when the user stays in plan mode or
// the question could not be answered.
func (a *Agent) askImplement(ctx context.Context, s *session, plan string) (backend.Mode, bool) {
	var opts []acpsdk.PermissionOption
	for _, m := range modes(s.user) {
		if m.mode == backend.ModeReadOnly {
			continue // cannot carry a plan out
		}
		opts = append(opts, acpsdk.PermissionOption{
			OptionId: acpsdk.PermissionOptionId(optImplementPrefix + string(m.mode)),
			Name:     "Yes, implement it in " + m.name + " mode",
			Kind:     acpsdk.PermissionOptionKindAllowOnce,
		})
	}
	opts = append(opts, acpsdk.PermissionOption{OptionId: optPlanStay, Name: "No, keep planning", Kind: acpsdk.PermissionOptionKindRejectOnce})
	s.mu.Lock()
	s.planAsks++
	id := acpsdk.ToolCallId(fmt.Sprintf("plan-switch-%d", s.planAsks))
	s.mu.Unlock()
	resp, err := a.conn.RequestPermission(ctx, acpsdk.RequestPermissionRequest{
		SessionId: acpsdk.SessionId(s.id),
		ToolCall: acpsdk.ToolCallUpdate{
			ToolCallId: id,
			Title:      acpsdk.Ptr("Leave plan mode and implement the plan?"),
			Kind:       acpsdk.Ptr(acpsdk.ToolKindSwitchMode),
			Status:     acpsdk.Ptr(acpsdk.ToolCallStatusPending),
			Content:    []acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(clip(plan, 16384)))},
		},
		Options: opts,
	})
	if err != nil {
		if ctx.Err() == nil {
			a.log.Warn("plan switch question failed", "session", s.id, "err", err)
		}
		return "", false
	}
	if resp.Outcome.Selected == nil {
		return "", false
	}
	m, ok := strings.CutPrefix(string(resp.Outcome.Selected.OptionId), optImplementPrefix)
	if !ok {
		return "", false
	}
	return parseMode(m, s.user)
}
