module github.com/codexacp/codexacp

go 1.25.0

require (
	github.com/coder/acp-go-sdk v0.13.0 // indirect
	github.com/modelcontextprotocol/go-sdk v1.8.0 // indirect
	github.com/sergi/go-diff v1.4.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
)
