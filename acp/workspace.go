package acp

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/codex"
	"github.com/codexacp/codexacp/fsops"
	"github.com/codexacp/codexacp/internal/regularfile"
)

// Where a session may write, judged on resolved locations (fsops resolves
// every tool path before it gets here): the workspace roots, and inside
// them the directories codex's own sandbox keeps read-only.

// protectedNames are the directories codex's workspace-write sandbox
// keeps read-only directly under each writable root
// (docs/codex.md#pinned-codex-facts: .git, .codex, .agents and .aws; codex-rs
// PROTECTED_METADATA_PATH_NAMES). A git hook or config, a codex config or an
// agent skill written there would run or steer commands outside any
// sandbox. Our tools bypass that sandbox, so in auto mode a write there asks.
// We protect these names at any depth below a root (a nested repository's
// .git is as dangerous), which is stricter than codex.
var protectedNames = []string{".git", ".codex", ".agents", ".aws"}

// roots are the workspace directories: cwd and the additional directories.
func (s *session) roots() []string {
	return append([]string{s.cwd}, s.dirs...)
}

// realRoots are the roots with symlinks resolved.
func (s *session) realRoots() []string {
	roots := s.roots()
	for i, r := range roots {
		if real, err := fsops.ResolvePath(r); err == nil {
			roots[i] = real
		}
	}
	return roots
}

// inWorkspace reports whether the resolved path lies inside a workspace root.
func (s *session) inWorkspace(path string) bool {
	return slices.ContainsFunc(s.realRoots(), func(root string) bool { return fsops.Within(root, path) })
}

// protectedDir returns the protected directory the resolved path lies in
// (or is), or "" if none: a protected name below a root, or codex's home
// when it lies below a root (under any name). Git directories are recognised by what they are,
// whatever their name: a directory holding HEAD, objects and refs, and the
// directory a root's .git file points to (worktrees, submodules,
// `git init --separate-git-dir`).
func (s *session) protectedDir(path string) string {
	roots := s.realRoots()
	for _, root := range roots {
		if gitdir := gitdirOf(root); gitdir != "" && fsops.Within(gitdir, path) {
			return gitdir
		}
	}
	if home := codexHome(); home != "" && fsops.Within(home, path) {
		for _, root := range roots {
			if fsops.Within(root, home) && root != home {
				return home
			}
		}
	}
	for _, root := range roots {
		if !fsops.Within(root, path) || root == path {
			continue
		}
		// Only components below the root count: a workspace that itself
		// lies under a .codex or .git directory is the user's choice.
		rel, _ := filepath.Rel(root, path)
		dir := root
		for _, part := range strings.Split(rel, string(filepath.Separator)) {
			dir = filepath.Join(dir, part)
			if slices.Contains(protectedNames, part) || isGitDir(dir) {
				return dir
			}
		}
	}
	return ""
}

// codexHome is codex's home resolved ($CODEX_HOME, else ~/.codex), or ""
// when it cannot be. Its config, credentials and skills steer codex as
// .codex does, whatever its name.
func codexHome() string {
	home, err := codex.Home()
	if err != nil || !filepath.IsAbs(home) {
		return ""
	}
	real, err := fsops.ResolvePath(home)
	if err != nil {
		return ""
	}
	return real
}

// isGitDir reports whether dir looks like a git directory to git itself: a
// HEAD file and objects and refs directories.
func isGitDir(dir string) bool {
	head, err := os.Stat(filepath.Join(dir, "HEAD"))
	if err != nil || !head.Mode().IsRegular() {
		return false
	}
	for _, sub := range []string{"objects", "refs"} {
		if fi, err := os.Stat(filepath.Join(dir, sub)); err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}

// gitdirOf returns the resolved git directory a root's .git file points to
// ("gitdir: PATH", relative to the root), or "". The file is read as a
// regular file of at most 4 KiB, without blocking: a FIFO or device there
// (which the model's shell can make) is no pointer.
func gitdirOf(root string) string {
	b, err := regularfile.ReadFile(filepath.Join(root, ".git"), 4096, regularfile.FollowLink)
	if err != nil {
		return "" // a directory, missing, too large, not a regular file
	}
	target, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return ""
	}
	target = strings.TrimSpace(target)
	if !filepath.IsAbs(target) {
		target = filepath.Join(root, target)
	}
	real, err := fsops.ResolvePath(target)
	if err != nil {
		return ""
	}
	return real
}

var errReadOnly = errors.New("the session is read-only")

// writeAllowed applies the session's mode and workspace to a resolved path:
// nil, or the refusal to give the model. It runs when the change is
// computed (BeforeWrite) and again immediately before the write.
func (s *session) writeAllowed(path string) error {
	mode := s.toolMode()
	switch {
	case mode == backend.ModeReadOnly && s.planning():
		return denied(path, "The session is in plan mode: nothing is edited until the user approves the plan. Put the change in your proposed plan instead.", errReadOnly)
	case mode == backend.ModeReadOnly:
		return denied(path, "The session is in read-only mode: files cannot be changed. Tell the user what you would change instead.", errReadOnly)
	case mode != backend.ModeFullAccess && !s.inWorkspace(path):
		return denied(path, fmt.Sprintf("The path is outside the workspace (%s); only files inside it can be changed in %s mode.",
			strings.Join(s.roots(), ", "), mode), nil)
	}
	return nil
}

// checkWrite is the last check before a write leaves the agent: the mode
// and workspace must still allow it, and the path must still lead to
// itself (no link swapped in since it was resolved and judged). The path
// is looked at last: the shorter the time from there to the write, the
// smaller the window for an editor that follows links.
func (s *session) checkWrite(path string) error {
	if err := s.writeAllowed(path); err != nil {
		return err
	}
	real, err := fsops.ResolvePath(path)
	if err != nil {
		return err
	}
	if real != path {
		return fsops.ChangedPathError(path, fmt.Errorf("%s now leads to %s", path, real))
	}
	return nil
}

// denied is the -32002 "Permission denied: {path}" refusal with a hint.
func denied(path, hint string, cause error) *fsops.Error {
	return &fsops.Error{Code: fsops.CodePermission, Message: "Permission denied: " + path, Hint: hint, Err: cause}
}
