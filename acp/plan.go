package acp

import (
	"context"
	"fmt"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/backend"
)

// Plan mode (app-server only; see docs/codex-app-server.md, "Plan mode"):
// the session's collaboration_mode option is "plan" or "default". In plan
// mode every turn runs with codex's collaborationMode "plan": codex explores
// read-only, may ask the user questions (item/tool/requestUserInput), and
// ends with a proposed plan. The editor is then asked, with a switch_mode
// permission request, whether to leave plan mode and carry the plan out in
// one of the permission modes; yes switches the session to that mode and
// collaboration_mode "default" (both announced) and runs the follow-up turn
// implementPrompt within the same session/prompt, which answers when it
// ends; no (or a dismissed question) stays in plan mode.

const (
	configCollab  = "collaboration_mode"
	collabDefault = "default"
	collabPlan    = "plan"

	// implementPrompt is the follow-up turn an approved plan starts.
	implementPrompt = "Implement the plan."
)

// offersPlanMode: the app-server can run plan-mode turns (Turn.Plan);
// codex exec has no collaboration modes, so the exec backend offers none.
func (a *Agent) offersPlanMode() bool {
	return a.can(backend.Plan)
}

// planTurn is /plan [task]: plan mode on, then the task (if any) planned.
func planTurn(_ *session, args string) (turnSpec, error) {
	return turnSpec{prompt: args, plan: true}, nil
}

// planCommand switches the session to plan mode for /plan, announced like
// a change in the picker. Without a task that is all (done is true, and
// the prompt answers at once); with one, the task runs as a plan turn.
func (a *Agent) planCommand(ctx context.Context, s *session, spec turnSpec) (resp acpsdk.PromptResponse, done bool) {
	if !s.planning() {
		s.setPlanning(true)
		a.persist(s)
		a.sendUpdate(ctx, s.id, configUpdate(a.configOptions(s)))
		a.log.Info("plan mode on (/plan)", "session", s.id)
	}
	if strings.TrimSpace(spec.prompt) != "" {
		return resp, false
	}
	a.sendUpdate(ctx, s.id, acpsdk.UpdateAgentMessageText("Plan mode is on: codex will explore and propose a plan, and ask before implementing it. "+
		"Describe the task; choose Default in the Collaboration picker to leave."))
	return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonEndTurn}, true
}

// collabOption is the collaboration_mode picker; ok is false where plan
// mode is not offered.
func (a *Agent) collabOption(s *session) (acpsdk.SessionConfigOption, bool) {
	if !a.offersPlanMode() {
		return acpsdk.SessionConfigOption{}, false
	}
	current := collabDefault
	if s.planning() {
		current = collabPlan
	}
	choices := acpsdk.SessionConfigSelectOptionsUngrouped{
		selectOption(collabDefault, "Default", "Codex works on the task: reads, edits and runs commands as the mode allows."),
		selectOption(collabPlan, "Plan", "Codex explores and asks, then proposes a plan; nothing is edited until you approve it."),
	}
	o := selectConfig(configCollab, "Collaboration", acpsdk.SessionConfigOptionCategoryMode, current, choices)
	// Its own picker: the category "mode" is the permission mode's.
	o.Select.Category = nil
	return o, true
}

func (s *session) planning() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.plan
}

func (s *session) setPlanning(on bool) {
	s.mu.Lock()
	s.plan = on
	s.mu.Unlock()
}

// ProposedPlan implements backend.Output.
func (o *turnOutput) ProposedPlan(text string) {
	o.s.mu.Lock()
	o.s.proposed = text
	o.s.mu.Unlock()
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

// Options of the switch_mode question: "implement:<mode>" per mode that can
// edit, and planStay.
const (
	optImplementPrefix = "implement:"
	optPlanStay        = "stay"
)

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
