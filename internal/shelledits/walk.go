package shelledits

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
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

// walk lists the regular files below root, breadth first (so a limit
// leaves out the deepest), at most max of them: partial says some were
// left out. Symlinks are not followed, nor mount points (a workspace at /
// does not reach into /proc). The directories are read in order; the
// files' stats are taken by a few goroutines at once (the work is system
// calls).
func walk(ctx context.Context, root string, max int) (files map[string]fileStat, partial bool, err error) {
	var dev uint64
	if fi, err := os.Lstat(root); err == nil {
		_, _, dev = sysStat(fi)
	}
	var rels []string
	queue := []string{""}
list:
	for len(queue) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		dir := queue[0]
		queue = queue[1:]
		ents, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(dir)))
		if err != nil {
			continue // unreadable, or gone
		}
		for _, de := range ents {
			rel := path.Join(dir, de.Name())
			switch t := de.Type(); {
			case t.IsDir():
				if slices.Contains(skippedDirs, de.Name()) {
					continue
				}
				if dev != 0 && !sameDevice(de, dev) {
					continue // another file system, or gone
				}
				queue = append(queue, rel)
			case t.IsRegular() && de.Name() != ".git": // a worktree's or submodule's pointer
				if len(rels) >= max {
					partial = true
					break list
				}
				rels = append(rels, rel)
			}
		}
	}
	stats := make([]fileStat, len(rels))
	kinds := make([]fileKind, len(rels))
	workers := min(4, runtime.GOMAXPROCS(0), len(rels)/256+1)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(rels); i += workers {
				if i%256 == w && ctx.Err() != nil {
					return
				}
				stats[i], kinds[i] = lstat(filepath.Join(root, filepath.FromSlash(rels[i])))
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	files = make(map[string]fileStat, len(rels))
	for i, rel := range rels {
		if kinds[i] == kindRegular {
			files[rel] = stats[i]
		}
	}
	return files, partial, nil
}

// sameDevice reports whether the directory entry is on device dev.
func sameDevice(de os.DirEntry, dev uint64) bool {
	fi, err := de.Info()
	if err != nil {
		return false
	}
	_, _, d := sysStat(fi)
	return d == dev
}
