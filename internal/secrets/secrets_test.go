package secrets

import "testing"

func TestRedactArg(t *testing.T) {
	tests := []struct{ in, want string }{
		{`model="gpt-5.5"`, `model="gpt-5.5"`},
		{`mcp_servers.x={url="http://h/mcp", http_headers={"Authorization"="Bearer abc"}}`, `mcp_servers.x={url="http://h/mcp", http_headers={"Authorization"="[REDACTED]"}}`},
		{`mcp_servers.x={env={API_KEY='v', MODE="fast"}}`, `mcp_servers.x={env={API_KEY="[REDACTED]", MODE="fast"}}`},
		{`mcp_servers.acp={url="u", bearer_token_env_var="CODEXACP_MCP_TOKEN"}`, `mcp_servers.acp={url="u", bearer_token_env_var="CODEXACP_MCP_TOKEN"}`},
		{`x={"Cookie"="a\"b"}`, `x={"Cookie"="[REDACTED]"}`},
		// codex takes unquoted values as strings: a secret key loses its value whatever its form.
		{`model_providers.p.experimental_bearer_token=abcdef1234567890`, `model_providers.p.experimental_bearer_token="[REDACTED]"`},
		{`mcp_servers.x.env.API_KEY=abcdef1234567890`, `mcp_servers.x.env.API_KEY="[REDACTED]"`},
		{`mcp_servers.x.env={API_KEY="""v"""}`, `mcp_servers.x.env={API_KEY="[REDACTED]"}`},
		{`mcp_servers.x.env={API_KEY='''v'''}`, `mcp_servers.x.env={API_KEY="[REDACTED]"}`},
		{`model_providers.p.env_key=OPENAI_API_KEY`, `model_providers.p.env_key=OPENAI_API_KEY`},
	}
	for _, tt := range tests {
		if got := RedactConfigArg(tt.in); got != tt.want {
			t.Errorf("RedactConfigArg(%s)\n got %s\nwant %s", tt.in, got, tt.want)
		}
	}
}

func TestIsName(t *testing.T) {
	for name, want := range map[string]bool{
		"OPENAI_API_KEY": true, "CODEXACP_MCP_TOKEN": true, "Authorization": true, "DB_PASSWORD": true,
		"client_secret": true, "Cookie": true, "PATH": false, "HOME": false, "model": false,
		"env_key": false, "bearer_token_env_var": false,
	} {
		if got := IsName(name); got != want {
			t.Errorf("IsName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestMentionsName(t *testing.T) {
	for s, want := range map[string]bool{
		`{"env":{"OPENAI_API_KEY":"x"}}`: true, `{"name":"Authorization"}`: true, `{"cwd":"/w"}`: false,
		`{"text":"hello"}`: false,
	} {
		if got := MentionsName([]byte(s)); got != want {
			t.Errorf("MentionsName(%s) = %v, want %v", s, got, want)
		}
	}
}

func TestRedactValues(t *testing.T) {
	tests := []struct{ in, want string }{
		{"nothing here", "nothing here"},
		{"key sk-abcdefghijklmnop1234 used", "key [REDACTED] used"},
		{"sk-short", "sk-short"},
		{`"Authorization: Bearer abc.def-123"`, `"Authorization: Bearer [REDACTED]"`},
		{"bearer tok", "bearer tok"},
	}
	for _, tt := range tests {
		if got := string(RedactValues([]byte(tt.in))); got != tt.want {
			t.Errorf("RedactValues(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
