//go:build unix

package sessionstore

import (
	"io/fs"
	"strings"
	"syscall"
	"testing"
)

type fakeFileInfo struct {
	fs.FileInfo
	mode fs.FileMode
	uid  uint32
}

func (f fakeFileInfo) Mode() fs.FileMode { return f.mode }
func (f fakeFileInfo) Sys() any          { return &syscall.Stat_t{Uid: f.uid} }

func TestRecordForeign(t *testing.T) {
	for _, tc := range []struct {
		mode fs.FileMode
		uid  uint32
		want string // "" for the user's own
	}{
		{0o600, 1000, ""},
		{0o644, 1000, ""},
		{0o400, 1000, ""},
		{0o620, 1000, "writable by group or others"},
		{0o602, 1000, "writable by group or others"},
		{0o600, 1001, "owned by uid 1001"},
		{0o600, 0, "owned by uid 0"},
	} {
		got := foreignOwner(fakeFileInfo{mode: tc.mode, uid: tc.uid}, 1000)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("mode %v uid %d: %q, want %q", tc.mode, tc.uid, got, tc.want)
		}
	}
}
