//go:build !unix

package sessionstore

import (
	"io/fs"
	"os"
)

// recordForeign: Windows keeps owners and rights in ACLs, which a
// FileInfo does not show; the state directory under %LocalAppData% is the
// user's own (docs/platforms.md). Every record counts as the user's.
func recordForeign(fs.FileInfo) string { return "" }

// readDir: on Windows a directory open does not block.
func readDir(dir string) ([]os.DirEntry, error) { return os.ReadDir(dir) }
