//go:build linux || darwin

package shelledits

import "syscall"

func mkfifo(w ws, rel string) {
	w.t.Helper()
	if err := syscall.Mkfifo(w.path(rel), 0o644); err != nil {
		w.t.Skip("no FIFOs here:", err)
	}
}

// mksocket leaves a bound Unix socket at rel.
func mksocket(w ws, rel string) {
	w.t.Helper()
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		w.t.Skip("no Unix sockets here:", err)
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: w.path(rel)}); err != nil {
		w.t.Skip("no Unix sockets here:", err)
	}
}

func mkfifoQuiet(p string) { syscall.Mkfifo(p, 0o644) }

func mksocketQuiet(p string) {
	if fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0); err == nil {
		syscall.Bind(fd, &syscall.SockaddrUnix{Name: p})
		syscall.Close(fd)
	}
}
