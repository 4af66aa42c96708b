package acp

import (
	"context"
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

// Options of the switch_mode question: "implement:<mode>" per mode that can
// edit, and planStay.
const (
	optImplementPrefix = "implement:"
	optPlanStay        = "stay"
)
