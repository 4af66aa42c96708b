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
// (internal/shelledits): its texts, or a binary file's contents
// (OldBytes, NewBytes). A file reported without its content before (large,
// not kept by the baseline, past the report's budget) is recorded as
// changed but cannot be restored. Report.More's files, named without their
// texts, go through RecordUnseen.
func (l *Log) RecordShellEdit(c shelledits.Change) error {
	old, new := c.Old, c.New
	switch c.Omitted {
	case shelledits.OmitNone:
		old, new = nonNil(old), nonNil(new) // an empty text is a content
	case shelledits.OmitBinary:
		old, new = c.OldBytes, c.NewBytes
	default:
		old, new = nil, nil
	}
	var before, after Snapshot
	switch {
	case c.Op == shelledits.Created:
		before = Gone()
	case old != nil:
		before = Content(old)
	default:
		before = Unseen(c.OldSize)
	}
	switch {
	case c.Op == shelledits.Deleted:
		after = Gone()
	case new != nil:
		after = Content(new)
	default:
		after = Unseen(c.NewSize)
	}
	return l.RecordSnapshot(c.Path, before, after)
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
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
