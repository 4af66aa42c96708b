package fsops

import "testing"

// testNotRegular: Windows has no FIFOs in the file system, and its devices
// (NUL, CON) are not paths under a directory.
func testNotRegular(t *testing.T, l *LocalFiles, dir string) {}
