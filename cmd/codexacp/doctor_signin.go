package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/codexacp/codexacp/codex"
)

// checkSignIn checks that codex can reach its model the way the agent
// would sign it in (acp.Auth, prepareAuth): a custom model provider needs
// nothing; else codex's stored login (`codex login status`); else an API
// key in the agent's environment, which codex exec reads at each turn and
// the app-server only once the editor's API-key sign-in method hands it
// over. Nothing at all fails: the first session would answer
// auth_required.
func checkSignIn(ctx context.Context, o *options, path string, check func(string, bool, string), warn func(string, string)) {
	const name = "sign-in"
	if p := codex.CustomProvider(o.config); p != "" {
		check(name, true, fmt.Sprintf("custom model provider %q: no sign-in needed (codex uses its credentials)", p))
		return
	}
	_, err := codex.LoginStatus(ctx, path, o.config, nil)
	switch {
	case err == nil:
		check(name, true, "codex is logged in (codex login status)")
		return
	case !errors.Is(err, codex.ErrNotLoggedIn):
		warn(name, "cannot tell whether codex is signed in: "+err.Error())
		return
	}
	for _, k := range []struct{ env, method string }{
		{"OPENAI_API_KEY", "OpenAI API key"}, {"CODEX_API_KEY", "Codex API key"},
	} {
		if strings.TrimSpace(os.Getenv(k.env)) == "" {
			continue
		}
		if o.backend == backendExec {
			check(name, true, "no stored login; codex exec gets "+k.env+" from the agent's environment")
		} else {
			warn(name, fmt.Sprintf("no stored login; %s is set: choose the %q sign-in method in the editor (codexacp then saves it as codex's login; the app-server reads no key from its environment), or run `codex login`", k.env, k.method))
		}
		return
	}
	check(name, false, "codex is not signed in: run `codex login` in a terminal (`codex login --device-auth` without a browser), "+
		"or set OPENAI_API_KEY in the agent's environment (in Zed: \"env\" of the agent in agent_servers), "+
		"or configure a model provider of your own (model_provider in codex's config.toml)")
}
