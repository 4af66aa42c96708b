package acp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/codex"
	"github.com/codexacp/codexacp/internal/images"
)

// Prompt implements acpsdk.Agent: it runs one codex turn and returns when codex
// has finished and every update of the turn has been sent. A prompt sent
// while a turn runs joins it or waits for it (steer.go).
func (a *Agent) Prompt(ctx context.Context, req acpsdk.PromptRequest) (acpsdk.PromptResponse, error) {
	s, err := a.session(req.SessionId)
	if err != nil {
		return acpsdk.PromptResponse{}, err
	}
	text, images, err := promptContent(req.Prompt)
	if err != nil {
		return acpsdk.PromptResponse{}, invalidParams(err.Error())
	}
	// Registered before anything waits: a session/cancel from now on covers
	// this prompt, as it covers every prompt sent before it (steer.go).
	gen, cancelled := s.newPrompt()
	// The SDK cancels a session's running prompt when another one for the
	// session arrives, which would turn every steer into a cancel, and a
	// slash command still waiting for the session's commands into text for
	// codex: a prompt ends through session/cancel (cancelled), the
	// session's close, or the connection's end (which closes every
	// session), not through the request's context.
	ctx = context.WithoutCancel(ctx)
	untilCancel, stopWait := mergeContext(ctx, cancelled)
	defer stopWait()
	// A slash command the session offers runs as such (commands.go); any
	// other text, an unknown "/foo" included, goes to codex as typed. A
	// cancel while the commands are awaited answers cancelled: nothing ran.
	s.commandsAnnounced(untilCancel)
	if s.promptCancelled(gen) {
		return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonCancelled}, nil
	}
	spec := turnSpec{prompt: text}
	command := false
	if name, args, ok := parseCommand(text); ok {
		if c, ok := a.findCommand(s, name); ok {
			if c.local != nil {
				return a.runLocal(untilCancel, s, c, args)
			}
			if spec, err = c.turn(s, args); err != nil {
				return acpsdk.PromptResponse{}, err
			}
			if len(images) > 0 && (spec.review != nil || spec.compact) {
				// Codex's review and compaction take no images: refused,
				// not silently dropped.
				return acpsdk.PromptResponse{}, invalidParams(fmt.Sprintf("/%s takes no images: send it without them (attach images to an ordinary prompt)", c.name))
			}
			if spec.plan {
				if resp, done := a.planCommand(ctx, s, spec); done {
					return resp, nil
				}
			}
			a.log.Info("command runs as a turn", "session", s.id, "command", c.name)
			command = true
		}
	}

	// A turn runs: join it, or wait for it (steer.go). A command's turn
	// waits: it is a turn of its own.
	if !command {
		if resp, err, ok := a.steer(ctx, s, text, images); ok {
			return resp, err
		}
	}
	if s.turns.isBusy() {
		a.log.Info("prompt queued behind the running turn", "session", s.id)
	}
	if err := s.turns.acquire(ctx); err != nil {
		return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonCancelled}, nil
	}
	defer s.turns.release()

	turnCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	rt, ok := s.beginTurn(turnCtx, gen, cancel)
	if !ok {
		return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonCancelled}, nil
	}
	resp, err := a.runTurn(turnCtx, s, text, images, spec)
	resp, err = a.afterPlanTurn(turnCtx, s, resp, err)
	s.endTurn(rt, resp, err)
	return resp, err
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
		log.Warn("turn failed", "message", end.FailedMessage)
		return acpsdk.PromptResponse{}, turnFailed(end.FailedMessage)
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
		t.Catalog = a.modelInfo().Catalog
	}
	return t, window
}

func runErrorMessage(err error) string {
	var exit *codex.ExitError
	if errors.As(err, &exit) {
		return exit.Error()
	}
	return err.Error()
}

func turnError(msg string) *acpsdk.RequestError {
	return internalError(msg)
}

// promptContent flattens the prompt's content blocks into the text codex
// reads and the images that go with it (attached before the text, as codex
// itself does). Resource links become references codex can open with its
// tools; embedded text resources are inlined with their URI.
func promptContent(blocks []acpsdk.ContentBlock) (string, []backend.Image, error) {
	var parts []string
	var imgs []backend.Image
	for i, b := range blocks {
		switch {
		case b.Text != nil:
			parts = append(parts, b.Text.Text)
		case b.ResourceLink != nil:
			l := b.ResourceLink
			parts = append(parts, fmt.Sprintf("[@%s](%s)", l.Name, l.Uri))
		case b.Resource != nil && b.Resource.Resource.TextResourceContents != nil:
			r := b.Resource.Resource.TextResourceContents
			parts = append(parts, fmt.Sprintf("<context ref=%q>\n%s\n</context>", r.Uri, r.Text))
		case b.Resource != nil:
			return "", nil, fmt.Errorf("prompt block %d: binary resources are not supported", i)
		case b.Image != nil:
			img, err := images.FromBlock(b.Image)
			if err != nil {
				return "", nil, fmt.Errorf("prompt block %d: %w", i, err)
			}
			imgs = append(imgs, img)
		case b.Audio != nil:
			return "", nil, fmt.Errorf("prompt block %d: audio is not supported", i)
		default:
			return "", nil, fmt.Errorf("prompt block %d: unknown content type", i)
		}
	}
	text := strings.Join(parts, "\n")
	if strings.TrimSpace(text) == "" {
		if len(imgs) > 0 {
			// codex exec refuses a prompt without text; both backends agree.
			return "", nil, errors.New("the prompt has only images: add text saying what to do with them")
		}
		return "", nil, errors.New("the prompt is empty")
	}
	return text, imgs, nil
}
