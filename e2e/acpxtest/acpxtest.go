// Package acpxtest gives tests the pinned acpx, a headless ACP client that
// nobody on this project wrote, and builds the command line acpx's --agent
// flag takes.
//
// The binary is the one `cd e2e && npm ci` installs from e2e/package-lock.json,
// or $CODEXACP_ACPX_PATH. When it is missing, tests that need it are skipped,
// unless CODEXACP_E2E=1 (set by CI), which makes a missing acpx a failure.
package acpxtest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codexacp/codexacp/e2e/npmbin"
)

const (
	// PinnedVersion is the acpx version e2e/package.json pins: the newest
	// whose declared node engines (its own and its dependencies') include
	// node 20; later releases require node >= 22.12.
	PinnedVersion = "0.1.15"
	// EnvAcpxPath names an acpx executable to use instead of the pinned one.
	EnvAcpxPath = "CODEXACP_ACPX_PATH"
)

// Binary returns the acpx executable, skipping the test (or failing it when
// CODEXACP_E2E=1) if there is none.
func Binary(t testing.TB) string {
	t.Helper()
	path, why := locate()
	npmbin.Require(t, "acpx", path, why)
	npmbin.CheckVersion(t, "acpx", path, PinnedVersion)
	return path
}

// locate finds acpx, or says why there is none.
func locate() (path, why string) {
	if p := os.Getenv(EnvAcpxPath); p != "" {
		if !npmbin.IsExecutable(p) {
			return "", EnvAcpxPath + "=" + p + " is not an executable file"
		}
		return p, ""
	}
	modules, err := npmbin.NodeModules()
	if err != nil {
		return "", "no go.mod above the working directory: " + err.Error()
	}
	// npm links the package's bin here; the link's target is a node script.
	p := filepath.Join(modules, ".bin", "acpx")
	if !npmbin.IsExecutable(p) {
		return "", "the pinned acpx is not installed: run `cd e2e && npm ci`"
	}
	if _, err := exec.LookPath("node"); err != nil {
		return "", "acpx is installed but node is not on PATH"
	}
	return p, ""
}

// ErrEmptyArg is returned by CommandLine for an empty argument: acpx's
// splitter drops empty words, so no quoting can pass one through.
var ErrEmptyArg = errors.New("acpx --agent cannot carry an empty argument")

// CommandLine joins argv into the single string acpx's --agent flag takes,
// quoted so that acpx splits it back into exactly argv.
//
// acpx splits that string itself (no shell is involved): whitespace outside
// quotes separates words; '…' is literal; "…" is literal except that a
// backslash escapes the next character; outside quotes a backslash escapes
// the next character; adjacent pieces join into one word; empty words are
// dropped. So every word that is not plainly safe is single-quoted, and each
// single quote inside it becomes: close quote, backslash-quote, reopen quote.
func CommandLine(argv ...string) (string, error) {
	if len(argv) == 0 {
		return "", errors.New("acpx --agent needs a command")
	}
	words := make([]string, len(argv))
	for i, a := range argv {
		if a == "" {
			return "", ErrEmptyArg
		}
		words[i] = quote(a)
	}
	return strings.Join(words, " "), nil
}

func quote(s string) string {
	if strings.IndexFunc(s, unsafeRune) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// unsafeRune reports whether r needs quoting; the safe set holds nothing
// acpx treats specially (quotes, backslash, whitespace).
func unsafeRune(r rune) bool {
	switch {
	case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9':
		return false
	}
	return !strings.ContainsRune("-_./=:,+@%", r)
}
