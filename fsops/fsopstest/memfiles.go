// Package fsopstest provides an in-memory fsops.Files for tests: files and
// directories in a map, with errors injectable per path and operation.
package fsopstest

import (
	"context"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"sync"

	"github.com/codexacp/codexacp/fsops"
)

// MemFiles is an in-memory fsops.Files. The root directory "/" always
// exists; Set and Mkdir create missing parent directories. It is safe for
// concurrent use.
type MemFiles struct {
	mu       sync.Mutex
	files    map[string][]byte
	dirs     map[string]bool
	readErr  map[string]error
	writeErr map[string]error
	statErr  map[string]error
	mkdirErr map[string]error
	links    map[string]string // symlink path → target
	writes   int
}

var (
	_ fsops.Files    = (*MemFiles)(nil)
	_ fsops.DirMaker = (*MemFiles)(nil)
)

// NewMemFiles returns an empty file system holding only "/".
func NewMemFiles() *MemFiles {
	return &MemFiles{
		files:    make(map[string][]byte),
		dirs:     map[string]bool{"/": true},
		readErr:  make(map[string]error),
		writeErr: make(map[string]error),
		statErr:  make(map[string]error),
		mkdirErr: make(map[string]error),
		links:    make(map[string]string),
	}
}

// Set creates or replaces the file at path with content, creating its
// parent directories.
func (m *MemFiles) Set(path, content string) { m.SetBytes(path, []byte(content)) }

// SetBytes is Set for raw bytes.
func (m *MemFiles) SetBytes(path string, content []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	path = filepath.Clean(path)
	m.mkdirAll(filepath.Dir(path))
	m.files[path] = slices.Clone(content)
}

// Get returns the content of the file at path and whether it exists.
func (m *MemFiles) Get(path string) (string, bool) {
	b, ok := m.GetBytes(path)
	return string(b), ok
}

// GetBytes is Get for raw bytes.
func (m *MemFiles) GetBytes(path string) ([]byte, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.files[filepath.Clean(path)]
	return slices.Clone(b), ok
}

// Mkdir creates the directory path and its parents.
func (m *MemFiles) Mkdir(path string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mkdirAll(filepath.Clean(path))
}

// Remove deletes the file or (empty or not) directory at path.
func (m *MemFiles) Remove(path string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	path = filepath.Clean(path)
	delete(m.files, path)
	delete(m.dirs, path)
}

// Paths returns the paths of all files, sorted.
func (m *MemFiles) Paths() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Sorted(maps.Keys(m.files))
}

// FailRead makes ReadFile of path return err (nil clears it).
func (m *MemFiles) FailRead(path string, err error) { m.inject(m.readErr, path, err) }

// FailWrite makes WriteFile of path return err (nil clears it).
func (m *MemFiles) FailWrite(path string, err error) { m.inject(m.writeErr, path, err) }

// FailStat makes Stat of path return err (nil clears it).
func (m *MemFiles) FailStat(path string, err error) { m.inject(m.statErr, path, err) }

// FailMkdir makes MkdirAll fail with err when it would create the
// directory path (nil clears it).
func (m *MemFiles) FailMkdir(path string, err error) { m.inject(m.mkdirErr, path, err) }

// Writes returns the number of successful WriteFile calls so far.
func (m *MemFiles) Writes() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.writes
}

func (m *MemFiles) inject(table map[string]error, path string, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	path = filepath.Clean(path)
	if err == nil {
		delete(table, path)
		return
	}
	table[path] = err
}

func (m *MemFiles) mkdirAll(dir string) {
	for ; !m.dirs[dir]; dir = filepath.Dir(dir) {
		m.dirs[dir] = true
	}
}

// ReadFile implements fsops.Files.
func (m *MemFiles) ReadFile(ctx context.Context, path string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.readErr[path]; err != nil {
		return nil, err
	}
	if m.dirs[path] {
		return nil, fsops.IsDirectoryError(path, nil)
	}
	b, ok := m.files[path]
	if !ok {
		return nil, fsops.NotFoundError(path, fs.ErrNotExist)
	}
	return slices.Clone(b), nil
}

// WriteFile implements fsops.Files.
func (m *MemFiles) WriteFile(ctx context.Context, path string, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.writeErr[path]; err != nil {
		return err
	}
	if m.dirs[path] {
		return fsops.IsDirectoryError(path, nil)
	}
	if parent := filepath.Dir(path); !m.dirs[parent] {
		return fsops.ParentNotFoundError(parent, fs.ErrNotExist)
	}
	m.files[path] = slices.Clone(data)
	m.writes++
	return nil
}

// MkdirAll implements fsops.DirMaker: it creates dir and its missing
// parents. MemFiles has no workspace, so it creates them anywhere; a file
// where a directory should be, or an error injected with FailMkdir for a
// directory it would create, fails before anything is created.
func (m *MemFiles) MkdirAll(ctx context.Context, dir string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	dir = filepath.Clean(dir)
	for d := dir; !m.dirs[d]; d = filepath.Dir(d) {
		if _, isFile := m.files[d]; isFile {
			return fsops.ParentNotFoundError(d, nil)
		}
		if err := m.mkdirErr[d]; err != nil {
			return err
		}
	}
	m.mkdirAll(dir)
	return nil
}

// Symlink makes link a symbolic link to target (both absolute): Resolve
// leads link to target. Only whole paths are links (not directories in them).
func (m *MemFiles) Symlink(link, target string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.links[filepath.Clean(link)] = filepath.Clean(target)
}

// Resolve implements fsops.Files: a link leads to its target; a link whose
// target does not exist is refused, as on disk.
func (m *MemFiles) Resolve(ctx context.Context, path string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	path = filepath.Clean(path)
	target, ok := m.links[path]
	if !ok {
		return path, nil
	}
	if _, isFile := m.files[target]; !isFile && !m.dirs[target] {
		return "", fsops.DanglingLinkError(path, fs.ErrNotExist)
	}
	return target, nil
}

// Stat implements fsops.Files.
func (m *MemFiles) Stat(ctx context.Context, path string) (fsops.FileInfo, error) {
	if err := ctx.Err(); err != nil {
		return fsops.FileInfo{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.statErr[path]; err != nil {
		return fsops.FileInfo{}, err
	}
	if m.dirs[path] {
		return fsops.FileInfo{Exists: true, IsDir: true}, nil
	}
	_, ok := m.files[path]
	return fsops.FileInfo{Exists: ok}, nil
}
