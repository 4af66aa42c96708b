package shelledits

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/codexacp/codexacp/internal/regularfile"
)

// gitPath is the git executable, or "" when there is none.
var gitPath = sync.OnceValue(func() string {
	p, err := exec.LookPath("git")
	if err != nil {
		return ""
	}
	return p
})

var errNoGit = errors.New("shelledits: git not found")

// gitRuns counts the git processes started (tests check what a scan runs).
var gitRuns atomic.Int64

// repo is a workspace root inside a git work tree.
type repo struct {
	dir    string // the root (real path); git runs there
	prefix string // the root's path below the top of the work tree, slash-terminated, or ""
}

var errNotInRepo = errors.New("shelledits: not in a git work tree")

// findRepo finds the git work tree dir belongs to. Outside any (no .git
// in dir or above it, no GIT_DIR or GIT_WORK_TREE) it answers without
// starting git: a baseline is taken at every turn's start, while codex
// works on the turn, and every git process costs a start (docs/shell-edits.md).
func findRepo(ctx context.Context, dir string) (*repo, error) {
	if !gitMarkerAbove(dir, os.Getenv, exists) {
		return nil, errNotInRepo
	}
	if atTheTop(dir, os.Getenv) {
		// A git process fewer at each baseline: a directory that is not
		// a repository after all fails at git status, and is walked.
		return &repo{dir: dir}, nil
	}
	out, err := runGit(ctx, dir, nil, "rev-parse", "--show-prefix")
	if err != nil {
		return nil, err
	}
	prefix := strings.TrimRight(string(out), "\n")
	if strings.HasPrefix(prefix, "../") || prefix == ".." {
		return nil, fmt.Errorf("shelledits: %s is not inside its work tree", dir)
	}
	return &repo{dir: dir, prefix: prefix}, nil
}

// runGit runs git in dir without taking optional locks (the index is not
// refreshed: a command running at the same time keeps its index.lock) and
// without an fsmonitor hook (a command of the repository's configuration).
func runGit(ctx context.Context, dir string, stdin []byte, args ...string) ([]byte, error) {
	gitRuns.Add(1)
	git := gitPath()
	if git == "" {
		return nil, errNoGit
	}
	sub := args[0]
	args = append([]string{"-C", dir, "--no-optional-locks", "--literal-pathspecs", "-c", "core.fsmonitor=false", "-c", "core.quotePath=false"}, args...)
	cmd := exec.CommandContext(ctx, git, args...)
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout bytes.Buffer
	stderr := &capped{n: 1024}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("git %s: %w: %s", sub, err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// capped keeps the first n bytes written to it.
type capped struct {
	bytes.Buffer
	n int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.n - c.Len(); room > 0 {
		c.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// gitStatus is what `git status` says of a root.
type gitStatus struct {
	head    string              // the HEAD commit; "" before the first
	entries map[string]gitEntry // by path below the root
	more    int                 // entries left out past the limit
}

// gitEntry is one path `git status --porcelain=v2` lists.
type gitEntry struct {
	kind  byte   // '1' (changed), 'u' (unmerged), '?' (untracked)
	x, y  byte   // index and work tree status ('.' unchanged)
	hI    string // the object in the index
	modeI string // its mode
	modeH string // the mode in HEAD ("" when not given)
}

// status lists the root's changed and untracked files, or those in the
// directories dirs (below the root, slashes): at most max entries.
func (r *repo) status(ctx context.Context, max int, dirs ...string) (gitStatus, error) {
	args := []string{"status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all",
		"--no-renames", "--ignore-submodules=all", "--"}
	if len(dirs) == 0 {
		dirs = []string{"."}
	}
	out, err := runGit(ctx, r.dir, nil, append(args, dirs...)...)
	if err != nil {
		return gitStatus{}, err
	}
	return parseStatus(out, r.prefix, max)
}

// parseStatus reads `git status --porcelain=v2 -z --branch` output. Paths
// are relative to the top of the work tree; those below prefix are kept,
// relative to it.
func parseStatus(out []byte, prefix string, max int) (gitStatus, error) {
	s := gitStatus{entries: map[string]gitEntry{}}
	fields := strings.Split(string(out), "\x00")
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if f == "" {
			continue
		}
		var e gitEntry
		var path string
		switch f[0] {
		case '#':
			if oid, ok := strings.CutPrefix(f, "# branch.oid "); ok && oid != "(initial)" {
				s.head = oid
			}
			continue
		case '1':
			// 1 XY sub mH mI mW hH hI path
			p := strings.SplitN(f, " ", 9)
			if len(p) != 9 || len(p[1]) != 2 || p[2] == "" {
				return s, fmt.Errorf("shelledits: unreadable git status entry %q", f)
			}
			if p[2][0] == 'S' {
				continue // a submodule
			}
			e = gitEntry{kind: '1', x: p[1][0], y: p[1][1], modeH: p[3], modeI: p[4], hI: p[7]}
			path = p[8]
		case '2':
			// 2 XY sub mH mI mW hH hI Xscore path NUL origPath (only without --no-renames)
			p := strings.SplitN(f, " ", 10)
			i++ // the original path
			if len(p) != 10 || len(p[1]) != 2 || p[2] == "" {
				return s, fmt.Errorf("shelledits: unreadable git status entry %q", f)
			}
			if p[2][0] == 'S' {
				continue
			}
			e = gitEntry{kind: '1', x: p[1][0], y: p[1][1], modeH: p[3], modeI: p[4], hI: p[7]}
			path = p[9]
		case 'u':
			// u XY sub m1 m2 m3 mW h1 h2 h3 path
			p := strings.SplitN(f, " ", 11)
			if len(p) != 11 || len(p[1]) != 2 {
				return s, fmt.Errorf("shelledits: unreadable git status entry %q", f)
			}
			e = gitEntry{kind: 'u', x: p[1][0], y: p[1][1]}
			path = p[10]
		case '?':
			e = gitEntry{kind: '?', x: '?', y: '?'}
			path = strings.TrimPrefix(f, "? ")
		default:
			continue // '!' (ignored) is not asked for
		}
		rel, ok := strings.CutPrefix(path, prefix)
		if !ok || rel == "" || strings.HasSuffix(rel, "/") || isGitPath(rel) {
			continue // outside the root, or a nested repository
		}
		if _, seen := s.entries[rel]; !seen && len(s.entries) >= max {
			s.more++
			continue
		}
		s.entries[rel] = e // an untracked entry follows and replaces a deleted one
	}
	return s, nil
}

// baseline is the entry a baseline keeps for a listed file (abs is its
// real path). A path that is not a regular file (an untracked symlink such
// as Emacs's `.#name` lock link, a staged symlink, a gitlink) gets an entry
// that says so: a listed path always has one.
func (e gitEntry) baseline(abs string) *entry {
	ent := e.lookup(abs)
	ent.headOther = e.modeH != "" && e.modeH != "000000" && !regularMode(e.modeH)
	return ent
}

func (e gitEntry) lookup(abs string) *entry {
	switch {
	case e.kind == '1' && e.y == '.' && e.x == 'D', e.y == 'D':
		return &entry{hasStat: true} // gone from the work tree
	case e.kind == '1' && e.y == '.':
		if !regularMode(e.modeI) {
			return &entry{hasStat: true, other: true} // a symlink or a gitlink
		}
		return &entry{exists: true, blob: e.hI} // the work tree holds the index's object
	}
	st, kind := lstat(abs)
	switch kind {
	case kindRegular:
		return &entry{exists: true, hasStat: true, st: st}
	case kindAbsent:
		return &entry{hasStat: true}
	}
	return &entry{hasStat: true, other: true}
}

// regularMode reports whether a git mode is a regular file's.
func regularMode(mode string) bool { return mode == "100644" || mode == "100755" }

// diffNames lists the paths below the root that differ between two commits.
func (r *repo) diffNames(ctx context.Context, from, to string) ([]string, error) {
	out, err := runGit(ctx, r.dir, nil, "diff", "--name-only", "-z", "--no-renames", "--no-relative", "--no-ext-diff",
		"--ignore-submodules=all", from, to, "--", ".")
	if err != nil {
		return nil, err
	}
	var rels []string
	for _, p := range strings.Split(string(out), "\x00") {
		if rel, ok := strings.CutPrefix(p, r.prefix); ok && rel != "" {
			rels = append(rels, rel)
		}
	}
	return rels, nil
}

// listedDirs returns those of dirs (below the root, slashes; none below
// another) in which git lists something: a tracked file, or an untracked
// path that is not ignored (an untracked directory listed as one, empty
// ones included: a file created there would be listed).
func (r *repo) listedDirs(ctx context.Context, dirs []string) ([]string, error) {
	out, err := runGit(ctx, r.dir, nil, append([]string{"ls-files", "-z", "--cached", "--others", "--exclude-standard",
		"--directory", "--"}, dirs...)...)
	if err != nil {
		return nil, err
	}
	asked := make(map[string]bool, len(dirs))
	for _, d := range dirs {
		asked[d] = true
	}
	found := map[string]bool{}
	var listed []string
	for _, p := range strings.Split(string(out), "\x00") {
		// Paths are relative to the root, where git runs.
		for d := strings.TrimSuffix(p, "/"); d != ""; d = parentDir(d) {
			if asked[d] {
				if !found[d] {
					found[d] = true
					listed = append(listed, d)
				}
				break
			}
		}
	}
	return listed, nil
}

// object is what git holds under a name.
type object struct {
	oid     string
	missing bool // no such object, or not a blob
	size    int64
	data    []byte // nil when larger than the limit
}

// objects looks up object names ("<oid>" or "<commit>:<path>" with the
// path from the top of the work tree) and reads the blobs of at most max
// bytes: two git processes whatever the number.
func (r *repo) objects(ctx context.Context, names []string, max int64) (map[string]*object, error) {
	objs := map[string]*object{}
	var in bytes.Buffer
	var asked []string
	for _, n := range names {
		if _, dup := objs[n]; dup {
			continue
		}
		if strings.ContainsAny(n, "\n\r") {
			objs[n] = &object{missing: true} // cat-file reads lines
			continue
		}
		objs[n] = &object{missing: true}
		asked = append(asked, n)
		in.WriteString(n + "\n")
	}
	if len(asked) == 0 {
		return objs, nil
	}
	out, err := runGit(ctx, r.dir, in.Bytes(), "cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize)")
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(asked) {
		return nil, fmt.Errorf("shelledits: git cat-file answered %d lines for %d names", len(lines), len(asked))
	}
	var want bytes.Buffer
	byOid := map[string][]*object{}
	for i, line := range lines {
		p := strings.Fields(line)
		if len(p) != 3 || p[1] != "blob" {
			continue
		}
		size, err := strconv.ParseInt(p[2], 10, 64)
		if err != nil {
			continue
		}
		o := objs[asked[i]]
		o.oid, o.missing, o.size = p[0], false, size
		if size <= max {
			if _, dup := byOid[p[0]]; !dup {
				want.WriteString(p[0] + "\n")
			}
			byOid[p[0]] = append(byOid[p[0]], o)
		}
	}
	if want.Len() == 0 {
		return objs, nil
	}
	out, err = runGit(ctx, r.dir, want.Bytes(), "cat-file", "--batch")
	if err != nil {
		return nil, err
	}
	br := bufio.NewReader(bytes.NewReader(out))
	for {
		header, err := br.ReadString('\n')
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		p := strings.Fields(header)
		if len(p) != 3 {
			continue // "<oid> missing"
		}
		size, err := strconv.ParseInt(p[2], 10, 64)
		if err != nil || size < 0 || size > max {
			return nil, fmt.Errorf("shelledits: git cat-file header %q", header)
		}
		data := make([]byte, size+1) // the content and a newline
		if _, err := io.ReadFull(br, data); err != nil {
			return nil, err
		}
		for _, o := range byOid[p[0]] {
			o.data = data[:size:size]
		}
	}
	return objs, nil
}

// blobName is the name of a file's object in a commit.
func (r *repo) blobName(commit, rel string) string {
	return commit + ":" + r.prefix + rel
}

// gitMarkerAbove reports whether git could find a work tree for dir: a
// .git entry (a directory, or the file of a linked worktree or submodule)
// in dir or one of its parents, or GIT_DIR or GIT_WORK_TREE in the
// environment. False means git would say "not a git repository" (a bare
// repository, which has no work tree, is left to the walk either way).
func gitMarkerAbove(dir string, getenv func(string) string, exists func(string) bool) bool {
	if getenv("GIT_DIR") != "" || getenv("GIT_WORK_TREE") != "" {
		return true
	}
	for d := filepath.Clean(dir); ; {
		if exists(filepath.Join(d, ".git")) {
			return true
		}
		parent := filepath.Dir(d)
		if parent == d {
			return false
		}
		d = parent
	}
}

// atTheTop reports whether dir is, without asking git, the top of its work
// tree: it holds a .git directory whose config sets no core.worktree (the
// word anywhere in it is enough to ask git), and no GIT_DIR or
// GIT_WORK_TREE points elsewhere. A linked worktree's or a submodule's .git
// file is left to git.
func atTheTop(dir string, getenv func(string) string) bool {
	if getenv("GIT_DIR") != "" || getenv("GIT_WORK_TREE") != "" {
		return false
	}
	gitDir := filepath.Join(dir, ".git")
	if fi, err := os.Lstat(gitDir); err != nil || !fi.IsDir() {
		return false
	}
	config, err := regularfile.ReadFile(filepath.Join(gitDir, "config"), 1<<20, regularfile.NoFollowLink)
	return err == nil && !bytes.Contains(bytes.ToLower(config), []byte("worktree"))
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
