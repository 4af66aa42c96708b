//go:build !linux && !darwin

package shelledits

import (
	"io/fs"
	"os"
	"path/filepath"

	"github.com/codexacp/codexacp/internal/regularfile"
)

// sysStat is empty: no inode or change time here.
type sysStat struct{}

// statOf is the stat of a file: without an inode or change time here, size,
// modification time and mode tell its states apart.
func statOf(fi fs.FileInfo) fileStat {
	return fileStat{size: fi.Size(), mtime: fi.ModTime().UnixNano(), mode: uint32(fi.Mode()), sys: sysStat{}}
}

// readDir lists a directory's regular files with their stats, and its
// subdirectories (walks cross mount points here). The open never blocks
// and follows a final symlink only when follow says so (stat_unix.go).
func readDir(dir string, _ uint64, follow regularfile.Follow) (files []string, stats []fileStat, subdirs []string, err error) {
	f, err := regularfile.OpenDir(dir, follow)
	if err != nil {
		return nil, nil, nil, err
	}
	defer f.Close()
	ents, err := f.ReadDir(-1)
	if err != nil && len(ents) == 0 {
		return nil, nil, nil, err
	}
	for _, de := range ents {
		switch t := de.Type(); {
		case t.IsDir():
			subdirs = append(subdirs, de.Name())
		case t.IsRegular():
			if fi, err := os.Lstat(filepath.Join(dir, de.Name())); err == nil && fi.Mode().IsRegular() {
				files = append(files, de.Name())
				stats = append(stats, statOf(fi))
			}
		}
	}
	return files, stats, subdirs, nil
}

func deviceOf(string) uint64 { return 0 }
