package acp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/codex"
	"github.com/codexacp/codexacp/internal/secrets"
)

// Auth method ids (the ids codex-acp uses; acpx authenticates with
// openai-api-key when OPENAI_API_KEY is set in its environment).
const (
	AuthChatGPT      = "chatgpt"
	AuthOpenAIAPIKey = "openai-api-key"
	AuthCodexAPIKey  = "codex-api-key"
)

// authKeyVars are the API-key methods and the variable each one needs.
var authKeyVars = []struct{ id, env, name string }{
	{AuthOpenAIAPIKey, "OPENAI_API_KEY", "OpenAI API key"},
	{AuthCodexAPIKey, "CODEX_API_KEY", "Codex API key"},
}

// Auth is how the agent tells whether codex can sign in to its model
// provider, and the sign-in methods it offers. The zero value (no
// LoginStatus) treats codex as logged in.
type Auth struct {
	// LoginStatus checks codex's stored login now (`codex login status`):
	// its kind and a nil error when logged in, an error wrapping
	// codex.ErrNotLoggedIn when not, another error when it could not tell
	// (then sessions are not held up).
	LoginStatus func(ctx context.Context) (codex.Login, error)
	// StartupStatus, when set, is the first LoginStatus result, checked in
	// the background at start-up; it may block until that check is done.
	StartupStatus func(ctx context.Context) (codex.Login, error)
	// Logout removes codex's stored login (`codex logout`). Nil: no logout.
	Logout func(ctx context.Context) error
	// CustomProvider is the model provider the user configured when it is
	// not OpenAI's: no sign-in is needed or offered then.
	CustomProvider string
	// EnvKeys: turns pass OPENAI_API_KEY or CODEX_API_KEY from the agent's
	// environment on to codex (the exec backend), so a key set there is a
	// way to sign in. Codex app-server reads neither
	// (docs/codex.md#pinned-codex-facts).
	EnvKeys bool
	// SaveAPIKey, when set, makes key codex's login and checks that codex
	// now reports an API-key login (the app-server backend: its
	// account/login/start and account/read, the key sent on the process's
	// stdin). Codex saves it in its home as `codex login --with-api-key`
	// does, replacing the login stored there, so authenticate calls it only
	// when LoginStatus says codex has none, or an API key. It does not check the key with
	// OpenAI: nothing does before the first model request. Set, the API-key
	// methods are offered.
	SaveAPIKey func(ctx context.Context, key string) error
	// Getenv reads the agent's environment; nil: os.Getenv.
	Getenv func(string) string
	// LoginCommand is the command line, argv[0] first, that runs `codex
	// login` in a terminal (`codexacp … login`), for clients that run
	// terminal sign-in; the terminal method appends only its last
	// element to the agent's own command. Empty: no terminal method.
	LoginCommand []string
}

// authState caches codex's login status, for the process: a login, or a
// status that could not be told, is kept; "not logged in" is not, so that
// a user who runs `codex login` in a terminal needs no authenticate.
type authState struct {
	mu          sync.Mutex
	checked     bool
	err         error // the cached LoginStatus result
	startupUsed bool  // StartupStatus's answer was taken
}

// loggedIn returns the cached login status, checking it first if needed.
func (a *Agent) loggedIn(ctx context.Context) error {
	auth := a.opts.Auth
	a.auth.mu.Lock()
	defer a.auth.mu.Unlock()
	if a.auth.checked {
		return a.auth.err
	}
	check := auth.LoginStatus
	if auth.StartupStatus != nil && !a.auth.startupUsed {
		check = auth.StartupStatus
	}
	_, err := check(ctx)
	if ctx.Err() != nil {
		return err // not cached: this request was cancelled
	}
	a.auth.startupUsed = true
	a.cacheLogin(err)
	return err
}

// setLoggedIn records a fresh login status.
func (a *Agent) setLoggedIn(err error) {
	a.auth.mu.Lock()
	a.cacheLogin(err)
	a.auth.mu.Unlock()
}

// cacheLogin keeps err as the login status unless it is "not logged in"
// (a.auth.mu held).
func (a *Agent) cacheLogin(err error) {
	a.auth.checked = !errors.Is(err, errNotLoggedIn)
	a.auth.err = err
}

func (a *Agent) getenv(key string) string {
	if a.opts.Auth.Getenv != nil {
		return a.opts.Auth.Getenv(key)
	}
	return os.Getenv(key)
}

// authNeeded reports whether sign-in methods apply at all.
func (a *Agent) authNeeded() bool {
	return a.opts.Auth.LoginStatus != nil && a.opts.Auth.CustomProvider == ""
}

// requireAuth answers session/new, load and resume: nil when codex can
// sign in (a custom provider, an API key in the environment that turns
// pass on, or a stored codex login), else auth_required (-32000) saying
// what to do. A login status that could not be told does not hold the
// session up (the turn will say what is wrong).
func (a *Agent) requireAuth(ctx context.Context) error {
	if !a.authNeeded() {
		return nil
	}
	if a.opts.Auth.EnvKeys {
		for _, k := range authKeyVars {
			if a.getenv(k.env) != "" {
				return nil
			}
		}
	}
	err := a.loggedIn(ctx)
	if err == nil {
		return nil
	}
	if !errors.Is(err, errNotLoggedIn) {
		if ctx.Err() != nil {
			return err
		}
		a.log.Warn("cannot tell whether codex is logged in; going on", "err", err)
		return nil
	}
	return authRequired(a.signInHelp())
}

// errNotLoggedIn is what Auth.LoginStatus wraps when codex is not logged in.
var errNotLoggedIn = codex.ErrNotLoggedIn

func authRequired(msg string) *acpsdk.RequestError {
	e := acpsdk.NewAuthRequired(map[string]any{"message": msg})
	e.Message += ": " + msg
	return e
}

// signInHelp says how to sign in, for auth_required and failed
// authenticate answers.
func (a *Agent) signInHelp() string {
	msg := "codex is not signed in. Sign in with ChatGPT: run `codex login` in a terminal (or choose \"Log in with ChatGPT\")"
	switch {
	case a.opts.Auth.EnvKeys:
		msg += ", or set OPENAI_API_KEY or CODEX_API_KEY in the agent's environment (in Zed: \"env\" of this agent in agent_servers settings)"
	case a.opts.Auth.SaveAPIKey != nil:
		msg += ", or set OPENAI_API_KEY or CODEX_API_KEY in the agent's environment (in Zed: \"env\" of this agent in agent_servers settings) and choose that API-key method"
	default:
		msg += ", or save an API key for codex: `printenv OPENAI_API_KEY | codex login --with-api-key`"
	}
	return msg + "; then try again."
}

// authMethods are the sign-in methods initialize offers: none with a
// custom provider, else ChatGPT (a terminal method where the client runs
// them) and, where turns pass keys on or codex can be given one, the two
// API-key variables.
func (a *Agent) authMethods(caps acpsdk.ClientCapabilities) []acpsdk.AuthMethod {
	methods := []acpsdk.AuthMethod{}
	if !a.authNeeded() {
		return methods
	}
	const name = "Log in with ChatGPT"
	desc := "Sign in with your ChatGPT account through codex's own login (`codex login`)."
	var meta map[string]any
	login := a.opts.Auth.LoginCommand
	if zed, _ := caps.Meta["terminal-auth"].(bool); zed && len(login) > 0 {
		// Zed's convention before typed terminal methods: a command line.
		meta = map[string]any{"terminal-auth": map[string]any{
			"command": login[0], "args": login[1:], "label": "codex login",
		}}
	}
	switch {
	case caps.Auth.Terminal && len(login) > 0:
		methods = append(methods, acpsdk.AuthMethod{Terminal: &acpsdk.AuthMethodTerminalInline{
			Id: AuthChatGPT, Name: name, Description: acpsdk.Ptr(desc + " Opens a terminal that runs it."),
			Args: login[len(login)-1:], Meta: meta,
		}})
	default:
		methods = append(methods, acpsdk.AuthMethod{Agent: &acpsdk.AuthMethodAgent{
			Id: AuthChatGPT, Name: name, Description: acpsdk.Ptr(desc + " Run `codex login` in a terminal first, then choose this."),
			Meta: meta,
		}})
	}
	if a.keyMethods() {
		desc := "Use an OpenAI API key from %s in the agent's environment."
		if !a.opts.Auth.EnvKeys {
			desc = "Save the API key from %s in the agent's environment as codex's login (as `codex login --with-api-key` does), replacing an API key saved earlier; a ChatGPT login codex has is kept (as is any other that is not an API key): to use the key instead, run `codex logout` first."
		}
		for _, k := range authKeyVars {
			methods = append(methods, acpsdk.AuthMethod{EnvVar: &acpsdk.AuthMethodEnvVarInline{
				Id: k.id, Name: k.name,
				Description: acpsdk.Ptr(fmt.Sprintf(desc, k.env)),
				Link:        acpsdk.Ptr("https://platform.openai.com/api-keys"),
				Vars:        []acpsdk.AuthEnvVar{{Name: k.env, Label: acpsdk.Ptr(k.name), Secret: true}},
			}})
		}
	}
	return methods
}

// keyMethods reports whether the API-key methods are offered.
func (a *Agent) keyMethods() bool {
	return a.opts.Auth.EnvKeys || a.opts.Auth.SaveAPIKey != nil
}

// authenticate checks that the chosen method works now: for ChatGPT,
// codex's stored login; for an API key, that the variable is set and, where
// codex is given the key (SaveAPIKey), that codex reports it as its login.
// Whether OpenAI accepts the key is known at the first model request only.
func (a *Agent) authenticate(ctx context.Context, method string) error {
	if !a.authNeeded() {
		return invalidParams("no sign-in is needed: codex uses the configured model provider " +
			quoteOr(a.opts.Auth.CustomProvider, "as it is"))
	}
	if method == AuthChatGPT {
		_, err := a.opts.Auth.LoginStatus(ctx)
		if ctx.Err() != nil {
			return err
		}
		a.setLoggedIn(err)
		if err == nil {
			return nil
		}
		if errors.Is(err, errNotLoggedIn) {
			return authRequired("codex is not logged in. Run `codex login` in a terminal (it opens the browser; `codex login --device-auth` on a machine without one), then try again.")
		}
		return authRequired("cannot check codex's login: " + err.Error())
	}
	for _, k := range authKeyVars {
		if method != k.id || !a.keyMethods() {
			continue
		}
		key := strings.TrimSpace(a.getenv(k.env))
		if key == "" {
			return authRequired(k.env + " is not set in the agent's environment. Set it where the editor starts the agent (in Zed: \"env\" of this agent in agent_servers settings) and restart the agent.")
		}
		if a.opts.Auth.SaveAPIKey == nil {
			return nil // codex exec reads it from the environment each turn
		}
		// Saving replaces whatever login codex's home holds (a ChatGPT
		// login's tokens included; docs/codex.md#pinned-codex-facts), so a
		// login codex has is kept, as codex exec keeps it over a key in the
		// environment — unless it is an API key saved earlier: the user
		// chose this method because codex's key no longer works (revoked,
		// rotated), and keeping it would answer the next turn 401 again.
		// An unreadable status saves nothing.
		switch login, err := a.opts.Auth.LoginStatus(ctx); {
		case ctx.Err() != nil:
			return err
		case err == nil && login != codex.LoginAPIKey:
			a.log.Info("codex has a login of its own: kept, the API key is not saved", "login", login, "from", k.env)
			a.setLoggedIn(nil)
			return nil
		case err == nil:
			a.log.Info("codex's saved API key is replaced by the one from the environment", "from", k.env)
		case !errors.Is(err, errNotLoggedIn):
			return authRequired("cannot check codex's login, so the API key from " + k.env +
				" is not saved (it would replace a ChatGPT login): " + err.Error())
		}
		err := a.opts.Auth.SaveAPIKey(ctx, key)
		if ctx.Err() != nil {
			return err
		}
		if err != nil {
			// codex's parse errors may quote what they were sent.
			msg := strings.ReplaceAll(err.Error(), key, secrets.Redacted)
			return authRequired("codex did not take the API key from " + k.env + ": " + msg)
		}
		a.log.Info("codex signed in with an API key", "from", k.env)
		a.setLoggedIn(nil)
		return nil
	}
	return invalidParams("unknown authentication method " + quoteOr(method, "") + " (offered: " + a.methodIDs() + ")")
}

func (a *Agent) methodIDs() string {
	ids := ""
	for _, m := range a.authMethods(acpsdk.ClientCapabilities{}) {
		if ids != "" {
			ids += ", "
		}
		switch {
		case m.Agent != nil:
			ids += m.Agent.Id
		case m.EnvVar != nil:
			ids += m.EnvVar.Id
		}
	}
	return ids
}

func quoteOr(s, empty string) string {
	if s == "" {
		return empty
	}
	return "\"" + s + "\""
}

// UnstableLogout implements the unstable logout method: codex logout.
func (a *Agent) UnstableLogout(ctx context.Context, req acpsdk.UnstableLogoutRequest) (acpsdk.UnstableLogoutResponse, error) {
	if a.opts.Auth.Logout == nil {
		return acpsdk.UnstableLogoutResponse{}, acpsdk.NewMethodNotFound(acpsdk.AgentMethodLogout)
	}
	if err := a.opts.Auth.Logout(ctx); err != nil {
		return acpsdk.UnstableLogoutResponse{}, internalError("codex logout failed: " + err.Error())
	}
	a.setLoggedIn(errNotLoggedIn)
	return acpsdk.UnstableLogoutResponse{}, nil
}

// authCapabilities advertises logout where codex has a login to remove.
func (a *Agent) authCapabilities() acpsdk.AgentAuthCapabilities {
	if a.authNeeded() && a.opts.Auth.Logout != nil {
		return acpsdk.AgentAuthCapabilities{Logout: &acpsdk.LogoutCapabilities{}}
	}
	return acpsdk.AgentAuthCapabilities{}
}
