package acp

import (
	"context"
	"encoding/json"
	"errors"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/internal/recovery"
)

// Panics (internal/recovery): the SDK runs each request on a goroutine of
// its own and recovers nothing, so a bug in one handler would end the
// process and every session in it. rescued is the Agent the SDK is given:
// each request handler's panic is logged with its stack and answered
// -32603 for that request alone. A turn's events and command approvals
// arrive on the backend's goroutines: a panic there ends that turn with an
// error (turnOutput.recoverTurn, turnPanicked). Background goroutines defer
// recovery.Recover where they start.

// rescued is the Agent with every request handler guarded. A handler added
// to Agent must get its method here too, or it is served unguarded.
type rescued struct{ *Agent }

// answerPanic, deferred directly by a handler, turns its panic into the
// request's -32603.
func (a *Agent) answerPanic(method string, errp *error) {
	if e := recovery.Handle(a.log, method, recover()); e != nil {
		*errp = internalError(e.Error())
	}
}

func (r rescued) Initialize(ctx context.Context, req acpsdk.InitializeRequest) (_ acpsdk.InitializeResponse, err error) {
	defer r.answerPanic("initialize", &err)
	return r.Agent.Initialize(ctx, req)
}

func (r rescued) Authenticate(ctx context.Context, req acpsdk.AuthenticateRequest) (_ acpsdk.AuthenticateResponse, err error) {
	defer r.answerPanic("authenticate", &err)
	return r.Agent.Authenticate(ctx, req)
}

func (r rescued) UnstableLogout(ctx context.Context, req acpsdk.UnstableLogoutRequest) (_ acpsdk.UnstableLogoutResponse, err error) {
	defer r.answerPanic("logout", &err)
	return r.Agent.UnstableLogout(ctx, req)
}

func (r rescued) NewSession(ctx context.Context, req acpsdk.NewSessionRequest) (_ acpsdk.NewSessionResponse, err error) {
	defer r.answerPanic("session/new", &err)
	return r.Agent.NewSession(ctx, req)
}

func (r rescued) LoadSession(ctx context.Context, req acpsdk.LoadSessionRequest) (_ acpsdk.LoadSessionResponse, err error) {
	defer r.answerPanic("session/load", &err)
	return r.Agent.LoadSession(ctx, req)
}

func (r rescued) ResumeSession(ctx context.Context, req acpsdk.ResumeSessionRequest) (_ acpsdk.ResumeSessionResponse, err error) {
	defer r.answerPanic("session/resume", &err)
	return r.Agent.ResumeSession(ctx, req)
}

func (r rescued) ListSessions(ctx context.Context, req acpsdk.ListSessionsRequest) (_ acpsdk.ListSessionsResponse, err error) {
	defer r.answerPanic("session/list", &err)
	return r.Agent.ListSessions(ctx, req)
}

func (r rescued) UnstableForkSession(ctx context.Context, req acpsdk.UnstableForkSessionRequest) (_ acpsdk.UnstableForkSessionResponse, err error) {
	defer r.answerPanic("session/fork", &err)
	return r.Agent.UnstableForkSession(ctx, req)
}

func (r rescued) CloseSession(ctx context.Context, req acpsdk.CloseSessionRequest) (_ acpsdk.CloseSessionResponse, err error) {
	defer r.answerPanic("session/close", &err)
	return r.Agent.CloseSession(ctx, req)
}

func (r rescued) SetSessionMode(ctx context.Context, req acpsdk.SetSessionModeRequest) (_ acpsdk.SetSessionModeResponse, err error) {
	defer r.answerPanic("session/set_mode", &err)
	return r.Agent.SetSessionMode(ctx, req)
}

func (r rescued) SetSessionConfigOption(ctx context.Context, req acpsdk.SetSessionConfigOptionRequest) (_ acpsdk.SetSessionConfigOptionResponse, err error) {
	defer r.answerPanic("session/set_config_option", &err)
	return r.Agent.SetSessionConfigOption(ctx, req)
}

func (r rescued) Prompt(ctx context.Context, req acpsdk.PromptRequest) (_ acpsdk.PromptResponse, err error) {
	defer r.answerPanic("session/prompt", &err)
	return r.Agent.Prompt(ctx, req)
}

func (r rescued) Cancel(ctx context.Context, req acpsdk.CancelNotification) (err error) {
	defer r.answerPanic("session/cancel", &err)
	return r.Agent.Cancel(ctx, req)
}

func (r rescued) HandleExtensionMethod(ctx context.Context, method string, params json.RawMessage) (_ any, err error) {
	defer r.answerPanic(method, &err)
	return r.Agent.HandleExtensionMethod(ctx, method, params)
}

var (
	_ acpsdk.Agent                  = rescued{}
	_ acpsdk.AgentLoader            = rescued{}
	_ acpsdk.ExtensionMethodHandler = rescued{}
)

// recoverTurn, deferred directly where a backend's goroutine enters the
// turn (an event, a command approval), ends the turn on a panic: its
// answer is then the panic's -32603 (turnPanicked).
func (o *turnOutput) recoverTurn(what string) {
	if e := recovery.Handle(o.log, what, recover()); e != nil {
		o.s.cancelTurn(e)
	}
}

// turnPanicked is the answer of a turn that a panic ended (ctx is the
// turn's), or nil.
func turnPanicked(ctx context.Context) error {
	var pe *recovery.PanicError
	if errors.As(context.Cause(ctx), &pe) {
		return internalError(pe.Error())
	}
	return nil
}
