package shelledits

import (
	"context"
	"errors"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/codexacp/codexacp/internal/recovery"
	"github.com/codexacp/codexacp/internal/regularfile"
)

// skippedDirs are directories a walk does not enter: version control
// internals, and the dependency and cache trees that .gitignore files
// usually leave out.
var skippedDirs = []string{".git", ".hg", ".svn", ".jj", "node_modules", "__pycache__", ".venv"}

// skippedPath reports whether a path below a walked root lies in a
// directory the walk does not enter.
func skippedPath(rel string) bool {
	parts := strings.Split(rel, "/")
	return slices.ContainsFunc(parts[:len(parts)-1], func(p string) bool { return slices.Contains(skippedDirs, p) }) ||
		parts[len(parts)-1] == ".git"
}

// listDir is readDir; tests change the tree between a directory's listing
// in its parent and its own.
var listDir = readDir

// listFunc is listDir's type.
type listFunc = func(dir string, dev uint64, follow regularfile.Follow) (files []string, stats []fileStat, subdirs []string, err error)

// walk lists the regular files below root, breadth first (so a limit
// leaves out the deepest), at most max of them: partial says some were
// left out. Symlinks are not followed, nor mount points (a workspace at /
// does not reach into /proc). The directories of a level are read by a
// few goroutines at once (the work is system calls); the result does not
// depend on their timing. With a notifier, each directory is watched before
// it is read.
func walk(ctx context.Context, list listFunc, root string, max int, n *notifier) (files map[string]fileStat, partial bool, err error) {
	dev := deviceOf(root)
	files = map[string]fileStat{}
	level := []string{""}
	workers := min(4, runtime.GOMAXPROCS(0))
	for len(level) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		type listing struct {
			names   []string
			stats   []fileStat
			subdirs []string
		}
		lists := make([]listing, len(level))
		var next atomic.Int64
		var wg sync.WaitGroup
		panics := make([]error, min(workers, len(level)))
		for w := range panics {
			wg.Go(func() {
				// A bug here is this walk's error, not the agent's end.
				defer recovery.Recover(nil, "shell-edits walk", &panics[w])
				for i := int(next.Add(1) - 1); i < len(level) && ctx.Err() == nil; i = int(next.Add(1) - 1) {
					l := &lists[i]
					follow := regularfile.NoFollowLink
					if level[i] == "" {
						follow = regularfile.FollowLink // the root, as given (its links resolved)
					}
					abs := filepath.Join(root, filepath.FromSlash(level[i]))
					if n != nil {
						n.watch(abs, level[i])
					}
					l.names, l.stats, l.subdirs, _ = list(abs, dev, follow)
				}
			})
		}
		wg.Wait()
		if err := errors.Join(panics...); err != nil {
			return nil, false, err
		}
		var deeper []string
		for i, dir := range level {
			l := lists[i]
			for j, name := range l.names {
				if name == ".git" {
					continue // a worktree's or submodule's pointer
				}
				if len(files) >= max {
					return files, true, nil
				}
				files[path.Join(dir, name)] = l.stats[j]
			}
			for _, name := range l.subdirs {
				if !slices.Contains(skippedDirs, name) {
					deeper = append(deeper, path.Join(dir, name))
				}
			}
		}
		level = deeper
	}
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	return files, false, nil
}
