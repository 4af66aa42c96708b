package replay

import (
	"syscall"
	"testing"
)

// TestMemoryTempDir: a replay's files go to /dev/shm only when it is a
// memory file system and no temporary directory is named.
func TestMemoryTempDir(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	if d := memoryTempDir(); d != "" {
		t.Errorf("with TMPDIR set, memoryTempDir = %q, want \"\" (the named directory)", d)
	}
	t.Setenv("TMPDIR", "")
	var st syscall.Statfs_t
	tmpfs := syscall.Statfs("/dev/shm", &st) == nil && st.Type == 0x01021994
	if d := memoryTempDir(); (d != "") != tmpfs || tmpfs && d != "/dev/shm" {
		t.Errorf("memoryTempDir = %q; /dev/shm is tmpfs: %v", d, tmpfs)
	}
}
