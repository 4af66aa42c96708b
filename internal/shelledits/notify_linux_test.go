package shelledits

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/codexacp/codexacp/internal/regularfile"
)

// countLists records the directories the walk or a scan lists.
func countLists(t *testing.T, root string) func() []string {
	var mu sync.Mutex
	var listed []string
	t.Cleanup(func() { listDir = readDir })
	listDir = func(dir string, dev uint64, follow regularfile.Follow) ([]string, []fileStat, []string, error) {
		mu.Lock()
		rel, _ := filepath.Rel(root, dir)
		listed = append(listed, filepath.ToSlash(rel))
		mu.Unlock()
		return readDir(dir, dev, follow)
	}
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := listed
		listed = nil
		sort.Strings(out)
		return out
	}
}

// With the root watched, a scan after a command that changed nothing reads
// no directory and runs no git; after one that changed a file, it lists
// that file's directory only (outside git) or asks git about it only.
func TestScanLooksAtChangedDirectoriesOnly(t *testing.T) {
	setNotify(t, true)
	t.Run("plain", func(t *testing.T) {
		w := plainWS(t)
		w.write("x/y/z.txt", "zulu\n")
		tr := New([]string{w.dir}, Limits{})
		defer tr.Close()
		baseline(t, tr)
		listed := countLists(t, w.dir)
		if rep := scanOnce(t, tr); !rep.Empty() {
			t.Fatalf("nothing changed, report %+v", rep)
		}
		if got := listed(); len(got) != 0 {
			t.Errorf("a quiet scan listed %q", got)
		}
		w.replace("x/y/z.txt", "ZULU\n")
		if got, want := summaries(w.dir, scanOnce(t, tr)), []string{`modified x/y/z.txt "zulu\n"→"ZULU\n"`}; !slices.Equal(got, want) {
			t.Errorf("changes = %q, want %q", got, want)
		}
		if got := listed(); !slices.Equal(got, []string{"x/y"}) {
			t.Errorf("listed %q, want the changed directory only", got)
		}
		// A new directory: its files are found, and it is watched after.
		w.write("x/new/n.txt", "november\n")
		if got, want := summaries(w.dir, scanOnce(t, tr)), []string{`created x/new/n.txt nil→"november\n"`}; !slices.Equal(got, want) {
			t.Errorf("changes = %q, want %q", got, want)
		}
		listed()
		w.replace("x/new/n.txt", "NOVEMBER\n")
		if got, want := summaries(w.dir, scanOnce(t, tr)), []string{`modified x/new/n.txt "november\n"→"NOVEMBER\n"`}; !slices.Equal(got, want) {
			t.Errorf("changes = %q, want %q", got, want)
		}
		if got := listed(); !slices.Equal(got, []string{"x/new"}) {
			t.Errorf("listed %q, want the new directory only", got)
		}
	})
	t.Run("git", func(t *testing.T) {
		w := gitWS(t)
		tr := New([]string{w.dir}, Limits{})
		defer tr.Close()
		baseline(t, tr)
		runs := gitRuns.Load()
		if rep := scanOnce(t, tr); !rep.Empty() {
			t.Fatalf("nothing changed, report %+v", rep)
		}
		if n := gitRuns.Load() - runs; n != 0 {
			t.Errorf("a quiet scan ran git %d times", n)
		}
		w.replace("sub/c.txt", "CHARLIE\n")
		if got, want := summaries(w.dir, scanOnce(t, tr)), []string{`modified sub/c.txt "charlie\n"→"CHARLIE\n"`}; !slices.Equal(got, want) {
			t.Errorf("changes = %q, want %q", got, want)
		}
		// A commit moves HEAD without a file changing: nothing to show,
		// and the next edit's old text is the committed one.
		w.git("commit", "-qam", "c")
		w.replace("sub/c.txt", "c3\n")
		if got, want := summaries(w.dir, scanOnce(t, tr)), []string{`modified sub/c.txt "CHARLIE\n"→"c3\n"`}; !slices.Equal(got, want) {
			t.Errorf("after a commit, changes = %q, want %q", got, want)
		}
	})
}

// Start returns while the baseline is being taken; a Scan waits for it.
func TestStartTakesTheBaselineInTheBackground(t *testing.T) {
	for _, notify := range notifyModes() {
		t.Run(notifyName(notify), func(t *testing.T) {
			setNotify(t, notify)
			w := plainWS(t)
			release := holdWalks(t)
			tr := New([]string{w.dir}, Limits{})
			defer tr.Close()
			tr.Start(context.Background()) // returns with the walk held
			close(release)
			if err := tr.Wait(); err != nil {
				t.Fatal(err)
			}
			w.replace("a.txt", "ALPHA\n")
			if got, want := summaries(w.dir, scanOnce(t, tr)), []string{`modified a.txt "alpha\n"→"ALPHA\n"`}; !slices.Equal(got, want) {
				t.Errorf("changes = %q, want %q", got, want)
			}
		})
	}
}

// A file a tool created (Touch) and a command then changed is compared in
// a scan of its directory alone.
func TestScanDirsSeesTouchedFiles(t *testing.T) {
	setNotify(t, true)
	w := plainWS(t)
	tr := New([]string{w.dir}, Limits{})
	defer tr.Close()
	baseline(t, tr)
	w.write("sub/tool.txt", "by the tool\n")
	tr.Touch(w.path("sub/tool.txt"))
	w.replace("sub/tool.txt", "by the command\n")
	if got, want := summaries(w.dir, scanOnce(t, tr)), []string{`modified sub/tool.txt "by the tool\n"→"by the command\n"`}; !slices.Equal(got, want) {
		t.Errorf("changes = %q, want %q", got, want)
	}
}

// A scan that fails in a later root closes each notifier once: a root in
// git scanned narrowly shares its notifier between the baseline and the
// next one, and closing its descriptor twice could close one that another
// goroutine opened in between.
func TestFailedScanClosesEachNotifierOnce(t *testing.T) {
	setNotify(t, true)
	a, b := gitWS(t), plainWS(t)
	tr := New([]string{a.dir, b.dir}, Limits{})
	defer tr.Close()
	baseline(t, tr)

	var mu sync.Mutex
	closes := map[int]int{}
	t.Cleanup(func() { closeNotifyFD = unix.Close })
	closeNotifyFD = func(fd int) error {
		mu.Lock()
		closes[fd]++
		mu.Unlock()
		return unix.Close(fd)
	}
	// Root b's scan fails: its directory listing is cut short by the end
	// of the scan's context.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	t.Cleanup(func() { listDir = readDir })
	listDir = func(dir string, dev uint64, follow regularfile.Follow) ([]string, []fileStat, []string, error) {
		if strings.HasPrefix(dir, b.dir) {
			cancel()
			return nil, nil, nil, context.Canceled
		}
		return readDir(dir, dev, follow)
	}
	a.replace("sub/c.txt", "CHARLIE\n") // a narrow scan of a directory in git
	b.replace("sub/c.txt", "CHARLIE\n") // a narrow scan in place, which fails
	if _, err := tr.Scan(ctx); err == nil {
		t.Fatal("the scan did not fail")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(closes) != 2 {
		t.Errorf("closed %d inotify descriptors, want the two roots'", len(closes))
	}
	for fd, n := range closes {
		if n > 1 {
			t.Errorf("inotify descriptor %d closed %d times", fd, n)
		}
	}
}

// inotifyInstances counts the process's inotify descriptors.
func inotifyInstances(t testing.TB) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if l, _ := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); l == "anon_inode:inotify" {
			n++
		}
	}
	return n
}

// After Close (the turn ended), a scan (a cancelled command's completion)
// compares the whole root and watches nothing: a notifier set up then
// would stay open with its watches for the life of the process.
func TestScanAfterCloseWatchesNothing(t *testing.T) {
	setNotify(t, true)
	for _, mk := range []func(testing.TB) ws{gitWS, plainWS} {
		w := mk(t)
		before := inotifyInstances(t)
		tr := New([]string{w.dir}, Limits{})
		baseline(t, tr)
		tr.Close()
		for _, content := range []string{"CHARLIE\n", "charlie 2\n"} {
			old, _ := os.ReadFile(w.path("sub/c.txt"))
			w.replace("sub/c.txt", content)
			want := []string{fmt.Sprintf("modified sub/c.txt %q→%q", old, content)}
			if got := summaries(w.dir, scanOnce(t, tr)); !slices.Equal(got, want) {
				t.Errorf("after Close, changes = %q, want %q", got, want)
			}
		}
		if after := inotifyInstances(t); after != before {
			t.Errorf("inotify instances: %d before the tracker, %d after its Close and scans", before, after)
		}
	}
}

// watchedDirs lists the directories a root's notifier watches.
func watchedDirs(tr *Tracker, i int) []string {
	n := tr.base[i].notify
	if n == nil {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	var dirs []string
	for _, d := range n.dirs {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	return dirs
}

// In git, a skipped directory (node_modules, __pycache__…) is watched
// where git lists something in it, and costs no watch where it is
// ignored; a .gitignore edit that makes git list one has it watched.
func TestSkippedDirectoriesWatchedWhereGitListsThem(t *testing.T) {
	t.Parallel()
	w := gitWS(t)
	w.write("sub/.gitignore", "node_modules/\n")
	w.git("add", ".")
	w.git("commit", "-qm", "ignore")
	w.write("sub/node_modules/p/q.js", "one\n")
	w.write("lib/__pycache__/m.pyc", "mike\n")
	tr := newWatched([]string{w.dir}, Limits{}, true)
	defer tr.Close()
	baseline(t, tr)
	if got, want := watchedDirs(tr, 0), []string{"", "lib", "lib/__pycache__", "sub"}; !slices.Equal(got, want) {
		t.Errorf("watched %q, want %q", got, want)
	}
	w.write("sub/.gitignore", "")
	if got, want := summaries(w.dir, scanOnce(t, tr)), []string{`modified sub/.gitignore "node_modules/\n"→""`,
		`created sub/node_modules/p/q.js nil→"one\n"`}; !slices.Equal(got, want) {
		t.Errorf("changes = %q, want %q", got, want)
	}
	w.replace("sub/node_modules/p/q.js", "two\n")
	if got, want := summaries(w.dir, scanOnce(t, tr)), []string{`modified sub/node_modules/p/q.js "one\n"→"two\n"`}; !slices.Equal(got, want) {
		t.Errorf("after the .gitignore edit, changes = %q, want %q", got, want)
	}
}

// setBudget gives the test's notifiers a budget of their own.
func setBudget(t *testing.T, instances, watches int) *WatchBudget {
	b := NewWatchBudget(instances, watches)
	old := notifyBudget
	notifyBudget = func() *WatchBudget { return b }
	t.Cleanup(func() { notifyBudget = old })
	return b
}

func (b *WatchBudget) left() (instances, watches int) { return b.Left() }

// Trackers share the process's inotify budget: past it a root is not
// watched and compared whole (its changes are found all the same), and
// what a tracker took returns with its Close.
func TestTrackersShareTheWatchBudget(t *testing.T) {
	setNotify(t, true)
	t.Cleanup(func() { closeNotifyFD = unix.Close })
	for _, mk := range []func(testing.TB) ws{plainWS, gitWS} {
		w := mk(t)
		w.write("x/y/z.txt", "zulu\n") // the tree has four directories: "", sub, x, x/y
		budget := setBudget(t, 1, 6)
		first := New([]string{w.dir}, Limits{})
		baseline(t, first)
		if first.base[0].notify == nil {
			t.Fatal("the first tracker is not watched, within the budget")
		}
		if i, n := budget.left(); i != 0 || n != 2 {
			t.Errorf("budget left: %d instances, %d watches; want 0, 2", i, n)
		}
		second := New([]string{w.dir}, Limits{})
		baseline(t, second) // no instance left
		if second.base[0].notify != nil {
			t.Error("a second tracker is watched past the budget's instances")
		}
		w.replace("x/y/z.txt", "ZULU\n")
		want := []string{`modified x/y/z.txt "zulu\n"→"ZULU\n"`}
		if got := summaries(w.dir, scanOnce(t, second)); !slices.Equal(got, want) {
			t.Errorf("unwatched past the budget, changes = %q, want %q", got, want)
		}
		if got := summaries(w.dir, scanOnce(t, first)); !slices.Equal(got, want) {
			t.Errorf("watched, changes = %q, want %q", got, want)
		}
		first.Close()
		second.Close()
		if i, n := budget.left(); i != 1 || n != 6 {
			t.Errorf("after Close, budget left: %d instances, %d watches; want 1, 6", i, n)
		}

		// Watches past the budget: the root is compared whole, and the
		// watches taken return at once.
		budget = setBudget(t, 1, 3)
		third := New([]string{w.dir}, Limits{})
		baseline(t, third)
		if third.base[0].notify != nil {
			t.Error("a tracker is watched past the budget's watches")
		}
		if i, n := budget.left(); i != 1 || n != 3 {
			t.Errorf("unwatched, budget left: %d instances, %d watches; want 1, 3", i, n)
		}
		// Nor does its tracker try again at each scan (the watches would
		// be set up to the budget and dropped every time).
		closes := 0
		closeNotifyFD = func(fd int) error { closes++; return unix.Close(fd) }
		for _, content := range []string{"zulu 2\n", "zulu 3\n"} {
			old, _ := os.ReadFile(w.path("x/y/z.txt"))
			w.replace("x/y/z.txt", content)
			want := []string{fmt.Sprintf("modified x/y/z.txt %q→%q", old, content)}
			if got := summaries(w.dir, scanOnce(t, third)); !slices.Equal(got, want) {
				t.Errorf("unwatched past the budget, changes = %q, want %q", got, want)
			}
		}
		closeNotifyFD = unix.Close
		if closes != 0 {
			t.Errorf("scans of a root past the budget set up %d notifiers", closes)
		}
		third.Close()
	}
}

// Directories that a command creates and removes again, as codex's sandbox
// does for its mount points (.codex, .agents, .git outside git) around
// every command, change no file: the scan stays on the changed
// directories, and runs no git and lists nothing when nothing else
// changed. A directory still there, or there again, is compared.
func TestScanIgnoresDirectoriesThatCameAndWent(t *testing.T) {
	setNotify(t, true)
	transient := func(w ws) {
		for _, d := range []string{".codex", ".agents", ".aws", "sub/.git"} {
			if err := os.Mkdir(filepath.Join(w.dir, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		w.write(".codex/inside.txt", "gone with its directory\n")
		for _, d := range []string{".codex/inside.txt", ".codex", ".agents", ".aws", "sub/.git"} {
			if err := os.Remove(filepath.Join(w.dir, d)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, inGit := range []bool{false, true} {
		name := "plain"
		if inGit {
			name = "git"
		}
		t.Run(name, func(t *testing.T) {
			w := plainWS(t)
			if inGit {
				w = gitWS(t)
			}
			tr := New([]string{w.dir}, Limits{})
			defer tr.Close()
			baseline(t, tr)
			listed := countLists(t, w.dir)
			runs := gitRuns.Load()
			transient(w)
			if rep := scanOnce(t, tr); !rep.Empty() {
				t.Fatalf("only directories that came and went, report %q", summaries(w.dir, rep))
			}
			if got := listed(); len(got) != 0 {
				t.Errorf("listed %q, want nothing", got)
			}
			if n := gitRuns.Load() - runs; n != 0 {
				t.Errorf("ran git %d times, want none", n)
			}
			// With a file edited besides: its directory alone.
			transient(w)
			w.replace("sub/c.txt", "CHARLIE\n")
			if got, want := summaries(w.dir, scanOnce(t, tr)), []string{`modified sub/c.txt "charlie\n"→"CHARLIE\n"`}; !slices.Equal(got, want) {
				t.Errorf("changes = %q, want %q", got, want)
			}
			if got := listed(); !inGit && !slices.Equal(got, []string{"sub"}) {
				t.Errorf("listed %q, want the changed directory only", got)
			}
			// Created, removed and created again: there now, compared.
			for _, step := range []func(){
				func() { w.mkdir("again") },
				func() { w.remove("again") },
				func() { w.mkdir("again") },
				func() { w.write("again/f.txt", "foxtrot\n") },
			} {
				step()
			}
			if got, want := summaries(w.dir, scanOnce(t, tr)), []string{`created again/f.txt nil→"foxtrot\n"`}; !slices.Equal(got, want) {
				t.Errorf("changes = %q, want %q", got, want)
			}
			// Removed, and a file of that name made in its place.
			w.mkdir("then-file")
			w.remove("then-file")
			w.write("then-file", "file now\n")
			if got, want := summaries(w.dir, scanOnce(t, tr)), []string{`created then-file nil→"file now\n"`}; !slices.Equal(got, want) {
				t.Errorf("changes = %q, want %q", got, want)
			}
		})
	}
}

func (w ws) mkdir(rel string) {
	w.t.Helper()
	if err := os.Mkdir(w.path(rel), 0o755); err != nil {
		w.t.Fatal(err)
	}
}

// A baseline taken again where the roots are watched (the next turn's
// Start) is moved on by what the watches saw: nothing read when nothing
// changed, the changed directories only otherwise; what changed in
// between is not reported, and the next scan compares with it.
func TestBaselineMovesOnWhatTheWatchesSaw(t *testing.T) {
	setNotify(t, true)
	for _, inGit := range []bool{false, true} {
		name := "plain"
		if inGit {
			name = "git"
		}
		t.Run(name, func(t *testing.T) {
			w := plainWS(t)
			if inGit {
				w = gitWS(t)
			}
			tr := New([]string{w.dir}, Limits{MaxFiles: 3})
			defer tr.Close()
			baseline(t, tr)
			listed := countLists(t, w.dir)
			runs := gitRuns.Load()
			start := func() {
				t.Helper()
				tr.Start(context.Background())
				if err := tr.Wait(); err != nil {
					t.Fatal(err)
				}
			}
			start()
			if got := listed(); len(got) != 0 {
				t.Errorf("nothing changed: listed %q", got)
			}
			if n := gitRuns.Load() - runs; n != 0 {
				t.Errorf("nothing changed: ran git %d times", n)
			}
			// Between turns: an edit, a new file.
			w.replace("sub/c.txt", "between\n")
			w.write("sub/new.txt", "new between\n")
			runs = gitRuns.Load()
			start()
			if got := listed(); !inGit && !slices.Equal(got, []string{"sub"}) {
				t.Errorf("listed %q, want the changed directory only", got)
			}
			if n := gitRuns.Load() - runs; inGit && n != 1 {
				t.Errorf("ran git %d times, want one status of the changed directory", n)
			}
			w.replace("sub/c.txt", "command\n")
			w.replace("sub/new.txt", "new command\n")
			want := []string{`modified sub/c.txt "between\n"→"command\n"`, `modified sub/new.txt "new between\n"→"new command\n"`}
			if got := summaries(w.dir, scanOnce(t, tr)); !slices.Equal(got, want) {
				t.Errorf("changes = %q, want %q", got, want)
			}
			// More files changed in between than a scan reads (MaxFiles):
			// taken anew, their contents kept all the same.
			for _, f := range []string{"a.txt", "b.txt", "sub/c.txt", "sub/new.txt"} {
				w.replace(f, f+" between\n")
			}
			// Past the window in which a file's stat is not trusted (its
			// content is compared, and at MaxFiles such files are named
			// as "more" unread): only the command's change is a candidate.
			time.Sleep(2 * racyWindow)
			start()
			w.replace("a.txt", "a command\n")
			want = []string{`modified a.txt "a.txt between\n"→"a command\n"`}
			if got := summaries(w.dir, scanOnce(t, tr)); !slices.Equal(got, want) {
				t.Errorf("changes = %q, want %q", got, want)
			}
			if !inGit {
				return
			}
			// A commit in between: taken anew.
			w.git("add", ".")
			w.git("commit", "-qm", "between")
			start()
			w.replace("a.txt", "after the commit\n")
			want = []string{`modified a.txt "a command\n"→"after the commit\n"`}
			if got := summaries(w.dir, scanOnce(t, tr)); !slices.Equal(got, want) {
				t.Errorf("changes = %q, want %q", got, want)
			}
		})
	}
}

// In git, a command that changes files at the root of the workspace (go.mod,
// package-lock.json) has git asked about those files, not the whole tree:
// the watches stay (none is closed and set again), and what changed is
// found as in a whole comparison.
func TestScanOfRootFilesInGitAsksAboutThemOnly(t *testing.T) {
	setNotify(t, true)
	w := gitWS(t)
	w.write("sub/deep/d.txt", "delta\n")
	w.git("add", ".")
	w.git("commit", "-qm", "deep")
	tr := New([]string{w.dir}, Limits{})
	defer tr.Close()
	baseline(t, tr)
	closes := 0
	t.Cleanup(func() { closeNotifyFD = unix.Close })
	closeNotifyFD = func(fd int) error { closes++; return unix.Close(fd) }
	for _, step := range []struct {
		name string
		cmd  func()
		want []string
	}{
		{"a root file modified", func() { w.replace("a.txt", "ALPHA\n") }, []string{`modified a.txt "alpha\n"→"ALPHA\n"`}},
		{"created, deleted, and a file below", func() {
			w.write("new.txt", "new\n")
			w.remove("b.txt")
			w.replace("sub/deep/d.txt", "DELTA\n")
		}, []string{`created new.txt nil→"new\n"`, `deleted b.txt "bravo\n"→nil`, `modified sub/deep/d.txt "delta\n"→"DELTA\n"`}},
		{"an untracked one modified, and one back as committed", func() {
			w.replace("new.txt", "NEW\n")
			w.write("b.txt", "bravo\n")
		}, []string{`modified new.txt "new\n"→"NEW\n"`, `created b.txt nil→"bravo\n"`}},
	} {
		step.cmd()
		got := summaries(w.dir, scanOnce(t, tr))
		sort.Strings(got)
		want := slices.Clone(step.want)
		sort.Strings(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: changes = %q, want %q", step.name, got, want)
		}
		if closes != 0 {
			t.Errorf("%s: the watches were set again (%d closed)", step.name, closes)
			closes = 0
		}
	}
}

// Watching does not wait for a baseline being taken (a turn's end asks it
// and must not wait for the baseline of a turn without commands).
func TestWatchingDoesNotWaitForTheBaseline(t *testing.T) {
	setNotify(t, true)
	w := plainWS(t)
	release := holdWalks(t)
	tr := New([]string{w.dir}, Limits{})
	defer tr.Close()
	tr.Start(context.Background()) // the walk held
	answered := make(chan bool, 1)
	go func() { answered <- tr.Watching() }()
	select {
	case watching := <-answered:
		if !watching {
			t.Error("Watching = false while a watched baseline is taken")
		}
	case <-time.After(30 * time.Second):
		t.Error("Watching waited for the baseline")
	}
	close(release)
	if err := tr.Wait(); err != nil {
		t.Fatal(err)
	}
	if !tr.Watching() {
		t.Error("Watching = false with the root watched")
	}
	tr.Close()
	if tr.Watching() {
		t.Error("Watching = true after Close")
	}
}

// A tracker whose budget refuses it an instance or a watch calls its
// reclaim function: an idle tracker closed, the instance is asked for
// again at once, and a root refused a watch is watched at the next scan.
// An idle tracker whose baseline is being taken is not closed.
func TestReclaimWhenTheBudgetRefuses(t *testing.T) {
	setNotify(t, true)
	for _, tc := range []struct {
		name               string
		instances, watches int
		watchedAt          string // "baseline" or "scan": when the second tracker is watched
	}{
		{"instance", 1, 100, "baseline"},
		{"watches", 2, 6, "scan"}, // four directories each
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := plainWS(t)
			w.write("x/y/z.txt", "zulu\n") // four directories: "", sub, x, x/y
			budget := NewWatchBudget(tc.instances, tc.watches)
			idle := New([]string{w.dir}, Limits{})
			idle.SetWatchBudget(budget)
			defer idle.Close()
			baseline(t, idle)
			if idle.base[0].notify == nil {
				t.Fatal("the idle tracker is not watched, within the budget")
			}
			busy := New([]string{w.dir}, Limits{})
			busy.SetWatchBudget(budget)
			defer busy.Close()
			reclaims := 0
			busy.SetReclaim(func() bool {
				reclaims++
				return idle.CloseIdle()
			})
			baseline(t, busy)
			if reclaims != 1 {
				t.Errorf("reclaimed %d times, want 1", reclaims)
			}
			if idle.Watching() {
				t.Error("the idle tracker still watches")
			}
			if tc.watchedAt == "scan" {
				if busy.Watching() {
					t.Fatal("watched although refused a watch")
				}
				w.replace("x/y/z.txt", "ZULU\n")
				if got, want := summaries(w.dir, scanOnce(t, busy)), []string{`modified x/y/z.txt "zulu\n"→"ZULU\n"`}; !slices.Equal(got, want) {
					t.Errorf("changes = %q, want %q", got, want)
				}
			}
			if !busy.Watching() {
				t.Errorf("not watched after the %s, with the idle tracker's share freed", tc.watchedAt)
			}
			if i, n := budget.Left(); i != tc.instances-1 || n != tc.watches-4 {
				t.Errorf("budget left: %d instances, %d watches; want %d, %d", i, n, tc.instances-1, tc.watches-4)
			}
			busy.Close()
			if i, n := budget.Left(); i != tc.instances || n != tc.watches {
				t.Errorf("after Close, budget left: %d instances, %d watches; want %d, %d", i, n, tc.instances, tc.watches)
			}
		})
	}

	t.Run("baseline under way", func(t *testing.T) {
		w := plainWS(t)
		release := holdWalks(t)
		tr := New([]string{w.dir}, Limits{})
		defer tr.Close()
		tr.Start(context.Background()) // returns with the walk held
		if tr.CloseIdle() {
			t.Error("CloseIdle closed a tracker whose baseline is being taken")
		}
		close(release)
		if err := tr.Wait(); err != nil {
			t.Fatal(err)
		}
		if !tr.CloseIdle() || tr.Watching() {
			t.Error("CloseIdle did not close an idle tracker")
		}
	})
}

// Start while an earlier baseline is being taken (the session's, taken
// ahead of its first turn) returns at once: the new baseline waits for
// the earlier one in the background and moves it on, so that what
// changed between the two is not reported.
func TestStartDoesNotWaitForTheEarlierBaseline(t *testing.T) {
	setNotify(t, true)
	w := plainWS(t)
	release := holdWalks(t)
	var once sync.Once
	tr := New([]string{w.dir}, Limits{})
	defer tr.Close()
	defer once.Do(func() { close(release) }) // before Close waits for the walk
	tr.Start(context.Background())           // the walk held
	started := make(chan struct{})
	go func() { tr.Start(context.Background()); close(started) }()
	select {
	case <-started:
	case <-time.After(walkWait):
		t.Fatal("Start waited for the earlier baseline")
	}
	w.replace("a.txt", "ALPHA\n") // between the two baselines: not the command's
	once.Do(func() { close(release) })
	if err := tr.Wait(); err != nil {
		t.Fatal(err)
	}
	w.write("sub/d.txt", "delta\n")
	if got, want := summaries(w.dir, scanOnce(t, tr)), []string{`created sub/d.txt nil→"delta\n"`}; !slices.Equal(got, want) {
		t.Errorf("changes = %q, want %q", got, want)
	}

}

// holdWalks makes every directory listing of a tracker without its own
// hook wait until the returned channel is closed (it sets the package's
// listDir: not for parallel tests).
func holdWalks(t *testing.T) chan struct{} {
	t.Helper()
	release := make(chan struct{})
	t.Cleanup(func() { listDir = readDir })
	listDir = func(dir string, dev uint64, follow regularfile.Follow) ([]string, []fileStat, []string, error) {
		<-release
		return readDir(dir, dev, follow)
	}
	return release
}
