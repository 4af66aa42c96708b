package changeset_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/codexacp/codexacp/fsops"
	"github.com/codexacp/codexacp/internal/changeset"
)

// A turn edits one file and creates another; /undo plans against the
// files as they are, asks before the removal, restores through a Writer
// and forgets the turn.
func Example() {
	dir, _ := os.MkdirTemp("", "changeset-example")
	defer os.RemoveAll(dir)
	config, notes := filepath.Join(dir, "config.toml"), filepath.Join(dir, "notes.txt")
	os.WriteFile(config, []byte("port = 8080\n"), 0o644)

	// The session's log, kept next to its record.
	log, _ := changeset.Open(changeset.NewDir(filepath.Join(dir, "sess_1.undo"), changeset.Limits{}, 0), changeset.Limits{})

	// A turn: a file tool's write and a shell command's new file.
	log.BeginTurn("t1")
	os.WriteFile(config, []byte("port = 3000\n"), 0o644)
	log.RecordWrite(&fsops.Change{Path: config, Old: []byte("port = 8080\n"), New: []byte("port = 3000\n")})
	os.WriteFile(notes, []byte("made by the shell\n"), 0o644)
	log.RecordSnapshot(notes, changeset.Gone(), changeset.Content([]byte("made by the shell\n")))
	log.EndTurn()

	// /undo: the plan, then the writes.
	files := changeset.FsopsFiles{Files: fsops.NewLocalFiles()}
	plan, _ := log.Plan(context.Background(), 1, files)
	for _, s := range plan.Steps {
		fmt.Printf("%s: %s (%s), ask: %v\n", filepath.Base(s.Path), s.Op, s.State, s.Ask())
	}
	out := log.Apply(context.Background(), plan, diskWriter{}, func(s changeset.Step) bool {
		return true // the user allowed the removal
	})
	for _, o := range out {
		fmt.Printf("%s done: %v\n", filepath.Base(o.Step.Path), o.Done)
	}
	log.Forget(plan)
	b, _ := os.ReadFile(config)
	_, err := os.Stat(notes)
	fmt.Printf("config.toml: %q, notes.txt exists: %v, turns left: %d\n", b, err == nil, log.Len())
	// Output:
	// config.toml: restore (clean), ask: false
	// notes.txt: remove (clean), ask: true
	// config.toml done: true
	// notes.txt done: true
	// config.toml: "port = 8080\n", notes.txt exists: false, turns left: 0
}

// diskWriter writes to the local disk, checking each file at the write.
// (codexacp writes through the editor and the file tools' engine.)
type diskWriter struct{}

func (diskWriter) check(path string, expect changeset.Version) error {
	v, err := changeset.FsopsFiles{Files: fsops.NewLocalFiles()}.Current(context.Background(), path)
	if err == nil && !v.Same(expect) {
		err = fmt.Errorf("%s changed since the undo was planned", path)
	}
	return err
}

func (w diskWriter) WriteFile(_ context.Context, path string, content []byte, expect changeset.Version) error {
	if err := w.check(path, expect); err != nil {
		return err
	}
	return os.WriteFile(path, content, 0o644)
}

func (w diskWriter) RemoveFile(_ context.Context, path string, expect changeset.Version) error {
	if err := w.check(path, expect); err != nil {
		return err
	}
	return os.Remove(path)
}
