package docs

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/codexacp/codexacp/internal/testkit"
)

// The README's quickstart, checked: every command of its shell blocks is
// either run here as a newcomer would on a fresh clone (the ones that need
// no account and no network) or named as needing one, so a command added
// to the quickstart is either tried or consciously left out; its Zed
// snippet must parse. Commands run with a fake codex on PATH that is
// logged in (what `codex login` leaves), in an empty HOME.

// quickstartNeedsNetwork are the quickstart's commands that reach the
// network or an account, which a test may not: they are not run.
var quickstartNeedsNetwork = []string{
	"npm install -g @openai/codex",
	"codex --version", // the real codex the line before installs
	"git clone <this repository's URL> codexacp && cd codexacp",
}

// quickstart returns the README's Quickstart section: its shell commands
// (comments cut) and its JSON blocks.
func quickstart(t *testing.T) (commands []string, jsons []string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	start := strings.Index(text, "\n## Quickstart\n")
	if start < 0 {
		t.Fatal("README.md has no Quickstart section")
	}
	section := text[start+1:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	var block []string
	lang := ""
	inBlock := false
	for _, line := range strings.Split(section, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			if !inBlock {
				inBlock, lang, block = true, strings.TrimPrefix(trimmed, "```"), nil
				continue
			}
			inBlock = false
			switch lang {
			case "sh":
				for _, l := range block {
					if cmd, _, _ := strings.Cut(l, "#"); strings.TrimSpace(cmd) != "" {
						commands = append(commands, strings.TrimSpace(cmd))
					}
				}
			case "json":
				jsons = append(jsons, strings.Join(block, "\n"))
			}
			continue
		}
		if inBlock {
			block = append(block, line)
		}
	}
	return commands, jsons
}

func TestReadmeQuickstart(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the quickstart's fake codex is a shell script")
	}
	commands, jsons := quickstart(t)
	if len(commands) == 0 || len(jsons) == 0 {
		t.Fatalf("quickstart: %d commands, %d JSON blocks; want both", len(commands), len(jsons))
	}
	for _, j := range jsons {
		var settings struct {
			AgentServers map[string]struct {
				Command string   `json:"command"`
				Args    []string `json:"args"`
			} `json:"agent_servers"`
		}
		if err := json.Unmarshal([]byte(j), &settings); err != nil {
			t.Errorf("the quickstart's Zed settings are not JSON: %v\n%s", err, j)
		} else if s, ok := settings.AgentServers["Codex (codexacp)"]; !ok || s.Command != "codexacp" {
			t.Errorf("the Zed settings do not run codexacp: %+v", settings)
		}
	}

	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	home := filepath.Join(dir, "home")
	for _, d := range []string{bin, home} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A codex as npm installs it and `codex login` leaves it, for doctor.
	fake := `#!/bin/sh
case "$*" in
  --version) echo "codex-cli 0.171.0" ;;
  "exec --help") echo "Run Codex non-interactively" ;;
  app-server*) read -r line; id=$(printf '%s' "$line" | sed 's/.*"id":\([0-9]*\).*/\1/')
    printf '{"id":%s,"result":{"userAgent":"fake"}}\n' "$id"; cat >/dev/null ;;
  "debug models --bundled") echo '{"models":[{"slug":"m1","context_window":1000,"priority":1,"visibility":"list"}]}' ;;
  "login status"*) echo "Logged in using ChatGPT" >&2 ;;
  *) exit 2 ;;
esac
`
	if err := os.WriteFile(filepath.Join(bin, "codex"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + home,
		"GOBIN=" + bin, "CODEX_HOME=" + filepath.Join(home, ".codex"),
		"XDG_STATE_HOME=" + filepath.Join(home, "state"), "XDG_CACHE_HOME=" + filepath.Join(home, "cache")}
	for _, kv := range os.Environ() {
		// The Go toolchain's own settings (its caches: the build stays fast).
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "GO") && k != "GOBIN" || k == "TMPDIR" {
			env = append(env, kv)
		}
	}
	if cache, err := os.UserCacheDir(); err == nil && os.Getenv("GOCACHE") == "" {
		env = append(env, "GOCACHE="+filepath.Join(cache, "go-build"))
	}
	if gopath := os.Getenv("GOPATH"); gopath == "" {
		if h, err := os.UserHomeDir(); err == nil {
			env = append(env, "GOPATH="+filepath.Join(h, "go")) // the module cache
		}
	}

	ran := 0
	for _, c := range commands {
		if slices.Contains(quickstartNeedsNetwork, c) {
			continue
		}
		var args []string
		switch c {
		case "go install ./cmd/codexacp":
			args = []string{"go", "install", "./cmd/codexacp"}
		case "codexacp --version", "codexacp doctor":
			args = append([]string{filepath.Join(bin, "codexacp")}, strings.Fields(c)[1:]...)
		default:
			t.Errorf("quickstart command %q is neither run by this test nor listed in quickstartNeedsNetwork", c)
			continue
		}
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir, cmd.Env = root, env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		run := cmd.Run
		if args[1] == "install" {
			// GOBIN starts with the agent another test built from this
			// tree (testkit.ReuseBinary): the install runs as a newcomer's,
			// and the go command links again only if that one is stale.
			run = func() error {
				return testkit.ReuseBinary(filepath.Join(bin, "codexacp"), "github.com/codexacp/codexacp/cmd/codexacp", cmd.Run)
			}
		}
		if err := run(); err != nil {
			t.Fatalf("%s: %v\n%s", c, err, out.String())
		}
		ran++
		switch c {
		case "codexacp --version":
			if !strings.HasPrefix(out.String(), "codexacp ") {
				t.Errorf("codexacp --version printed %q", out.String())
			}
		case "codexacp doctor":
			for _, want := range []string{"ok   codex ", "ok   sign-in ", "(selected)"} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("codexacp doctor lacks %q:\n%s", want, out.String())
				}
			}
		}
	}
	if ran != 3 {
		t.Errorf("ran %d of the quickstart's commands, want go install, codexacp --version and codexacp doctor", ran)
	}
}
