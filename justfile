# Recipes for everyday work; every command also works without just.

build:
    go build -o bin/codexacp ./cmd/codexacp

test:
    go test ./...

bench:
    go test -run '^$' -bench . -benchmem ./fsops/ ./mcp/

e2e-install:
    cd e2e && npm ci

# the e2e suite on the oldest supported codex (codex.OldestTested), as CI's second run: installs it into
# e2e/codex-oldest/node_modules first (about 400 MB)
e2e-oldest:
    cd e2e/codex-oldest && npm ci
    CODEXACP_E2E=1 CODEXACP_CODEX_PATH="$PWD/e2e/codex-oldest/node_modules/.bin/codex" go test -count=1 ./e2e/

# codexacp vs raw codex exec on the same scripted turn (needs `just e2e-install`)
bench-turn:
    go test -run '^$' -bench TurnVsRawCodex -benchtime=20x ./e2e/

# codexacp (both backends) beside raw codex exec, Zed's codex-acp and the TS codex-acp on the same scripted
# turns (needs `just e2e-install`; installs the peers into ~/.cache/codexacp-bench, never CI); e.g. `just bench-side -n 3 -json out.json`
bench-side *args:
    ./e2e/sidebyside/run.sh {{args}}

# one edit tool call end to end (MCP over HTTP + editor round trip)
bench-edit:
    go test -run '^$' -bench EditToolCallEndToEnd -benchtime=200x ./acp/

# replay the recorded sessions in e2e/testdata/transcripts (no codex, no network)
replay:
    go test -count=1 ./e2e/replay/

# replay the users' transcripts kept as regression tests (e2e/testdata/user-transcripts), all or one:
# `just replay-user ExampleEditInEditorBuffer`
replay-user name='':
    go test -count=1 ./e2e/replay/ -v -run '^TestUserTranscripts$/{{ if name == "" { "" } else { "^" + name + "$" } }}'

# re-record the replay corpus from the real-codex e2e tests (needs `just e2e-install`),
# then refresh the events goldens made from it and check that it replays. Only the corpus is deleted: users'
# transcripts live in e2e/testdata/user-transcripts (TestCorpusRecordingKeepsUserTranscripts)
record-corpus:
    rm -f e2e/testdata/transcripts/*.ndjson
    CODEXACP_E2E=1 CODEXACP_RECORD_CORPUS=1 go test -count=1 ./e2e/
    go test -count=1 ./events/ -run TestCorpusGolden -update
    go test -count=1 ./e2e/replay/ ./events/

# the npm packages (launcher + one per platform with its binary) in packaging/npm/out, packed; nothing is published.
# Platforms that do not compile are skipped and listed; e.g. `just npm-pack -v 1.2.3 --strict` for a release
npm-pack *args:
    ./packaging/npm/build.sh --pack {{args}}
