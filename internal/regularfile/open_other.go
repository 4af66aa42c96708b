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

// OpenDir opens a directory to read its entries: on Windows a directory
// open does not block.
func OpenDir(dir string) (*os.File, error) { return os.Open(dir) }
