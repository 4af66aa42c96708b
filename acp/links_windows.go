package acp

import (
	"io/fs"
	"os"
	"syscall"
)

// linkCount is the number of names (hard links) of the open file f (NTFS
// has them too; os.Stat does not report them); 0 when unknown.
func linkCount(f *os.File, _ fs.FileInfo) int {
	if f == nil {
		return 0
	}
	var d syscall.ByHandleFileInformation
	if err := syscall.GetFileInformationByHandle(syscall.Handle(f.Fd()), &d); err != nil {
		return 0
	}
	return int(d.NumberOfLinks)
}
