//go:build unix

package acp

import (
	"io/fs"
	"os"
	"syscall"
)

// linkCount is the number of names (hard links) of the file fi describes;
// 0 when unknown.
func linkCount(_ *os.File, fi fs.FileInfo) int {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Nlink)
	}
	return 0
}
