//go:build unix

package images

import (
	"io/fs"
	"os"
	"syscall"
)

// ownedByUs reports whether this user owns the file: another user's
// directory in a shared /tmp is theirs to clean.
func ownedByUs(info fs.FileInfo) bool {
	st, ok := info.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
