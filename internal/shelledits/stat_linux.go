package shelledits

import (
	"syscall"

	"golang.org/x/sys/unix"
)

func fromSyscall(s *syscall.Stat_t) fileStat {
	return fileStat{size: s.Size, mtime: s.Mtim.Nano(), mode: uint32(s.Mode), sys: sysStat{ctime: s.Ctim.Nano(), ino: s.Ino}}
}

func fromUnix(s *unix.Stat_t) fileStat {
	return fileStat{size: s.Size, mtime: s.Mtim.Nano(), mode: uint32(s.Mode), sys: sysStat{ctime: s.Ctim.Nano(), ino: s.Ino}}
}
