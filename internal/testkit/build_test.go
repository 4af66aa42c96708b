package testkit

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// hello is a command that links in a fraction of a second.
const hello = "github.com/codexacp/codexacp/internal/testkit/testdata/hello"

// isolateCache points the user's cache directory, where the binaries are
// kept, into the test, keeping the go command's own caches.
func isolateCache(t *testing.T) {
	for _, name := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		out, err := exec.Command("go", "env", name).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", name, err)
		}
		t.Setenv(name, strings.TrimSpace(string(out)))
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, "cache"))
	t.Setenv("LocalAppData", filepath.Join(home, "cache"))
}

func TestBuildCommandsLinksOnce(t *testing.T) {
	isolateCache(t)
	first, err := BuildCommands(t.TempDir(), hello)
	if err != nil {
		t.Fatal(err)
	}
	second, err := BuildCommands(t.TempDir(), hello)
	if err != nil {
		t.Fatal(err)
	}
	if !same(first[0], second[0]) {
		t.Errorf("the unchanged command was linked again: %s and %s are two files", first[0], second[0])
	}
	if fi, err := os.Stat(second[0]); err != nil || fi.Mode()&0o111 == 0 {
		t.Errorf("no executable at %s: %v", second[0], err)
	}
}

// The quickstart's go install finds the agent the e2e suite built: the
// cache is the module's, per command, not the test package's.
func TestReuseBinaryAcrossBuilds(t *testing.T) {
	isolateCache(t)
	built, err := BuildCommands(t.TempDir(), hello)
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	target := filepath.Join(bin, filepath.Base(built[0]))
	err = ReuseBinary(target, hello, func() error {
		install := exec.Command("go", "install", hello)
		install.Env = append(os.Environ(), "GOBIN="+bin)
		if out, err := install.CombinedOutput(); err != nil {
			t.Fatalf("go install: %v\n%s", err, out)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !same(built[0], target) {
		t.Errorf("go install linked the command go build had linked: %s and %s are two files", built[0], target)
	}
}

// Test packages that build the same command at once (go test ./... after
// a change) take turns, so it is linked once.
func TestConcurrentBuildsLinkOnce(t *testing.T) {
	isolateCache(t)
	var wg sync.WaitGroup
	paths := make([]string, 3)
	for i := range paths {
		dir := t.TempDir()
		wg.Go(func() {
			built, err := BuildCommands(dir, hello)
			if err != nil {
				t.Error(err)
				return
			}
			paths[i] = built[0]
		})
	}
	wg.Wait()
	for _, p := range paths[1:] {
		if !same(paths[0], p) {
			t.Errorf("concurrent builds linked the command more than once: %s and %s are two files", paths[0], p)
		}
	}
}
