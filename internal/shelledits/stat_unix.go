//go:build linux || darwin

package shelledits

import (
	"io/fs"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/codexacp/codexacp/internal/regularfile"
)

// sysStat is what stat adds here to tell a file's states apart: its change
// time and inode.
type sysStat struct {
	ctime int64 // nanoseconds
	ino   uint64
}

// statOf is the stat of a file as lstat or fstat gave it.
func statOf(fi fs.FileInfo) fileStat {
	if s, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fromSyscall(s)
	}
	return fileStat{size: fi.Size(), mtime: fi.ModTime().UnixNano(), mode: uint32(fi.Mode())}
}

// readDir lists a directory's regular files with their stats, and its
// subdirectories on device dev (on any device when dev is 0). Entries are
// stat'ed relative to the open directory: no path lookup per file. The
// open never blocks: a directory a process replaced by a FIFO since its
// parent was listed is refused, not waited on (no context reaches into
// open(2)), and a final symlink is followed only when follow says so.
func readDir(dir string, dev uint64, follow regularfile.Follow) (files []string, stats []fileStat, subdirs []string, err error) {
	f, err := regularfile.OpenDir(dir, follow)
	if err != nil {
		return nil, nil, nil, err
	}
	defer f.Close()
	ents, err := f.ReadDir(-1)
	if err != nil && len(ents) == 0 {
		return nil, nil, nil, err
	}
	fd := int(f.Fd())
	for _, de := range ents {
		t := de.Type()
		if !t.IsDir() && !t.IsRegular() {
			continue // symlinks, devices, FIFOs, sockets
		}
		if t.IsDir() && dev == 0 {
			subdirs = append(subdirs, de.Name())
			continue
		}
		var st unix.Stat_t
		if unix.Fstatat(fd, de.Name(), &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
			continue // gone
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			if uint64(st.Dev) == dev {
				subdirs = append(subdirs, de.Name())
			}
		case unix.S_IFREG:
			files = append(files, de.Name())
			stats = append(stats, fromUnix(&st))
		}
	}
	return files, stats, subdirs, nil
}

// deviceOf is the device a directory is on, or 0.
func deviceOf(path string) uint64 {
	var st unix.Stat_t
	if unix.Stat(path, &st) != nil {
		return 0
	}
	return uint64(st.Dev)
}
