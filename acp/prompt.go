package acp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/internal/images"
)

// Prompt implements acpsdk.Agent: it runs one codex turn and returns when codex
// has finished and every update of the turn has been sent. A prompt sent
// while a turn runs joins it or waits for it (turn.go).
func (a *Agent) Prompt(ctx context.Context, req acpsdk.PromptRequest) (acpsdk.PromptResponse, error) {
	s, err := a.session(req.SessionId)
	if err != nil {
		return acpsdk.PromptResponse{}, err
	}
	if a.opts.beforePromptRegisters != nil {
		a.opts.beforePromptRegisters()
	}
	// Registered first: a session/cancel from now on covers this prompt, as
	// it covers every prompt sent before it; one the input guard read
	// before this registered waited for it (turn.go).
	gen, cancelled := s.newPrompt()
	text, images, err := promptContent(req.Prompt)
	if err != nil {
		return acpsdk.PromptResponse{}, invalidParams(err.Error())
	}
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
	// other text, an unknown "/foo" included, goes to codex as typed. Only
	// a "/name" not known yet waits, for the skills listing; a cancel during
	// that wait answers cancelled: nothing ran. Any other prompt goes on to
	// its turn at once.
	spec := turnSpec{prompt: text}
	command := false
	if name, args, ok := parseCommand(text); ok {
		a.awaitSkills(untilCancel, s, name)
		if s.promptCancelled(gen) {
			return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonCancelled}, nil
		}
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

	// A turn runs: join it, or wait for it (turn.go). A command's turn
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

// Cancel implements acpsdk.Agent. It only signals: the running Prompt answers
// "cancelled" once codex has stopped. (Sending a request from here would
// deadlock the SDK's notification loop.)
func (a *Agent) Cancel(ctx context.Context, req acpsdk.CancelNotification) error {
	s, err := a.session(req.SessionId)
	if err != nil {
		// A notification has no answer to carry the error, and a cancel
		// racing a close or a restart is harmless.
		a.log.Debug("session/cancel ignored", "session", req.SessionId, "err", err)
		return nil
	}
	bound := promptRegisterBound
	if a.opts.promptRegisterBound != nil {
		bound = a.opts.promptRegisterBound()
	}
	if s.cancelPrompts(bound) {
		a.log.Warn("session/cancel went on without a prompt read before it: its handler had not started", "session", s.id, "waited", bound)
	}
	return nil
}
