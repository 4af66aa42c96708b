package shelledits

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"unicode/utf8"

	"github.com/codexacp/codexacp/internal/regularfile"
)

// fileStat is what tells two states of a file apart without reading it.
type fileStat struct {
	size  int64
	mtime int64 // nanoseconds
	mode  uint32
	sys   sysStat // what only some platforms give (stat_*.go)
}

type fileKind int

const (
	kindAbsent fileKind = iota
	kindRegular
	kindOther // a directory, a symlink, a device: not followed
)

// lstat returns the stat of a regular file, or what the path is instead.
// An error other than not-existing counts as kindOther.
func lstat(path string) (fileStat, fileKind) {
	fi, err := os.Lstat(path)
	switch {
	case err != nil && os.IsNotExist(err):
		return fileStat{}, kindAbsent
	case err != nil, !fi.Mode().IsRegular():
		return fileStat{}, kindOther
	}
	return statOf(fi), kindRegular
}

// openFile opens a file for its content: without blocking, without
// following a final symlink, refusing anything but a regular file. A
// variable so that tests can make a file vanish, turn into something else
// or become unreadable between the listing and the read (a Tracker's
// own, when set: tests running in parallel).
var openFile = func(path string) (*os.File, fs.FileInfo, error) {
	return regularfile.Open(path, regularfile.NoFollowLink)
}

// openFunc is openFile's type.
type openFunc = func(path string) (*os.File, fs.FileInfo, error)

// readFile reads a regular file of at most max bytes; a larger one gives
// nil data with its stat. The stat is the open file's. A path that is not
// a regular file when opened (a FIFO, a symlink swapped in since it was
// listed) is kindOther with no error.
func readFile(open openFunc, path string, max int64) (data []byte, st fileStat, kind fileKind, err error) {
	f, fi, err := open(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, st, kindAbsent, nil
	case errors.Is(err, regularfile.ErrNotRegular), errors.Is(err, regularfile.ErrSymlink):
		return nil, st, kindOther, nil
	case err != nil:
		return nil, st, kindOther, err
	}
	defer f.Close()
	st = statOf(fi)
	if st.size > max {
		return nil, st, kindRegular, nil
	}
	data, err = io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, st, kindOther, err
	}
	if int64(len(data)) > max {
		// It grew while read.
		return nil, st, kindRegular, nil
	}
	return data, st, kindRegular, nil
}

// isBinary reports whether data is not text to show: a NUL byte in its
// first 8 KiB, or not UTF-8.
func isBinary(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), 8<<10)], 0) >= 0 || !utf8.Valid(data)
}
