# Recipes for everyday work; every command also works without just.

build:
    go build -o bin/codexacp ./cmd/codexacp

test:
    go test ./...

bench:
    go test -run '^$' -bench . -benchmem ./fsops/ ./mcp/

e2e-install:
    cd e2e && npm ci
