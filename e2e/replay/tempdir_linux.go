package replay

import (
	"os"
	"syscall"
)

// memoryTempDir is where a replay keeps its files when the environment
// names no temporary directory: /dev/shm when it is a memory file system
// ("" otherwise). A replay creates and removes some fifty files and
// directories (its workspace, the agent's state, codex's home); on an
// ext4 disk mounted with discard, removing one such tree took ~10 ms of
// kernel time and creating it a few more, a third of a corpus replay's
// system time; on tmpfs well under a millisecond.
func memoryTempDir() string {
	const shm, tmpfsMagic = "/dev/shm", 0x01021994
	if os.Getenv("TMPDIR") != "" {
		return ""
	}
	var st syscall.Statfs_t
	if syscall.Statfs(shm, &st) != nil || st.Type != tmpfsMagic || syscall.Access(shm, 2 /* W_OK */) != nil {
		return ""
	}
	return shm
}
