package shelledits

import (
	"syscall"

	"golang.org/x/sys/unix"
)

func fromSyscall(s *syscall.Stat_t) fileStat {
	return fileStat{size: s.Size, mtime: s.Mtimespec.Nano(), ctime: s.Ctimespec.Nano(), ino: s.Ino, mode: uint32(s.Mode)}
}

func fromUnix(s *unix.Stat_t) fileStat {
	return fileStat{size: s.Size, mtime: s.Mtim.Nano(), ctime: s.Ctim.Nano(), ino: s.Ino, mode: uint32(s.Mode)}
}
