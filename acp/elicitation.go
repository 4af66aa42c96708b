package acp

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/internal/forms"
)

// ACP's elicitation/create (unstable) requires the session it belongs to
// (sessionId), which acp-go-sdk v0.13.0's UnstableCreateElicitationRequest
// cannot carry. The agent therefore sends its own request type under
// extCreateElicitation, an extension method the SDK sends as it is, and the
// output writer gives it its ACP name (acpMethodName). The editor's answer
// matches by id and comes back through the SDK.
const (
	methodCreateElicitation = "elicitation/create"
	extCreateElicitation    = "_codexacp/elicitation/create"
)

// asksForms reports whether the editor declared form elicitation
// (clientCapabilities.elicitation.form) and has not refused it since.
func (a *Agent) asksForms() bool {
	form, _ := a.elicitationModes()
	return form
}

// elicitationModes reports which elicitations the editor declared
// (clientCapabilities.elicitation.form and .url), none once it answered
// elicitation/create "method not found".
func (a *Agent) elicitationModes() (form, url bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	e := a.clientCaps.Elicitation
	if e == nil || a.formsRefused {
		return false, false
	}
	return e.Form != nil, e.Url != nil
}

// askForm puts codex's questions to the editor as one form. A failed
// request (the editor's error, a cancelled turn: the SDK then sends
// $/cancel_request, ACP's way to withdraw a request) or an unreadable
// answer leaves them unanswered. An editor that declared form elicitation
// but answers "method not found" does not have it after all: ok is false
// (the caller asks permission questions instead), and the agent asks it
// no more forms.
func (o *turnOutput) askForm(ctx context.Context, qs []backend.UserQuestion) (answers map[string][]string, ok bool) {
	f := forms.NewQuestionForm(qs)
	raw, err := o.elicit(ctx, forms.Request{Mode: "form", Message: f.Message, RequestedSchema: &f.Schema})
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return map[string][]string{}, true
	case isMethodNotFound(err):
		return nil, false
	default:
		o.log.Warn("questions to the user failed", "err", err)
		return map[string][]string{}, true
	}
	answers, err = f.Answers(raw, o.log)
	if err != nil {
		o.log.Warn("questions to the user: unusable answer", "err", err)
		return map[string][]string{}, true
	}
	return answers, true
}

// elicit sends the editor an elicitation/create of the session and returns
// its answer. An editor that declared elicitation but answers "method not
// found" does not have it after all: the agent asks it no more
// (elicitationModes), codex's questions go as permission questions and an
// MCP server's are declined.
func (o *turnOutput) elicit(ctx context.Context, req forms.Request) (json.RawMessage, error) {
	return o.a.elicit(ctx, o.s, req)
}

// elicit is turnOutput.elicit for any request of the session, a turn's or
// a command's.
func (a *Agent) elicit(ctx context.Context, s *session, req forms.Request) (json.RawMessage, error) {
	req.SessionID = s.id
	raw, err := a.conn.CallExtension(ctx, extCreateElicitation, req)
	if err != nil && ctx.Err() == nil && isMethodNotFound(err) {
		a.log.Warn("the editor declared elicitation but has no elicitation/create: it is asked no more", "session", s.id, "err", err)
		a.mu.Lock()
		a.formsRefused = true
		a.mu.Unlock()
	}
	return raw, err
}

// acpMethodName gives an outbound extCreateElicitation request its ACP
// method name; any other line comes back unchanged. The SDK writes
// "jsonrpc", "id" and "method" first, so the method sits near the start
// (the pattern cannot occur inside a JSON string: its quotes would be
// escaped); decoding the line confirms it is the top-level method.
func acpMethodName(line []byte) []byte {
	ext := []byte(`"method":"` + extCreateElicitation + `"`)
	i := bytes.Index(line[:min(len(line), 200)], ext)
	if i < 0 {
		return line
	}
	var m struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(line, &m) != nil || m.Method != extCreateElicitation {
		return line
	}
	out := make([]byte, 0, len(line))
	out = append(out, line[:i]...)
	out = append(out, `"method":"`+methodCreateElicitation+`"`...)
	return append(out, line[i+len(ext):]...)
}
