package codex

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// Find returns the codex executable to run: explicit (a path, or a name looked
// up in PATH) when given, else `codex` from PATH. When that is the npm node
// shim (@openai/codex/bin/codex.js), the native binary it would start is
// returned instead, which saves a node process and ~100 ms per turn. When
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
	real, err := filepath.EvalSymlinks(path)
	if err != nil || filepath.Base(real) != "codex.js" {
		return "", false
	}
	pkg := filepath.Dir(filepath.Dir(real)) // .../@openai/codex
	if filepath.Base(pkg) != "codex" || filepath.Base(filepath.Dir(pkg)) != "@openai" {
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
		if p := filepath.Join(pkg, "vendor", triple, "bin", "codex"); isExecutable(p) {
			return p, true
		}
	}
	return "", false
}

// NativeBinary returns the native codex binary that @openai/codex installs
// for this platform under the node_modules directory nodeModules, as in
// node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex.
func NativeBinary(nodeModules string) (string, bool) {
	triple, pkg, ok := npmPlatform()
	if !ok {
		return "", false
	}
	p := filepath.Join(nodeModules, "@openai", pkg, "vendor", triple, "bin", "codex")
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
	}
	return "", "", false
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}
