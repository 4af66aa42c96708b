// Package shelledits finds the files that shell commands changed in a
// workspace, with their text before and after, cheaply and within fixed
// bounds, so that a `gofmt -w` or a `sed -i` can be shown as diffs.
//
// A Tracker keeps a baseline of the workspace: what git already knows for a
// git workspace (the HEAD commit, and the state of the files `git status`
// lists, with the contents of the modified and untracked ones), or the
// size, modification time and identity of every file, with the contents of
// the newest, elsewhere. Scan compares the workspace with the baseline,
// reports what changed, and makes the present state the new baseline.
// Nothing hashes the whole tree: git's index already knows which tracked
// files are unchanged, and the old text of a tracked file that was clean is
// in git. Where the system tells which directories changed (inotify on
// Linux, within a budget all trackers of the process share), a scan looks
// at those only, and at nothing when none did. Start takes the baseline in
// the background. See docs/shell-edits.md for the bounds and what they
// cost.
//
// The package knows nothing of ACP or codex: the caller decides when a
// command starts and ends and how a Report is shown.
package shelledits

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/codexacp/codexacp/fsops"
	"github.com/codexacp/codexacp/internal/recovery"
)

// Limits bound the work of a Tracker. Zero fields take DefaultLimits'.
type Limits struct {
	// MaxFiles is the number of changed files reported with their
	// contents; further changed files are only named (Report.More).
	MaxFiles int
	// MaxFileBytes is the largest file read: a larger one is reported
	// without contents (OmitLarge).
	MaxFileBytes int64
	// MaxTotalBytes bounds the old plus new text read for one Report;
	// changed files past it are only named.
	MaxTotalBytes int64
	// MaxKeepFiles and MaxKeepBytes bound the contents a baseline keeps of
	// files git cannot give back (modified or untracked files; every file
	// outside git), newest first. A changed file whose old content was not
	// kept is reported without contents (OmitOldUnknown).
	MaxKeepFiles int
	MaxKeepBytes int64
	// MaxWalkFiles is the number of files looked at in a workspace root
	// outside git (breadth first); MaxStatusEntries the number of entries
	// of `git status` taken from a root in git. Files past them are not
	// followed (Report.Notes says so).
	MaxWalkFiles     int
	MaxStatusEntries int
	// MaxWatchDirs is the number of directories of a root watched for
	// changes; past it, or past the process's budget of watches, every
	// scan compares the whole root.
	MaxWatchDirs int
	// Timeout bounds one Baseline or Scan.
	Timeout time.Duration
}

// DefaultLimits are the limits codexacp uses.
func DefaultLimits() Limits {
	return Limits{
		MaxFiles:         50,
		MaxFileBytes:     1 << 20,
		MaxTotalBytes:    8 << 20,
		MaxKeepFiles:     1000,
		MaxKeepBytes:     8 << 20,
		MaxWalkFiles:     20000,
		MaxStatusEntries: 20000,
		MaxWatchDirs:     4096,
		Timeout:          3 * time.Second,
	}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	orDefault(&l.MaxFiles, d.MaxFiles)
	orDefault(&l.MaxFileBytes, d.MaxFileBytes)
	orDefault(&l.MaxTotalBytes, d.MaxTotalBytes)
	orDefault(&l.MaxKeepFiles, d.MaxKeepFiles)
	orDefault(&l.MaxKeepBytes, d.MaxKeepBytes)
	orDefault(&l.MaxWalkFiles, d.MaxWalkFiles)
	orDefault(&l.MaxStatusEntries, d.MaxStatusEntries)
	orDefault(&l.MaxWatchDirs, d.MaxWatchDirs)
	orDefault(&l.Timeout, d.Timeout)
	return l
}

// orDefault sets an unset (zero or negative) limit to its default.
func orDefault[T int | int64 | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// Op is what happened to a file.
type Op int

const (
	Created Op = iota + 1
	Modified
	Deleted
)

func (o Op) String() string {
	switch o {
	case Created:
		return "created"
	case Modified:
		return "modified"
	case Deleted:
		return "deleted"
	}
	return fmt.Sprintf("Op(%d)", int(o))
}

// Omission says why a Change carries no texts.
type Omission int

const (
	OmitNone       Omission = iota // Old and New are given
	OmitBinary                     // the file is (or was) not UTF-8 text
	OmitLarge                      // the file is (or was) larger than MaxFileBytes
	OmitOldUnknown                 // the old content was not kept (outside git, or past the keep limits)
)

func (o Omission) String() string {
	switch o {
	case OmitNone:
		return ""
	case OmitBinary:
		return "binary file"
	case OmitLarge:
		return "too large to show"
	case OmitOldUnknown:
		return "its previous content was not kept"
	}
	return fmt.Sprintf("Omission(%d)", int(o))
}

// Change is one file that changed.
type Change struct {
	// Path is absolute: the workspace root as the Tracker was given it,
	// joined with the file's path below it.
	Path string
	Op   Op
	// Old and New are the texts (Omitted == OmitNone): Old is nil for a
	// created file, New is nil for a deleted one.
	Old, New []byte
	Omitted  Omission
	// OldBytes and NewBytes are the contents of a file reported as binary
	// (Omitted == OmitBinary), not to show but to restore (/undo): each
	// side when its content was kept (the baseline's keep limits, the size
	// limit) and fits the report's byte budget; nil otherwise, and for the
	// side that does not exist.
	OldBytes, NewBytes []byte
	// OldSize and NewSize are the sizes in bytes; -1 when not known (and
	// for the side that does not exist).
	OldSize, NewSize int64
}

// Report is what a Scan found.
type Report struct {
	// Changes are the changed files reported in full, by path.
	Changes []Change
	// More are the paths of further changed files (past MaxFiles or
	// MaxTotalBytes), sorted.
	More []string
	// Notes say where the scan was partial (files past the limits).
	Notes []string
}

// Empty reports whether nothing changed.
func (r Report) Empty() bool { return len(r.Changes) == 0 && len(r.More) == 0 }

// Tracker finds what changed in a workspace since its baseline. Its methods
// are safe for concurrent use; they run one at a time.
type Tracker struct {
	lim   Limits
	roots []root // deduplicated, in the given order
	// watch: the roots are watched for changes where the system can
	// (useNotify when made; tests compare with and without).
	watch bool
	// openFile and listDir replace the package's (tests that change the
	// tree under a read, in parallel); nil: the package's.
	openFile openFunc
	listDir  listFunc

	// closed is set by Close: no watches are set after it.
	closed atomic.Bool
	// budget is what its notifiers take from (nil: the process's);
	// reclaim frees some of it when it refuses them (nil: nothing to).
	budget  atomic.Pointer[WatchBudget]
	reclaim atomic.Pointer[func() bool]

	// mu is held by a Baseline, a Scan, a Touch or a Close, each of them
	// having waited for pending first (lock).
	mu sync.Mutex
	// pending is closed by Start's goroutine once it has set the baseline;
	// nil when no Start is under way.
	pending chan struct{}
	// cancelPending cancels that baseline: Close does not wait for a
	// baseline nobody will use (it may read a large tree until Timeout).
	cancelPending context.CancelFunc
	base          []*rootState // nil until Baseline succeeds
	baseErr       error        // why the last baseline failed
}

// useNotify says whether new trackers watch their roots for changes where
// the system can (tests compare with and without).
var useNotify = notifySupported

// Watches reports whether trackers watch their roots for changes (Linux):
// only then is a baseline taken ahead of time worth keeping, since a later
// Start moves it on by what the watches saw instead of reading it anew.
func Watches() bool { return useNotify }

// root is one workspace root.
type root struct {
	given string // as the caller named it (reported paths start with it)
	real  string // symlinks resolved
}

// New returns a Tracker of the given workspace roots (absolute paths). A
// root inside another is dropped; roots that cannot be resolved are kept
// as given.
func New(roots []string, lim Limits) *Tracker {
	t := &Tracker{lim: lim.withDefaults(), watch: useNotify}
	var rs []root
	for _, r := range roots {
		r = filepath.Clean(r)
		real, err := filepath.EvalSymlinks(r)
		if err != nil {
			real = r
		}
		rs = append(rs, root{given: r, real: real})
	}
	for i, r := range rs {
		// Dropped when inside another root, or the same as an earlier one.
		inside := false
		for j, o := range rs {
			if j != i && fsops.Within(o.real, r.real) && (o.real != r.real || j < i) {
				inside = true
				break
			}
		}
		if !inside {
			t.roots = append(t.roots, r)
		}
	}
	return t
}

// open is how the tracker opens a file for its content.
func (t *Tracker) open() openFunc {
	if t.openFile != nil {
		return t.openFile
	}
	return openFile
}

// list is how the tracker lists a directory.
func (t *Tracker) list() listFunc {
	if t.listDir != nil {
		return t.listDir
	}
	return listDir
}

// ErrNoBaseline is returned by Scan before a Baseline succeeded.
var ErrNoBaseline = errors.New("shelledits: no baseline")

// lock locks t.mu once no baseline of Start's is under way.
func (t *Tracker) lock() {
	t.mu.Lock()
	for t.pending != nil {
		pending := t.pending
		t.mu.Unlock()
		<-pending
		t.mu.Lock()
	}
}

// Baseline records the present state of the workspace as the baseline,
// without reporting what changed since the previous one. Where the
// previous baseline's roots are watched, it is moved on by what changed
// (only the directories the watches name are read, nothing when none
// changed); other roots are read anew.
func (t *Tracker) Baseline(ctx context.Context) error {
	t.lock()
	defer t.mu.Unlock()
	prev := t.base
	t.base, t.baseErr = nil, nil
	base, err := t.moveOn(ctx, prev)
	t.base, t.baseErr = base, err
	return err
}

// Start is Baseline in the background: it returns at once, and Scan,
// Touch and Wait wait for the baseline, Scan returning its error. The
// baseline describes the workspace as it is read, after Start returns; a
// caller that must have it before something changes the workspace calls
// Wait. A Start while an earlier one's baseline is still being taken (a
// session's first, taken ahead of its turn) does not wait for it either:
// its own waits in the background, then moves that baseline on.
func (t *Tracker) Start(ctx context.Context) {
	t.mu.Lock()
	earlier := t.pending
	done := make(chan struct{})
	ctx, cancel := context.WithCancel(ctx)
	// Close cancels every baseline under way: the earlier one too.
	cancelAll := cancel
	if cancelEarlier := t.cancelPending; cancelEarlier != nil {
		cancelAll = func() { cancel(); cancelEarlier() }
	}
	t.pending, t.cancelPending = done, cancelAll
	prev := t.base // nil while the earlier one is taken
	t.base, t.baseErr = nil, nil
	t.mu.Unlock()
	go func() {
		defer close(done)
		defer cancel()
		if earlier != nil {
			<-earlier
			t.mu.Lock()
			prev = t.base
			t.base, t.baseErr = nil, nil
			t.mu.Unlock()
		}
		var base []*rootState
		var err error
		func() {
			// A bug here fails this baseline, not the agent (and
			// closes the watches it had, after moveOn's own cleanup).
			defer recovery.Recover(nil, "shell-edits baseline", &err)
			defer func() {
				if err != nil {
					closeNotifiers(prev)
				}
			}()
			base, err = t.moveOn(ctx, prev)
		}()
		t.mu.Lock()
		defer t.mu.Unlock()
		t.base, t.baseErr = base, err
		if t.pending == done { // no later Start waits for this one
			t.pending, t.cancelPending = nil, nil
		}
	}()
}

// moveOn returns the present state as a baseline: prev (nil: none) moved
// on where its roots are watched, roots read anew elsewhere. On an error
// the notifiers of prev and of what was read are closed. It changes
// nothing of the tracker (Start runs it without t.mu).
func (t *Tracker) moveOn(ctx context.Context, prev []*rootState) ([]*rootState, error) {
	if len(prev) != len(t.roots) {
		closeNotifiers(prev)
		return t.takeBaseline(ctx)
	}
	ctx, cancel := context.WithTimeout(ctx, t.lim.Timeout)
	defer cancel()
	next := make([]*rootState, 0, len(prev))
	for i, st := range prev {
		n, err := t.scanRoot(ctx, st, nil, nil)
		if err != nil {
			closeNotifiers(next, prev[i:])
			return nil, err
		}
		next = append(next, n)
	}
	return next, nil
}

// Wait waits for a baseline that Start is taking and returns its error.
func (t *Tracker) Wait() error {
	t.lock()
	defer t.mu.Unlock()
	if t.base == nil {
		return t.baseErr
	}
	return nil
}

// Watching reports whether some root of the baseline is watched for
// changes, or may be (a baseline of Start's is being taken where the
// system can watch): only then may a later Baseline or Start cost less
// than the first. It does not wait.
func (t *Tracker) Watching() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.pending != nil {
		return t.watch && !t.closed.Load()
	}
	for _, st := range t.base {
		if st.notify != nil {
			return true
		}
	}
	return false
}

// Close stops watching the workspace, for good (a baseline being taken is
// cancelled, then waited for). The tracker goes on working: later baselines and scans compare
// whole roots.
func (t *Tracker) Close() {
	t.closed.Store(true)
	t.mu.Lock()
	if t.cancelPending != nil {
		t.cancelPending()
	}
	t.mu.Unlock()
	t.lock()
	defer t.mu.Unlock()
	t.closeBase()
}

// closeBase closes the baseline's notifiers.
func (t *Tracker) closeBase() { closeNotifiers(t.base) }

// closeNotifiers closes the notifiers of the states, each once, and
// forgets them.
func closeNotifiers(states ...[]*rootState) {
	closed := map[*notifier]bool{}
	for _, sts := range states {
		for _, st := range sts {
			if n := st.notify; n != nil && !closed[n] {
				closed[n] = true
				n.close()
			}
			st.notify = nil
		}
	}
}

// takeBaseline reads the baseline of every root. It changes nothing of
// the tracker (Start runs it without t.mu).
func (t *Tracker) takeBaseline(ctx context.Context) ([]*rootState, error) {
	ctx, cancel := context.WithTimeout(ctx, t.lim.Timeout)
	defer cancel()
	base := make([]*rootState, 0, len(t.roots))
	for _, r := range t.roots {
		st, err := t.snapshotRoot(ctx, r)
		if err != nil {
			closeNotifiers(base)
			return nil, err
		}
		base = append(base, st)
	}
	return base, nil
}

// SetWatchBudget makes the tracker's notifiers take their inotify
// instance and watches from b rather than from the process's budget.
func (t *Tracker) SetWatchBudget(b *WatchBudget) { t.budget.Store(b) }

// SetReclaim sets what the tracker calls when its budget refuses it an
// inotify instance or a watch: f frees some of the budget that others
// hold (it closes an idle tracker) and reports whether it did. f must not
// wait for a tracker (it is called in the middle of one's baseline or
// scan: CloseIdle). A refused instance is asked for again while f frees
// some; a root refused a watch is compared whole, and watched again at the
// next scan when f freed some (otherwise not again, as past MaxWatchDirs).
func (t *Tracker) SetReclaim(f func() bool) { t.reclaim.Store(&f) }

// freeBudget calls the reclaim function, if any.
func (t *Tracker) freeBudget() bool {
	f := t.reclaim.Load()
	return f != nil && *f != nil && (*f)()
}

// newNotifier returns a notifier for a root, or nil where there is none
// or after Close (a turn's last scans come after its end).
func (t *Tracker) newNotifier() *notifier {
	if !t.watch || t.closed.Load() {
		return nil
	}
	b := t.budget.Load()
	if b == nil {
		b = notifyBudget()
	}
	for {
		n, err := newNotifier(t.lim.MaxWatchDirs, b)
		if errors.Is(err, errBudget) && t.freeBudget() {
			continue // each reclaim closes a tracker: this ends
		}
		if err != nil {
			return nil
		}
		return n
	}
}

// keepNotifier makes n the root's notifier when all its watches are set,
// and otherwise closes it and marks the root unwatchable, unless the
// budget refused a watch and some of it could be freed (the next scan
// watches it again).
func (t *Tracker) keepNotifier(st *rootState, n *notifier) {
	switch {
	case n == nil:
	case n.ok():
		st.notify = n
	default:
		refused := n.refusedByBudget()
		n.close() // gives its watches back first
		st.unwatchable = !refused || !t.freeBudget()
	}
}

// CloseIdle is Close for a tracker nobody uses: it closes the tracker
// unless a baseline of Start's is being taken or a method runs, never
// waiting, and reports whether it closed it.
func (t *Tracker) CloseIdle() bool {
	if !t.mu.TryLock() {
		return false
	}
	defer t.mu.Unlock()
	if t.pending != nil {
		return false
	}
	t.closed.Store(true)
	t.closeBase()
	return true
}

// KeptBytes is the size of the contents the baseline keeps, or, while a
// baseline of Start's is being taken, the most it may keep
// (Limits.MaxKeepBytes per root). It does not wait for the baseline.
func (t *Tracker) KeptBytes() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.pending != nil {
		return int64(len(t.roots)) * t.lim.MaxKeepBytes
	}
	var n int64
	for _, st := range t.base {
		if st.byDir != nil {
			n += st.keptBytes
			continue
		}
		for _, e := range st.files {
			if e.hasData {
				n += int64(len(e.data))
			}
		}
	}
	return n
}

// Scan reports what changed since the baseline and makes the present state
// the baseline. On an error (the timeout) the baseline is gone: take
// another before scanning again.
func (t *Tracker) Scan(ctx context.Context) (Report, error) {
	ctx, cancel := context.WithTimeout(ctx, t.lim.Timeout)
	defer cancel()
	t.lock()
	defer t.mu.Unlock()
	if t.base == nil {
		if t.baseErr != nil {
			return Report{}, fmt.Errorf("%w: %w", ErrNoBaseline, t.baseErr)
		}
		return Report{}, ErrNoBaseline
	}
	var rep Report
	budget := &budget{files: t.lim.MaxFiles, bytes: t.lim.MaxTotalBytes}
	next := make([]*rootState, len(t.base))
	for i, st := range t.base {
		n, err := t.scanRoot(ctx, st, budget, &rep)
		if err != nil {
			// The next baselines of the roots scanned share notifiers
			// with the baseline (a narrow scan's, an unchanged root's).
			closeNotifiers(next[:i], t.base)
			t.base = nil
			return Report{}, err
		}
		next[i] = n
	}
	t.base = next
	sort.Slice(rep.Changes, func(i, j int) bool { return rep.Changes[i].Path < rep.Changes[j].Path })
	sort.Strings(rep.More)
	return rep, nil
}

// Touch records the present state of the given files (absolute paths) in
// the baseline: something the caller reports otherwise changed them (a file
// tool), so the next Scan does not report them unless they change again.
// Paths outside the roots are ignored; so is a Touch before a Baseline.
func (t *Tracker) Touch(paths ...string) {
	t.lock()
	defer t.mu.Unlock()
	if t.base == nil {
		return
	}
	for _, p := range paths {
		real := resolve(p)
		for _, st := range t.base {
			rel, ok := relSlash(st.root.real, real)
			if !ok {
				continue
			}
			if st.repo == nil && skippedPath(rel) || st.repo != nil && isGitPath(rel) {
				break
			}
			e := &entry{}
			if fs, kind := lstat(real); kind == kindRegular {
				e.exists, e.st, e.hasStat = true, fs, true
				e.keep(t.open(), real, t.lim.MaxFileBytes)
			} else if kind == kindAbsent {
				e.hasStat = true
			} else {
				break // not a file
			}
			st.indexTouched(rel, e)
			st.files[rel] = e
			break
		}
	}
}

// resolve returns p with symlinks resolved, as far as it exists.
func resolve(p string) string {
	p = filepath.Clean(p)
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real
	}
	dir, base := filepath.Split(p)
	if dir == "" || filepath.Clean(dir) == p {
		return p
	}
	return filepath.Join(resolve(filepath.Clean(dir)), base)
}

// relSlash returns path below dir with slashes, or false when it is not
// below it (dir itself is not).
func relSlash(dir, path string) (string, bool) {
	if dir == path || !fsops.Within(dir, path) {
		return "", false
	}
	rel, err := filepath.Rel(dir, path)
	if err != nil {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// isGitPath reports whether a path below a root lies in a .git directory
// (or is a .git file).
func isGitPath(rel string) bool {
	return slices.Contains(strings.Split(rel, "/"), ".git")
}

// budget is what is left for the texts of one Report.
type budget struct {
	files int
	bytes int64
}

// rootState is the baseline of one root.
type rootState struct {
	root  root
	taken time.Time
	repo  *repo // nil: a walked root
	head  string
	// files are the baseline's entries by path below the root (slashes).
	// In git: the files `git status` listed (and touched ones); any other
	// file is as in head. Outside git: every file walked (and touched).
	files map[string]*entry
	// partial counts files left out at the limits (walk or status).
	partial bool
	// notify watches the root's directories since the baseline; nil when
	// they are not watched (the system cannot, or past MaxWatchDirs).
	notify *notifier
	// unwatchable: watching the root failed (past MaxWatchDirs or the
	// process's budget): the tracker does not try again, each scan would
	// set watches up to the limit and drop them.
	unwatchable bool
	// Walked and watched roots: the files of each directory (names), and
	// the files and bytes whose contents are kept, so that a scan of a few
	// directories updates the baseline in place (indexDirs).
	byDir     map[string][]string
	keptFiles int
	keptBytes int64
	// keptBinaries are the files of those kept whose content is binary: a
	// text read later takes their room (texts are kept first).
	keptBinaries map[string]bool
}

// indexTouched keeps byDir and the kept totals true when Touch replaces
// the entry of rel with e.
func (st *rootState) indexTouched(rel string, e *entry) {
	if st.byDir == nil {
		return
	}
	old := st.files[rel]
	if old == nil {
		d := parentDir(rel)
		st.byDir[d] = append(st.byDir[d], path.Base(rel))
	}
	st.uncount(rel, old)
	st.count(rel, e)
}

// indexDirs fills byDir and the kept totals from files: for a walked root
// whose directories are watched (done while nothing waits for it: with
// the baseline, or after a whole scan).
func (st *rootState) indexDirs() {
	if st.repo != nil || st.notify == nil {
		return
	}
	st.byDir = map[string][]string{}
	st.keptFiles, st.keptBytes, st.keptBinaries = 0, 0, map[string]bool{}
	for rel, e := range st.files {
		d := parentDir(rel)
		st.byDir[d] = append(st.byDir[d], path.Base(rel))
		st.count(rel, e)
	}
}

// count adds rel's entry e to the kept totals (byDir roots), uncount takes
// it out (e nil: none).
func (st *rootState) count(rel string, e *entry) {
	if e == nil || !e.hasData {
		return
	}
	st.keptFiles++
	st.keptBytes += int64(len(e.data))
	if e.binary {
		st.keptBinaries[rel] = true
	}
}

func (st *rootState) uncount(rel string, e *entry) {
	if e == nil || !e.hasData {
		return
	}
	st.keptFiles--
	st.keptBytes -= int64(len(e.data))
	delete(st.keptBinaries, rel)
}

// fits reports whether one more content of n bytes is within the keep
// limits (byDir roots).
func (st *rootState) fits(n int64, lim Limits) bool {
	return st.keptFiles < lim.MaxKeepFiles && st.keptBytes+n <= lim.MaxKeepBytes
}

// roomFromBinaries reports whether letting go of the kept binary files
// would make room for a text of n bytes.
func (st *rootState) roomFromBinaries(n int64, lim Limits) bool {
	files, bytes := st.keptFiles, st.keptBytes
	for rel := range st.keptBinaries {
		files--
		bytes -= int64(len(st.files[rel].data))
	}
	return files < lim.MaxKeepFiles && bytes+n <= lim.MaxKeepBytes
}

// entry is a file in a baseline.
type entry struct {
	exists  bool
	hasStat bool
	st      fileStat
	blob    string // git object the content equals (not with hasStat)
	data    []byte // kept content
	hasData bool
	binary  bool // the content is not text (data kept like text's, never shown)
	large   bool // larger than MaxFileBytes (data not kept)
	// other: the path is there but not a regular file (a symlink, a
	// directory, a FIFO, a gitlink): no file for the comparison (exists is
	// false), and not reported while it stays one.
	other bool
	// headOther: HEAD holds something other than a regular file there (a
	// symlink, a gitlink), so HEAD's object is no old text.
	headOther bool
}

// keep reads the file's content into e (regular file of e.st). A binary
// file's is kept like a text's, within the same limits: it is not shown,
// but /undo can put it back.
func (e *entry) keep(open openFunc, path string, max int64) int64 {
	if e.st.size > max {
		e.large = true
		return 0
	}
	data, st, kind, err := readFile(open, path, max)
	if err != nil || kind != kindRegular || st != e.st {
		return 0
	}
	e.binary = isBinary(data)
	e.data, e.hasData = data, true
	return int64(len(data))
}

// drop lets go of the kept content (what it was, binary or large, stays
// known).
func (e *entry) drop() { e.data, e.hasData = nil, false }

func (t *Tracker) snapshotRoot(ctx context.Context, r root) (*rootState, error) {
	st := &rootState{root: r, taken: time.Now(), files: map[string]*entry{}}
	// The watches are set before git or the walk reads the tree.
	n := t.newNotifier()
	if rp, err := findRepo(ctx, r.real); err == nil {
		if n != nil {
			if err := watchDirs(ctx, rp, n); err != nil {
				n.close()
				return nil, err
			}
		}
		s, err := rp.status(ctx, t.lim.MaxStatusEntries)
		if err == nil {
			st.repo, st.head, st.partial = rp, s.head, s.more > 0
			for rel, ge := range s.entries {
				st.files[rel] = ge.baseline(filepath.Join(r.real, filepath.FromSlash(rel)))
			}
			t.keepNewest(st)
			t.keepNotifier(st, n)
			return st, nil
		}
		if ctx.Err() != nil {
			n.close()
			return nil, err
		}
		// git status failing (an unsafe directory, a broken repo): walk.
		n.close()
		n = t.newNotifier()
	} else if ctx.Err() != nil {
		n.close()
		return nil, err
	}
	files, partial, err := walk(ctx, t.list(), r.real, t.lim.MaxWalkFiles, n)
	if err != nil {
		n.close()
		return nil, err
	}
	st.partial = partial
	t.keepNotifier(st, n)
	defer st.indexDirs() // after the contents are kept
	for rel, fs := range files {
		st.files[rel] = &entry{exists: true, hasStat: true, st: fs}
	}
	t.keepNewest(st)
	return st, nil
}

// keepNewest reads the contents of the baseline's files that have a stat
// (git cannot give them back), newest first, within the keep limits. Texts
// come first: a binary file (a build output, often newer than the sources)
// is kept with what the texts leave of the bytes, as a Report's binary
// contents are; every file read counts against MaxKeepFiles, as it did
// when a binary file's content was not kept, which bounds the reads.
func (t *Tracker) keepNewest(st *rootState) {
	var rels []string
	for rel, e := range st.files {
		if e.exists && e.hasStat {
			rels = append(rels, rel)
		}
	}
	newestFirst(rels, st.files)
	files, bytes := t.lim.MaxKeepFiles, t.lim.MaxKeepBytes
	// held are the binary files kept so far, newest first, within what
	// the texts leave: the oldest is let go when a text needs its room.
	var held []*entry
	var heldBytes int64
	for _, rel := range rels {
		e := st.files[rel]
		if files <= 0 || bytes < e.st.size {
			if e.st.size > t.lim.MaxFileBytes {
				e.large = true
			}
			continue
		}
		files--
		n := e.keep(t.open(), st.abs(rel), t.lim.MaxFileBytes)
		if !e.binary {
			bytes -= n
			for heldBytes > bytes {
				last := held[len(held)-1]
				held, heldBytes = held[:len(held)-1], heldBytes-int64(len(last.data))
				last.drop()
			}
			continue
		}
		if heldBytes+n > bytes {
			e.drop()
			continue
		}
		held, heldBytes = append(held, e), heldBytes+n
	}
}

// abs is the real path of a file below the root.
func (st *rootState) abs(rel string) string {
	return filepath.Join(st.root.real, filepath.FromSlash(rel))
}

// reported is the path of a file below the root as reported.
func (st *rootState) reported(rel string) string {
	return filepath.Join(st.root.given, filepath.FromSlash(rel))
}

// newestFirst orders rels by their entries' modification time, newest
// first (then by path): what the baseline keeps when it cannot keep all.
func newestFirst(rels []string, files map[string]*entry) {
	sort.Slice(rels, func(i, j int) bool {
		a, b := files[rels[i]].st, files[rels[j]].st
		if a.mtime != b.mtime {
			return a.mtime > b.mtime
		}
		return rels[i] < rels[j]
	})
}
