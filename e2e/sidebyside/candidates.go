//go:build unix

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/codexacp/codexacp/e2e/mockapi"
)

// model name every candidate is told to use (the mock ignores it).
const modelName = "gpt-5.5"

// offline switches off what makes codex 0.169 reach past loopback
// (codextest.OfflineConfig): remote plugin discovery and analytics.
var offline = []string{"features.plugins=false", "analytics.enabled=false"}

// paths are the programs the candidates run.
type paths struct {
	codexacp string // codexacp binary
	// backendFlag: the codexacp binary accepts --backend (its --help
	// lists it). Without it the binary only has the exec backend.
	backendFlag bool
	codex       string // pinned native codex (0.169)
	bwrapDir    string // directory holding the bwrap bundled with @openai/codex
	peers       string // directory whose node_modules holds the peers
	node        string // node executable
}

// candidate is one column of the table.
type candidate struct {
	Name string
	// Peer marks the adapters codexacp is compared with ("faster peer").
	Peer bool
	// Raw is the raw `codex exec` baseline (no ACP).
	Raw bool
	// command returns the agent's argv and the variables added to the
	// run's isolated environment, for a model at url.
	command func(p paths, url string) (argv, env []string, err error)
	// Mode is set with session/set_mode after session/new ("" keeps the
	// agent's default).
	Mode string
	// ACPEdit: the model edits through codexacp's mcp__acp edit_text_file
	// tool; otherwise through codex's apply_patch.
	ACPEdit bool
	// How says how the candidate was configured, for the report.
	How string
}

func codexConfig(url string) []string {
	c := []string{"model=" + quote(modelName)}
	c = append(c, mockapi.CodexConfig(url)...)
	return append(c, offline...)
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func dashC(config []string) []string {
	var out []string
	for _, c := range config {
		out = append(out, "-c", c)
	}
	return out
}

func codexacpCandidate(name, backend string) candidate {
	return candidate{
		Name:    name,
		Mode:    "auto",
		ACPEdit: true,
		How: "`codexacp --codex-path <pinned codex> --backend " + backend + " -c model=… -c model_provider=mock -c model_providers.mock={…} " +
			"-c features.plugins=false -c analytics.enabled=false`, session mode `auto` (workspace-write, edits without asking)",
		command: func(p paths, url string) ([]string, []string, error) {
			if p.codexacp == "" {
				return nil, nil, errors.New("no codexacp binary")
			}
			argv := []string{p.codexacp, "--codex-path", p.codex}
			switch {
			case p.backendFlag:
				argv = append(argv, "--backend", backend)
			case backend != "exec":
				return nil, nil, fmt.Errorf("this codexacp has no --backend flag (its --help does not list it), so no %s backend", backend)
			}
			return append(argv, dashC(codexConfig(url))...), nil, nil
		},
	}
}

// zedBinary is the native binary of @zed-industries/codex-acp for this
// platform (Zed itself runs the native binary, not the npm shim).
func zedBinary(peers string) (string, error) {
	matches, _ := filepath.Glob(filepath.Join(peers, "node_modules", "@zed-industries", "codex-acp-*", "bin", "codex-acp"))
	if len(matches) == 0 {
		return "", fmt.Errorf("@zed-industries/codex-acp is not installed under %s (run e2e/sidebyside/run.sh)", peers)
	}
	return matches[0], nil
}

func tsEntry(peers string) (string, error) {
	p := filepath.Join(peers, "node_modules", "@agentclientprotocol", "codex-acp", "dist", "index.js")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("@agentclientprotocol/codex-acp is not installed under %s (run e2e/sidebyside/run.sh)", peers)
	}
	return p, nil
}

func candidates() []candidate {
	return []candidate{
		// codexacp's default backend first (issue 25: app-server).
		codexacpCandidate("codexacp app-server", "app-server"),
		codexacpCandidate("codexacp exec", "exec"),
		{
			Name: "raw codex exec",
			Raw:  true,
			How: "`codex exec --json --skip-git-repo-check -C cwd -s workspace-write -c …` (same -c as codexacp), then " +
				"`codex exec … resume --json THREAD -`; prompt on stdin; timed from spawn to the `turn.completed` line",
		},
		{
			Name: "Zed codex-acp 0.16.0",
			Peer: true,
			Mode: "auto",
			How: "its native binary (`@zed-industries/codex-acp-<platform>/bin/codex-acp`, as Zed runs it) with the same `-c` " +
				"flags as codexacp (it embeds codex and takes codex's `-c`), `bwrap` from @openai/codex's codex-resources on PATH, " +
				"session mode `auto` (workspace-write, on-request approvals)",
			command: func(p paths, url string) ([]string, []string, error) {
				bin, err := zedBinary(p.peers)
				if err != nil {
					return nil, nil, err
				}
				return append([]string{bin}, dashC(codexConfig(url))...), nil, nil
			},
		},
		{
			Name: "TS codex-acp 2.6.0",
			Peer: true,
			Mode: "workspace-write",
			How: "`node dist/index.js` with `CODEX_PATH=<pinned codex 0.169>` and `CODEX_CONFIG` = the same settings as JSON " +
				"(model, model_provider, model_providers.mock, features.plugins, analytics.enabled; the adapter turns " +
				"model_provider(s) into `codex app-server -c …` and merges the rest into each thread's config), NO_BROWSER=1, " +
				"session mode `workspace-write` (workspace-write, on-request approvals by the user; its default `agent` has a model review approvals)",
			command: func(p paths, url string) ([]string, []string, error) {
				entry, err := tsEntry(p.peers)
				if err != nil {
					return nil, nil, err
				}
				cfg := map[string]any{
					"model":          modelName,
					"model_provider": mockapi.ProviderName,
					"model_providers": map[string]any{mockapi.ProviderName: map[string]any{
						"name": "mock", "base_url": url, "wire_api": "responses",
						"request_max_retries": 0, "stream_max_retries": 0,
					}},
					"features":  map[string]any{"plugins": false},
					"analytics": map[string]any{"enabled": false},
				}
				b, err := json.Marshal(cfg)
				if err != nil {
					return nil, nil, err
				}
				env := []string{"CODEX_PATH=" + p.codex, "CODEX_CONFIG=" + string(b), "NO_BROWSER=1"}
				return []string{p.node, entry}, env, nil
			},
		},
	}
}

// rawArgs is the raw codex command line for a new thread (thread == "") or a
// resumed one, in the shape codexacp uses (codex/execrun/runner.go).
func rawArgs(cwd, thread, url string) []string {
	args := []string{"exec"}
	if thread == "" {
		args = append(args, "--json", "--skip-git-repo-check")
	}
	args = append(args, "-C", cwd, "-s", "workspace-write")
	args = append(args, dashC(codexConfig(url))...)
	if thread != "" {
		args = append(args, "resume", "--json", "--skip-git-repo-check", thread)
	}
	return append(args, "-")
}

// isolatedEnv is the environment of one candidate (as codextest.Env builds
// it): the machine's variables without CODEX_*, OPENAI_*, RUST_BACKTRACE,
// HOME and XDG_*, then CODEX_HOME, HOME and the XDG directories inside home,
// PATH with bwrapDir first, and the leftover marker.
func isolatedEnv(home, bwrapDir, marker string) []string {
	user := filepath.Join(home, "user")
	var env []string
	for _, kv := range os.Environ() {
		key, val, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(key, "CODEX_"), strings.HasPrefix(key, "OPENAI_"), key == "RUST_BACKTRACE",
			key == "HOME", strings.HasPrefix(key, "XDG_"), key == markerVar:
			continue
		case key == "PATH" && bwrapDir != "":
			kv = "PATH=" + bwrapDir + string(os.PathListSeparator) + val
		}
		env = append(env, kv)
	}
	return append(env, "CODEX_HOME="+home, "HOME="+user,
		"XDG_CACHE_HOME="+filepath.Join(user, ".cache"), "XDG_STATE_HOME="+filepath.Join(user, ".local", "state"),
		"XDG_CONFIG_HOME="+filepath.Join(user, ".config"), marker)
}

// markerVar tags every process a candidate starts, so that leftovers can be
// found after the run.
const markerVar = "CODEXACP_SIDEBYSIDE_RUN"

// markerPrefix starts the marker of every run of this program.
func markerPrefix() string { return markerVar + "=" + strconv.Itoa(os.Getpid()) + "-" }
