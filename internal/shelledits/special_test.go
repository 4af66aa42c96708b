package shelledits

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Paths that are not regular files (symlinks dangling, looping, to
// directories; staged and modified symlinks) are no file for the baseline:
// neither a panic nor a change, and a regular file that replaces one is
// created.
func TestSpecialFilesInGit(t *testing.T) {
	for _, tc := range []struct {
		name   string
		before func(w ws)
		cmd    func(w ws)
		want   []string
	}{
		{name: "untracked dangling lock link (Emacs .#name)",
			before: func(w ws) { symlink(w, "user@host.1234:1700000000", ".#notes.txt") },
			cmd:    func(w ws) { w.replace("a.txt", "ALPHA\n") },
			want:   []string{`modified a.txt "alpha\n"→"ALPHA\n"`}},
		{name: "untracked link loop",
			before: func(w ws) { symlink(w, "loop2", "loop1"); symlink(w, "loop1", "loop2") },
			cmd:    func(w ws) { w.remove("loop1"); w.write("loop1", "now a file\n") },
			want:   []string{`created loop1 nil→"now a file\n"`}},
		{name: "untracked link to a directory",
			before: func(w ws) { symlink(w, "sub", "sublink") },
			cmd:    func(w ws) { w.write("sub/c.txt", "CHARLIE\n") },
			want:   []string{`modified sub/c.txt "charlie\n"→"CHARLIE\n"`}},
		{name: "untracked link to a FIFO",
			before: func(w ws) { mkfifo(w, "pipe"); symlink(w, "pipe", "pipelink") },
			cmd:    func(w ws) { w.replace("b.txt", "B\n") },
			want:   []string{`modified b.txt "bravo\n"→"B\n"`}},
		{name: "staged symlink",
			before: func(w ws) { symlink(w, "a.txt", "staged"); w.git("add", "staged") },
			cmd:    func(w ws) { w.remove("staged"); w.write("staged", "file\n") },
			want:   []string{`created staged nil→"file\n"`}},
		{name: "committed symlink retargeted, then made a file",
			before: func(w ws) {
				symlink(w, "a.txt", "link")
				w.git("add", "link")
				w.git("commit", "-q", "-m", "link")
				w.remove("link")
				symlink(w, "b.txt", "link")
			},
			cmd:  func(w ws) { w.remove("link"); w.write("link", "file\n") },
			want: []string{`created link nil→"file\n"`}},
		{name: "committed clean symlink made a file",
			before: func(w ws) {
				symlink(w, "a.txt", "link")
				w.git("add", "link")
				w.git("commit", "-q", "-m", "link")
			},
			cmd:  func(w ws) { w.remove("link"); w.write("link", "file\n") },
			want: []string{`created link nil→"file\n"`}},
		{name: "committed clean symlink retargeted",
			before: func(w ws) {
				symlink(w, "a.txt", "link")
				w.git("add", "link")
				w.git("commit", "-q", "-m", "link")
			},
			cmd:  func(w ws) { w.remove("link"); symlink(w, "b.txt", "link") },
			want: nil},
		{name: "a file made a dangling link",
			cmd:  func(w ws) { w.remove("a.txt"); symlink(w, "nowhere", "a.txt") },
			want: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := gitWS(t)
			if tc.before != nil {
				tc.before(w)
			}
			tr := New([]string{w.dir}, Limits{})
			defer tr.Close()
			baseline(t, tr)
			tc.cmd(w)
			if got := summaries(w.dir, scanOnce(t, tr)); !slices.Equal(got, tc.want) {
				t.Errorf("changes:\n got %q\nwant %q", got, tc.want)
			}
			if again := summaries(w.dir, scanOnce(t, tr)); len(again) != 0 {
				t.Errorf("second scan: %q", again)
			}
		})
	}
}

func symlink(w ws, target, rel string) {
	w.t.Helper()
	if err := os.Symlink(target, w.path(rel)); err != nil {
		w.t.Skip("no symlinks here:", err)
	}
}

// Outside git the walk sees regular files only: links (dangling, looping,
// to a directory, to a FIFO), FIFOs and sockets are no files.
func TestSpecialFilesWalked(t *testing.T) {
	w := plainWS(t)
	symlink(w, "user@host.1234:1700000000", ".#notes.txt")
	symlink(w, "loop2", "loop1")
	symlink(w, "loop1", "loop2")
	symlink(w, "sub", "sublink")
	mkfifo(w, "pipe")
	symlink(w, "pipe", "pipelink")
	mksocket(w, "sock")
	tr := New([]string{w.dir}, Limits{})
	defer tr.Close()
	baseline(t, tr)
	w.replace("a.txt", "ALPHA\n")
	w.remove("loop1")
	w.write("loop1", "now a file\n")
	w.remove("pipe")
	mkfifo(w, "pipe")
	want := []string{`modified a.txt "alpha\n"→"ALPHA\n"`, `created loop1 nil→"now a file\n"`}
	if got := summaries(w.dir, scanOnce(t, tr)); !slices.Equal(got, want) {
		t.Errorf("changes:\n got %q\nwant %q", got, want)
	}
}

// Between the listing (git status, the walk) and the read a file may
// vanish, turn into a symlink or a FIFO, or fail to open: the scan goes on,
// follows no link out of the workspace, and says what it could not read.
func TestFileChangesUnderTheRead(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		swap  func(w ws, p string) error // just before a.txt is opened
		want  []string
		notes int
	}{
		{name: "vanishes", swap: func(w ws, p string) error { return os.Remove(p) },
			want: []string{`deleted a.txt "alpha\n"→nil`}},
		{name: "becomes a link out of the workspace", swap: func(w ws, p string) error {
			os.Remove(p)
			return os.Symlink(outside, p)
		}},
		{name: "becomes a FIFO", swap: func(w ws, p string) error {
			os.Remove(p)
			mkfifo(w, "a.txt")
			return nil
		}},
		{name: "unreadable", swap: func(w ws, p string) error { return fs.ErrPermission }, notes: 1},
	} {
		for _, isGit := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/git=%v", tc.name, isGit), func(t *testing.T) {
				t.Parallel()
				w := plainWS(t)
				if isGit {
					w = gitWS(t)
				}
				tr := New([]string{w.dir}, Limits{})
				defer tr.Close()
				baseline(t, tr)
				w.replace("a.txt", "ALPHA\n")
				swapped := false
				tr.openFile = func(p string) (*os.File, fs.FileInfo, error) {
					if filepath.Base(p) == "a.txt" && !swapped {
						swapped = true
						if err := tc.swap(w, p); err != nil {
							return nil, nil, &fs.PathError{Op: "open", Path: p, Err: err}
						}
					}
					return openFile(p)
				}
				rep := scanOnce(t, tr)
				if got := summaries(w.dir, rep); !slices.Equal(got, tc.want) {
					t.Errorf("changes:\n got %q\nwant %q", got, tc.want)
				}
				if len(rep.Notes) != tc.notes {
					t.Errorf("notes = %q, want %d", rep.Notes, tc.notes)
				}
				if !swapped {
					t.Error("a.txt was not read")
				}
				scanOnce(t, tr)
			})
		}
	}
}
