package fsops

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codexacp/codexacp/internal/stress"
)

// outsideGuard is the policy the ACP layer applies in BeforeWrite: a write
// must land inside root.
func outsideGuard(root string) BeforeWrite {
	return func(_ context.Context, c *Change) error {
		if !Within(root, c.Path) {
			return errors.New("outside the workspace")
		}
		return nil
	}
}

// flipper swaps name between a regular file (or a directory) and a symlink
// to target until stop is closed.
func flipper(t *testing.T, name, target string, isDir bool, stop <-chan struct{}) *sync.WaitGroup {
	t.Helper()
	var wg sync.WaitGroup
	wg.Go(func() {
		tmpLink := name + ".link"
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			switch {
			case i%2 == 0 && isDir:
				// A directory cannot be replaced by rename: remove, then link.
				_ = os.RemoveAll(name)
				_ = os.Symlink(target, name)
			case i%2 == 0:
				_ = os.Remove(tmpLink)
				_ = os.Symlink(target, tmpLink)
				_ = os.Rename(tmpLink, name) // atomic: the name always exists
			case isDir:
				_ = os.Remove(name)
				_ = os.Mkdir(name, 0o755)
			default:
				_ = os.Remove(name)
				_ = os.WriteFile(name, []byte("inside\n"), 0o644)
			}
			// Pace the flips so that writes meet each state, and the swaps.
			time.Sleep(time.Duration(i%3) * 20 * time.Microsecond)
		}
	})
	return &wg
}

// A model flipping a path between a file (or directory) and a symlink to
// outside the workspace, while the engine writes it over and over, never
// gets a byte written outside: the write re-checks the resolved location
// and is made relative to the workspace root.
func TestFlippingSymlinkNeverWritesOutside(t *testing.T) {
	t.Parallel()
	iterations := stress.Size(t, 150, 400)
	for _, tc := range []struct {
		name  string
		isDir bool // flip the parent directory instead of the file
	}{
		{name: "file", isDir: false},
		{name: "directory", isDir: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, out := t.TempDir(), t.TempDir()
			files := NewLocalFiles().Within(ws)
			engine := NewEngine(files)
			outFile := filepath.Join(out, "f")
			if err := os.WriteFile(outFile, []byte("outside\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			flipped, target, path := filepath.Join(ws, "f"), outFile, filepath.Join(ws, "f")
			if tc.isDir {
				flipped, target, path = filepath.Join(ws, "d"), out, filepath.Join(ws, "d", "f")
				if err := os.Mkdir(flipped, 0o755); err != nil {
					t.Fatal(err)
				}
			} else if err := os.WriteFile(flipped, []byte("inside\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			stop := make(chan struct{})
			wg := flipper(t, flipped, target, tc.isDir, stop)
			var written, refused int
			reasons := map[string]int{}
			for i := range iterations {
				_, err := engine.WriteTextFile(context.Background(),
					WriteParams{Path: path, Content: fmt.Sprintf("write %d\n", i)}, outsideGuard(ws))
				if err == nil {
					written++
				} else {
					refused++
					var te *Error
					if errors.As(err, &te) {
						reasons[te.Message[:min(len(te.Message), 24)]+" / "+te.Hint[:min(len(te.Hint), 30)]]++
					} else {
						reasons[err.Error()]++
					}
				}
			}
			close(stop)
			wg.Wait()
			if got, _ := os.ReadFile(outFile); string(got) != "outside\n" {
				t.Fatalf("the file outside the workspace was written: %q", got)
			}
			if entries, _ := os.ReadDir(out); len(entries) != 1 {
				t.Fatalf("files created outside the workspace: %v", entries)
			}
			t.Logf("%d writes: %d inside, %d refused (%v), 0 outside", iterations, written, refused, reasons)
		})
	}
}

// A file and a symlink to it are one file: edits through both are
// serialised, and none is lost.
func TestAliasesShareOneLock(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	real := filepath.Join(ws, "notes.txt")
	alias := filepath.Join(ws, "alias.txt")
	if err := os.WriteFile(real, []byte("END\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, alias); err != nil {
		t.Fatal(err)
	}
	perWriter := stress.Size(t, 50, 150)
	var wg sync.WaitGroup
	var failed atomic.Int32
	for w, p := range []string{real, alias} {
		wg.Go(func() {
			engine := NewEngine(NewLocalFiles().Within(ws)) // one engine per session
			for i := range perWriter {
				_, err := engine.EditTextFile(context.Background(), EditParams{Path: p, OldString: "END\n",
					NewString: fmt.Sprintf("w%d-%d\nEND\n", w, i)}, nil)
				if err != nil {
					failed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	got, err := os.ReadFile(real)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(got), "\n") - 1; lines != 2*perWriter || failed.Load() != 0 {
		t.Fatalf("%d of %d edits kept, %d failed", lines, 2*perWriter, failed.Load())
	}
	if fi, err := os.Lstat(alias); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the alias is no longer a link: %v %v", fi, err)
	}
}

// Dangling links are refused through the engine wherever they point, and a
// directory link to nowhere too.
func TestDanglingLinksRefused(t *testing.T) {
	t.Parallel()
	ws, out := t.TempDir(), t.TempDir()
	engine := NewEngine(NewLocalFiles().Within(ws))
	links := map[string]string{
		"out":      filepath.Join(out, "created-outside"),
		"in":       filepath.Join(ws, "missing"),
		"relative": "../nowhere",
		"dir":      filepath.Join(out, "no-such-dir"),
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(ws, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"out", "in", "relative", "dir/f"} {
		path := filepath.Join(ws, p)
		_, err := engine.WriteTextFile(context.Background(), WriteParams{Path: path, Content: "x\n"}, nil)
		var te *Error
		if !errors.As(err, &te) || te.Code != CodePermission || !strings.Contains(te.Hint, "symbolic link") {
			t.Errorf("%s: got %v, want a dangling-link refusal", p, err)
		}
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Fatalf("created outside: %v", entries)
	}
	if _, err := os.Stat(filepath.Join(ws, "missing")); err == nil {
		t.Fatal("created through a dangling link inside the workspace")
	}
}

// A temporary file left by a writer killed mid-write is removed by the next
// write of that file; one of a live writer is left alone.
func TestKilledWriterDebrisRemoved(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "big.txt")
	if err := os.WriteFile(p, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("no `true` to get a dead pid:", err)
	}
	debris := filepath.Join(dir, fmt.Sprintf(".big.txt%s%d-0123456789ab", tempMarker, dead.Process.Pid))
	live := filepath.Join(dir, fmt.Sprintf(".big.txt%s%d-0123456789ab", tempMarker, 1)) // init never dies
	other := filepath.Join(dir, fmt.Sprintf(".other.txt%s%d-0123456789ab", tempMarker, dead.Process.Pid))
	for _, f := range []string{debris, live, other} {
		if err := os.WriteFile(f, make([]byte, 2<<20), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := NewEngine(NewLocalFiles()).WriteTextFile(context.Background(), WriteParams{Path: p, Content: "new\n"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(debris); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("debris of a dead writer still there: %v", err)
	}
	for _, f := range []string{live, other} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("%s removed: %v", filepath.Base(f), err)
		}
	}
}

// Paths no file system accepts are refused as invalid arguments, naming the
// path once.
func TestUnusablePathsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	engine := NewEngine(NewLocalFiles())
	longName := filepath.Join(dir, strings.Repeat("n", 300))
	for _, tc := range []struct {
		name, path, msg string
	}{
		{"NUL", dir + "/a\x00b", "Path contains a NUL character"},
		{"over PATH_MAX", "/" + strings.Repeat("a/", 2100), "Path too long: 4201 bytes (at most 4096)"},
		{"component over NAME_MAX", longName, "File name too long: " + longName},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := engine.WriteTextFile(context.Background(), WriteParams{Path: tc.path, Content: "x"}, nil)
			var te *Error
			if !errors.As(err, &te) || te.Code != CodeInvalidRequest || !strings.HasPrefix(te.Message, tc.msg) {
				t.Fatalf("got %v, want -32600 %q", err, tc.msg)
			}
			if n := strings.Count(te.Error(), filepath.Base(tc.path)); len(tc.path) < 1000 && n > 1 {
				t.Errorf("path named %d times: %v", n, te)
			}
		})
	}
}
