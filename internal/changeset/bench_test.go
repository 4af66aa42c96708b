package changeset

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkEndTurn is what a turn's end costs a session whose log is
// full (50 turns of 20 files, 4 KiB each before): encoding and storing the
// index, pruning the blobs. Each iteration is a turn of 20 new files.
func BenchmarkEndTurn(b *testing.B) {
	for _, store := range []string{"dir", "mem"} {
		b.Run(store, func(b *testing.B) {
			var st Storage = NewMemStorage()
			if store == "dir" {
				st = NewDir(filepath.Join(b.TempDir(), "s"+DirSuffix), Limits{}, 0)
			}
			l, err := Open(st, Limits{})
			if err != nil {
				b.Fatal(err)
			}
			content := []byte(strings.Repeat("x", 4<<10))
			turn := func(i int) {
				l.BeginTurn(fmt.Sprintf("t%d", i))
				for f := range 20 {
					before := append([]byte(fmt.Sprintf("%d/%d ", i, f)), content...)
					l.RecordSnapshot(fmt.Sprintf("/work/project/src/pkg%d/file%d.go", f, i), Content(before), Content(content))
				}
				if err := l.EndTurn(); err != nil {
					b.Fatal(err)
				}
			}
			for i := range 50 {
				turn(i)
			}
			b.ResetTimer()
			for i := range b.N {
				turn(50 + i)
			}
		})
	}
}
