package shelledits

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/codexacp/codexacp/internal/regularfile"
)

// notifySupported: inotify tells which directories changed since a
// baseline, so that a scan looks at those only.
const notifySupported = true

// watchMask is what changes a file's content, stat or presence in a
// directory. Opening or reading a file is no change.
const watchMask = unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM |
	unix.IN_MOVED_TO | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_DONT_FOLLOW | unix.IN_ONLYDIR

// notifier watches the directories of one root (inotify, one watch per
// directory). Its watches are set on a directory before the directory is
// read, so a change after the read is an event, and one before it is in
// what was read.
type notifier struct {
	max    int          // directories watched at most
	budget *WatchBudget // what its instance and watches are taken from

	mu     sync.Mutex
	fd     int              // -1 once closed
	dirs   map[int32]string // watch descriptor → directory below the root (slashes; "" the root)
	broken bool             // a watch could not be set: the notifier tells nothing
	// refused: the budget refused a watch (what broke it, unless another
	// reason came first).
	refused bool
	taken   int // watches taken from the budget
}

// budgetShare: the process takes at most a quarter of the user's inotify
// instances and watches.
const budgetShare = 4

// processBudget is the budget of the process, read from the system's
// limits once (the kernel's defaults of old when they cannot be read).
var processBudget = sync.OnceValue(func() *WatchBudget {
	return NewWatchBudget(readLimit("/proc/sys/fs/inotify/max_user_instances", 128)/budgetShare,
		readLimit("/proc/sys/fs/inotify/max_user_watches", 8192)/budgetShare)
})

// notifyBudget is the budget notifiers take from (tests give their own).
var notifyBudget = processBudget

// readLimit reads a number from a file of /proc, or returns def.
func readLimit(path string, def int) int {
	data, err := os.ReadFile(path)
	if err != nil {
		return def
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || n <= 0 {
		return def
	}
	return n
}

// newNotifier returns a notifier of at most maxDirs directories, its
// instance and watches taken from the budget b.
func newNotifier(maxDirs int, b *WatchBudget) (*notifier, error) {
	if !b.take(1, 0) {
		return nil, errBudget
	}
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		b.give(1, 0)
		return nil, os.NewSyscallError("inotify_init1", err)
	}
	return &notifier{fd: fd, max: maxDirs, budget: b, dirs: map[int32]string{}}, nil
}

// watch sets a watch on the directory abs (rel below the root). A
// directory gone or replaced meanwhile is left out (its parent's event
// says so); past the limit or the process's budget, or when the system
// refuses more watches, the notifier is broken. Safe for concurrent use.
func (n *notifier) watch(abs, rel string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.broken || n.fd < 0 {
		n.broken = true
		return
	}
	if len(n.dirs) >= n.max {
		n.broken = true
		return
	}
	if !n.budget.take(0, 1) {
		n.broken, n.refused = true, true
		return
	}
	wd, err := unix.InotifyAddWatch(n.fd, abs, watchMask)
	switch {
	case err == nil:
		if _, again := n.dirs[int32(wd)]; again {
			n.budget.give(0, 1) // the same directory again: one watch
		} else {
			n.taken++
		}
		n.dirs[int32(wd)] = rel
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.ENOTDIR), errors.Is(err, unix.ELOOP):
		n.budget.give(0, 1)
	default:
		n.budget.give(0, 1)
		n.broken = true // ENOSPC: the user's watches are used up
	}
}

// stop gives up: the notifier tells nothing.
func (n *notifier) stop() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.broken = true
}

// refusedByBudget reports whether the budget refused the notifier a
// watch, and nothing else broke it first.
func (n *notifier) refusedByBudget() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.refused
}

// ok reports whether every watch asked for was set.
func (n *notifier) ok() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return !n.broken
}

// changes are the events since the last drain.
type changes struct {
	any     bool            // something changed
	full    bool            // the directories cannot be told: compare everything
	dirs    map[string]bool // the directories whose files changed
	ignores bool            // a .gitignore changed: in git, what is watched may change
	// gone are directories (below the root, slashes) that were created and
	// removed again since the last drain, and nothing else: no file of the
	// tree changed with them (codex's sandbox makes its mount points so
	// around every command); the scan checks that they are absent.
	gone []string
	// rootNames are the names in the root whose events put "" in dirs
	// ("" itself for an event of the root directory's own): in git, the
	// pathspecs that stand for the root's own files.
	rootNames map[string]bool
}

// dirEvent is what happened to a subdirectory of a watched directory.
type dirEvent struct {
	created, removed int  // IN_CREATE and IN_DELETE events, in turn
	last             bool // the last event removed it
	other            bool // moved, or an order that is not create, remove, create…
}

// drain reads the queued events. A closed notifier tells nothing: the
// changes are "full".
func (n *notifier) drain() changes {
	ch := changes{dirs: map[string]bool{}}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.fd < 0 {
		ch.any, ch.full = true, true
		return ch
	}
	subdirs := map[string]*dirEvent{} // by path below the root
	buf := make([]byte, 64<<10)
	for {
		m, err := unix.Read(n.fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil || m <= 0 {
			if err != nil && err != unix.EAGAIN {
				ch.any, ch.full = true, true
			}
			break
		}
		for off := 0; off+unix.SizeofInotifyEvent <= m; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := bytes.TrimRight(buf[off+unix.SizeofInotifyEvent:min(m, off+unix.SizeofInotifyEvent+int(ev.Len))], "\x00")
			off += unix.SizeofInotifyEvent + int(ev.Len)
			ch.any = true
			if string(name) == ".gitignore" {
				ch.ignores = true
			}
			dir, known := n.dirs[ev.Wd]
			switch {
			case ev.Mask&unix.IN_Q_OVERFLOW != 0, !known:
				ch.full = true
			case ev.Mask&unix.IN_ISDIR != 0 && ev.Mask&(unix.IN_CREATE|unix.IN_DELETE|unix.IN_MOVED_FROM|unix.IN_MOVED_TO) != 0:
				// A directory came, went or moved: unless it only came and
				// went, the watches no longer cover the tree as named.
				rel := path.Join(dir, string(name))
				de := subdirs[rel]
				if de == nil {
					de = &dirEvent{}
					subdirs[rel] = de
				}
				de.note(ev.Mask)
			case ev.Mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_IGNORED|unix.IN_UNMOUNT) != 0:
				ch.full = true
			default:
				ch.dirs[dir] = true
				if dir == "" {
					if ch.rootNames == nil {
						ch.rootNames = map[string]bool{}
					}
					ch.rootNames[string(name)] = true
				}
			}
		}
	}
	for rel, de := range subdirs {
		if de.other || !de.last {
			ch.full = true
			break
		}
		ch.gone = append(ch.gone, rel)
	}
	return ch
}

// note records one event of a subdirectory. Only a directory that was
// created and then removed, maybe several times, is one that came and
// went: a watch set on it meanwhile (a baseline's walk) would have
// reported its removal as a full change (IN_DELETE_SELF).
func (de *dirEvent) note(mask uint32) {
	switch {
	case mask&unix.IN_CREATE != 0 && de.created == de.removed:
		de.created++
		de.last = false
	case mask&unix.IN_DELETE != 0 && de.removed == de.created-1:
		de.removed++
		de.last = true
	default:
		de.other = true
	}
}

// closeNotifyFD closes an inotify descriptor (tests count the closes).
var closeNotifyFD = unix.Close

// close closes the descriptor, once: a notifier may be shared by two
// baselines (a narrow scan's), and a second close of the number could
// close a descriptor opened meanwhile elsewhere in the process.
func (n *notifier) close() {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.fd < 0 {
		return
	}
	closeNotifyFD(n.fd)
	n.fd = -1
	n.budget.give(1, n.taken)
	n.taken = 0
}

// maxSkippedDirs is the most skipped directories (node_modules,
// __pycache__…) of a root in git that are asked about; past it the root is
// not watched.
const maxSkippedDirs = 1024

// watchDirs sets a watch on every directory of the git root rp (on its
// device, not .git), breadth first, before git reads them. It reads
// directories, not files: the work of a baseline in git, where git lists
// the files. The directories a walk skips (node_modules, .venv…) are
// watched, with all below them, only where git lists something in them
// (tracked files, or untracked ones not ignored): one `git ls-files` of
// those found. Ignored, they cost no watch.
func watchDirs(ctx context.Context, rp *repo, n *notifier) error {
	dev := deviceOf(rp.dir)
	var skipped []string
	level, all := []string{""}, false
	for {
		for len(level) > 0 && n.ok() {
			if err := ctx.Err(); err != nil {
				return err
			}
			var deeper []string
			for _, dir := range level {
				abs := filepath.Join(rp.dir, filepath.FromSlash(dir))
				n.watch(abs, dir)
				follow := regularfile.NoFollowLink
				if dir == "" {
					follow = regularfile.FollowLink
				}
				subdirs, _ := readSubdirs(abs, dev, follow)
				for _, name := range subdirs {
					switch rel := path.Join(dir, name); {
					case name == ".git": // git's own, or a nested repository
					case !all && slices.Contains(skippedDirs, name):
						skipped = append(skipped, rel)
					default:
						deeper = append(deeper, rel)
					}
				}
			}
			level = deeper
		}
		if all || len(skipped) == 0 || !n.ok() {
			return nil
		}
		if len(skipped) > maxSkippedDirs {
			n.stop()
			return nil
		}
		listed, err := rp.listedDirs(ctx, skipped)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			n.stop() // not known: compare the whole root
			return nil
		}
		level, all = listed, true
	}
}

// readSubdirs lists a directory's subdirectories on device dev.
func readSubdirs(dir string, dev uint64, follow regularfile.Follow) ([]string, error) {
	f, err := regularfile.OpenDir(dir, follow)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ents, err := f.ReadDir(-1)
	if err != nil && len(ents) == 0 {
		return nil, err
	}
	fd := int(f.Fd())
	var subdirs []string
	for _, de := range ents {
		if !de.Type().IsDir() {
			continue
		}
		var st unix.Stat_t
		if unix.Fstatat(fd, de.Name(), &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR &&
			uint64(st.Dev) == dev {
			subdirs = append(subdirs, de.Name())
		}
	}
	return subdirs, nil
}
