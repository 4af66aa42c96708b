package shelledits

import (
	"io/fs"
	"syscall"
)

func sysStat(fi fs.FileInfo) (ino uint64, ctime int64, dev uint64) {
	if s, ok := fi.Sys().(*syscall.Stat_t); ok {
		return s.Ino, s.Ctimespec.Nano(), uint64(s.Dev)
	}
	return 0, 0, 0
}

// openFlags keep an open of a file that became a FIFO from blocking.
const openFlags = syscall.O_NONBLOCK
