package fsops

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// failingFile is a real temporary file whose Write fails.
type failingFile struct {
	*os.File
	err error
}

func (f failingFile) Write([]byte) (int, error) { return 0, f.err }

// injectedDir is a real directory handle whose temporary-file creation
// fails with createErr, or whose temporary file fails to write with writeErr.
type injectedDir struct {
	dirHandle
	createErr, writeErr error
}

func (d injectedDir) OpenRoot(name string) (dirHandle, error) {
	sub, err := d.dirHandle.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	return injectedDir{sub, d.createErr, d.writeErr}, nil
}

func (d injectedDir) OpenFile(name string, flag int, perm fs.FileMode) (tempFile, error) {
	if d.createErr != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: d.createErr}
	}
	f, err := d.dirHandle.OpenFile(name, flag, perm)
	if err != nil || d.writeErr == nil {
		return f, err
	}
	return failingFile{File: f.(*os.File), err: &fs.PathError{Op: "write", Path: name, Err: d.writeErr}}, nil
}

// injected returns a LocalFiles whose OS calls are the real ones, except
// that creating the temporary file fails with createErr, or writing it
// fails with writeErr.
func injected(createErr, writeErr error) *LocalFiles {
	ops := realOS
	ops.openRoot = func(dir string) (dirHandle, error) {
		d, err := realOS.openRoot(dir)
		if err != nil {
			return nil, err
		}
		return injectedDir{d, createErr, writeErr}, nil
	}
	return &LocalFiles{ops: ops}
}

func wantToolError(t *testing.T, err error, code int, msg string) {
	t.Helper()
	var te *Error
	if !errors.As(err, &te) {
		t.Fatalf("error %v (%T) is not an *Error", err, err)
	}
	if te.Code != code || te.Message != msg {
		t.Fatalf("got %d %q, want %d %q", te.Code, te.Message, code, msg)
	}
}

// dirEntries returns the names in dir.
func dirEntries(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return strings.Join(names, ",")
}

// Seed 003 through the local disk adapter, in a temporary directory that
// stands for /test.
func TestWriteTextFileSeedLocal(t *testing.T) {
	t.Parallel()
	oneMB := strings.Repeat(strings.Repeat("x", 1023)+"\n", 1024)
	tests := []struct {
		name        string
		files       *LocalFiles
		setup       func(dir string)
		path        string // relative to the temp dir unless absolute is false
		relative    bool
		content     string
		code        int
		msg         string // {dir} stands for the temp dir
		wantBytes   int
		wantCreated bool
	}{
		{name: "TC1 create", path: "new.txt", content: "Hello\n", wantBytes: 6, wantCreated: true},
		{name: "TC2 overwrite", path: "existing.txt", content: "New content\n", wantBytes: 12,
			setup: func(dir string) { os.WriteFile(filepath.Join(dir, "existing.txt"), []byte("Old content\n"), 0o644) }},
		{name: "TC3 empty", path: "empty.txt", content: "", wantBytes: 0, wantCreated: true},
		{name: "TC4 permission denied (EACCES)", files: injected(syscall.EACCES, nil), path: "root/secret.txt", content: "data",
			setup: func(dir string) { os.Mkdir(filepath.Join(dir, "root"), 0o755) },
			code:  CodePermission, msg: "Permission denied: {dir}/root/secret.txt"},
		{name: "TC5 relative", path: "relative/path.txt", relative: true, content: "data",
			code: CodeInvalidRequest, msg: "Path must be absolute: relative/path.txt"},
		{name: "TC6 parent not found", path: "missing-dir/file.txt", content: "data",
			code: CodeNotFound, msg: "Parent directory not found: {dir}/missing-dir"},
		{name: "TC7 directory", path: "dir", content: "data",
			setup: func(dir string) { os.Mkdir(filepath.Join(dir, "dir"), 0o755) },
			code:  CodeIsDirectory, msg: "{dir}/dir is a directory"},
		{name: "TC8 large file", path: "large.txt", content: oneMB, wantBytes: 1048576, wantCreated: true},
		{name: "read-only filesystem (EROFS)", files: injected(syscall.EROFS, nil), path: "ro.txt", content: "data",
			code: CodePermission, msg: "Read-only filesystem: {dir}/ro.txt"},
		{name: "disk full (ENOSPC)", files: injected(nil, syscall.ENOSPC), path: "full.txt", content: "12345",
			code: CodeDiskFull, msg: "Disk full: cannot write 5 bytes to {dir}/full.txt"},
		{name: "EPERM", files: injected(syscall.EPERM, nil), path: "p.txt", content: "data",
			code: CodePermission, msg: "Permission denied: {dir}/p.txt"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.setup != nil {
				tc.setup(dir)
			}
			files := tc.files
			if files == nil {
				files = NewLocalFiles()
			}
			before := dirEntries(t, dir)
			path := filepath.Join(dir, tc.path)
			if tc.relative {
				path = tc.path
			}
			res, err := NewEngine(files).WriteTextFile(context.Background(), WriteParams{Path: path, Content: tc.content}, nil)
			if tc.code != 0 {
				wantToolError(t, err, tc.code, strings.ReplaceAll(tc.msg, "{dir}", dir))
				if after := dirEntries(t, dir); after != before {
					t.Errorf("directory changed from %q to %q", before, after)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !res.Success || res.BytesWritten != tc.wantBytes || res.Created != tc.wantCreated {
				t.Errorf("got %+v", res)
			}
			got, err := os.ReadFile(path)
			if err != nil || string(got) != tc.content {
				t.Errorf("file = %.40q, %v; want %.40q", got, err, tc.content)
			}
		})
	}
}

// The OS error mapping on real paths: missing files, directories, a file
// where a directory should be.
func TestLocalFilesRealErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	l := NewLocalFiles()

	_, err := l.ReadFile(ctx, filepath.Join(dir, "missing"))
	wantToolError(t, err, CodeNotFound, "File not found: "+filepath.Join(dir, "missing"))
	_, err = l.ReadFile(ctx, dir)
	wantToolError(t, err, CodeIsDirectory, dir+" is a directory")
	_, err = l.ReadFile(ctx, filepath.Join(file, "child")) // ENOTDIR
	wantToolError(t, err, CodeNotFound, "File not found: "+filepath.Join(file, "child"))

	for _, p := range []string{filepath.Join(dir, "missing"), filepath.Join(file, "child")} {
		if info, err := l.Stat(ctx, p); err != nil || info.Exists {
			t.Errorf("Stat(%s) = %+v, %v; want missing", p, info, err)
		}
	}
	if info, err := l.Stat(ctx, dir); err != nil || !info.Exists || !info.IsDir {
		t.Errorf("Stat(dir) = %+v, %v", info, err)
	}

	testNotRegular(t, l, dir) // a FIFO, a device: Unix only

	err = l.WriteFile(ctx, filepath.Join(dir, "no", "f"), []byte("x"))
	wantToolError(t, err, CodeNotFound, "Parent directory not found: "+filepath.Join(dir, "no"))
	err = l.WriteFile(ctx, filepath.Join(file, "child"), []byte("x"))
	wantToolError(t, err, CodeNotFound, "Parent directory not found: "+file)
	err = l.WriteFile(ctx, dir, []byte("x"))
	wantToolError(t, err, CodeIsDirectory, dir+" is a directory")
	if got := dirEntries(t, dir); got != "file" {
		t.Errorf("directory holds %q after failed writes", got)
	}
}

func TestLocalFilesAtomicWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	l := NewLocalFiles()

	t.Run("new file gets 0644", func(t *testing.T) {
		p := filepath.Join(dir, "new")
		if err := l.WriteFile(ctx, p, []byte("x")); err != nil {
			t.Fatal(err)
		}
		if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o644 {
			t.Errorf("mode = %v", fi.Mode())
		}
	})
	t.Run("existing mode kept", func(t *testing.T) {
		p := filepath.Join(dir, "script")
		if err := os.WriteFile(p, []byte("old"), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, 0o750); err != nil {
			t.Fatal(err)
		}
		if err := l.WriteFile(ctx, p, []byte("new")); err != nil {
			t.Fatal(err)
		}
		fi, _ := os.Stat(p)
		got, _ := os.ReadFile(p)
		if fi.Mode().Perm() != 0o750 || string(got) != "new" {
			t.Errorf("mode %v content %q", fi.Mode(), got)
		}
	})
	t.Run("symlink written through", func(t *testing.T) {
		target := filepath.Join(dir, "target")
		link := filepath.Join(dir, "link")
		if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		// The engine resolves the link; the adapter writes the target.
		if _, err := NewEngine(l).WriteTextFile(ctx, WriteParams{Path: link, Content: "new"}, nil); err != nil {
			t.Fatal(err)
		}
		fi, _ := os.Lstat(link)
		got, _ := os.ReadFile(target)
		if fi.Mode()&fs.ModeSymlink == 0 || string(got) != "new" {
			t.Errorf("link mode %v, target %q", fi.Mode(), got)
		}
	})
	t.Run("no temporary files left", func(t *testing.T) {
		if got := dirEntries(t, dir); got != "link,new,script,target" {
			t.Errorf("directory holds %q", got)
		}
	})
	t.Run("failed write keeps the old content and removes the temp file", func(t *testing.T) {
		p := filepath.Join(dir, "new")
		err := injected(nil, syscall.ENOSPC).WriteFile(ctx, p, []byte("longer content"))
		wantToolError(t, err, CodeDiskFull, "Disk full: cannot write 14 bytes to "+p)
		got, _ := os.ReadFile(p)
		if string(got) != "x" {
			t.Errorf("content = %q", got)
		}
		if got := dirEntries(t, dir); got != "link,new,script,target" {
			t.Errorf("directory holds %q", got)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if err := l.WriteFile(cctx, filepath.Join(dir, "c"), []byte("x")); !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v", err)
		}
	})
}

func TestPathLocksAreFreed(t *testing.T) {
	l := newPathLocks()
	ctx := context.Background()
	unlockA, err := l.lock(ctx, "/a")
	if err != nil {
		t.Fatal(err)
	}
	unlockB, _ := l.lock(ctx, "/b")
	if l.size() != 2 {
		t.Errorf("size = %d with two held", l.size())
	}
	// A waiter that gives up leaves no trace.
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error)
	go func() {
		_, err := l.lock(cctx, "/a")
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("waiter err = %v", err)
	}
	unlockA()
	unlockB()
	if l.size() != 0 {
		t.Errorf("size = %d after all unlocked", l.size())
	}
	if processLocks.size() != 0 {
		t.Errorf("process locks hold %d paths while idle", processLocks.size())
	}
}

// A read-only file is not replaced: the atomic rename would only need a
// writable directory, so write permission on the file itself is checked
// (root passes the check; the OS answer is injected here).
func TestLocalFilesReadOnlyFileNotReplaced(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "ro.txt")
	if err := os.WriteFile(p, []byte("keep\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	ops := realOS
	ops.writable = func(name string) error { return &fs.PathError{Op: "access", Path: name, Err: syscall.EACCES} }
	err := (&LocalFiles{ops: ops}).WriteFile(ctx, p, []byte("changed\n"))
	wantToolError(t, err, CodePermission, "Permission denied: "+p)
	if b, _ := os.ReadFile(p); string(b) != "keep\n" {
		t.Errorf("file = %q", b)
	}
	// A new file needs no such check.
	if err := (&LocalFiles{ops: ops}).WriteFile(ctx, p+".new", []byte("x")); err != nil {
		t.Errorf("new file: %v", err)
	}
}

// A dangling symlink is neither written through nor replaced.
func TestLocalFilesDanglingSymlinkRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	link := filepath.Join(dir, "link")
	if err := os.Symlink(filepath.Join(dir, "missing", "target"), link); err != nil {
		t.Fatal(err)
	}
	err := NewLocalFiles().WriteFile(context.Background(), link, []byte("x"))
	wantToolError(t, err, CodePermission, "Permission denied: "+link)
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", fi, err)
	}
}
