// Package npmbin holds what the e2e helpers for npm-installed tools (codex,
// acpx) share: finding the repository, turning a missing tool into a skip
// or — in CI — a failure, and checking the tool's version once per binary.
package npmbin

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/codexacp/codexacp/internal/testkit"
)

// EnvRequired, set to 1 (CI does), turns a missing tool into a test failure:
// the real-tool tests must not silently vanish.
const EnvRequired = "CODEXACP_E2E"

// NodeModules returns the e2e/node_modules directory of the repository that
// holds the working directory (a package directory under `go test`).
func NodeModules() (string, error) {
	root, err := testkit.ModuleRoot()
	if errors.Is(err, testkit.ErrNoModule) {
		return "", os.ErrNotExist
	}
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "e2e", "node_modules"), nil
}

// Require returns path, or ends the test when path is empty: a skip saying
// why, or a failure when EnvRequired is 1.
func Require(t testing.TB, tool, path, why string) string {
	t.Helper()
	if path == "" {
		if os.Getenv(EnvRequired) == "1" {
			t.Fatalf("%s required (%s=1) but %s", tool, EnvRequired, why)
		}
		t.Skipf("skipping %s test: %s", tool, why)
	}
	return path
}

// IsExecutable reports whether p (links followed) is an executable file.
func IsExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode().Perm()&0o111 != 0
}

var versions sync.Map // path → `--version` output

// CheckVersion logs when `path --version` does not end in pinned: the tests
// encode behaviour measured on that version.
func CheckVersion(t testing.TB, tool, path, pinned string) {
	t.Helper()
	v, ok := versions.Load(path)
	if !ok {
		out, err := exec.Command(path, "--version").Output()
		if err != nil {
			t.Fatalf("%s --version: %v", path, err)
		}
		v, _ = versions.LoadOrStore(path, strings.TrimSpace(string(out)))
	}
	if fields := strings.Fields(v.(string)); len(fields) == 0 || fields[len(fields)-1] != pinned {
		t.Logf("%s at %s reports %q; the tests were written against %s", tool, path, v, pinned)
	}
}
