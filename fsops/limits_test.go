package fsops

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// askedFor is a BeforeWrite that counts the changes it was shown.
func askedFor(n *int) BeforeWrite {
	return func(context.Context, *Change) error { *n++; return nil }
}

func wantTooLarge(t *testing.T, err error, words ...string) {
	t.Helper()
	var te *Error
	if !errors.As(err, &te) || te.Code != CodeTooLarge {
		t.Fatalf("error %v, want code %d", err, CodeTooLarge)
	}
	for _, w := range append(words, "limit 8 MiB") {
		if !strings.Contains(te.Message, w) {
			t.Errorf("message %q does not say %q", te.Message, w)
		}
	}
	if te.Hint == "" {
		t.Error("no hint")
	}
}

// The edit of issue 22: "a" occurs 1 Mi times in a 1 MiB file and each is
// to become 64 KiB, 64 GiB in all. It was built before anything was asked
// (the agent died of it); now it is sized first and refused, unasked.
func TestEditResultSizedBeforeBuilt(t *testing.T) {
	t.Parallel()
	files := &oneFile{path: "/w/f", data: bytes.Repeat([]byte("a"), 1<<20)}
	n := 1 << 20
	asked := 0
	_, err := NewEngine(files).EditTextFile(context.Background(), EditParams{Path: "/w/f", OldString: "a",
		NewString: strings.Repeat("b", 64<<10), ExpectedReplacements: &n}, askedFor(&asked))
	wantTooLarge(t, err, "Result too large", "68719476736 bytes")
	if asked != 0 || len(files.data) != 1<<20 {
		t.Errorf("asked %d times, file now %d bytes", asked, len(files.data))
	}
	// Just under the limit still works, and the diff covers every match.
	files.data = []byte("a\n" + strings.Repeat("x\n", 1000) + "a\n")
	two := 2
	res, err := NewEngine(files).EditTextFile(context.Background(), EditParams{Path: "/w/f", OldString: "a\n",
		NewString: strings.Repeat("y", 3<<20) + "\n", ExpectedReplacements: &two}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := applyUnified([]byte("a\n"+strings.Repeat("x\n", 1000)+"a\n"), res.Diff); err != nil || !bytes.Equal(got, files.data) {
		t.Errorf("the diff does not give the file (%v)", err)
	}
}

func TestResultLimits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	big := strings.Repeat("z", 3<<20)
	for _, tc := range []struct {
		name string
		call func(e *Engine, hash string) error
	}{
		{"multi-edit", func(e *Engine, _ string) error {
			_, err := e.MultiEditTextFile(ctx, MultiEditParams{Path: "/w/f", Edits: []EditOp{
				{OldString: "one", NewString: "one" + big}, {OldString: "two", NewString: "two" + big},
				{OldString: "three", NewString: "three" + big}}}, nil)
			return err
		}},
		{"write", func(e *Engine, _ string) error {
			_, err := e.WriteTextFile(ctx, WriteParams{Path: "/w/f", Content: strings.Repeat("w", MaxEditBytes+1)}, nil)
			return err
		}},
		{"write CRLF", func(e *Engine, _ string) error {
			// 5 Mi line feeds become CRLF, like the file's: 10 MiB.
			_, err := e.WriteTextFile(ctx, WriteParams{Path: "/w/f", Content: strings.Repeat("\n", 5<<20)}, nil)
			return err
		}},
		{"append", func(e *Engine, hash string) error {
			_, err := e.AppendTextFile(ctx, AppendParams{Path: "/w/f", Hash: hash, Content: big + big}, nil)
			return err
		}},
		{"replace lines", func(e *Engine, hash string) error {
			_, err := e.ReplaceTextLines(ctx, ReplaceLinesParams{Path: "/w/f", Hash: hash, Lines: []int{1, 2},
				Old: "one\r\n", New: big + big}, nil)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			orig := "one\r\ntwo\r\nthree\r\n" + strings.Repeat("q", 3<<20) + "\r\n"
			files := &oneFile{path: "/w/f", data: []byte(orig)}
			wantTooLarge(t, tc.call(NewEngine(files), HashOf([]byte(orig))), "/w/f")
			if string(files.data) != orig {
				t.Error("the file was changed")
			}
		})
	}
}

// An edit of a file over the limit is refused from its size, before it is
// read; one that grows past it while read is refused too.
func TestEditOfLargeFileRefusedUnread(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "big.log")
	if err := os.WriteFile(path, []byte("first\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 64<<30); err != nil {
		t.Skipf("no sparse files: %v", err)
	}
	e := NewEngine(NewLocalFiles())
	_, err := e.EditTextFile(context.Background(), EditParams{Path: path, OldString: "first", NewString: "second"}, nil)
	wantTooLarge(t, err, "File too large to edit", "68719476736 bytes")
	_, err = e.AppendTextFile(context.Background(), AppendParams{Path: path, Hash: "x", Content: "more"}, nil)
	wantTooLarge(t, err, "File too large to edit")
	_, err = e.WriteTextFile(context.Background(), WriteParams{Path: path, Content: "small"}, nil)
	wantTooLarge(t, err, "File too large to edit")

	// Grows while read: the port's open reports the small size it had.
	l := NewLocalFiles()
	l.ops.open = func(name string) (readFile, os.FileInfo, error) {
		f, _, err := realOS.open(name)
		if err != nil {
			return nil, nil, err
		}
		small, _ := os.Stat(os.DevNull)
		return f, sizedInfo{small, 6}, nil
	}
	_, err = NewEngine(l).EditTextFile(context.Background(), EditParams{Path: path, OldString: "first", NewString: "second"}, nil)
	var te *Error
	if !errors.As(err, &te) || te.Code != CodeTooLarge || !strings.Contains(te.Message, "grew past 8 MiB") {
		t.Errorf("a file growing while read: %v", err)
	}
}

type sizedInfo struct {
	os.FileInfo
	size int64
}

func (s sizedInfo) Size() int64 { return s.size }

// A window of more lines than MaxDiffLines is not aligned but shown
// replaced whole, in one hunk that applies.
func TestDiffOfHugeWindowReplacedWhole(t *testing.T) {
	t.Parallel()
	old := []byte("head\n" + strings.Repeat("x\n", MaxDiffLines+10) + "tail")
	new := bytes.Replace(bytes.Replace(old, []byte("head"), []byte("HEAD"), 1), []byte("tail"), []byte("TAIL"), 1)
	diff, lines := diffAndLines("/f", old, new, wholeRegion(old, new))
	if strings.Count(diff, "@@ -") != 1 || lines[0] != 1 {
		t.Errorf("want one hunk from line 1, got %d hunks, lines %v", strings.Count(diff, "@@ -"), lines)
	}
	if got, err := applyUnified(old, diff); err != nil || !bytes.Equal(got, new) {
		t.Fatalf("the diff does not apply: %v", err)
	}
	// A window just under the limit is aligned: two hunks.
	old = []byte("head\n" + strings.Repeat("x\n", 1000) + "tail")
	new = bytes.Replace(bytes.Replace(old, []byte("head"), []byte("HEAD"), 1), []byte("tail"), []byte("TAIL"), 1)
	if diff, _ := diffAndLines("/f", old, new, wholeRegion(old, new)); strings.Count(diff, "@@ -") != 2 {
		t.Errorf("an aligned window: %d hunks, want 2", strings.Count(diff, "@@ -"))
	}
}

// A multi-edit whose old_strings each occur millions of times (overlapping)
// in a file under the limit: the index of occurrences keeps none of them
// (it listed them all: 20 patterns × 4 Mi offsets, over 600 MB).
func TestMultiEditOccurrencesBounded(t *testing.T) {
	t.Parallel()
	files := &oneFile{path: "/w/f", data: bytes.Repeat([]byte("a"), 4<<20)}
	var edits []EditOp
	for k := 1; k <= 20; k++ {
		edits = append(edits, EditOp{OldString: strings.Repeat("a", k), NewString: "b"})
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := NewEngine(files).MultiEditTextFile(context.Background(), MultiEditParams{Path: "/w/f", Edits: edits}, nil)
	runtime.ReadMemStats(&after)
	if te := AsError(err); te.Code != CodeMatchCount {
		t.Fatalf("error %v, want %d", err, CodeMatchCount)
	}
	// The file and its staged copy: ~8.5 MiB.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("allocated %d MiB", alloc>>20)
	}
}
