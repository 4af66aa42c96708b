package appserver

import (
	"context"
	"encoding/json"

	"github.com/codexacp/codexacp/backend"
	codexapp "github.com/codexacp/codexacp/codex/appserver"
	"github.com/codexacp/codexacp/codex/appserver/protocol"
)

// What the app-server backend does for plan mode (the agent's side is
// acp/plan.go): turns with codex's collaborationMode, the proposed plan
// handed to the agent, and codex's questions to the user.

// threadSettings is what thread/start and thread/resume answer about the
// thread's model and collaboration mode.
type threadSettings struct {
	Model             string
	CollaborationMode *protocol.CollaborationMode
}

func (b *Backend) noteSettings(thread string, ts threadSettings) {
	b.mu.Lock()
	defer b.mu.Unlock()
	cur := b.settings[thread]
	if ts.Model != "" {
		cur.Model = ts.Model
	}
	if ts.CollaborationMode != nil {
		cur.CollaborationMode = ts.CollaborationMode
	}
	b.settings[thread] = cur
}

// collaborationMode is the turn/start collaborationMode of a turn on
// thread: plan for a plan-mode turn, default for the first turn after one
// (codex keeps a thread's mode for its next turns), else nil (codex's own
// default: nothing is sent). Codex requires a model with it; it takes
// precedence over the turn's model and effort, which it carries.
func (b *Backend) collaborationMode(t backend.Turn, thread string) *protocol.CollaborationMode {
	b.mu.Lock()
	defer b.mu.Unlock()
	ts := b.settings[thread]
	wasPlan := ts.CollaborationMode != nil && ts.CollaborationMode.Mode == protocol.ModePlan
	if !t.Plan && !wasPlan {
		return nil
	}
	mode := protocol.ModeDefault
	if t.Plan {
		mode = protocol.ModePlan
	}
	ts.CollaborationMode = &protocol.CollaborationMode{Mode: mode}
	b.settings[thread] = ts
	// nil (null) instructions: codex's built-in ones for the mode.
	return &protocol.CollaborationMode{Mode: mode, Settings: &protocol.CollaborationModeSettings{
		Model: firstNonEmpty(t.Model, ts.Model), ReasoningEffort: t.Effort}}
}

// notePlan hands the turn's proposed plan (a completed plan item) to the
// agent; h.mu is held.
func (h *TurnHandler) notePlan(n notice) {
	if n.Item.Type != protocol.ItemPlan || n.Item.Text == "" {
		return
	}
	h.out.ProposedPlan(n.Item.Text)
}

// userInput answers item/tool/requestUserInput: the questions go to the
// user; whatever is not answered is left out, which codex reads as declined.
func (h *TurnHandler) userInput(ctx context.Context, params json.RawMessage) (any, error) {
	p, err := protocol.ToolRequestUserInput.Decode(params)
	if err != nil {
		return nil, &codexapp.RPCError{Code: protocol.CodeInvalidParams, Message: "codexacp: unreadable requestUserInput: " + err.Error()}
	}
	qs := make([]backend.UserQuestion, 0, len(p.Questions))
	for _, q := range p.Questions {
		uq := backend.UserQuestion{ID: q.ID, Header: q.Header, Question: q.Question, Other: q.IsOther, Secret: q.IsSecret}
		for _, o := range q.Options {
			uq.Options = append(uq.Options, backend.UserOption{Label: o.Label, Description: o.Description})
		}
		qs = append(qs, uq)
	}
	answers := map[string]protocol.ToolRequestUserInputAnswer{}
	if ctx.Err() == nil {
		for id, a := range h.out.AskUser(ctx, p.ItemID, qs) {
			answers[id] = protocol.ToolRequestUserInputAnswer{Answers: a}
		}
	}
	h.log.Info("questions to the user", "item", p.ItemID, "asked", len(qs), "answered", len(answers))
	return protocol.ToolRequestUserInputResponse{Answers: answers}, nil
}
