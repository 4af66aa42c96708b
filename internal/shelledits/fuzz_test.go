package shelledits

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codexacp/codexacp/internal/regularfile"
)

// fuzzNames are the paths a fuzzed tree is made of: a lock link's name, a
// directory that may become a file, a link or a nested repository, and
// files below it.
var fuzzNames = []string{"a.txt", ".#a.txt", "d", "d/c.txt", "d/e", "d/e/f.txt", "l"}

// A fuzzed tree op: three bytes, what, which name, an argument.
const (
	opWrite = iota
	opRemove
	opLink        // to another name (may dangle)
	opLinkSelf    // a loop
	opLinkDir     // to a directory ("d" or "..")
	opLinkOutside // to a file outside the workspace
	opFIFO
	opSocket
	opMkdir
	opRename
	opGitAdd
	opGitCommit
	opGitNested // a repository inside (an untracked nested one)
	opGitlink   // a gitlink in the index (a submodule without its repository)
	opAtWalk    // in the ops run during a scan: the ops after it wait for the walk's next subdirectory
	opCount
)

// fuzzTree applies the ops in prog to the workspace w; errors (a file in
// place of a directory…) leave the tree as it is. With atWalk it stops at
// an opAtWalk and returns the ops from it on; without, opAtWalk does
// nothing.
func fuzzTree(w ws, outside string, git bool, prog []byte, atWalk bool) (rest []byte) {
	for ; len(prog) >= 3; prog = prog[3:] {
		op, name, arg := prog[0]%opCount, fuzzNames[int(prog[1])%len(fuzzNames)], prog[2]
		p := w.path(name)
		switch op {
		case opWrite:
			os.MkdirAll(filepath.Dir(p), 0o755)
			content := [][]byte{nil, []byte("x\n"), fmt.Appendf(nil, "v%d\n", arg), []byte("\x00bin")}[arg%4]
			if fi, err := os.Lstat(p); arg&4 == 0 && (err != nil || fi.Mode().IsRegular()) {
				os.WriteFile(p, content, 0o644) // in place (never into a FIFO: it would wait for a reader)
			} else if os.WriteFile(p+"~", content, 0o644) == nil {
				os.Rename(p+"~", p) // as sed -i does
			}
		case opRemove:
			os.RemoveAll(p)
		case opLink:
			os.Symlink(fuzzNames[int(arg)%len(fuzzNames)], p)
		case opLinkSelf:
			os.Symlink(filepath.Base(p), p)
		case opLinkDir:
			os.Symlink([]string{"d", ".."}[arg%2], p)
		case opLinkOutside:
			os.Symlink(outside, p)
		case opFIFO:
			mkfifoQuiet(p)
		case opSocket:
			mksocketQuiet(p)
		case opMkdir:
			os.MkdirAll(p, 0o755)
		case opRename:
			os.Rename(p, w.path(fuzzNames[int(arg)%len(fuzzNames)]))
		case opAtWalk:
			if atWalk {
				return prog
			}
		case opGitAdd, opGitCommit, opGitNested, opGitlink:
			if !git {
				continue
			}
			args := map[int][]string{
				opGitAdd:    {"add", "-A", "--", name},
				opGitCommit: {"commit", "-q", "--allow-empty", "-m", "c"},
				opGitNested: {"init", "-q", name},
				opGitlink:   {"update-index", "--add", "--cacheinfo", "160000,1111111111111111111111111111111111111111," + name},
			}[int(op)]
			cmd := exec.Command("git", append(slices.Clone(testGitConfig), args...)...)
			cmd.Dir = w.dir
			cmd.Run()
		}
	}
	return nil
}

// regularFiles reads the regular files of the tree (not in .git, not
// below a link): what a report's texts are checked against.
func regularFiles(root string) map[string][]byte {
	files := map[string][]byte{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			if data, err := os.ReadFile(p); err == nil {
				rel, _ := filepath.Rel(root, p)
				files[filepath.ToSlash(rel)] = data
			}
		}
		return nil
	})
	return files
}

// walkWait bounds the wait for a scan or walk that must end by itself: a
// regression that blocks fails the test instead of hanging the package.
const walkWait = 30 * time.Second

// FuzzTreeScan builds a workspace (in git or not) of files, symlinks
// (dangling, loops, to directories, out of the workspace), FIFOs, sockets,
// nested repositories and gitlinks, takes a baseline, changes the tree,
// and scans it while files change under the reads, or under the walk
// between two levels (opAtWalk: a directory listed in its parent then
// swapped for a FIFO or a link before it is opened). No panic, no error,
// and what is reported is true: old texts were the files' at the
// baseline, new texts are on disk, and a quiet scan reports nothing.
func FuzzTreeScan(f *testing.F) {
	f.Add(true, []byte{opLink, 1, 200, opWrite, 0, 1}, []byte{opWrite, 0, 2}, []byte{})
	f.Add(true, []byte{opFIFO, 6, 0, opLinkSelf, 1, 0, opGitAdd, 1, 0}, []byte{opRemove, 1, 0, opWrite, 1, 1}, []byte{opRemove, 1, 0})
	f.Add(true, []byte{opWrite, 3, 1, opGitAdd, 3, 0, opGitCommit, 0, 0, opLinkDir, 6, 0}, []byte{opWrite, 3, 2, opGitCommit, 0, 0}, []byte{opLinkOutside, 3, 0})
	f.Add(true, []byte{opWrite, 5, 1, opGitNested, 4, 0, opGitlink, 6, 0}, []byte{opSocket, 0, 0, opWrite, 5, 3}, []byte{opFIFO, 5, 0})
	f.Add(false, []byte{opWrite, 0, 1, opLink, 1, 9, opFIFO, 6, 0, opSocket, 4, 0}, []byte{opRename, 0, 6, opWrite, 3, 2}, []byte{opLinkOutside, 6, 0})
	f.Add(false, []byte{opWrite, 3, 1, opMkdir, 4, 0}, []byte{opRemove, 2, 0, opWrite, 2, 1}, []byte{opRemove, 2, 0})
	// d is listed as a directory, then is a FIFO (or a link out) when the
	// walk opens it: the scan must end, and not follow the link.
	f.Add(false, []byte{opWrite, 3, 1, opWrite, 5, 2}, []byte{}, []byte{opAtWalk, 0, 0, opRemove, 2, 0, opFIFO, 2, 0})
	f.Add(false, []byte{opWrite, 5, 1}, []byte{opWrite, 0, 3}, []byte{opAtWalk, 0, 0, opRemove, 4, 0, opFIFO, 4, 0, opAtWalk, 0, 0, opRename, 2, 6})
	f.Add(false, []byte{opWrite, 3, 1}, []byte{}, []byte{opAtWalk, 0, 0, opRemove, 2, 0, opLinkDir, 2, 1})
	f.Fuzz(func(t *testing.T, git bool, before, between, during []byte) {
		if len(before)+len(between)+len(during) > 90 {
			return // thirty ops is plenty; more only slows the fuzzer
		}
		t.Parallel() // the seeds, in the quick loop: each its own tree and hooks
		var w ws
		if git {
			w = gitWS(t)
		} else {
			w = plainWS(t)
		}
		outside := filepath.Join(t.TempDir(), "outside.txt")
		if err := os.WriteFile(outside, []byte("outside\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		// Half the inputs watch the tree (where the system can), the
		// others compare it whole: both must find the same changes.
		fuzzTree(w, outside, git, before, false)
		tr := newWatched([]string{w.dir}, Limits{Timeout: time.Minute}, len(before)%2 == 0)
		defer tr.Close()
		if err := tr.Baseline(context.Background()); err != nil {
			t.Fatalf("baseline: %v", err)
		}
		old := regularFiles(w.dir)
		fuzzTree(w, outside, git, between, false)
		now := regularFiles(w.dir)

		// The during ops run at the scan's first read; those after an
		// opAtWalk at the start run when the walk lists a subdirectory
		// (its parent listed it), and so on for each opAtWalk.
		var mu sync.Mutex
		pending, ran := during, false
		tr.listDir = func(dir string, dev uint64, follow regularfile.Follow) ([]string, []fileStat, []string, error) {
			if follow == regularfile.NoFollowLink { // below the root
				mu.Lock()
				if len(pending) >= 3 && pending[0]%opCount == opAtWalk {
					pending, ran = fuzzTree(w, outside, git, pending[3:], true), true
				}
				mu.Unlock()
			}
			return listDir(dir, dev, follow)
		}
		tr.openFile = func(p string) (*os.File, fs.FileInfo, error) {
			mu.Lock()
			if len(pending) > 0 {
				fuzzTree(w, outside, git, pending, false)
				pending, ran = nil, true
			}
			mu.Unlock()
			return openFile(p)
		}
		type result struct {
			rep Report
			err error
		}
		done := make(chan result, 1)
		go func() {
			rep, err := tr.Scan(context.Background())
			done <- result{rep, err}
		}()
		var rep Report
		select {
		case r := <-done:
			if r.err != nil {
				t.Fatalf("scan: %v", r.err)
			}
			rep = r.rep
		case <-time.After(walkWait):
			t.Fatal("the scan blocked") // on a FIFO in place of a directory?
		}
		tr.openFile, tr.listDir = nil, nil
		quiet := !ran || len(during) < 3 // the tree did not change under the scan
		checkReport(t, w.dir, rep, old, now, quiet)

		// Another scan takes whatever changed under the first; a third,
		// with nothing changed, reports nothing.
		if _, err := tr.Scan(context.Background()); err != nil {
			t.Fatalf("second scan: %v", err)
		}
		if rep, err := tr.Scan(context.Background()); err != nil || !rep.Empty() {
			t.Fatalf("a quiet scan: %+v, %v", rep, err)
		}
	})
}

// checkReport checks a report against the regular files at the baseline
// (old) and after the command (now); quiet says nothing changed while it
// was scanned, so now is also what it read.
func checkReport(t *testing.T, root string, rep Report, old, now map[string][]byte, quiet bool) {
	t.Helper()
	seen := map[string]bool{}
	for _, ch := range rep.Changes {
		rel, err := filepath.Rel(root, ch.Path)
		if err != nil || strings.HasPrefix(rel, "..") || isGitPath(filepath.ToSlash(rel)) {
			t.Fatalf("reported outside the root or in .git: %s", ch.Path)
		}
		rel = filepath.ToSlash(rel)
		if seen[rel] {
			t.Fatalf("reported twice: %s", rel)
		}
		seen[rel] = true
		oldData, wasFile := old[rel]
		newData, isFile := now[rel]
		switch ch.Op {
		case Created:
			if ch.Old != nil {
				t.Fatalf("created %s with an old text", rel)
			}
		case Deleted:
			if ch.New != nil {
				t.Fatalf("deleted %s with a new text", rel)
			}
		case Modified:
		default:
			t.Fatalf("%s: op %v", rel, ch.Op)
		}
		if ch.Omitted != OmitNone {
			if ch.Old != nil || ch.New != nil {
				t.Fatalf("%s %s (%s) with texts", ch.Op, rel, ch.Omitted)
			}
			if ch.Omitted != OmitBinary && (ch.OldBytes != nil || ch.NewBytes != nil) {
				t.Fatalf("%s %s (%s) with contents", ch.Op, rel, ch.Omitted)
			}
			if ch.OldBytes != nil && (ch.Op == Created || !wasFile || !bytes.Equal(ch.OldBytes, oldData)) {
				t.Fatalf("%s %s: old content %q, but at the baseline it was %q (a file: %v)", ch.Op, rel, ch.OldBytes, oldData, wasFile)
			}
			if quiet && ch.NewBytes != nil && (ch.Op == Deleted || !isFile || !bytes.Equal(ch.NewBytes, newData)) {
				t.Fatalf("%s %s: new content %q, but on disk %q (a file: %v)", ch.Op, rel, ch.NewBytes, newData, isFile)
			}
			continue
		}
		if ch.Op != Created && (!wasFile || !bytes.Equal(ch.Old, oldData)) {
			t.Fatalf("%s %s: old text %q, but at the baseline it was %q (a file: %v)", ch.Op, rel, ch.Old, oldData, wasFile)
		}
		if quiet {
			if ch.Op != Deleted && (!isFile || !bytes.Equal(ch.New, newData)) {
				t.Fatalf("%s %s: new text %q, but on disk %q (a file: %v)", ch.Op, rel, ch.New, newData, isFile)
			}
			if ch.Op == Deleted && isFile {
				t.Fatalf("deleted %s is a file on disk", rel)
			}
			if ch.Op == Created && wasFile {
				t.Fatalf("created %s was a file at the baseline", rel)
			}
		}
	}
}

// FuzzParseStatus: whatever git status prints, parsing it neither panics
// nor keeps an entry outside the root, in .git, or past the limit.
func FuzzParseStatus(f *testing.F) {
	f.Add([]byte("# branch.oid 1111\x001 .M N... 100644 100644 100644 aa aa root/a.txt\x00? root/.#a.txt\x00"), "root/", 5)
	f.Add([]byte("2 R. N... 100644 100644 100644 dd dd R100 b\x00a\x00u UU N... 1 2 3 4 h1 h2 h3 c\x00"), "", 1)
	f.Add([]byte("1 .T N... 120000 120000 100644 aa aa link\x001 A. S... 000000 160000 160000 00 bb sub\x00"), "", 9)
	f.Fuzz(func(t *testing.T, out []byte, prefix string, max int) {
		max = max%64 + 64
		if max < 0 {
			max = -max
		}
		s, err := parseStatus(out, prefix, max)
		if err != nil {
			return
		}
		if len(s.entries) > max {
			t.Fatalf("%d entries, limit %d", len(s.entries), max)
		}
		for rel := range s.entries {
			if rel == "" || isGitPath(rel) || strings.HasSuffix(rel, "/") {
				t.Fatalf("kept %q", rel)
			}
		}
	})
}
