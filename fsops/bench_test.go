package fsops_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codexacp/codexacp/fsops"
	"github.com/codexacp/codexacp/fsops/fsopstest"
)

// lineFile returns n lines of about width bytes, each unique.
func lineFile(n, width int) string {
	var b strings.Builder
	b.Grow(n * width)
	for i := range n {
		line := fmt.Sprintf("\tvalue_%06d := compute(%d) // ", i, i)
		b.WriteString(line)
		b.WriteString(strings.Repeat("x", max(width-len(line)-1, 0)))
		b.WriteByte('\n')
	}
	return b.String()
}

// BenchmarkEditTextFile1MB: one unique replacement in a 1 MB / 20k-line
// file through the engine and MemFiles, diff and hash included.
func BenchmarkEditTextFile1MB(b *testing.B) {
	content := lineFile(20000, 52)
	files := fsopstest.NewMemFiles()
	e := fsops.NewEngine(files)
	ctx := context.Background()
	p := fsops.EditParams{Path: "/w/big.go", OldString: "value_010000 := compute(10000)", NewString: "value_010000 := compute(42)"}
	b.SetBytes(int64(len(content)))
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		files.Set(p.Path, content)
		b.StartTimer()
		if _, err := e.EditTextFile(ctx, p, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMultiEdit100: 100 edits in one call on a 10k-line file.
func BenchmarkMultiEdit100(b *testing.B) {
	content := lineFile(10000, 52)
	edits := make([]fsops.EditOp, 100)
	for i := range edits {
		k := i * 97
		edits[i] = fsops.EditOp{OldString: fmt.Sprintf("value_%06d := compute(%d)", k, k), NewString: fmt.Sprintf("value_%06d := recompute(%d, ctx)", k, k)}
	}
	files := fsopstest.NewMemFiles()
	e := fsops.NewEngine(files)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		files.Set("/w/f.go", content)
		b.StartTimer()
		res, err := e.MultiEditTextFile(ctx, fsops.MultiEditParams{Path: "/w/f.go", Edits: edits}, nil)
		if err != nil || res.AppliedCount != 100 {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteTextFile1MB: write_text_file of 1 MB through the local disk
// adapter (temp file, fsync, rename) in a temporary directory.
func BenchmarkWriteTextFile1MB(b *testing.B) {
	content := lineFile(20000, 52)
	e := fsops.NewEngine(fsops.NewLocalFiles())
	path := filepath.Join(b.TempDir(), "big.txt")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	variants := [2]string{strings.Replace(content, "compute(7)", "compute(8)", 1), content}
	b.SetBytes(int64(len(content)))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := e.WriteTextFile(ctx, fsops.WriteParams{Path: path, Content: variants[i%2]}, nil); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkUnifiedDiff1MBOneLine: the whole-file diff of a 1 MB file with
// one changed line in the middle.
func BenchmarkUnifiedDiff1MBOneLine(b *testing.B) {
	old := []byte(lineFile(20000, 52))
	new := []byte(strings.Replace(string(old), "value_010000 := compute(10000)", "value_010000 := compute(1)", 1))
	b.SetBytes(int64(len(old)))
	b.ReportAllocs()
	for b.Loop() {
		if d := fsops.UnifiedDiff("/w/big.go", old, new); d == "" {
			b.Fatal("no diff")
		}
	}
}

// sparseFile makes a file of size bytes whose first line is "first line"
// and the rest a hole (what `truncate -s` makes), or skips.
func sparseFile(b *testing.B, size int64) string {
	path := filepath.Join(b.TempDir(), "big.log")
	if err := os.WriteFile(path, []byte("first line\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.Truncate(path, size); err != nil {
		b.Skipf("no sparse files: %v", err)
	}
	return path
}

// BenchmarkReadHugeSparseFile: read_text_file of line 1 (limit 1) of a
// 64 GiB sparse file through the local adapter: one chunk read, whatever
// the size.
func BenchmarkReadHugeSparseFile(b *testing.B) {
	path := sparseFile(b, 64<<30)
	e := fsops.NewEngine(fsops.NewLocalFiles())
	ctx := context.Background()
	one := 1
	b.ReportAllocs()
	for b.Loop() {
		res, err := e.ReadTextFile(ctx, fsops.ReadParams{Path: path, Limit: &one})
		if err != nil || res.Content != "first line\n" {
			b.Fatal(res, err)
		}
	}
}

// BenchmarkReadTextFile8MB: read_text_file of 100 lines of a file at the
// hash limit (8 MiB, 160k lines): read to the end, hashed and counted.
func BenchmarkReadTextFile8MB(b *testing.B) {
	content := lineFile(fsops.MaxEditBytes/52, 52)
	path := filepath.Join(b.TempDir(), "f.go")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		b.Fatal(err)
	}
	e := fsops.NewEngine(fsops.NewLocalFiles())
	ctx := context.Background()
	line, limit := 1000, 100
	b.SetBytes(int64(len(content)))
	b.ReportAllocs()
	for b.Loop() {
		res, err := e.ReadTextFile(ctx, fsops.ReadParams{Path: path, Line: &line, Limit: &limit})
		if err != nil || res.Hash == "" || res.EndLine != 1099 {
			b.Fatal(res, err)
		}
	}
}

// BenchmarkEditAmplificationRefused: edit_text_file asking 1 Mi
// replacements of "a" by 64 KiB (64 GiB): counted, sized and refused.
func BenchmarkEditAmplificationRefused(b *testing.B) {
	files := fsopstest.NewMemFiles()
	files.Set("/w/a.txt", strings.Repeat("a", 1<<20))
	e := fsops.NewEngine(files)
	ctx := context.Background()
	n := 1 << 20
	p := fsops.EditParams{Path: "/w/a.txt", OldString: "a", NewString: strings.Repeat("b", 64<<10), ExpectedReplacements: &n}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.EditTextFile(ctx, p, nil); fsops.AsError(err).Code != fsops.CodeTooLarge {
			b.Fatal(err)
		}
	}
}
