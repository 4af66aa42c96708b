//go:build unix

package mcp

import (
	"fmt"
	"os"
	"syscall"
)

// checkPrivateDir checks that dir, the relay socket's directory, is a
// directory of this user that no one else may enter: the relay sends the
// session's token to the socket, so it must be the agent's.
func checkPrivateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	case fi.Mode().Perm()&0o077 != 0:
		return fmt.Errorf("%s is open to other users (mode %v)", dir, fi.Mode().Perm())
	case ok && int(st.Uid) != os.Getuid():
		return fmt.Errorf("%s belongs to another user", dir)
	}
	return nil
}
