//go:build !linux

package replay

// memoryTempDir is "" where there is no /dev/shm: replays use the
// temporary directory.
func memoryTempDir() string { return "" }
