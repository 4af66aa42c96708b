//go:build unix

package record

import (
	"io/fs"
	"syscall"
)

// links is the number of names (hard links) of the file fi describes.
func links(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
