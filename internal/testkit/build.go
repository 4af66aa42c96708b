package testkit

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// BuildCommands builds the commands pkgs (import paths of main packages)
// into dir, as `go build -o dir/ pkgs…` does, and returns their paths in
// the order of pkgs. A test calls it once, when it first needs them.
//
// Linking is most of a build of an unchanged command (~1.5 s of CPU for
// the agent, ~2 s for the fake codex), and the go command skips it when
// the target already holds the binary it would link. So the binary of the
// last build of each command in this module stays in a cache directory,
// shared by every test package (the e2e suite, the replay and the
// quickstart's install all run the agent), and each build starts from
// hard links to them: an unchanged command is not linked again, and a
// changed one is linked once for all of them (see ReuseBinary). Where hard
// links fail (another file system), every build links afresh.
func BuildCommands(dir string, pkgs ...string) ([]string, error) {
	exe := ""
	if runtime.GOOS == "windows" {
		exe = ".exe"
	}
	paths := make([]string, len(pkgs))
	for i, pkg := range pkgs {
		paths[i] = filepath.Join(dir, path.Base(pkg)+exe)
	}
	err := reuse(paths, pkgs, func() error {
		build := exec.Command("go", append([]string{"build", "-o", dir + string(filepath.Separator)}, pkgs...)...)
		if out, err := build.CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %v\n%s", strings.Join(pkgs, " "), err, out)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return paths, nil
}

// ReuseBinary runs build, a go build or go install of the main package pkg
// (an import path) to target, starting from a hard link at target to the
// binary the last build of pkg in this module left, and keeps what build
// leaves at target for the next one. The go command finds an unchanged
// command up to date and does not link it again; it replaces a target it
// relinks by renaming a new file over it (or removing it before it writes
// a copy), and the cache is updated by rename, so a binary a concurrent
// test run linked to is never written in place.
//
// Builds through the cache take turns across processes (a lock file, on
// systems with flock): the test packages that `go test ./...` runs at once
// after a change would otherwise each link the same command.
func ReuseBinary(target, pkg string, build func() error) error {
	return reuse([]string{target}, []string{pkg}, build)
}

// reuse is ReuseBinary for the targets of one build, targets[i] of pkgs[i].
func reuse(targets, pkgs []string, build func() error) error {
	cache := buildCache()
	if cache == "" {
		return build()
	}
	unlock := lockFile(filepath.Join(cache, "lock"), 2*time.Minute)
	defer unlock()
	cached := make([]string, len(targets))
	for i, target := range targets {
		sum := sha256.Sum256([]byte(pkgs[i]))
		cached[i] = filepath.Join(cache, hex.EncodeToString(sum[:6])+"-"+filepath.Base(target))
		os.Link(cached[i], target) // absent or not linkable: built afresh
	}
	if err := build(); err != nil {
		return err
	}
	for i, target := range targets {
		keepBinary(target, cached[i])
	}
	return nil
}

// buildCache is the directory that keeps the binaries of the last builds
// of this module's commands (the module holding the working directory);
// "" when there is none.
func buildCache() string {
	base, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	root, err := ModuleRoot()
	if err != nil {
		return ""
	}
	sum := sha256.Sum256([]byte(root))
	dir := filepath.Join(base, "codexacp-test-bin", hex.EncodeToString(sum[:8]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return ""
	}
	return dir
}

// ErrNoModule is ModuleRoot's error when no go.mod is above the working
// directory.
var ErrNoModule = errors.New("no go.mod above the working directory")

// ModuleRoot is the directory of the go.mod above the working directory
// (a test runs in its package's directory).
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", ErrNoModule
		}
		dir = parent
	}
}

// keepBinary makes cached a hard link to the binary at p, replacing what
// was cached by rename; best effort.
func keepBinary(p, cached string) {
	if same(p, cached) {
		return
	}
	tmp := fmt.Sprintf("%s.%d.tmp", cached, os.Getpid())
	os.Remove(tmp)
	if os.Link(p, tmp) != nil {
		return
	}
	if os.Rename(tmp, cached) != nil {
		os.Remove(tmp)
	}
}

// same reports whether a and b are one file.
func same(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}
