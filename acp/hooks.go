package acp

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/backend"
)

// Permission options of the question whether to trust a hook.
const (
	optHookTrust  = "trust"
	optHookReject = "reject"
)

// hooksCommand lists the codex hooks of the session's workspace (/hooks),
// or asks the user whether to trust the untrusted ones (/hooks trust), or
// one of them by its number in the list (/hooks trust 2).
func (a *Agent) hooksCommand(ctx context.Context, s *session, args string) (string, error) {
	t, _ := a.turn(ctx, s, "")
	list, err := a.opts.Backend.Hooks(ctx, t)
	if err != nil {
		return "", err
	}
	sub, rest, _ := strings.Cut(args, " ")
	switch sub {
	case "":
		return hooksText(list), nil
	case "trust":
		return a.trustHooks(ctx, s, t, list, strings.TrimSpace(rest))
	}
	return "", invalidParams("/hooks takes nothing (list the hooks), trust, or trust <number>, e.g. /hooks trust 1")
}

// hooksText lists the hooks, numbered, with what each runs and its trust.
func hooksText(list backend.HookList) string {
	var b strings.Builder
	if len(list.Hooks) == 0 {
		b.WriteString("Codex has no hooks for this workspace. (A project's hooks, in .codex/hooks.json or .codex/config.toml, load only in a project codex trusts.)\n")
	} else {
		b.WriteString("**Codex hooks**\n\n")
		untrusted := 0
		for i, h := range list.Hooks {
			fmt.Fprintf(&b, "%d. %s — %s — %s\n", i+1, hookWhen(h), hookRuns(h), hookTrust(h))
			if h.NeedsTrust() {
				untrusted++
			}
		}
		if untrusted > 0 {
			fmt.Fprintf(&b, "\nCodex runs a hook only once you trust it. /hooks trust asks you about each untrusted one (%d), /hooks trust <number> about one.\n", untrusted)
		}
	}
	for _, w := range list.Warnings {
		fmt.Fprintf(&b, "\n⚠ %s\n", w)
	}
	for _, e := range list.Errors {
		fmt.Fprintf(&b, "\n⚠ %s: %s\n", e.Path, e.Message)
	}
	return b.String()
}

// hookWhen says when codex runs the hook, and where it is defined.
func hookWhen(h backend.Hook) string {
	s := "on " + h.Event
	if h.Matcher != "" {
		s += " (matching `" + h.Matcher + "`)"
	}
	s += ", " + h.Source
	if h.SourcePath != "" {
		s += " (" + h.SourcePath + ")"
	}
	if !h.Enabled {
		s += ", disabled"
	}
	return s
}

// hookRuns says what the hook runs.
func hookRuns(h backend.Hook) string {
	switch h.Handler {
	case backend.HookCommand:
		return "runs `" + clip(h.Command, 1024) + "`"
	case backend.HookMCPTool:
		return "calls tool " + h.Tool + " of MCP server " + h.Server
	}
	return "a " + h.Handler + " hook"
}

func hookTrust(h backend.Hook) string {
	switch h.Trust {
	case backend.HookTrusted:
		return "trusted"
	case backend.HookManaged:
		return "managed (trusted by your administrator)"
	case backend.HookModified:
		return "**changed since you trusted it: not run until trusted again**"
	case backend.HookUntrusted:
		return "**not trusted: not run**"
	}
	return h.Trust
}

// trustHooks asks the user about each hook to trust (which: "" for every
// untrusted one, or a number of the list) and records the trust of those
// the user trusts, as each answer comes. Nothing is trusted without a yes.
func (a *Agent) trustHooks(ctx context.Context, s *session, t backend.Turn, list backend.HookList, which string) (string, error) {
	var asked []int
	if which == "" {
		for i, h := range list.Hooks {
			if h.NeedsTrust() {
				asked = append(asked, i)
			}
		}
		if len(asked) == 0 {
			return "No hook needs trusting.\n\n" + hooksText(list), nil
		}
	} else {
		n, err := strconv.Atoi(which)
		if err != nil || n < 1 || n > len(list.Hooks) {
			return "", invalidParams(fmt.Sprintf("/hooks trust takes the number of a hook in /hooks' list (1 to %d)", len(list.Hooks)))
		}
		h := list.Hooks[n-1]
		if !h.NeedsTrust() {
			return fmt.Sprintf("Hook %d is %s already: nothing to do.", n, hookTrust(h)), nil
		}
		asked = []int{n - 1}
	}
	var b strings.Builder
	for _, i := range asked {
		h := list.Hooks[i]
		yes, err := a.askTrustHook(ctx, s, i+1, h)
		if err != nil {
			return "", err
		}
		if !yes {
			a.log.Info("hook not trusted: the user declined", "session", s.id, "hook", h.Key)
			fmt.Fprintf(&b, "Hook %d not trusted: codex does not run it.\n", i+1)
			continue
		}
		if err := a.opts.Backend.TrustHook(ctx, t, h.Key, h.Hash); err != nil {
			return b.String(), fmt.Errorf("trusting hook %d: %w", i+1, err)
		}
		a.log.Info("hook trusted", "session", s.id, "hook", h.Key)
		fmt.Fprintf(&b, "Hook %d trusted: codex runs it from now on, until it changes.\n", i+1)
	}
	if after, err := a.opts.Backend.Hooks(ctx, t); err == nil {
		b.WriteString("\n" + hooksText(after))
	}
	return b.String(), nil
}

// askTrustHook asks the user whether to trust hook n, showing what it runs
// and when. Only the trust option is a yes: a dismissed question, another
// answer or a failed request is a no; a cancelled prompt is an error.
func (a *Agent) askTrustHook(ctx context.Context, s *session, n int, h backend.Hook) (bool, error) {
	detail := fmt.Sprintf("Codex runs this %s hook %s:\n\n", h.Source, hookWhen(h))
	if h.Handler == backend.HookCommand {
		detail += "```\n" + clip(h.Command, 8192) + "\n```\n"
	} else {
		detail += hookRuns(h) + "\n"
	}
	if h.Trust == backend.HookModified {
		detail += "\nIt changed since you last trusted it."
	}
	detail += "\nTrusting it lets codex run it from now on, without asking, until it changes."
	call := acpsdk.ToolCallUpdate{
		ToolCallId: acpsdk.ToolCallId(fmt.Sprintf("hook-trust-%d-%d", n, questionSeq.Add(1))),
		Title:      acpsdk.Ptr(fmt.Sprintf("Trust codex hook %d (%s)?", n, h.Event)),
		Kind:       acpsdk.Ptr(acpsdk.ToolKindExecute),
		Status:     acpsdk.Ptr(acpsdk.ToolCallStatusPending),
		Content:    []acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(detail))},
	}
	if h.Handler == backend.HookCommand {
		call.RawInput = map[string]any{"command": h.Command, "event": h.Event, "source": h.SourcePath}
	}
	resp, err := a.conn.RequestPermission(ctx, acpsdk.RequestPermissionRequest{
		SessionId: acpsdk.SessionId(s.id),
		ToolCall:  call,
		Options: []acpsdk.PermissionOption{
			{OptionId: optHookTrust, Name: "Trust it", Kind: acpsdk.PermissionOptionKindAllowAlways},
			{OptionId: optHookReject, Name: "Don't trust it", Kind: acpsdk.PermissionOptionKindRejectOnce},
		},
	})
	switch {
	case ctx.Err() != nil:
		return false, context.Cause(ctx)
	case err != nil:
		a.log.Warn("hook trust question failed: not trusted", "session", s.id, "err", err)
		return false, nil
	}
	return resp.Outcome.Selected != nil && resp.Outcome.Selected.OptionId == optHookTrust, nil
}
