package images

import (
	"context"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/codexacp/codexacp/internal/recovery"
	"github.com/codexacp/codexacp/internal/regularfile"
)

const (
	// imageDirPrefix names the private directories WriteFiles makes.
	imageDirPrefix = "codexacp-images-"
	// staleImageDirAge is how old a left-over image directory must be to be
	// removed at start-up: no turn of a running agent keeps its images
	// anywhere near that long (codex reads them when the turn starts), so a
	// directory that old is one a killed agent left behind.
	staleImageDirAge = 24 * time.Hour
	// maxSweptEntries bounds how many entries of the temporary directory one
	// start-up looks at: a huge /tmp costs a bounded read, and what is missed
	// goes at a later start-up.
	maxSweptEntries = 4096
)

// imageSweep removes the image directories killed agents left in root.
type imageSweep struct {
	root  string
	now   func() time.Time
	owned func(fs.FileInfo) bool // whether the directory is this user's
	max   int                    // entries of root looked at, at most
	log   *slog.Logger
}

// Sweep starts removing, in the background, the codexacp-images-*
// directories in the system's temporary directory that an agent killed
// mid-turn (SIGKILL) left behind: those older than a day, and on Unix only
// those owned by this user. It never delays start-up; stop cancels the sweep
// and returns once it has stopped.
func Sweep(log *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	s := &imageSweep{root: os.TempDir(), now: time.Now, owned: ownedByUs, max: maxSweptEntries, log: log}
	go func() {
		defer close(done)
		defer recovery.Recover(log, "image directory sweep", nil)
		s.run(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}

// run removes what it finds stale and returns the directories it removed.
func (s *imageSweep) run(ctx context.Context) []string {
	d, err := regularfile.OpenDir(s.root, regularfile.FollowLink) // a FIFO there would hold the agent's exit (stop waits)
	if err != nil {
		s.log.Debug("image directory sweep: cannot read the temporary directory", "dir", s.root, "err", err)
		return nil
	}
	entries, err := d.ReadDir(s.max) // directory order; at most s.max
	d.Close()
	if err != nil && len(entries) == 0 {
		s.log.Debug("image directory sweep: cannot read the temporary directory", "dir", s.root, "err", err)
		return nil
	}
	cutoff := s.now().Add(-staleImageDirAge)
	var removed []string
	for _, e := range entries {
		if ctx.Err() != nil {
			break
		}
		if !e.IsDir() || !strings.HasPrefix(e.Name(), imageDirPrefix) {
			continue
		}
		info, err := e.Info() // lstat: a symlink is not a directory
		if err != nil || !info.IsDir() || !info.ModTime().Before(cutoff) || !s.owned(info) {
			continue
		}
		path := filepath.Join(s.root, e.Name())
		if err := os.RemoveAll(path); err != nil {
			s.log.Warn("could not remove a stale image directory", "dir", path, "err", err)
			continue
		}
		s.log.Info("removed an image directory left by a killed agent", "dir", path, "modified", info.ModTime())
		removed = append(removed, path)
	}
	return removed
}
