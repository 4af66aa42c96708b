package shelledits

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sandboxMounts are the directories codex's sandbox (codex 0.171,
// workspace-write) makes in the workspace root around every command, and
// removes after.
var sandboxMounts = []string{".codex", ".agents", ".aws"}

// benchFiles is the size of the generated workspaces.
const benchFiles = 10000

// genWS writes n small Go files in 100 directories of 10 subdirectories.
func genWS(b *testing.B, n int) ws {
	w := ws{b, b.TempDir()}
	body := strings.Repeat("// a line of the generated file\n", 20)
	for i := range n {
		w.write(fmt.Sprintf("d%03d/s%d/f%05d.go", i/100, i/10%10, i), "package p\n\n"+body+fmt.Sprintf("var v = %d\n", i))
	}
	return w
}

// BenchmarkShellEdits measures what a command costs in a generated
// workspace of 10,000 files (about 700 bytes each): Baseline, taken once
// per turn (start-ns/op: what Start costs its caller, the baseline itself
// running behind it), and Scan, run after each command, with one file
// edited by the command (`edit`) or none (`none`). In git the workspace is
// committed, with 20 of its files modified before (dirty). `watched` is the
// tracker with its directories watched for changes (inotify, Linux),
// `whole` compares whole roots on every scan (as before, and elsewhere).
// `scan-sandbox` is scan-none after a command run in codex's sandbox,
// which makes and removes its mount points in the root.
// `baseline-again` is the next turn's baseline on the same tracker, with
// one file saved in between: moved on where the root is watched.
func BenchmarkShellEdits(b *testing.B) {
	needGit(b)
	gitW := genWS(b, benchFiles)
	gitW.git("init", "-q", ".")
	gitW.git("add", ".")
	gitW.git("commit", "-q", "-m", "generated")
	for i := range 20 {
		gitW.write(fmt.Sprintf("d%03d/s0/f%05d.go", i, i*100), "package p // dirty\n")
	}
	plainW := genWS(b, benchFiles)
	ctx := context.Background()
	for _, c := range []struct {
		name string
		w    ws
	}{{"git", gitW}, {"plain", plainW}} {
		for _, notify := range notifyModes() {
			name := c.name + notifyName(notify)
			target := filepath.Join("d050", "s5", "f05050.go")
			b.Run(name+"/baseline", func(b *testing.B) {
				// Taken with Start and Wait: start-ns/op is what Start
				// costs its caller, the rest runs behind it.
				// A new tracker each time: on the same one, Start would
				// move the baseline on (baseline-again).
				setNotify(b, notify)
				var start time.Duration
				for b.Loop() {
					tr := New([]string{c.w.dir}, Limits{})
					t0 := time.Now()
					tr.Start(ctx)
					start += time.Since(t0)
					if err := tr.Wait(); err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					tr.Close()
					b.StartTimer()
				}
				b.ReportMetric(float64(start.Nanoseconds())/float64(b.N), "start-ns/op")
			})
			b.Run(name+"/first-turn", func(b *testing.B) {
				// A session's first turn (acp): its tracker was made at
				// session/new, which started a baseline; the turn's first
				// event Starts it again, here while that baseline is still
				// being taken (a prompt right after session/new, or a
				// text turn shorter than the baseline before the shell
				// turn). start-ns/op is what the turn's event waits for
				// (before 2026-11-28 the whole earlier baseline); ns/op
				// is until the turn's baseline is there.
				setNotify(b, notify)
				var start time.Duration
				for b.Loop() {
					b.StopTimer()
					tr := New([]string{c.w.dir}, Limits{})
					tr.Start(ctx) // session/new's
					b.StartTimer()
					t0 := time.Now()
					tr.Start(ctx) // the first turn's
					start += time.Since(t0)
					if err := tr.Wait(); err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					tr.Close()
					b.StartTimer()
				}
				b.ReportMetric(float64(start.Nanoseconds())/float64(b.N), "start-ns/op")
			})
			b.Run(name+"/baseline-again", func(b *testing.B) {
				// The next turn's Start, one file saved in between: where
				// the root is watched, the baseline is moved on.
				setNotify(b, notify)
				tr := New([]string{c.w.dir}, Limits{})
				defer tr.Close()
				if err := tr.Baseline(ctx); err != nil {
					b.Fatal(err)
				}
				i := 0
				for b.Loop() {
					i++
					c.w.replace(target, fmt.Sprintf("package p\n\nvar v = %d // saved\n", i))
					tr.Start(ctx)
					if err := tr.Wait(); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(name+"/scan-sandbox", func(b *testing.B) {
				// A command that changed nothing, run in codex's sandbox:
				// it made its mount points in the root and removed them.
				setNotify(b, notify)
				tr := New([]string{c.w.dir}, Limits{})
				defer tr.Close()
				if err := tr.Baseline(ctx); err != nil {
					b.Fatal(err)
				}
				for b.Loop() {
					b.StopTimer()
					for _, d := range sandboxMounts {
						if err := os.Mkdir(filepath.Join(c.w.dir, d), 0o755); err != nil {
							b.Fatal(err)
						}
					}
					for _, d := range sandboxMounts {
						if err := os.Remove(filepath.Join(c.w.dir, d)); err != nil {
							b.Fatal(err)
						}
					}
					b.StartTimer()
					rep, err := tr.Scan(ctx)
					if err != nil {
						b.Fatal(err)
					}
					if !rep.Empty() {
						b.Fatalf("changes = %d", len(rep.Changes))
					}
				}
			})
			for _, edit := range []bool{false, true} {
				scan := "/scan-none"
				if edit {
					scan = "/scan-edit"
				}
				b.Run(name+scan, func(b *testing.B) {
					setNotify(b, notify)
					tr := New([]string{c.w.dir}, Limits{})
					defer tr.Close()
					if err := tr.Baseline(ctx); err != nil {
						b.Fatal(err)
					}
					i := 0
					for b.Loop() {
						if edit {
							i++
							c.w.replace(target, fmt.Sprintf("package p\n\nvar v = %d\n", i))
						}
						rep, err := tr.Scan(ctx)
						if err != nil {
							b.Fatal(err)
						}
						if got := len(rep.Changes); edit && got != 1 || !edit && got != 0 {
							b.Fatalf("changes = %d", got)
						}
					}
				})
			}
		}
	}
}
