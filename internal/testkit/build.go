package testkit

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strings"
)

// BuildCommands builds the commands pkgs (import paths of main packages)
// into dir, as `go build -o dir/ pkgs…` does, and returns their paths in
// the order of pkgs. A test's TestMain calls it once.
//
// Linking is most of a build of an unchanged command (~3 s of CPU for the
// agent and the fake codex), and the go command skips it when the target
// already holds the binary it would link. So the binaries of the last
// build of this test package stay in a cache directory, and each build
// starts from hard links to them: an unchanged command is not linked
// again. The go command replaces a target it relinks by renaming a new
// file over it (or removing it before it writes a copy), and the cache is
// updated by rename, so a binary a concurrent test run linked to is never
// written in place. Where hard links fail (another file system), every
// build links afresh.
func BuildCommands(dir string, pkgs ...string) ([]string, error) {
	exe := ""
	if runtime.GOOS == "windows" {
		exe = ".exe"
	}
	paths := make([]string, len(pkgs))
	for i, pkg := range pkgs {
		paths[i] = filepath.Join(dir, path.Base(pkg)+exe)
	}
	var keeps []func()
	for _, p := range paths {
		keeps = append(keeps, ReuseBinary(p, pkgs...))
	}
	build := exec.Command("go", append([]string{"build", "-o", dir + string(filepath.Separator)}, pkgs...)...)
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build %s: %v\n%s", strings.Join(pkgs, " "), err, out)
	}
	for _, keep := range keeps {
		keep()
	}
	return paths, nil
}

// ReuseBinary puts at target a hard link to the binary that the last build
// to a target of that name by this test package left (keyed also by key),
// so that a go build or go install to target skips linking when nothing
// changed (see BuildCommands). After the build, call the function it
// returns: it keeps the binary at target for the next run.
func ReuseBinary(target string, key ...string) (keep func()) {
	cache := buildCache(key)
	if cache == "" {
		return func() {}
	}
	cached := filepath.Join(cache, filepath.Base(target))
	os.Link(cached, target) // absent or not linkable: built afresh
	return func() { keepBinary(target, cached) }
}

// buildCache is the directory that keeps the binaries of the last build by
// the test package in the working directory, keyed also by key; "" when
// there is none.
func buildCache(key []string) string {
	base, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	sum := sha256.Sum256([]byte(wd + "\x00" + strings.Join(key, "\x00")))
	dir := filepath.Join(base, "codexacp-test-bin", hex.EncodeToString(sum[:8]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return ""
	}
	return dir
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
