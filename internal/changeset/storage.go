package changeset

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/codexacp/codexacp/internal/regularfile"
)

// MemStorage is a Storage in memory: a session without a state directory.
// Its blobs are the process's memory: give its Log Limits whose MaxBytes
// the process can hold for every session it serves.
type MemStorage struct {
	mu    sync.Mutex
	blobs map[string][]byte
	index []byte
}

// NewMemStorage returns an empty MemStorage.
func NewMemStorage() *MemStorage { return &MemStorage{blobs: map[string][]byte{}} }

func (m *MemStorage) PutBlob(hash string, content []byte) error {
	if !ValidHash(hash) {
		return fmt.Errorf("blob name %.70q is not a hash", hash)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.blobs[hash]; !ok {
		m.blobs[hash] = append([]byte(nil), content...)
	}
	return nil
}

func (m *MemStorage) Blob(hash string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.blobs[hash]
	if !ok {
		return nil, fmt.Errorf("blob %s: %w", hash, fs.ErrNotExist)
	}
	return b, nil
}

func (m *MemStorage) SaveIndex(index []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.index = append([]byte(nil), index...)
	return nil
}

func (m *MemStorage) Index() ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.index, nil
}

func (m *MemStorage) Prune(keep map[string]bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for h := range m.blobs {
		if !keep[h] {
			delete(m.blobs, h)
		}
	}
	return nil
}

// Blobs is the number of blobs kept (tests, measurements).
func (m *MemStorage) Blobs() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.blobs)
}

// DirSuffix ends the name of a session's Dir: <state>/sessions/<id>.undo,
// next to the session's record.
const DirSuffix = ".undo"

const (
	indexName = "index.json"
	blobsName = "blobs"
	// DefaultStoreMax bounds the Dirs of all sessions together (PruneStore).
	DefaultStoreMax = 256 << 20
)

// Dir is a Storage in a directory: index.json and blobs/<hash>, 0600 files
// in 0700 directories, each written to a temporary file and renamed into
// place. What it reads is data, not trust: regular files only, never a
// final link, never a FIFO waited on, within their bound (the index within
// Limits.MaxIndexBytes, a blob within MaxFileBytes; a blob's content is
// checked against its name by Log before use).
type Dir struct {
	path string
	lim  Limits
	// storeMax bounds the Dirs next to this one when it is created
	// (PruneStore); 0: not pruned.
	storeMax int64
}

// NewDir returns the Storage of the directory path (created when first
// written). When it is created, the Dirs next to it are pruned to
// storeMax bytes together (0: not pruned).
func NewDir(path string, lim Limits, storeMax int64) *Dir {
	return &Dir{path: path, lim: lim.withDefaults(), storeMax: storeMax}
}

// Path is the directory.
func (d *Dir) Path() string { return d.path }

// StoredFiles are the files of d that hold turns: the index and the blobs
// they keep (a recording of a session/load keeps them, so that its replay
// has the same turns to undo).
func (d *Dir) StoredFiles(turns []Turn) []string {
	files := []string{filepath.Join(d.path, indexName)}
	for h := range referenced(turns, nil) {
		files = append(files, filepath.Join(d.path, blobsName, h))
	}
	sort.Strings(files[1:])
	return files
}

// ensure makes the directory and its blobs directory, and checks that
// both are directories of their own: a link planted in either place
// would have the log written, and pruned, where it points.
func (d *Dir) ensure() error {
	if _, err := os.Lstat(d.path); errors.Is(err, fs.ErrNotExist) && d.storeMax > 0 {
		PruneStore(filepath.Dir(d.path), d.storeMax, d.path)
	}
	if err := os.MkdirAll(filepath.Join(d.path, blobsName), 0o700); err != nil {
		return err
	}
	if err := realDir(d.path); err != nil {
		return err
	}
	return realDir(filepath.Join(d.path, blobsName))
}

// realDir checks that p is a directory, not a link to one.
func realDir(p string) error {
	fi, err := os.Lstat(p)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s: %w (%s)", p, regularfile.ErrNotDir, regularfile.Kind(fi.Mode().Type()))
	}
	return nil
}

func (d *Dir) PutBlob(hash string, content []byte) error {
	if !ValidHash(hash) {
		return fmt.Errorf("blob name %.70q is not a hash", hash)
	}
	if err := d.ensure(); err != nil {
		return err
	}
	p := filepath.Join(d.path, blobsName, hash)
	if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && fi.Size() == int64(len(content)) {
		if b, err := d.Blob(hash); err == nil && HashOf(b) == hash {
			return nil // content-addressed: the same content is there
		}
	}
	return replaceFile(filepath.Join(d.path, blobsName), p, content)
}

func (d *Dir) Blob(hash string) ([]byte, error) {
	if !ValidHash(hash) {
		return nil, fmt.Errorf("blob name %.70q is not a hash", hash)
	}
	return regularfile.ReadFile(filepath.Join(d.path, blobsName, hash), d.lim.MaxFileBytes, regularfile.NoFollowLink)
}

func (d *Dir) SaveIndex(index []byte) error {
	if err := d.ensure(); err != nil {
		return err
	}
	return replaceFile(d.path, filepath.Join(d.path, indexName), index)
}

func (d *Dir) Index() ([]byte, error) {
	if err := realDir(d.path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	b, err := regularfile.ReadFile(filepath.Join(d.path, indexName), int64(d.lim.MaxIndexBytes), regularfile.NoFollowLink)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// Prune removes the blobs not kept, and anything else in the blobs
// directory (a temporary file a crash left).
func (d *Dir) Prune(keep map[string]bool) error {
	blobs := filepath.Join(d.path, blobsName)
	if err := realDir(d.path); errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	if err := realDir(blobs); errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	f, err := regularfile.OpenDir(blobs, regularfile.NoFollowLink)
	if err != nil {
		return err
	}
	entries, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return err
	}
	var first error
	for _, e := range entries {
		if keep[e.Name()] {
			continue
		}
		if err := os.RemoveAll(filepath.Join(blobs, e.Name())); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Remove removes the directory: the session is deleted. A link in its
// place is removed, not followed.
func (d *Dir) Remove() error { return os.RemoveAll(d.path) }

// CopyTo copies the directory to dst (a fork of the session): the index
// and the blobs, regular files within their bounds; anything else is left
// out. dst is replaced.
func (d *Dir) CopyTo(dst string) error {
	index, err := d.Index()
	if err != nil || index == nil {
		return err
	}
	to := NewDir(dst, d.lim, 0)
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	turns, err := DecodeIndex(index)
	if err != nil {
		return err
	}
	for h := range referenced(turns, nil) {
		b, err := d.Blob(h)
		if err != nil {
			continue // the undo of that file fails, naming the missing content
		}
		if err := to.PutBlob(h, b); err != nil {
			return err
		}
	}
	return to.SaveIndex(index)
}

// replaceFile writes p atomically: a temporary file in dir renamed over it.
func replaceFile(dir, p string, data []byte) error {
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), p)
}

// PruneStore removes the least recently written Dirs in parent (names
// ending in DirSuffix) while all of them together pass max bytes, never
// keep. Sessions whose Dir goes lose their undo, nothing else. A failure
// is no error: the Dirs stay.
func PruneStore(parent string, max int64, keep string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	type dir struct {
		path string
		size int64
		mod  time.Time
	}
	var dirs []dir
	var total int64
	for _, e := range entries {
		if !e.IsDir() || !strings.HasSuffix(e.Name(), DirSuffix) {
			continue
		}
		p := filepath.Join(parent, e.Name())
		d := dir{path: p}
		if fi, err := os.Lstat(filepath.Join(p, indexName)); err == nil {
			d.size, d.mod = fi.Size(), fi.ModTime()
		}
		blobs, _ := os.ReadDir(filepath.Join(p, blobsName))
		for _, b := range blobs {
			if fi, err := b.Info(); err == nil {
				d.size += fi.Size()
			}
		}
		dirs = append(dirs, d)
		total += d.size
	}
	sort.Slice(dirs, func(i, j int) bool { return dirs[i].mod.Before(dirs[j].mod) })
	for _, d := range dirs {
		if total <= max {
			break
		}
		if d.path == keep {
			continue
		}
		if os.RemoveAll(d.path) == nil {
			total -= d.size
		}
	}
}
