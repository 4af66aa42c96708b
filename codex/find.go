package codex

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/codexacp/codexacp/codex/proc"
)

// ErrNotFound reports that no codex executable could be found or started
// (the same error as proc.ErrNotFound, which a start reports).
var ErrNotFound = proc.ErrNotFound

// Find returns the codex executable to run: explicit (a path, or a name looked
// up in PATH) when given, else `codex` from PATH. When that is the npm node
// shim (@openai/codex/bin/codex.js), the native binary it would start is
// returned instead, which saves a node process per turn (docs/codex.md). When
// nothing is found the error wraps ErrNotFound, whose message says how to
// install codex.
func Find(explicit string) (string, error) {
	name := explicit
	if name == "" {
		name = "codex"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrNotFound, err)
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	if native, ok := nativeBehindShim(path); ok {
		return native, nil
	}
	return path, nil
}

// nativeBehindShim returns the native binary of the npm install that the
// node shim at path belongs to.
func nativeBehindShim(path string) (string, bool) {
	pkg, ok := shimPackage(path)
	if !ok {
		return "", false
	}
	// The platform package is nested under the main package, or hoisted next
	// to it (npm, pnpm); old releases carried vendor/ in the main package.
	if p, ok := NativeBinary(filepath.Join(pkg, "node_modules")); ok {
		return p, true
	}
	if p, ok := NativeBinary(filepath.Dir(filepath.Dir(pkg))); ok {
		return p, true
	}
	if triple, _, ok := npmPlatform(); ok {
		if p := filepath.Join(pkg, "vendor", triple, "bin", nativeName()); isExecutable(p) {
			return p, true
		}
	}
	return "", false
}

// shimPackage returns the @openai/codex package directory whose node shim
// (bin/codex.js) path runs: path leads to codex.js through symlinks (npm's
// bin directory on Unix), or it is one of the wrappers npm writes instead of
// a symlink on Windows (codex.cmd, codex.ps1), which sit next to
// node_modules in npm's global prefix, or in node_modules/.bin.
func shimPackage(path string) (string, bool) {
	if real, err := filepath.EvalSymlinks(path); err == nil && filepath.Base(real) == "codex.js" {
		pkg := filepath.Dir(filepath.Dir(real)) // .../@openai/codex
		return pkg, filepath.Base(pkg) == "codex" && filepath.Base(filepath.Dir(pkg)) == "@openai"
	}
	switch strings.ToLower(filepath.Base(path)) {
	case "codex.cmd", "codex.ps1":
	default:
		return "", false
	}
	modules := filepath.Join(filepath.Dir(path), "node_modules")
	if filepath.Base(filepath.Dir(path)) == ".bin" {
		modules = filepath.Dir(filepath.Dir(path))
	}
	pkg := filepath.Join(modules, "@openai", "codex")
	if fi, err := os.Stat(filepath.Join(pkg, "bin", "codex.js")); err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	return pkg, true
}

// NativeBinary returns the native codex binary that @openai/codex installs
// for this platform under the node_modules directory nodeModules, as in
// node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex
// (…/codex-win32-x64/vendor/x86_64-pc-windows-msvc/bin/codex.exe on Windows).
func NativeBinary(nodeModules string) (string, bool) {
	triple, pkg, ok := npmPlatform()
	if !ok {
		return "", false
	}
	p := filepath.Join(nodeModules, "@openai", pkg, "vendor", triple, "bin", nativeName())
	if !isExecutable(p) {
		return "", false
	}
	return p, true
}

// npmPlatform names the target triple and platform package that the codex
// npm shim picks for this machine.
func npmPlatform() (triple, pkg string, ok bool) {
	switch runtime.GOOS + "/" + runtime.GOARCH {
	case "linux/amd64":
		return "x86_64-unknown-linux-musl", "codex-linux-x64", true
	case "linux/arm64":
		return "aarch64-unknown-linux-musl", "codex-linux-arm64", true
	case "darwin/amd64":
		return "x86_64-apple-darwin", "codex-darwin-x64", true
	case "darwin/arm64":
		return "aarch64-apple-darwin", "codex-darwin-arm64", true
	case "windows/amd64":
		return "x86_64-pc-windows-msvc", "codex-win32-x64", true
	case "windows/arm64":
		return "aarch64-pc-windows-msvc", "codex-win32-arm64", true
	}
	return "", "", false
}

// nativeName is the file name of the native binary: codex, codex.exe on
// Windows.
func nativeName() string {
	if runtime.GOOS == "windows" {
		return "codex.exe"
	}
	return "codex"
}

// isExecutable reports whether path is a regular file that may be run:
// with an execute bit, or on Windows (which has none) at all.
func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	return runtime.GOOS == "windows" || fi.Mode().Perm()&0o111 != 0
}
