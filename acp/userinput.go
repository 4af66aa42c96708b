package acp

import (
	"context"
	"fmt"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/backend"
)

// AskUser implements userAsker. To an editor that declares form
// elicitation (clientCapabilities.elicitation.form) codex's questions go as
// one elicitation/create form (askForm, elicitation.go), which can also ask
// free-text questions. Otherwise (or when the editor turns out to have no
// elicitation/create after all) each question that has options becomes a
// permission question (its options are the answers; a free-text question
// cannot be asked that way and stays unanswered), and a dismissed question,
// a failed request or a cancelled turn leaves the rest unanswered.
func (o *turnOutput) AskUser(ctx context.Context, itemID string, qs []backend.UserQuestion) map[string][]string {
	ctx, stop := mergeContext(ctx, o.ctx)
	defer stop()
	if len(qs) > 0 && o.a.asksForms() {
		if answers, ok := o.askForm(ctx, qs); ok {
			return answers
		}
	}
	answers := map[string][]string{}
	for _, q := range qs {
		if ctx.Err() != nil {
			break
		}
		if len(q.Options) == 0 {
			o.log.Info("question without options not asked: the editor offers no elicitation", "question", q.ID)
			continue
		}
		label, ok := o.askOption(ctx, itemID, q)
		if !ok {
			break
		}
		answers[q.ID] = []string{label}
	}
	return answers
}

// askOption asks one question as a permission request; ok is false when
// the user dismissed it.
func (o *turnOutput) askOption(ctx context.Context, itemID string, q backend.UserQuestion) (string, bool) {
	var opts []acpsdk.PermissionOption
	for i, opt := range q.Options {
		name := opt.Label
		if opt.Description != "" {
			name += " — " + opt.Description
		}
		opts = append(opts, acpsdk.PermissionOption{
			OptionId: acpsdk.PermissionOptionId(fmt.Sprintf("answer-%d", i)),
			Name:     name,
			Kind:     acpsdk.PermissionOptionKindAllowOnce,
		})
	}
	opts = append(opts, acpsdk.PermissionOption{OptionId: "decline", Name: "Don't answer", Kind: acpsdk.PermissionOptionKindRejectOnce})
	title := firstNonEmpty(q.Header, "Codex asks")
	resp, err := o.a.conn.RequestPermission(ctx, acpsdk.RequestPermissionRequest{
		SessionId: acpsdk.SessionId(o.s.id),
		ToolCall: acpsdk.ToolCallUpdate{
			ToolCallId: acpsdk.ToolCallId("question-" + itemID + "-" + q.ID),
			Title:      acpsdk.Ptr(clip(title, 200)),
			Kind:       acpsdk.Ptr(acpsdk.ToolKindOther),
			Status:     acpsdk.Ptr(acpsdk.ToolCallStatusPending),
			Content:    []acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(clip(q.Question, 4096)))},
		},
		Options: opts,
	})
	if err != nil {
		if ctx.Err() == nil {
			o.log.Warn("question to the user failed", "err", err)
		}
		return "", false
	}
	if resp.Outcome.Selected == nil {
		return "", false
	}
	var i int
	if _, err := fmt.Sscanf(string(resp.Outcome.Selected.OptionId), "answer-%d", &i); err != nil || i < 0 || i >= len(q.Options) {
		return "", false
	}
	return q.Options[i].Label, true
}
