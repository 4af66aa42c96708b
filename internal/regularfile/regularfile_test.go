//go:build unix

package regularfile_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/codexacp/codexacp/internal/regularfile"
)

// tree makes a directory with one of each kind of thing a path can name.
func tree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "file"), []byte("hello\n"), 0o644))
	must(os.Mkdir(filepath.Join(dir, "dir"), 0o755))
	must(os.Symlink("file", filepath.Join(dir, "link")))
	must(os.Symlink("missing", filepath.Join(dir, "dangling")))
	must(os.Symlink("loop", filepath.Join(dir, "loop")))
	must(syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644))
	must(os.Symlink("fifo", filepath.Join(dir, "fifolink")))
	must(os.Symlink("/dev/zero", filepath.Join(dir, "zero")))
	return dir
}

func TestOpen(t *testing.T) {
	dir := tree(t)
	for _, tc := range []struct {
		name   string
		follow regularfile.Follow
		want   error // nil: opened
	}{
		{"file", regularfile.NoFollowLink, nil},
		{"link", regularfile.FollowLink, nil},
		{"link", regularfile.NoFollowLink, regularfile.ErrSymlink},
		{"dir", regularfile.FollowLink, regularfile.ErrNotRegular},
		{"fifo", regularfile.FollowLink, regularfile.ErrNotRegular},
		{"fifolink", regularfile.FollowLink, regularfile.ErrNotRegular},
		{"fifolink", regularfile.NoFollowLink, regularfile.ErrSymlink},
		{"zero", regularfile.FollowLink, regularfile.ErrNotRegular},
		{"dangling", regularfile.FollowLink, fs.ErrNotExist},
		{"dangling", regularfile.NoFollowLink, regularfile.ErrSymlink},
		{"loop", regularfile.FollowLink, syscall.ELOOP},
		{"missing", regularfile.FollowLink, fs.ErrNotExist},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, fi, err := regularfile.Open(filepath.Join(dir, tc.name), tc.follow)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				defer f.Close()
				if !fi.Mode().IsRegular() || fi.Size() != 6 {
					t.Fatalf("stat = %v %d, want a 6-byte regular file", fi.Mode(), fi.Size())
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("Open: %v, want %v", err, tc.want)
			}
			if f != nil {
				t.Fatal("a file was returned with the error")
			}
		})
	}
}

func TestReadFileBounded(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, make([]byte, 100), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := regularfile.ReadFile(p, 100, regularfile.NoFollowLink); err != nil || len(b) != 100 {
		t.Fatalf("ReadFile at the limit = %d bytes, %v", len(b), err)
	}
	if _, err := regularfile.ReadFile(p, 99, regularfile.NoFollowLink); !errors.Is(err, regularfile.ErrTooLarge) {
		t.Fatalf("ReadFile over the limit: %v, want ErrTooLarge", err)
	}
	// A sparse file of 64 GiB is refused from its size, not read.
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 64<<30); err != nil {
		t.Skipf("no sparse files here: %v", err)
	}
	if _, err := regularfile.ReadFile(big, 1<<20, regularfile.FollowLink); !errors.Is(err, regularfile.ErrTooLarge) {
		t.Fatalf("ReadFile of 64 GiB: %v, want ErrTooLarge", err)
	}
}

func TestCreate(t *testing.T) {
	dir := tree(t)
	outside := filepath.Join(t.TempDir(), "target")
	if err := os.WriteFile(outside, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		exclusive bool
		want      error
	}{
		{"new", true, nil},
		{"file", false, nil},
		{"file", true, fs.ErrExist},
		{"out", false, regularfile.ErrSymlink},
		{"out", true, fs.ErrExist},
		{"fifo", false, regularfile.ErrNotRegular},
		{"dir", false, nil}, // checked below: EISDIR from the open
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := regularfile.Create(filepath.Join(dir, tc.name), 0o600, tc.exclusive)
			if tc.name == "dir" {
				if err == nil {
					f.Close()
					t.Fatal("Create of a directory succeeded")
				}
				return
			}
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Create: %v", err)
				}
				f.Close()
				if fi, _ := os.Stat(filepath.Join(dir, tc.name)); fi.Size() != 0 {
					t.Fatalf("created file holds %d bytes, want 0", fi.Size())
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("Create: %v, want %v", err, tc.want)
			}
		})
	}
	if b, _ := os.ReadFile(outside); string(b) != "keep" {
		t.Fatalf("the link's target was changed: %q", b)
	}
	if fi, _ := os.Stat(outside); fi.Mode().Perm() != 0o644 {
		t.Fatalf("the link's target's mode changed to %v", fi.Mode().Perm())
	}
}

func ExampleOpen() {
	_, _, err := regularfile.Open("/dev/zero", regularfile.FollowLink)
	// A device, FIFO or socket is refused without being read.
	fmt.Println(errors.Is(err, regularfile.ErrNotRegular))
	// Output: true
}

func TestOpenFile(t *testing.T) {
	dir := tree(t)
	for _, tc := range []struct {
		name   string
		flag   int
		follow regularfile.Follow
		want   error // nil: opened
	}{
		{"file", os.O_RDWR, regularfile.NoFollowLink, nil},
		{"new", os.O_RDWR | os.O_CREATE, regularfile.NoFollowLink, nil},
		{"link", os.O_RDWR, regularfile.FollowLink, nil},
		{"link", os.O_RDWR | os.O_CREATE, regularfile.NoFollowLink, regularfile.ErrSymlink},
		{"dangling", os.O_RDWR | os.O_CREATE, regularfile.NoFollowLink, regularfile.ErrSymlink},
		{"fifo", os.O_RDWR | os.O_CREATE, regularfile.NoFollowLink, regularfile.ErrNotRegular},
		{"fifo", os.O_WRONLY, regularfile.FollowLink, regularfile.ErrNotRegular},
		{"zero", os.O_RDWR, regularfile.FollowLink, regularfile.ErrNotRegular},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, fi, err := regularfile.OpenFile(filepath.Join(dir, tc.name), tc.flag, 0o600, tc.follow)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("OpenFile: %v", err)
				}
				defer f.Close()
				if !fi.Mode().IsRegular() {
					t.Fatalf("stat = %v, want a regular file", fi.Mode())
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("OpenFile: %v, want %v", err, tc.want)
			}
		})
	}
	// Not truncated: the caller decides.
	if b, _ := os.ReadFile(filepath.Join(dir, "file")); string(b) != "hello\n" {
		t.Fatalf("file = %q after OpenFile", b)
	}
	if _, err := os.Lstat(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the dangling link's target was created: %v", err)
	}
}

// OpenDir opens a directory; a FIFO, a file or a missing path fails at
// once (a FIFO would block a plain open until a writer came).
func TestOpenDir(t *testing.T) {
	dir := tree(t)
	d, err := regularfile.OpenDir(filepath.Join(dir, "dir"))
	if err != nil {
		t.Fatalf("OpenDir(dir): %v", err)
	}
	d.Close()
	for _, name := range []string{"fifo", "file", "missing"} {
		if d, err := regularfile.OpenDir(filepath.Join(dir, name)); err == nil {
			d.Close()
			t.Errorf("OpenDir(%s) succeeded", name)
		}
	}
}
