//go:build !linux && !darwin

package shelledits

func mkfifo(w ws, rel string) {
	w.t.Helper()
	w.t.Skip("no FIFOs here")
}

func mksocket(w ws, rel string) {
	w.t.Helper()
	w.t.Skip("no Unix sockets here")
}

func mkfifoQuiet(string)   {}
func mksocketQuiet(string) {}
