package shelledits

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// ws is a workspace directory a test changes.
type ws struct {
	t   testing.TB
	dir string
}

func (w ws) path(rel string) string { return filepath.Join(w.dir, filepath.FromSlash(rel)) }

func (w ws) write(rel, content string) {
	w.t.Helper()
	p := w.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

// replace writes a new file in place of rel, as `sed -i` does.
func (w ws) replace(rel, content string) {
	w.t.Helper()
	tmp := w.path(rel) + ".tmp~"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		w.t.Fatal(err)
	}
	if err := os.Rename(tmp, w.path(rel)); err != nil {
		w.t.Fatal(err)
	}
}

func (w ws) remove(rel string) {
	w.t.Helper()
	if err := os.Remove(w.path(rel)); err != nil {
		w.t.Fatal(err)
	}
}

func (w ws) git(args ...string) {
	w.t.Helper()
	cmd := exec.Command("git", append(slices.Clone(testGitConfig), args...)...)
	cmd.Dir = w.dir
	if out, err := cmd.CombinedOutput(); err != nil {
		w.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// testGitConfig is the configuration of the tests' own git commands: no
// signing, and no `git maintenance run --auto` started by every commit.
var testGitConfig = []string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false",
	"-c", "maintenance.auto=false"}

func needGit(t testing.TB) {
	t.Helper()
	if gitPath() == "" {
		t.Skip("git is not installed")
	}
}

// gitWS is a repository with a.txt, b.txt, sub/c.txt committed, and
// .gitignore ignoring *.log: a copy of gitTemplate's.
func gitWS(t testing.TB) ws {
	t.Helper()
	needGit(t)
	tmpl, err := gitTemplate()
	if err != nil {
		t.Fatal(err)
	}
	w := ws{t, t.TempDir()}
	if err := os.CopyFS(w.dir, os.DirFS(tmpl)); err != nil {
		t.Fatal(err)
	}
	return w
}

// gitTemplate makes gitWS's repository once per test binary (three git
// processes, which every test in git would otherwise start: most of the
// package's time). A copy's files differ from the index's stat (inode,
// change time), so git compares them by content: a copy's status is the
// same as a repository made in place.
var gitTemplate = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "shelledits-template-")
	if err != nil {
		return "", err
	}
	templateDir = dir
	w := ws{&templateTB{}, dir}
	var failed error
	func() {
		defer func() {
			if r := recover(); r != nil {
				failed = fmt.Errorf("the template repository: %v", r)
			}
		}()
		w.git("init", "-q", "--template=", ".") // no hook samples to copy
		w.write("a.txt", "alpha\n")
		w.write("b.txt", "bravo\n")
		w.write("sub/c.txt", "charlie\n")
		w.write(".gitignore", "*.log\n")
		w.git("add", ".")
		w.git("commit", "-q", "-m", "init")
	}()
	return dir, failed
})

// templateDir is gitTemplate's directory, removed by TestMain.
var templateDir string

// templateTB is the testing.TB of gitTemplate's helpers, which run outside
// any test: a failure panics (recovered into gitTemplate's error).
type templateTB struct{ testing.TB }

func (templateTB) Helper()                           {}
func (templateTB) Fatal(args ...any)                 { panic(fmt.Sprint(args...)) }
func (templateTB) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }

// newWatched is New for a tracker that watches its roots or not (where
// the system can), whatever useNotify says: for parallel tests.
func newWatched(roots []string, lim Limits, notify bool) *Tracker {
	tr := New(roots, lim)
	tr.watch = notify && notifySupported
	return tr
}

// plainWS is a directory outside git with the same files.
func plainWS(t testing.TB) ws {
	t.Helper()
	w := ws{t, t.TempDir()}
	w.write("a.txt", "alpha\n")
	w.write("b.txt", "bravo\n")
	w.write("sub/c.txt", "charlie\n")
	return w
}

// summary is a Change in a form tests compare: "op rel old→new" or
// "op rel (omission)".
func summary(root string, ch Change) string {
	rel, _ := filepath.Rel(root, ch.Path)
	rel = filepath.ToSlash(rel)
	if ch.Omitted != OmitNone {
		s := fmt.Sprintf("%s %s (%s)", ch.Op, rel, ch.Omitted)
		if ch.Old != nil || ch.New != nil {
			s += " with texts" // never: a file shown without a diff has none
		}
		if ch.OldBytes != nil || ch.NewBytes != nil {
			s += " " + quoted(ch.OldBytes) + "→" + quoted(ch.NewBytes)
		}
		return s
	}
	return fmt.Sprintf("%s %s %s→%s", ch.Op, rel, quoted(ch.Old), quoted(ch.New))
}

// quoted is b as a Go string, "nil" for nil.
func quoted(b []byte) string {
	if b == nil {
		return "nil"
	}
	return fmt.Sprintf("%q", b)
}

func summaries(root string, rep Report) []string {
	var out []string
	for _, ch := range rep.Changes {
		out = append(out, summary(root, ch))
	}
	for _, p := range rep.More {
		rel, _ := filepath.Rel(root, p)
		out = append(out, "more "+filepath.ToSlash(rel))
	}
	return out
}

func scanOnce(t *testing.T, tr *Tracker) Report {
	t.Helper()
	rep, err := tr.Scan(context.Background())
	if err != nil {
		t.Fatalf("scan: %v", err)
	}
	return rep
}

func baseline(t *testing.T, tr *Tracker) {
	t.Helper()
	if err := tr.Baseline(context.Background()); err != nil {
		t.Fatalf("baseline: %v", err)
	}
}

func TestScan(t *testing.T) {
	big := strings.Repeat("x", 2000) + "\n"
	for _, tc := range []struct {
		name   string
		git    bool
		lim    Limits
		before func(w ws) // before the baseline
		cmd    func(w ws) // the command
		want   []string
	}{
		{name: "git clean file edited in place", git: true,
			cmd:  func(w ws) { w.replace("a.txt", "ALPHA\n") },
			want: []string{`modified a.txt "alpha\n"→"ALPHA\n"`}},
		{name: "git file created", git: true,
			cmd:  func(w ws) { w.write("new/d.txt", "delta\n") },
			want: []string{`created new/d.txt nil→"delta\n"`}},
		{name: "git tracked file deleted", git: true,
			cmd:  func(w ws) { w.remove("sub/c.txt") },
			want: []string{`deleted sub/c.txt "charlie\n"→nil`}},
		{name: "git dirty file edited again: old text is the dirty one", git: true,
			before: func(w ws) { w.write("a.txt", "alpha dirty\n") },
			cmd:    func(w ws) { w.replace("a.txt", "alpha dirtier\n") },
			want:   []string{`modified a.txt "alpha dirty\n"→"alpha dirtier\n"`}},
		{name: "git dirty file written in place with the same size", git: true,
			before: func(w ws) { w.write("a.txt", "alpha one\n") },
			cmd:    func(w ws) { w.write("a.txt", "alpha two\n") },
			want:   []string{`modified a.txt "alpha one\n"→"alpha two\n"`}},
		// Skipped directories (node_modules, __pycache__, .venv…) are
		// compared in git whenever git lists their files.
		{name: "git tracked file in an ignored skipped directory edited", git: true,
			before: func(w ws) {
				w.write(".gitignore", "*.log\nnode_modules/\n")
				w.write("vendor/node_modules/lib/x.js", "one\n")
				w.write("vendor/node_modules/lib/node_modules/y/y.js", "yankee\n")
				w.git("add", "-f", ".")
				w.git("commit", "-q", "-m", "vendored")
			},
			cmd: func(w ws) {
				w.replace("vendor/node_modules/lib/x.js", "two\n")
				w.replace("vendor/node_modules/lib/node_modules/y/y.js", "YANKEE\n")
			},
			want: []string{`modified vendor/node_modules/lib/node_modules/y/y.js "yankee\n"→"YANKEE\n"`,
				`modified vendor/node_modules/lib/x.js "one\n"→"two\n"`}},
		{name: "git untracked file in a skipped directory not ignored edited", git: true,
			before: func(w ws) { w.write("pkg/__pycache__/m.pyc", "one\n") },
			cmd:    func(w ws) { w.replace("pkg/__pycache__/m.pyc", "two\n") },
			want:   []string{`modified pkg/__pycache__/m.pyc "one\n"→"two\n"`}},
		{name: "git file created in a skipped directory not ignored", git: true,
			before: func(w ws) { w.write(".venv/lib/keep.txt", "k\n") },
			cmd:    func(w ws) { w.write(".venv/lib/new.txt", "n\n") },
			want:   []string{`created .venv/lib/new.txt nil→"n\n"`}},
		{name: "git ignored skipped directory left out", git: true,
			before: func(w ws) {
				w.write(".gitignore", "*.log\nnode_modules/\n")
				w.git("commit", "-qam", "ignore")
				w.write("node_modules/x/y.js", "one\n")
			},
			cmd:  func(w ws) { w.replace("node_modules/x/y.js", "two\n") },
			want: nil},
		{name: "git untracked file edited", git: true,
			before: func(w ws) { w.write("notes.md", "draft\n") },
			cmd:    func(w ws) { w.replace("notes.md", "final\n") },
			want:   []string{`modified notes.md "draft\n"→"final\n"`}},
		{name: "git dirty and untracked files left alone", git: true,
			before: func(w ws) { w.write("a.txt", "alpha dirty\n"); w.write("notes.md", "draft\n") },
			cmd:    func(w ws) {},
			want:   nil},
		{name: "git staged file edited", git: true,
			before: func(w ws) { w.write("b.txt", "bravo staged\n"); w.git("add", "b.txt") },
			cmd:    func(w ws) { w.replace("b.txt", "bravo edited\n") },
			want:   []string{`modified b.txt "bravo staged\n"→"bravo edited\n"`}},
		{name: "git staged file left alone", git: true,
			before: func(w ws) { w.write("b.txt", "bravo staged\n"); w.git("add", "b.txt") },
			cmd:    func(w ws) {},
			want:   nil},
		{name: "git index changes only", git: true,
			before: func(w ws) { w.write("notes.md", "draft\n") },
			cmd:    func(w ws) { w.git("add", "notes.md"); w.git("rm", "-q", "--cached", "b.txt") },
			want:   nil},
		{name: "git same content written again", git: true,
			cmd:  func(w ws) { w.replace("a.txt", "alpha\n") },
			want: nil},
		{name: "git edit committed by the command", git: true,
			cmd:  func(w ws) { w.replace("a.txt", "ALPHA\n"); w.git("commit", "-q", "-am", "up") },
			want: []string{`modified a.txt "alpha\n"→"ALPHA\n"`}},
		{name: "git ignored file and .git internals", git: true,
			cmd: func(w ws) {
				w.write("build.log", "log\n")
				w.write(".git/info/exclude", "# changed\n")
				w.write(".git/codexacp-probe", "x\n")
			},
			want: nil},
		{name: "git binary file created", git: true,
			cmd:  func(w ws) { w.write("img.bin", "\x00\x01\x02") },
			want: []string{`created img.bin (binary file) nil→"\x00\x01\x02"`}},
		{name: "git committed binary file modified and deleted", git: true,
			before: func(w ws) {
				w.write("img.bin", "\x00\x01\x02")
				w.write("old.bin", "\xff\xfe")
				w.git("add", "img.bin", "old.bin")
				w.git("commit", "-q", "-m", "binaries")
			},
			cmd: func(w ws) { w.replace("img.bin", "\x00\x03"); w.remove("old.bin") },
			want: []string{`modified img.bin (binary file) "\x00\x01\x02"→"\x00\x03"`,
				`deleted old.bin (binary file) "\xff\xfe"→nil`}},
		{name: "git untracked binary file modified", git: true,
			before: func(w ws) { w.write("img.bin", "\x00\x01\x02") },
			cmd:    func(w ws) { w.replace("img.bin", "\x00\x03") },
			want:   []string{`modified img.bin (binary file) "\x00\x01\x02"→"\x00\x03"`}},
		{name: "git text file turned binary", git: true,
			cmd:  func(w ws) { w.replace("a.txt", "\x00alpha\n") },
			want: []string{`modified a.txt (binary file) "alpha\n"→"\x00alpha\n"`}},
		{name: "git file over the size limit", git: true, lim: Limits{MaxFileBytes: 1000},
			before: func(w ws) { w.write("big.txt", big); w.git("add", "big.txt"); w.git("commit", "-q", "-m", "big") },
			cmd:    func(w ws) { w.replace("big.txt", big+"more\n") },
			want:   []string{`modified big.txt (too large to show)`}},
		{name: "git more files than shown", git: true, lim: Limits{MaxFiles: 2},
			cmd: func(w ws) {
				w.replace("a.txt", "1\n")
				w.replace("b.txt", "2\n")
				w.replace("sub/c.txt", "3\n")
			},
			want: []string{`modified a.txt "alpha\n"→"1\n"`, `modified b.txt "bravo\n"→"2\n"`, "more sub/c.txt"}},
		{name: "git byte budget", git: true, lim: Limits{MaxTotalBytes: 20},
			cmd:  func(w ws) { w.replace("a.txt", "1\n"); w.replace("b.txt", "a much longer text\n") },
			want: []string{`modified a.txt "alpha\n"→"1\n"`, "more b.txt"}},
		{name: "git file replaced by a directory", git: true,
			cmd:  func(w ws) { w.remove("a.txt"); os.Mkdir(w.path("a.txt"), 0o755) },
			want: []string{`deleted a.txt "alpha\n"→nil`}},
		{name: "git dirty file past the keep limit", git: true, lim: Limits{MaxKeepFiles: 1},
			before: func(w ws) {
				w.write("a.txt", "alpha dirty\n")
				w.write("b.txt", "bravo dirty\n")
				// a.txt is the older of the two: b.txt is kept.
				old := mustStat(w.t, w.path("b.txt")).ModTime().Add(-10e9)
				os.Chtimes(w.path("a.txt"), old, old)
			},
			cmd:  func(w ws) { w.replace("a.txt", "a\n"); w.replace("b.txt", "b\n") },
			want: []string{`modified a.txt (its previous content was not kept)`, `modified b.txt "bravo dirty\n"→"b\n"`}},

		{name: "plain file edited", cmd: func(w ws) { w.replace("a.txt", "ALPHA\n") },
			want: []string{`modified a.txt "alpha\n"→"ALPHA\n"`}},
		{name: "plain file edited in place, same size", cmd: func(w ws) { w.write("a.txt", "ALPHA\n") },
			want: []string{`modified a.txt "alpha\n"→"ALPHA\n"`}},
		{name: "plain file created and deleted",
			cmd:  func(w ws) { w.write("d.txt", "delta\n"); w.remove("sub/c.txt") },
			want: []string{`created d.txt nil→"delta\n"`, `deleted sub/c.txt "charlie\n"→nil`}},
		{name: "plain skipped directories",
			cmd: func(w ws) {
				w.write("node_modules/x/index.js", "x\n")
				w.write(".git/HEAD", "ref\n")
				w.write("sub/.venv/lib.py", "y\n")
			},
			want: nil},
		{name: "plain past the keep limit", lim: Limits{MaxKeepFiles: 1},
			before: func(w ws) {
				old := mustStat(w.t, w.path("a.txt")).ModTime().Add(-10e9)
				for _, f := range []string{"a.txt", "sub/c.txt"} {
					os.Chtimes(w.path(f), old, old)
				}
			},
			cmd:  func(w ws) { w.replace("a.txt", "a\n"); w.replace("b.txt", "b\n") },
			want: []string{`modified a.txt (its previous content was not kept)`, `modified b.txt "bravo\n"→"b\n"`}},
		{name: "plain binary and large", lim: Limits{MaxFileBytes: 1000},
			before: func(w ws) { w.write("big.txt", big) },
			cmd:    func(w ws) { w.replace("big.txt", "small now\n"); w.write("b.txt", "br\x00vo\n") },
			want:   []string{`modified b.txt (binary file) "bravo\n"→"br\x00vo\n"`, `modified big.txt (too large to show)`}},
		{name: "plain binary files created, modified and deleted",
			before: func(w ws) { w.write("img.bin", "\x00\x01\x02"); w.write("old.bin", "\xff\xfe") },
			cmd: func(w ws) {
				w.write("new.bin", "\x00\x01")
				w.replace("img.bin", "\x00\x03")
				w.remove("old.bin")
			},
			want: []string{`modified img.bin (binary file) "\x00\x01\x02"→"\x00\x03"`,
				`created new.bin (binary file) nil→"\x00\x01"`, `deleted old.bin (binary file) "\xff\xfe"→nil`}},
		{name: "plain binary file written again unchanged",
			before: func(w ws) { w.write("img.bin", "\x00\x01\x02") },
			cmd:    func(w ws) { w.replace("img.bin", "\x00\x01\x02") },
			want:   nil},
		{name: "plain binary file past the keep limit", lim: Limits{MaxKeepBytes: 20},
			before: func(w ws) {
				w.write("img.bin", strings.Repeat("\x00", 30))
				old := mustStat(w.t, w.path("img.bin")).ModTime().Add(-10e9)
				os.Chtimes(w.path("img.bin"), old, old)
			},
			cmd:  func(w ws) { w.replace("img.bin", "\x00\x01") },
			want: []string{`modified img.bin (binary file) nil→"\x00\x01"`}},
		{name: "plain binary bytes past the byte budget", lim: Limits{MaxTotalBytes: 10},
			before: func(w ws) { w.write("img.bin", "\x00\x01\x02\x03\x04\x05") },
			cmd:    func(w ws) { w.replace("img.bin", "\x00\x01\x02\x03\x04\x06") },
			want:   []string{`modified img.bin (binary file)`}},
		{name: "plain binary bytes after the texts", lim: Limits{MaxTotalBytes: 10},
			before: func(w ws) { w.write("0.bin", "\x00\x01") },
			cmd:    func(w ws) { w.replace("0.bin", "\x00\x02"); w.replace("a.txt", "1\n") },
			want:   []string{`modified 0.bin (binary file)`, `modified a.txt "alpha\n"→"1\n"`}},
	} {
		for _, notify := range notifyModes() {
			t.Run(tc.name+notifyName(notify), func(t *testing.T) {
				t.Parallel() // each its own workspace; most of the time is git's
				var w ws
				if tc.git {
					w = gitWS(t)
				} else {
					w = plainWS(t)
				}
				if tc.before != nil {
					tc.before(w)
				}
				tr := newWatched([]string{w.dir}, tc.lim, notify)
				defer tr.Close()
				baseline(t, tr)
				tc.cmd(w)
				got := summaries(w.dir, scanOnce(t, tr))
				if !slices.Equal(got, tc.want) {
					t.Errorf("changes:\n got %q\nwant %q", got, tc.want)
				}
				// The scan moved the baseline: nothing more to report.
				if again := summaries(w.dir, scanOnce(t, tr)); len(again) != 0 {
					t.Errorf("second scan: %q", again)
				}
			})
		}
	}
}

// notifyModes are the ways a tracker can find changes here: with the
// directories watched (where the system can) and by comparing whole roots.
func notifyModes() []bool {
	if notifySupported {
		return []bool{true, false}
	}
	return []bool{false}
}

func notifyName(notify bool) string {
	if notify {
		return "/watched"
	}
	return "/whole"
}

// setNotify makes the test's trackers watch their roots or not.
func setNotify(t testing.TB, notify bool) {
	old := useNotify
	useNotify = notify && notifySupported
	t.Cleanup(func() { useNotify = old })
}

func mustStat(t testing.TB, p string) os.FileInfo {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

// Each scan reports what changed since the one before.
func TestScanRollsTheBaseline(t *testing.T) {
	t.Parallel() // no package hooks
	for _, isGit := range []bool{true, false} {
		t.Run(fmt.Sprint("git=", isGit), func(t *testing.T) {
			w := plainWS(t)
			if isGit {
				w = gitWS(t)
			}
			tr := New([]string{w.dir}, Limits{})
			defer tr.Close()
			baseline(t, tr)
			w.replace("a.txt", "one\n")
			if got := summaries(w.dir, scanOnce(t, tr)); !slices.Equal(got, []string{`modified a.txt "alpha\n"→"one\n"`}) {
				t.Errorf("first: %q", got)
			}
			w.replace("a.txt", "two\n")
			w.write("new.txt", "n\n")
			want := []string{`modified a.txt "one\n"→"two\n"`, `created new.txt nil→"n\n"`}
			if got := summaries(w.dir, scanOnce(t, tr)); !slices.Equal(got, want) {
				t.Errorf("second: %q, want %q", got, want)
			}
			w.remove("new.txt")
			if got := summaries(w.dir, scanOnce(t, tr)); !slices.Equal(got, []string{`deleted new.txt "n\n"→nil`}) {
				t.Errorf("third: %q", got)
			}
		})
	}
}

// A file changed by someone else (a file tool) and touched is not reported;
// its next change is, from the touched text.
func TestTouch(t *testing.T) {
	t.Parallel() // no package hooks
	for _, isGit := range []bool{true, false} {
		t.Run(fmt.Sprint("git=", isGit), func(t *testing.T) {
			w := plainWS(t)
			if isGit {
				w = gitWS(t)
			}
			tr := New([]string{w.dir}, Limits{})
			defer tr.Close()
			baseline(t, tr)
			w.replace("a.txt", "by the tool\n")
			w.write("tool-new.txt", "made by the tool\n")
			tr.Touch(w.path("a.txt"), w.path("tool-new.txt"), "/elsewhere/x.txt")
			if got := summaries(w.dir, scanOnce(t, tr)); len(got) != 0 {
				t.Errorf("touched files reported: %q", got)
			}
			w.replace("a.txt", "by the shell\n")
			if got := summaries(w.dir, scanOnce(t, tr)); !slices.Equal(got, []string{`modified a.txt "by the tool\n"→"by the shell\n"`}) {
				t.Errorf("after touch: %q", got)
			}
		})
	}
}

// Only files inside the roots count; a root inside another is one root;
// paths are reported below the roots as given.
func TestRoots(t *testing.T) {
	t.Parallel() // no package hooks
	w := gitWS(t)
	plain := plainWS(t)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(w.path("sub"), link); err != nil {
		t.Fatal(err)
	}
	tr := New([]string{link, plain.dir, plain.path("sub")}, Limits{})
	defer tr.Close()
	if len(tr.roots) != 2 {
		t.Fatalf("roots = %+v", tr.roots)
	}
	baseline(t, tr)
	w.replace("a.txt", "outside the root\n")
	w.replace("sub/c.txt", "CHARLIE\n")
	plain.replace("sub/c.txt", "plain charlie\n")
	rep := scanOnce(t, tr)
	var got []string
	for _, ch := range rep.Changes {
		got = append(got, ch.Path)
	}
	want := []string{filepath.Join(link, "c.txt"), plain.path("sub/c.txt")}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("changed paths = %q, want %q", got, want)
	}
}

// A walk stops at its limit and says so; files past it are not reported
// unless they are new.
func TestWalkLimit(t *testing.T) {
	w := plainWS(t)
	w.write("deep/er/x.txt", "x\n")
	tr := New([]string{w.dir}, Limits{MaxWalkFiles: 3})
	defer tr.Close()
	baseline(t, tr)
	w.replace("deep/er/x.txt", "past the limit\n")
	w.replace("a.txt", "A\n")
	rep := scanOnce(t, tr)
	if got := summaries(w.dir, rep); !slices.Equal(got, []string{`modified a.txt "alpha\n"→"A\n"`}) {
		t.Errorf("changes = %q", got)
	}
	if len(rep.Notes) != 1 || !strings.Contains(rep.Notes[0], "more than 3 files") {
		t.Errorf("notes = %q", rep.Notes)
	}
}

// The repository's .git removed by the command: nothing reported, a note,
// and the root is walked from then on.
func TestRepositoryRemoved(t *testing.T) {
	w := gitWS(t)
	tr := New([]string{w.dir}, Limits{})
	defer tr.Close()
	baseline(t, tr)
	if err := os.RemoveAll(w.path(".git")); err != nil {
		t.Fatal(err)
	}
	rep := scanOnce(t, tr)
	if len(rep.Changes) != 0 || len(rep.Notes) != 1 {
		t.Errorf("report = %+v", rep)
	}
	w.replace("a.txt", "walked\n")
	if got := summaries(w.dir, scanOnce(t, tr)); !slices.Equal(got, []string{`modified a.txt "alpha\n"→"walked\n"`}) {
		t.Errorf("after: %q", got)
	}
}

func TestScanWithoutBaseline(t *testing.T) {
	tr := New([]string{t.TempDir()}, Limits{})
	defer tr.Close()
	if _, err := tr.Scan(context.Background()); err != ErrNoBaseline {
		t.Errorf("err = %v", err)
	}
	tr.Touch("/x") // no baseline: nothing to do
}

func TestParseStatus(t *testing.T) {
	out := strings.Join([]string{
		"# branch.oid 1111111111111111111111111111111111111111",
		"# branch.head main",
		"1 .M N... 100644 100644 100644 aaaa aaaa root/a b.txt",
		"1 A. N... 000000 100644 100644 0000 bbbb root/new.txt",
		"1 .M S.M. 160000 160000 160000 cccc cccc root/submodule",
		"2 R. N... 100644 100644 100644 dddd dddd R100 root/renamed.txt", "root/orig.txt",
		"u UU N... 100644 100644 100644 100644 e1 e2 e3 root/conflict.txt",
		"? root/untracked.txt",
		"? root/nested/",
		"? other/outside.txt",
		"? root/more.txt",
		"",
	}, "\x00")
	s, err := parseStatus([]byte(out), "root/", 5)
	if err != nil {
		t.Fatal(err)
	}
	if s.head != "1111111111111111111111111111111111111111" {
		t.Errorf("head = %q", s.head)
	}
	var got []string
	for rel, e := range s.entries {
		got = append(got, fmt.Sprintf("%s %c%c%c %s", rel, e.kind, e.x, e.y, e.hI))
	}
	slices.Sort(got)
	want := []string{"a b.txt 1.M aaaa", "conflict.txt uUU ", "new.txt 1A. bbbb", "renamed.txt 1R. dddd", "untracked.txt ??? "}
	if !slices.Equal(got, want) {
		t.Errorf("entries:\n got %q\nwant %q", got, want)
	}
	if s.more != 1 {
		t.Errorf("more = %d, want 1", s.more)
	}
	for _, broken := range []string{
		"1 .M broken",
		"1 .M  100644 100644 100644 aaaa aaaa a.txt", // no submodule field
		"2 R.  100644 100644 100644 dddd dddd R100 b.txt\x00a.txt",
		"u U N... 100644 100644 100644 100644 e1 e2 e3 c.txt", // one status letter
	} {
		if _, err := parseStatus([]byte(broken+"\x00"), "", 10); err == nil {
			t.Errorf("a broken entry parsed: %q", broken)
		}
	}
	s, _ = parseStatus([]byte("# branch.oid (initial)\x00"), "", 10)
	if s.head != "" {
		t.Errorf("initial head = %q", s.head)
	}
}

func TestIsBinary(t *testing.T) {
	for in, want := range map[string]bool{"": false, "text\n": false, "héllo": false, "a\x00b": true, "\xff\xfe": true} {
		if got := isBinary([]byte(in)); got != want {
			t.Errorf("isBinary(%q) = %v", in, got)
		}
	}
}

func TestGitMarkerAbove(t *testing.T) {
	for _, tc := range []struct {
		name    string
		dir     string
		markers []string // paths that exist
		env     map[string]string
		want    bool
	}{
		{name: "nothing", dir: "/home/u/ws/sub", want: false},
		{name: "in the root", dir: "/home/u/ws", markers: []string{"/home/u/ws/.git"}, want: true},
		{name: "in a parent", dir: "/home/u/ws/sub", markers: []string{"/home/u/ws/.git"}, want: true},
		{name: "at the top", dir: "/home/u/ws", markers: []string{"/.git"}, want: true},
		{name: "in a child only", dir: "/home/u/ws", markers: []string{"/home/u/ws/sub/.git"}, want: false},
		{name: "a sibling", dir: "/home/u/ws", markers: []string{"/home/u/other/.git"}, want: false},
		{name: "GIT_DIR", dir: "/home/u/ws", env: map[string]string{"GIT_DIR": "/repo.git"}, want: true},
		{name: "GIT_WORK_TREE", dir: "/home/u/ws", env: map[string]string{"GIT_WORK_TREE": "/home/u/ws"}, want: true},
		{name: "unclean path", dir: "/home/u/ws/sub/../sub/", markers: []string{"/home/u/ws/.git"}, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var looked []string
			exists := func(p string) bool {
				looked = append(looked, p)
				return slices.Contains(tc.markers, filepath.ToSlash(p))
			}
			getenv := func(k string) string { return tc.env[k] }
			if got := gitMarkerAbove(filepath.FromSlash(tc.dir), getenv, exists); got != tc.want {
				t.Errorf("gitMarkerAbove = %v, want %v (looked at %q)", got, tc.want, looked)
			}
		})
	}
}

// Outside any git work tree findRepo answers without asking git, and the
// baseline is a walk that sees the files.
func TestOutsideARepositoryNoGit(t *testing.T) {
	dir := t.TempDir()
	if gitMarkerAbove(dir, os.Getenv, exists) {
		t.Skip("this machine has a .git above its temporary directory")
	}
	if _, err := findRepo(context.Background(), dir); !errors.Is(err, errNotInRepo) {
		t.Fatalf("findRepo outside a repository: %v, want errNotInRepo", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tr := New([]string{dir}, Limits{})
	defer tr.Close()
	if err := tr.Baseline(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := tr.Scan(context.Background())
	if err != nil || len(rep.Changes) != 1 || rep.Changes[0].Op != Modified {
		t.Fatalf("scan = %+v, %v", rep, err)
	}
}

// Binary files' contents are kept with what the texts leave of the keep
// budget: a build output newer than the sources never costs a source file
// its old text (the baseline's keep step, the in-place update of a watched
// walked root, and the keep step of a whole comparison alike).
func TestKeepTextsBeforeBinaries(t *testing.T) {
	bin25 := strings.Repeat("\x00", 25)
	// older sets the files' times 10 s back: older than what follows.
	older := func(w ws, rels ...string) {
		old := mustStat(w.t, w.path("a.txt")).ModTime().Add(-10e9)
		for _, rel := range rels {
			os.Chtimes(w.path(rel), old, old)
		}
	}
	editTexts := func(w ws) {
		w.replace("a.txt", "A\n")
		w.replace("b.txt", "B\n")
		w.replace("sub/c.txt", "C\n")
	}
	editedTexts := []string{`modified a.txt "alpha\n"→"A\n"`, `modified b.txt "bravo\n"→"B\n"`,
		`modified sub/c.txt "charlie\n"→"C\n"`}
	type step struct {
		cmd  func(w ws)
		want []string
	}
	for _, tc := range []struct {
		name   string
		git    bool
		lim    Limits
		before func(w ws) // before the baseline
		steps  []step
	}{
		{name: "plain baseline: a new binary next to older texts", lim: Limits{MaxKeepBytes: 30},
			before: func(w ws) {
				older(w, "a.txt", "b.txt", "sub/c.txt")
				w.write("out/new.o", bin25)
			},
			steps: []step{{cmd: editTexts, want: editedTexts}}},
		{name: "plain baseline: the binary kept with what the texts leave", lim: Limits{MaxKeepBytes: 50},
			before: func(w ws) {
				older(w, "a.txt", "b.txt", "sub/c.txt")
				w.write("out/new.o", bin25)
			},
			steps: []step{{cmd: func(w ws) { w.replace("out/new.o", "\x00\x01") },
				want: []string{`modified out/new.o (binary file) "` + strings.Repeat(`\x00`, 25) + `"→"\x00\x01"`}}}},
		{name: "plain baseline: the binary past what the texts leave", lim: Limits{MaxKeepBytes: 30},
			before: func(w ws) {
				older(w, "a.txt", "b.txt", "sub/c.txt")
				w.write("out/new.o", bin25)
			},
			steps: []step{{cmd: func(w ws) { w.replace("out/new.o", "\x00\x01") },
				want: []string{`modified out/new.o (binary file) nil→"\x00\x01"`}}}},
		{name: "plain scans: a text written after a binary", lim: Limits{MaxKeepBytes: 30},
			before: func(w ws) { older(w, "a.txt", "b.txt", "sub/c.txt") },
			steps: []step{
				// 20 bytes of texts and an 8-byte binary: all kept.
				{cmd: func(w ws) { w.write("out/x.o", "\x00bin\x00bin") },
					want: []string{`created out/x.o (binary file) nil→"\x00bin\x00bin"`}},
				// 6 more bytes of text: the binary makes room.
				{cmd: func(w ws) { w.write("sub/d.txt", "delta\n") },
					want: []string{`created sub/d.txt nil→"delta\n"`}},
				{cmd: func(w ws) { editTexts(w); w.replace("sub/d.txt", "D\n") },
					want: append(slices.Clone(editedTexts), `modified sub/d.txt "delta\n"→"D\n"`)},
			}},
		{name: "git baseline: a new untracked binary next to an older dirty text", git: true, lim: Limits{MaxKeepBytes: 30},
			before: func(w ws) {
				w.write("a.txt", "alpha dirty\n")
				older(w, "a.txt")
				w.write("new.o", bin25)
			},
			steps: []step{{cmd: func(w ws) { w.replace("a.txt", "A\n") },
				want: []string{`modified a.txt "alpha dirty\n"→"A\n"`}}}},
	} {
		for _, notify := range notifyModes() {
			t.Run(tc.name+notifyName(notify), func(t *testing.T) {
				t.Parallel()
				w := plainWS(t)
				if tc.git {
					w = gitWS(t)
				}
				if tc.before != nil {
					tc.before(w)
				}
				tr := newWatched([]string{w.dir}, tc.lim, notify)
				defer tr.Close()
				baseline(t, tr)
				for i, s := range tc.steps {
					s.cmd(w)
					if got := summaries(w.dir, scanOnce(t, tr)); !slices.Equal(got, s.want) {
						t.Errorf("command %d:\n got %q\nwant %q", i+1, got, s.want)
					}
					checkKept(t, tr)
				}
			})
		}
	}
}

// checkKept fails unless the baseline's kept contents are within the keep
// limits and, where it counts them (byDir), counted right.
func checkKept(t *testing.T, tr *Tracker) {
	t.Helper()
	tr.lock()
	defer tr.mu.Unlock()
	for _, st := range tr.base {
		files, bytes, binaries := 0, int64(0), map[string]bool{}
		for rel, e := range st.files {
			if e.hasData {
				files++
				bytes += int64(len(e.data))
				if e.binary {
					binaries[rel] = true
				}
			}
		}
		if files > tr.lim.MaxKeepFiles || bytes > tr.lim.MaxKeepBytes {
			t.Errorf("kept %d files, %d bytes: past the limits %d, %d", files, bytes, tr.lim.MaxKeepFiles, tr.lim.MaxKeepBytes)
		}
		if st.byDir != nil && (st.keptFiles != files || st.keptBytes != bytes || !maps.Equal(st.keptBinaries, binaries)) {
			t.Errorf("counted %d files, %d bytes, binaries %v; kept %d, %d, %v",
				st.keptFiles, st.keptBytes, st.keptBinaries, files, bytes, binaries)
		}
	}
}

// At the top of its work tree (a .git directory in the root, the usual
// workspace) findRepo asks git nothing: the prefix is empty. Below the top,
// with a linked worktree's .git file, or with a core.worktree setting, it
// asks git (rev-parse) as before.
func TestFindRepoAtTheTopAsksNoGit(t *testing.T) {
	w := gitWS(t)
	worktree := ws{t, t.TempDir()}
	worktree.git("init", "-q", "--template=", ".")
	worktree.git("config", "core.worktree", w.dir)
	for _, tc := range []struct {
		name   string
		dir    string
		prefix string
		runs   int64
	}{
		{"top", w.dir, "", 0},
		{"below the top", w.path("sub"), "sub/", 1},
		{"core.worktree elsewhere", worktree.dir, "", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := gitRuns.Load()
			rp, err := findRepo(context.Background(), tc.dir)
			runs := gitRuns.Load() - before
			if tc.name == "core.worktree elsewhere" {
				// git says the directory is outside its work tree.
				if err == nil && rp.prefix == "" && runs == 0 {
					t.Errorf("findRepo took the directory for the top of its work tree without asking git")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if rp.prefix != tc.prefix || runs != tc.runs {
				t.Errorf("prefix %q after %d git runs, want %q after %d", rp.prefix, runs, tc.prefix, tc.runs)
			}
		})
	}
}
