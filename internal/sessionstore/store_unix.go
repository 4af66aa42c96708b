//go:build unix

package sessionstore

import (
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"syscall"

	"github.com/codexacp/codexacp/internal/regularfile"
)

// recordForeign says why a record's file may hold what someone else wrote
// ("" when it is the user's alone): owned by another user than the agent's,
// or writable by group or others. Records codexacp writes are 0600 files of
// the agent's user in a 0700 directory.
func recordForeign(fi fs.FileInfo) string {
	return foreignOwner(fi, os.Geteuid())
}

func foreignOwner(fi fs.FileInfo, uid int) string {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != uid {
		return fmt.Sprintf("owned by uid %d, not by the agent's user (uid %d)", st.Uid, uid)
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Sprintf("writable by group or others (mode %#o)", perm)
	}
	return ""
}

// readDir lists a directory (regularfile.OpenDir), in name order as
// os.ReadDir does.
func readDir(dir string) ([]os.DirEntry, error) {
	f, err := regularfile.OpenDir(dir, regularfile.FollowLink)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	slices.SortFunc(entries, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, err
}
