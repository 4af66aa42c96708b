package images

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestImageSweep(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	old := now.Add(-staleImageDirAge - time.Hour)
	fresh := now.Add(-time.Hour)
	type entry struct {
		name     string
		dir      bool
		modified time.Time
		theirs   bool // owned by another user (as the injected owner check says)
		gone     bool // what the sweep must do
	}
	for _, tc := range []struct {
		name    string
		entries []entry
		stopped bool // the agent is exiting: the sweep stops
		removed int  // how many the sweep removes
	}{
		{name: "old ours removed", entries: []entry{{name: "codexacp-images-1", dir: true, modified: old, gone: true}}, removed: 1},
		{name: "fresh ours kept", entries: []entry{{name: "codexacp-images-2", dir: true, modified: fresh}}},
		{name: "other names kept", entries: []entry{
			{name: "codexacp-e2e-bin1", dir: true, modified: old},
			{name: "images-3", dir: true, modified: old},
		}},
		{name: "non-directory kept", entries: []entry{{name: "codexacp-images-4", modified: old}}},
		{name: "another user's kept", entries: []entry{{name: "codexacp-images-5", dir: true, modified: old, theirs: true}}},
		{name: "mixed", entries: []entry{
			{name: "codexacp-images-a", dir: true, modified: old, gone: true},
			{name: "codexacp-images-b", dir: true, modified: fresh},
			{name: "codexacp-images-c", dir: true, modified: old, gone: true},
			{name: "codexacp-images-d", modified: old},
			{name: "other", dir: true, modified: old},
		}, removed: 2},
		{name: "stopped", entries: []entry{{name: "codexacp-images-6", dir: true, modified: old}}, stopped: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			theirs := map[string]bool{}
			for _, e := range tc.entries {
				p := filepath.Join(root, e.name)
				if e.dir {
					if err := os.Mkdir(p, 0o700); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(filepath.Join(p, "image-1.png"), pngBytes(t), 0o600); err != nil {
						t.Fatal(err)
					}
				} else if err := os.WriteFile(p, nil, 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Chtimes(p, e.modified, e.modified); err != nil {
					t.Fatal(err)
				}
				theirs[e.name] = e.theirs
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.stopped {
				cancel()
			}
			s := &imageSweep{
				root:  root,
				now:   func() time.Time { return now },
				owned: func(info fs.FileInfo) bool { return !theirs[info.Name()] },
				max:   maxSweptEntries,
				log:   discardLogger(),
			}
			removed := s.run(ctx)
			if len(removed) != tc.removed {
				t.Errorf("removed %q, want %d", removed, tc.removed)
			}
			for _, e := range tc.entries {
				p := filepath.Join(root, e.name)
				_, err := os.Lstat(p)
				if gone := os.IsNotExist(err); gone != e.gone {
					t.Errorf("%s: gone %v, want %v (err %v)", e.name, gone, e.gone, err)
				}
				if gone := slices.Contains(removed, p); gone != e.gone {
					t.Errorf("%s: reported removed %v, want %v", e.name, gone, e.gone)
				}
			}
		})
	}
}

// TestImageSweepBounded: one start-up looks at no more than max entries of
// the temporary directory.
func TestImageSweepBounded(t *testing.T) {
	root := t.TempDir()
	old := time.Now().Add(-2 * staleImageDirAge)
	for _, name := range []string{"codexacp-images-1", "codexacp-images-2", "codexacp-images-3"} {
		p := filepath.Join(root, name)
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	s := &imageSweep{root: root, now: time.Now, owned: ownedByUs, max: 2, log: discardLogger()}
	if removed := s.run(context.Background()); len(removed) != 2 {
		t.Errorf("removed %q, want 2 of the 3", removed)
	}
	left, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 {
		t.Errorf("left %d entries, want 1", len(left))
	}
}

// TestOwnedByUs: the agent's own directories count as its own (on Unix, by
// uid), so the real owner check lets the sweep remove them.
func TestOwnedByUs(t *testing.T) {
	info, err := os.Lstat(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if !ownedByUs(info) {
		t.Error("a directory this process made is not owned by us")
	}
}

// TestSweepImageDirsStops: stop returns once the background sweep is done.
func TestSweepImageDirsStops(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir()) // not the machine's
	stop := Sweep(discardLogger())
	stop()
}
