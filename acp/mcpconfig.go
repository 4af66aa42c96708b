package acp

import (
	"fmt"
	"strconv"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/backend"
)

// clientMCPConfig turns the editor's MCP servers into the servers codex
// is given (each backend renders them: -c overrides for exec, thread
// config for the app-server). Names are sanitised to what codex accepts as
// a TOML bare key; a name that collides with ours or with an earlier
// server gets a numeric suffix.
func clientMCPConfig(servers []acpsdk.McpServer) ([]backend.MCPServer, error) {
	used := map[string]bool{backend.OwnServerName: true}
	var out []backend.MCPServer
	for i, srv := range servers {
		var s backend.MCPServer
		switch {
		case srv.Stdio != nil:
			in := srv.Stdio
			if in.Command == "" {
				return nil, fmt.Errorf("mcpServers[%d] (%s): command is empty", i, in.Name)
			}
			s = backend.MCPServer{Name: in.Name, Command: in.Command, Args: append([]string{}, in.Args...)}
			for _, e := range in.Env {
				s.Env = append(s.Env, backend.KeyValue{Name: e.Name, Value: e.Value})
			}
		case srv.Http != nil:
			in := srv.Http
			if in.Url == "" {
				return nil, fmt.Errorf("mcpServers[%d] (%s): url is empty", i, in.Name)
			}
			s = backend.MCPServer{Name: in.Name, URL: in.Url}
			for _, h := range in.Headers {
				s.Headers = append(s.Headers, backend.KeyValue{Name: h.Name, Value: h.Value})
			}
		default:
			return nil, fmt.Errorf("mcpServers[%d]: only stdio and http servers are supported", i)
		}
		s.Name = uniqueName(sanitizeName(s.Name), used)
		out = append(out, s)
	}
	return out, nil
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
