package fsops_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/codexacp/codexacp/fsops"
)

// An engine over the local disk, confined to a workspace: read a file for
// its hash, then replace one string in it, checked against that hash.
func ExampleEngine_EditTextFile() {
	ws, _ := os.MkdirTemp("", "fsops-example-")
	defer os.RemoveAll(ws)
	ws, _ = filepath.EvalSymlinks(ws) // the engine names files by their resolved path
	path := filepath.Join(ws, "config.toml")
	os.WriteFile(path, []byte("[server]\nhost = \"localhost\"\nport = 8080\n"), 0o644)

	ctx := context.Background()
	engine := fsops.NewEngine(fsops.NewLocalFiles().Within(ws))
	read, err := engine.ReadTextFile(ctx, fsops.ReadParams{Path: path})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := engine.EditTextFile(ctx, fsops.EditParams{Path: path,
		OldString: "port = 8080", NewString: "port = 3000", ExpectedHash: read.Hash}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("replaced %d at lines %d-%d, now %d lines\n", res.Replacements, res.LineRange.Start, res.LineRange.End, res.TotalLines)
	fmt.Print(strings.ReplaceAll(res.Diff, ws, "/ws"))
	data, _ := os.ReadFile(path)
	fmt.Print(string(data))
	// Output:
	// replaced 1 at lines 3-3, now 3 lines
	// --- /ws/config.toml
	// +++ /ws/config.toml
	// @@ -1,3 +1,3 @@
	//  [server]
	//  host = "localhost"
	// -port = 8080
	// +port = 3000
	// [server]
	// host = "localhost"
	// port = 3000
}

// A write into directories that do not exist yet: without create_parents it
// fails (seed 003 TC6); with it the directories are listed in the change
// the BeforeWrite hook approves, and made only then.
func ExampleEngine_WriteTextFile_createParents() {
	ws, _ := os.MkdirTemp("", "fsops-example-")
	defer os.RemoveAll(ws)
	ws, _ = filepath.EvalSymlinks(ws)
	rel := func(p string) string { r, _ := filepath.Rel(ws, p); return filepath.ToSlash(r) }

	ctx := context.Background()
	engine := fsops.NewEngine(fsops.NewLocalFiles().Within(ws))
	path := filepath.Join(ws, "src", "pkg", "new.go")

	_, err := engine.WriteTextFile(ctx, fsops.WriteParams{Path: path, Content: "package pkg\n"}, nil)
	fmt.Println(fsops.AsError(err).Code, strings.ReplaceAll(fsops.AsError(err).Message, ws, "/ws"))

	approve := func(_ context.Context, c *fsops.Change) error {
		for _, d := range c.NewDirs {
			fmt.Println("asked to create", rel(d))
		}
		return nil // the user said yes
	}
	res, err := engine.WriteTextFile(ctx, fsops.WriteParams{Path: path, Content: "package pkg\n", CreateParents: true}, approve)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("created:", res.Created, "bytes:", res.BytesWritten, "dirs:", len(res.CreatedDirs))
	// Output:
	// -32001 Parent directory not found: /ws/src/pkg
	// asked to create src
	// asked to create src/pkg
	// created: true bytes: 12 dirs: 2
}

// UnifiedDiff prints a unified diff with 3 lines of context; GNU patch
// applies it.
func ExampleUnifiedDiff() {
	old := []byte("a\nb\nc\nd\ne\n")
	new := []byte("a\nb\nC\nd\ne\nf\n")
	fmt.Print(fsops.UnifiedDiff("/w/letters.txt", old, new))
	// Output:
	// --- /w/letters.txt
	// +++ /w/letters.txt
	// @@ -1,5 +1,6 @@
	//  a
	//  b
	// -c
	// +C
	//  d
	//  e
	// +f
}
