//go:build !unix

package regularfile

import (
	"fmt"
	"io/fs"
	"os"
)

// openNonBlocking: Windows has no FIFOs in the file system that an open
// could wait on; the final link is checked by Lstat before the open (a
// narrow window, where the Unix build has none).
func openNonBlocking(path string, flag int, perm fs.FileMode, follow Follow) (*os.File, error) {
	if follow == NoFollowLink {
		if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, fmt.Errorf("%s: %w", path, ErrSymlink)
		}
	}
	return os.OpenFile(path, flag, perm)
}

// openDir: the open cannot block here (see openNonBlocking); the stat of
// the opened file tells a directory from anything else.
func openDir(path string, follow Follow) (*os.File, error) {
	if follow == NoFollowLink {
		if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, fmt.Errorf("%s: %w", path, ErrSymlink)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.IsDir() {
		f.Close()
		return nil, &NotDirError{Path: path, Mode: fi.Mode().Type()}
	}
	return f, nil
}
