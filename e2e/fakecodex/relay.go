package main

import (
	"context"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpServer is the agent's tool server as a thread's config names it: a
// streamable HTTP endpoint (url and token) or, as codexacp gives it where
// it can, a stdio server — the agent's relay (command, args and env, each
// joined by NUL so that the struct stays comparable).
type mcpServer struct{ url, token, command, args, env string }

// stdioServer is a stdio server entry; env holds its whole environment.
func stdioServer(command string, args []string, env map[string]string) mcpServer {
	vars := make([]string, 0, len(env))
	for k, v := range env {
		vars = append(vars, k+"="+v)
	}
	slices.Sort(vars)
	return mcpServer{command: command, args: strings.Join(args, "\x00"), env: strings.Join(vars, "\x00")}
}

// connect opens an MCP session on the server as codex does: over HTTP with
// the bearer token, or by starting the stdio server with its environment.
func (s mcpServer) connect(ctx context.Context) (*mcpsdk.ClientSession, error) {
	if s.command == "" {
		return connect(ctx, s.url, s.token)
	}
	var args []string
	if s.args != "" {
		args = strings.Split(s.args, "\x00")
	}
	cmd := exec.Command(s.command, args...)
	if s.env != "" {
		cmd.Env = strings.Split(s.env, "\x00")
	} else {
		cmd.Env = []string{}
	}
	client := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "fakecodex", Version: "replay"}, nil)
	return client.Connect(ctx, &mcpsdk.CommandTransport{Command: cmd}, nil)
}

var (
	tomlCommand = regexp.MustCompile(`\bcommand\s*=\s*("(?:[^"\\]|\\.)*")`)
	tomlArgs    = regexp.MustCompile(`\bargs\s*=\s*\[([^\]]*)\]`)
	tomlEnv     = regexp.MustCompile(`\benv\s*=\s*\{([^}]*)\}`)
	tomlEnvVars = regexp.MustCompile(`\benv_vars\s*=\s*\[([^\]]*)\]`)
	tomlStr     = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	tomlPair    = regexp.MustCompile(`([A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*")\s*=\s*("(?:[^"\\]|\\.)*")`)
)

// execStdioServer reads a stdio server from an exec -c inline table
// ({command="…", args=[…], env={K="V"}, env_vars=["NAME"]}): env_vars
// names variables codex passes on from its own environment (getenv).
func execStdioServer(table string, getenv func(string) string) (mcpServer, bool) {
	m := tomlCommand.FindStringSubmatch(table)
	if m == nil {
		return mcpServer{}, false
	}
	command := unquoteTOML(m[1])
	var args []string
	if m := tomlArgs.FindStringSubmatch(table); m != nil {
		for _, s := range tomlStr.FindAllString(m[1], -1) {
			args = append(args, unquoteTOML(s))
		}
	}
	env := map[string]string{}
	if m := tomlEnv.FindStringSubmatch(table); m != nil {
		for _, p := range tomlPair.FindAllStringSubmatch(m[1], -1) {
			env[unquoteTOML(p[1])] = unquoteTOML(p[2])
		}
	}
	if m := tomlEnvVars.FindStringSubmatch(table); m != nil {
		for _, s := range tomlStr.FindAllString(m[1], -1) {
			name := unquoteTOML(s)
			env[name] = getenv(name)
		}
	}
	return stdioServer(command, args, env), true
}

// unquoteTOML reads a TOML basic string (or a bare key) as Go reads a
// quoted string; the agent's strings need no more.
func unquoteTOML(s string) string {
	if !strings.HasPrefix(s, `"`) {
		return s
	}
	if u, err := strconv.Unquote(s); err == nil {
		return u
	}
	return strings.Trim(s, `"`)
}
