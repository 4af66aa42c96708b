# Recipes for everyday work; every command also works without just.

build:
    go build -o bin/codexacp ./cmd/codexacp

test:
    go test ./...

bench:
    go test -run '^$' -bench . -benchmem ./fsops/ ./mcp/

e2e-install:
    cd e2e && npm ci

# codexacp vs raw codex exec on the same scripted turn (needs `just e2e-install`)
bench-turn:
    go test -run '^$' -bench TurnVsRawCodex -benchtime=20x ./e2e/

# one edit tool call end to end (MCP over HTTP + editor round trip)
bench-edit:
    go test -run '^$' -bench EditToolCallEndToEnd -benchtime=200x ./acp/
