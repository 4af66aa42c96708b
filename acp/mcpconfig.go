package acp

import (
	"fmt"
	"strconv"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"
)

// ownServerName is the MCP server name codex knows our file tools by.
const ownServerName = "acp"

// mcpSetup is how the editor's MCP servers reach codex: -c overrides, and
// environment variables carrying HTTP header values.
type mcpSetup struct {
	config []string // mcp_servers.NAME={...}, without an approval mode (see execConfig)
	env    []string // KEY=VALUE for the codex process
	// thread is the same for an app-server thread's config, where header
	// values go inline: the thread's config travels over the app-server's
	// stdin, and the process's environment is shared by every session.
	thread map[string]any
}

// clientMCPConfig turns the editor's MCP servers into codex -c overrides
// (mcp_servers.NAME={...}). Names are sanitised to what codex accepts as a
// TOML bare key; a name that collides with ours or with an earlier server
// gets a numeric suffix. HTTP header values (often credentials) travel in
// the environment through env_http_headers, so they never appear on codex's
// command line. (Stdio servers' env stays inline: passing it through
// codex's own environment could change codex itself, e.g. OPENAI_API_KEY.)
func clientMCPConfig(servers []acpsdk.McpServer) (mcpSetup, error) {
	used := map[string]bool{ownServerName: true}
	out := mcpSetup{thread: map[string]any{}}
	for i, srv := range servers {
		var name, table string
		var value map[string]any
		switch {
		case srv.Stdio != nil:
			s := srv.Stdio
			if s.Command == "" {
				return mcpSetup{}, fmt.Errorf("mcpServers[%d] (%s): command is empty", i, s.Name)
			}
			env := make([][2]string, 0, len(s.Env))
			for _, e := range s.Env {
				env = append(env, [2]string{e.Name, e.Value})
			}
			name = s.Name
			envMap := map[string]any{}
			for _, e := range s.Env {
				envMap[e.Name] = e.Value
			}
			value = map[string]any{"command": s.Command, "args": append([]string{}, s.Args...), "env": envMap}
			table = "{" + strings.Join([]string{
				"command=" + tomlString(s.Command),
				"args=" + tomlStringArray(s.Args),
				"env=" + tomlInlineTable(env),
			}, ", ") + "}"
		case srv.Http != nil:
			s := srv.Http
			if s.Url == "" {
				return mcpSetup{}, fmt.Errorf("mcpServers[%d] (%s): url is empty", i, s.Name)
			}
			name = s.Name
			headers := make([][2]string, 0, len(s.Headers))
			inline := map[string]any{}
			for j, h := range s.Headers {
				inline[h.Name] = h.Value
				envName := fmt.Sprintf("CODEXACP_MCP_HEADER_%d_%d", i, j)
				headers = append(headers, [2]string{h.Name, envName})
				out.env = append(out.env, envName+"="+h.Value)
			}
			table = "{url=" + tomlString(s.Url) + ", env_http_headers=" + tomlInlineTable(headers) + "}"
			value = map[string]any{"url": s.Url, "http_headers": inline}
		default:
			return mcpSetup{}, fmt.Errorf("mcpServers[%d]: only stdio and http servers are supported", i)
		}
		key := uniqueName(sanitizeName(name), used)
		out.config = append(out.config, "mcp_servers."+key+"="+table)
		out.thread["mcp_servers."+key] = value
	}
	return out, nil
}

// execConfig is config for a codex exec turn in mode. Codex asks before it
// runs an MCP tool it cannot tell is read-only (no readOnlyHint), and codex
// exec has no one to ask: under its approval policy "never" such a call
// fails ("MCP tool call requires approval, but approval policy is never").
// So in auto and full-access the editor's servers are registered with
// default_tools_approval_mode="approve": their tools run as the editor's
// configuration has them, as they would in the editor's other agents. In
// read-only mode only their read-only tools run: nothing there may change
// anything, and an MCP server runs outside codex's sandbox. Ask mode
// refuses them too: it must not run without a question what its name says
// it asks about, and exec cannot ask (execAskNote tells the model why).
// (The app-server backend puts each such call to the user instead; see
// mcpapproval.go.)
func (m mcpSetup) execConfig(mode Mode) []string {
	out := make([]string, len(m.config))
	for i, c := range m.config {
		if mode != ModeReadOnly && mode != ModeAsk {
			c = strings.TrimSuffix(c, "}") + `, default_tools_approval_mode="approve"}`
		}
		out[i] = c
	}
	return out
}

// execAskNote is what the model is told, on exec in ask mode with editor
// MCP servers, about their refused tools, so that it can tell the user
// why and what to do; "" otherwise.
func (m mcpSetup) execAskNote(mode Mode) string {
	if mode != ModeAsk || len(m.config) == 0 {
		return ""
	}
	return "\nTools of the editor's other MCP servers that are not read-only are refused in this session's Ask mode: codex exec cannot ask the user to approve them. If the user needs one, tell them so and that Auto mode, or codexacp's app-server backend (which asks), runs it."
}

func sanitizeName(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "server"
	}
	return b.String()
}

func uniqueName(name string, used map[string]bool) string {
	candidate := name
	for n := 2; used[candidate]; n++ {
		candidate = name + "_" + strconv.Itoa(n)
	}
	used[candidate] = true
	return candidate
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 || r == 0x7f {
				fmt.Fprintf(&b, `\u%04X`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

func tomlStringArray(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = tomlString(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// tomlInlineTable renders key/value string pairs; keys are always quoted so
// any name survives.
func tomlInlineTable(kv [][2]string) string {
	parts := make([]string, len(kv))
	for i, p := range kv {
		parts[i] = tomlString(p[0]) + "=" + tomlString(p[1])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
