package shelledits

import (
	"io/fs"
	"syscall"
)

func sysStat(fi fs.FileInfo) (ino uint64, ctime int64) {
	if s, ok := fi.Sys().(*syscall.Stat_t); ok {
		return s.Ino, s.Ctimespec.Nano()
	}
	return 0, 0
}
