package changeset

import (
	"context"
	"errors"

	"github.com/codexacp/codexacp/fsops"
	"github.com/codexacp/codexacp/internal/shelledits"
)

// RecordWrite records a file tool's write (fsops.Change: its old and new
// text; Old is nil for a created file).
func (l *Log) RecordWrite(c *fsops.Change) error {
	before := Content(c.Old)
	if c.Created {
		before = Gone()
	}
	return l.RecordSnapshot(c.Path, before, Content(c.New))
}

// RecordShellEdit records what a shell command changed
// (internal/shelledits): a file reported without its old text (binary,
// large, not kept by the baseline) is recorded as changed but cannot be
// restored. Report.More's files, named without their texts, go through
// RecordUnseen.
func (l *Log) RecordShellEdit(c shelledits.Change) error {
	var before, after Snapshot
	switch c.Op {
	case shelledits.Created:
		before = Gone()
	case shelledits.Modified, shelledits.Deleted:
		if c.Omitted == shelledits.OmitNone {
			before = Content(c.Old)
		} else {
			before = Unseen(c.OldSize)
		}
	}
	switch {
	case c.Op == shelledits.Deleted:
		after = Gone()
	case c.Omitted == shelledits.OmitNone:
		after = Content(c.New)
	default:
		after = Unseen(c.NewSize)
	}
	return l.RecordSnapshot(c.Path, before, after)
}

// RecordUnseen records that path changed, with neither text known.
func (l *Log) RecordUnseen(path string) error {
	return l.RecordSnapshot(path, Unseen(-1), Unseen(-1))
}

// FsopsFiles looks at files through a fsops.Files port (the editor's
// buffers, or the local disk): the content the file tools would read.
type FsopsFiles struct{ Files fsops.Files }

func (f FsopsFiles) Current(ctx context.Context, path string) (Version, error) {
	info, err := f.Files.Stat(ctx, path)
	if err != nil {
		return Version{}, err
	}
	if !info.Exists {
		return Missing, nil
	}
	if info.IsDir {
		return Version{}, errors.New("it is a directory")
	}
	b, err := f.Files.ReadFile(ctx, path)
	var fe *fsops.Error
	if errors.As(err, &fe) && fe.Code == fsops.CodeNotFound {
		return Missing, nil // gone since the Stat
	}
	if err != nil {
		return Version{}, err
	}
	return VersionOf(b), nil
}
