package shelledits

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"time"

	"github.com/codexacp/codexacp/internal/regularfile"
)

// racyWindow is how close to a baseline a file's modification time makes
// its stat untrustworthy: file times advance with the kernel's clock tick
// (up to 10 ms), so a write just after the baseline can leave them as they
// were.
const racyWindow = 20 * time.Millisecond

// candidate is a file that may have changed since the baseline.
type candidate struct {
	rel    string
	old    *entry // the baseline's; for a file git had clean, blob names it in HEAD
	exists bool   // the file exists now
}

// read is a file's content as a scan read it, kept for the next baseline
// (a binary file's too: data is nil only for a large one).
type read struct {
	st     fileStat
	data   []byte
	binary bool
	large  bool
}

// maxNarrowDirs is the most directories a scan looks at one by one; more
// changed directories are compared as a whole root.
const maxNarrowDirs = 64

// scanRoot reports the root's changes since base into rep and returns the
// root's next baseline. When the root is watched, nothing is read unless a
// directory changed, and then only the changed directories are. With rep
// nil (and b nil) it only moves the baseline on (Baseline, Start): nothing
// is compared or reported, and a root that cannot be moved on is read
// anew.
func (t *Tracker) scanRoot(ctx context.Context, base *rootState, b *budget, rep *Report) (*rootState, error) {
	if base.notify != nil {
		ch := base.notify.drain()
		if !ch.full && !allAbsent(base, ch.gone) {
			ch.full = true // there again: its files are to be found
		}
		if !ch.full && len(ch.dirs) == 0 {
			return base, nil // nothing changed: the baseline stands
		}
		// In git, a .gitignore edit may make a skipped directory one that
		// git lists, and so one to watch (watchDirs).
		if !ch.full && !(ch.ignores && base.repo != nil) && !base.partial && len(ch.dirs)+len(ch.rootNames) <= maxNarrowDirs {
			if next, err := t.scanDirs(ctx, base, ch.dirs, ch.rootNames, b, rep); next != nil || err != nil {
				return next, err
			}
		}
		// Watches are set again, on the tree as it is now.
		base.notify.close()
		base.notify = nil
	}
	if rep == nil {
		return t.snapshotRoot(ctx, base.root)
	}
	var n *notifier
	if !base.unwatchable {
		n = t.newNotifier()
	}
	next, err := t.scanWhole(ctx, base, n, b, rep)
	if err != nil {
		n.close()
		return nil, err
	}
	switch {
	case next.notify == n:
	case next.notify == nil && !next.unwatchable:
		t.keepNotifier(next, n)
		next.indexDirs()
	default:
		n.close() // a baseline taken again, with its own (the repository gone)
	}
	return next, nil
}

// allAbsent reports whether none of the paths below the root exists.
func allAbsent(st *rootState, rels []string) bool {
	for _, rel := range rels {
		if _, err := os.Lstat(st.abs(rel)); !errors.Is(err, fs.ErrNotExist) {
			return false
		}
	}
	return true
}

// scanDirs compares the files of the directories dirs (in git, the
// directories and what is below them; for the root's own files, "" in
// dirs, the paths rootNames below the root) and takes the rest of the root
// from the baseline, which the watches say is unchanged. It returns nil
// (and no error) when the whole root must be compared instead.
func (t *Tracker) scanDirs(ctx context.Context, base *rootState, dirs, rootNames map[string]bool, b *budget, rep *Report) (*rootState, error) {
	next := &rootState{root: base.root, taken: time.Now(), repo: base.repo, head: base.head, files: map[string]*entry{},
		notify: base.notify}
	// Entries of unchanged directories are shared with the baseline, which
	// the next one replaces.
	cur := make(map[string]*entry, len(base.files))
	if base.repo != nil {
		if dirs[""] {
			// The root's own files: git is asked about those named (a
			// path in the root stands for what is below it too), not
			// about the root, which would be the whole tree.
			if len(rootNames) == 0 || rootNames[""] {
				return nil, nil // the root directory's own event
			}
			narrow := make(map[string]bool, len(dirs)+len(rootNames))
			for d := range dirs {
				if d != "" {
					narrow[d] = true
				}
			}
			for name := range rootNames {
				narrow[name] = true
			}
			dirs = narrow
		}
		// The baseline of a root in git holds only the files git listed:
		// a few maps of that size.
		paths := make([]string, 0, len(dirs))
		for d := range dirs {
			paths = append(paths, d)
		}
		sort.Strings(paths)
		s, err := base.repo.status(ctx, t.lim.MaxStatusEntries, paths...)
		if err != nil || s.head != base.head || s.more > 0 {
			// A commit or checkout, or past the limit: compare everything.
			return nil, ctx.Err()
		}
		for rel, e := range base.files {
			if !belowAny(rel, dirs) {
				cur[rel] = e
			}
		}
		for rel, ge := range s.entries {
			cur[rel] = ge.baseline(base.abs(rel))
		}
	} else if base.byDir != nil {
		return t.scanDirsInPlace(ctx, base, dirs, b, rep)
	} else {
		for rel, e := range base.files {
			if !dirs[parentDir(rel)] {
				cur[rel] = e
			}
		}
		dev := deviceOf(base.root.real)
		for d := range dirs {
			follow := regularfile.NoFollowLink
			if d == "" {
				follow = regularfile.FollowLink
			}
			names, stats, _, err := t.list()(base.abs(d), dev, follow)
			if err != nil {
				return nil, ctx.Err()
			}
			for i, name := range names {
				if name != ".git" {
					cur[path.Join(d, name)] = &entry{exists: true, hasStat: true, st: stats[i]}
				}
			}
		}
		if len(cur) > t.lim.MaxWalkFiles {
			return nil, ctx.Err()
		}
	}
	return t.compare(ctx, base, next, cur, nil, b, rep)
}

// scanDirsInPlace is scanDirs for a walked root: it lists the changed
// directories, compares their files, and updates the baseline in place,
// touching nothing of the other directories (a walked baseline holds every
// file: rebuilding it would cost what the watches save). Contents read are
// kept as long as the keep limits allow, in place of the previous ones.
func (t *Tracker) scanDirsInPlace(ctx context.Context, base *rootState, dirs map[string]bool, b *budget, rep *Report) (*rootState, error) {
	dev := deviceOf(base.root.real)
	cur := map[string]*entry{}      // the present files of the changed directories
	listed := map[string][]string{} // their names
	count := len(base.files)
	for d := range dirs {
		follow := regularfile.NoFollowLink
		if d == "" {
			follow = regularfile.FollowLink
		}
		names, stats, _, err := t.list()(base.abs(d), dev, follow)
		if err != nil {
			return nil, ctx.Err() // gone or replaced: the whole root
		}
		for i, name := range names {
			if name != ".git" {
				cur[path.Join(d, name)] = &entry{exists: true, hasStat: true, st: stats[i]}
				listed[d] = append(listed[d], name)
			}
		}
		count += len(listed[d]) - len(base.byDir[d])
	}
	if count > t.lim.MaxWalkFiles {
		return nil, ctx.Err()
	}
	var cands []candidate
	check := func(rel string) {
		old, had := base.files[rel]
		if !had {
			old = &entry{hasStat: true} // not there
		}
		now := cur[rel]
		exists := now != nil
		racy := old.hasData && old.st.mtime >= base.taken.UnixNano()-racyWindow.Nanoseconds()
		if old.exists == exists && (!exists || old.st == now.st && !racy) {
			return
		}
		cands = append(cands, candidate{rel: rel, old: old, exists: exists})
	}
	for d := range dirs {
		known := make(map[string]bool, len(base.byDir[d]))
		for _, name := range base.byDir[d] {
			known[name] = true
			check(path.Join(d, name))
		}
		for _, name := range listed[d] {
			if !known[name] {
				check(path.Join(d, name))
			}
		}
	}
	if rep == nil {
		var ok bool
		if cands, b, rep, ok = t.toRead(cands); !ok {
			return nil, nil
		}
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].rel < cands[j].rel })
	show := cands[:min(len(cands), max(b.files, 0))]
	for _, c := range cands[len(show):] {
		rep.More = append(rep.More, base.reported(c.rel))
	}
	reads, err := t.report(ctx, base, show, b, rep)
	if err != nil {
		return nil, err
	}
	// The baseline becomes the present state: the changed directories'
	// entries replaced, contents carried over or read, within the limits.
	var fresh []string
	for d := range dirs {
		for _, name := range base.byDir[d] {
			rel := path.Join(d, name)
			base.uncount(rel, base.files[rel])
		}
	}
	for d := range dirs {
		for _, name := range base.byDir[d] {
			rel := path.Join(d, name)
			if _, still := cur[rel]; !still {
				delete(base.files, rel)
			}
		}
		for _, name := range listed[d] {
			rel := path.Join(d, name)
			e, old := cur[rel], base.files[rel]
			if r, ok := reads[rel]; ok && r.st == e.st {
				e.data, e.hasData, e.binary, e.large = r.data, r.data != nil, r.binary, r.large
			} else if old != nil && old.hasStat && old.exists && old.st == e.st {
				e.data, e.hasData, e.binary, e.large = old.data, old.hasData, old.binary, old.large
			} else if e.st.size > t.lim.MaxFileBytes {
				e.large = true
			}
			base.files[rel] = e
			if e.hasData {
				fresh = append(fresh, rel)
			}
		}
		base.byDir[d] = listed[d]
	}
	// Texts first, newest first, a text taking the room of the oldest
	// binary files kept (in any directory); then binary files with what
	// the texts leave.
	newestFirst(fresh, base.files)
	var evictable []string // kept binary files, oldest last; nil: not listed yet
	for _, binary := range []bool{false, true} {
		for _, rel := range fresh {
			e := base.files[rel]
			if e.binary != binary {
				continue
			}
			n := int64(len(e.data))
			if !binary && !base.fits(n, t.lim) && base.roomFromBinaries(n, t.lim) {
				if evictable == nil {
					evictable = make([]string, 0, len(base.keptBinaries))
					for b := range base.keptBinaries {
						evictable = append(evictable, b)
					}
					newestFirst(evictable, base.files)
				}
				for !base.fits(n, t.lim) && len(evictable) > 0 {
					b := evictable[len(evictable)-1]
					evictable = evictable[:len(evictable)-1]
					if be := base.files[b]; base.keptBinaries[b] {
						base.uncount(b, be)
						be.drop()
					}
				}
			}
			if !base.fits(n, t.lim) {
				e.drop()
				continue
			}
			base.count(rel, e)
		}
	}
	return base, nil
}

// toRead turns the candidates of a baseline being moved on (Baseline on a
// watched one: nothing is reported) into the files to read for it, with
// a budget and a report to throw away: their present contents are read
// and kept as a scan keeps them, no old text is looked up. ok is false
// past MaxFiles changed files (what a scan reads at most): the baseline
// is then taken anew, which keeps the newest within the keep limits.
func (t *Tracker) toRead(cands []candidate) (_ []candidate, _ *budget, _ *Report, ok bool) {
	if len(cands) > t.lim.MaxFiles {
		return nil, nil, nil, false
	}
	var read []candidate
	for _, c := range cands {
		if c.exists {
			read = append(read, candidate{rel: c.rel, old: &entry{hasStat: true}, exists: true})
		}
	}
	return read, &budget{files: len(read), bytes: t.lim.MaxTotalBytes}, &Report{}, true
}

// parentDir is the directory of a path below a root ("" for the root).
func parentDir(rel string) string {
	if d := path.Dir(rel); d != "." {
		return d
	}
	return ""
}

// belowAny reports whether rel is one of dirs or below one.
func belowAny(rel string, dirs map[string]bool) bool {
	for d := rel; d != ""; d = parentDir(d) {
		if dirs[d] {
			return true
		}
	}
	return false
}

// scanWhole compares the whole root with the baseline; n (when not nil)
// is watched as the tree is read.
func (t *Tracker) scanWhole(ctx context.Context, base *rootState, n *notifier, b *budget, rep *Report) (*rootState, error) {
	next := &rootState{root: base.root, taken: time.Now(), repo: base.repo, files: map[string]*entry{},
		unwatchable: base.unwatchable}
	cur := map[string]*entry{} // the present state, as a baseline holds it
	var inHeadDiff map[string]bool
	if base.repo != nil {
		if n != nil {
			if err := watchDirs(ctx, base.repo, n); err != nil {
				return nil, err
			}
		}
		s, err := base.repo.status(ctx, t.lim.MaxStatusEntries)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			// The repository is gone (rm -rf .git) or broken: begin again.
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s was not compared: %v", base.root.given, err))
			return t.snapshotRoot(ctx, base.root) // with its own notifier
		}
		next.head, next.partial = s.head, s.more > 0
		if s.more > 0 {
			rep.Notes = append(rep.Notes, fmt.Sprintf("git status listed %d more files in %s than the %d compared",
				s.more, base.root.given, t.lim.MaxStatusEntries))
		}
		for rel, ge := range s.entries {
			cur[rel] = ge.baseline(base.abs(rel))
		}
		if base.head != "" && s.head != "" && s.head != base.head {
			// A commit, checkout or reset: files clean before and after may
			// differ all the same.
			names, err := base.repo.diffNames(ctx, base.head, s.head)
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				rep.Notes = append(rep.Notes, fmt.Sprintf("files committed in %s were not compared: %v", base.root.given, err))
			}
			inHeadDiff = make(map[string]bool, len(names))
			for _, n := range names {
				inHeadDiff[n] = true
			}
		}
	} else {
		files, partial, err := walk(ctx, t.list(), base.root.real, t.lim.MaxWalkFiles, n)
		if err != nil {
			return nil, err
		}
		next.partial = partial
		if partial {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s has more than %d files: only the first %d (breadth first) were compared",
				base.root.given, t.lim.MaxWalkFiles, t.lim.MaxWalkFiles))
		}
		for rel, st := range files {
			cur[rel] = &entry{exists: true, hasStat: true, st: st}
		}
	}

	return t.compare(ctx, base, next, cur, inHeadDiff, b, rep)
}

// compare reports the files of cur (the present state) that differ from
// the baseline and fills in next from cur.
func (t *Tracker) compare(ctx context.Context, base, next *rootState, cur map[string]*entry, inHeadDiff map[string]bool, b *budget, rep *Report) (*rootState, error) {
	cands := t.candidates(base, next, cur, inHeadDiff)
	if rep == nil {
		var ok bool
		if cands, b, rep, ok = t.toRead(cands); !ok {
			return nil, nil
		}
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].rel < cands[j].rel })
	show := cands[:min(len(cands), max(b.files, 0))]
	for _, c := range cands[len(show):] {
		rep.More = append(rep.More, base.reported(c.rel))
	}
	reads, err := t.report(ctx, base, show, b, rep)
	if err != nil {
		return nil, err
	}
	t.nextFiles(base, next, cur, reads)
	return next, nil
}

// candidates are the files whose state differs from the baseline's, as far
// as stats and object names tell without reading them.
func (t *Tracker) candidates(base, next *rootState, cur map[string]*entry, inHeadDiff map[string]bool) []candidate {
	var cands []candidate
	check := func(rel string) {
		old, listed := base.files[rel]
		now := cur[rel]
		if listed && now == old {
			// Taken from the baseline by a scan of changed directories:
			// the watches saw no change (not even one within the clock's
			// granularity, racy below).
			return
		}
		if !listed {
			switch {
			case base.repo != nil && base.head != "" && now != nil && now.headOther && !inHeadDiff[rel]:
				// Clean at the baseline, and HEAD holds a symlink or a
				// gitlink there: no file was there.
				old = &entry{hasStat: true, other: true}
			case base.repo != nil && base.head != "":
				old = &entry{exists: true, blob: base.repo.blobName(base.head, rel)}
			default:
				old = &entry{hasStat: true} // not there
			}
		}
		var st fileStat
		kind := kindAbsent
		switch {
		case now != nil && now.other:
			kind = kindOther
		case now != nil && now.hasStat:
			st = now.st
			if now.exists {
				kind = kindRegular
			}
		case now == nil && base.repo == nil && !next.partial:
			// A complete walk did not find it.
		default:
			st, kind = lstat(base.abs(rel))
		}
		if kind == kindOther {
			return // not a file now
		}
		exists := kind == kindRegular
		// A file whose modification time is not clearly before the baseline
		// may have been written again within the clock's granularity with
		// the same stat: its kept content is compared.
		racy := old.hasData && old.st.mtime >= base.taken.UnixNano()-racyWindow.Nanoseconds()
		switch {
		case old.hasStat && old.exists == exists && (!exists || old.st == st && !racy):
			return
		case !listed && base.repo == nil && base.partial && exists && st.mtime < base.taken.UnixNano():
			// Past the walk's limit in the baseline, and older than it.
			return
		case listed && old.blob != "" && now != nil && now.blob == old.blob:
			return // the work tree holds the same object
		}
		cands = append(cands, candidate{rel: rel, old: old, exists: exists})
	}
	for rel := range base.files {
		check(rel)
	}
	for rel := range cur {
		if _, done := base.files[rel]; !done {
			check(rel)
		}
	}
	for rel := range inHeadDiff {
		if _, done := base.files[rel]; !done && cur[rel] == nil {
			check(rel)
		}
	}
	return cands
}

// report reads the old and new texts of the candidates and adds those that
// did change to rep, within the budget. It returns what it read of the
// present files.
func (t *Tracker) report(ctx context.Context, base *rootState, show []candidate, b *budget, rep *Report) (map[string]read, error) {
	var objs map[string]*object
	if base.repo != nil {
		var names []string
		for _, c := range show {
			if c.old.blob != "" {
				names = append(names, c.old.blob)
			}
		}
		if len(names) > 0 {
			var err error
			if objs, err = base.repo.objects(ctx, names, t.lim.MaxFileBytes); err != nil {
				return nil, err
			}
		}
	}
	reads := map[string]read{}
	var binaries []binaryChange
	for _, c := range show {
		ch := Change{Path: base.reported(c.rel), OldSize: -1, NewSize: -1}
		// oldData and newData are the texts; oldRaw and newRaw the
		// contents, text or binary (nil: not known).
		var oldData, newData, oldRaw, newRaw []byte
		var oldOmit, newOmit Omission
		oldExists := c.old.exists
		switch {
		case c.old.hasStat:
			if oldExists {
				ch.OldSize = c.old.st.size
				if c.old.hasData {
					oldRaw = nonNil(c.old.data)
				}
				switch {
				case c.old.binary:
					oldOmit = OmitBinary
				case c.old.hasData:
					oldData = c.old.data
				case c.old.large:
					oldOmit = OmitLarge
				default:
					oldOmit = OmitOldUnknown
				}
			}
		case c.old.blob != "":
			o := objs[c.old.blob]
			if o == nil || o.missing {
				oldExists = false
				break
			}
			ch.OldSize = o.size
			oldRaw = o.data
			switch {
			case o.data == nil:
				oldOmit = OmitLarge
			case isBinary(o.data):
				oldOmit = OmitBinary
			default:
				oldData = o.data
			}
		}
		exists := c.exists
		if exists {
			data, st, kind, err := readFile(t.open(), base.abs(c.rel), t.lim.MaxFileBytes)
			switch {
			case kind == kindAbsent:
				exists = false
			case err != nil:
				rep.Notes = append(rep.Notes, fmt.Sprintf("%s could not be read: %v", ch.Path, err))
				continue
			case kind != kindRegular:
				continue // replaced by something else meanwhile
			default:
				ch.NewSize = st.size
				r := read{st: st, data: data}
				newRaw = data
				switch {
				case data == nil:
					newOmit, r.large = OmitLarge, true
				case isBinary(data):
					newOmit, r.binary = OmitBinary, true
				default:
					newData = data
				}
				reads[c.rel] = r
			}
		}
		switch {
		case !oldExists && !exists:
			continue
		case !oldExists:
			ch.Op, ch.Omitted = Created, newOmit
		case !exists:
			ch.Op, ch.Omitted = Deleted, oldOmit
		default:
			ch.Op = Modified
			if oldRaw != nil && newRaw != nil && bytes.Equal(oldRaw, newRaw) {
				continue
			}
			ch.Omitted = worse(oldOmit, newOmit)
		}
		size := int64(len(oldData) + len(newData))
		if b.files <= 0 || size > b.bytes {
			rep.More = append(rep.More, ch.Path)
			continue
		}
		b.files--
		switch ch.Omitted {
		case OmitNone:
			b.bytes -= size
			if ch.Op != Created {
				ch.Old = nonNil(oldData)
			}
			if ch.Op != Deleted {
				ch.New = nonNil(newData)
			}
		case OmitBinary:
			binaries = append(binaries, binaryChange{len(rep.Changes), oldRaw, newRaw})
		}
		rep.Changes = append(rep.Changes, ch)
	}
	// Binary files' contents take what the texts left of the byte budget
	// (they never push a diff out); past it a file is named without them.
	for _, bc := range binaries {
		ch := &rep.Changes[bc.i]
		if raw := binarySides(ch, bc.old, bc.new); raw <= b.bytes {
			b.bytes -= raw
		} else {
			ch.OldBytes, ch.NewBytes = nil, nil
		}
	}
	return reads, nil
}

// binaryChange is a binary file of a report, with its contents (nil: not
// known) until the texts have taken their part of the budget.
type binaryChange struct {
	i        int // in Report.Changes
	old, new []byte
}

// worse is the omission that says more: binary, then large, then unknown.
func worse(a, b Omission) Omission {
	for _, o := range []Omission{OmitBinary, OmitLarge, OmitOldUnknown} {
		if a == o || b == o {
			return o
		}
	}
	return OmitNone
}

// binarySides sets a binary change's contents, of the sides that exist
// and are known, and returns their size.
func binarySides(ch *Change, oldRaw, newRaw []byte) int64 {
	if ch.Op != Created && oldRaw != nil {
		ch.OldBytes = oldRaw
	}
	if ch.Op != Deleted && newRaw != nil {
		ch.NewBytes = newRaw
	}
	return int64(len(ch.OldBytes) + len(ch.NewBytes))
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// nextFiles fills the next baseline's entries from the present state,
// keeping contents read by this scan or still valid from the baseline,
// newest first within the keep limits.
func (t *Tracker) nextFiles(base, next *rootState, cur map[string]*entry, reads map[string]read) {
	var kept []string
	for rel, e := range cur {
		next.files[rel] = e
		if !e.hasStat || !e.exists {
			continue
		}
		if r, ok := reads[rel]; ok && r.st == e.st {
			e.data, e.hasData, e.binary, e.large = r.data, r.data != nil, r.binary, r.large
		} else if old := base.files[rel]; old != nil && old.hasStat && old.exists && old.st == e.st {
			e.data, e.hasData, e.binary, e.large = old.data, old.hasData, old.binary, old.large
		} else if e.st.size > t.lim.MaxFileBytes {
			e.large = true
		}
		if e.hasData {
			kept = append(kept, rel)
		}
	}
	if len(kept) <= t.lim.MaxKeepFiles {
		var total int64
		for _, rel := range kept {
			total += int64(len(next.files[rel].data))
		}
		if total <= t.lim.MaxKeepBytes {
			return
		}
	}
	newestFirst(kept, next.files)
	files, bytes := t.lim.MaxKeepFiles, t.lim.MaxKeepBytes
	// Texts first, then binary files with what the texts leave.
	for _, binary := range []bool{false, true} {
		for _, rel := range kept {
			e := next.files[rel]
			if e.binary != binary {
				continue
			}
			if files > 0 && int64(len(e.data)) <= bytes {
				files--
				bytes -= int64(len(e.data))
				continue
			}
			e.drop()
		}
	}
}
