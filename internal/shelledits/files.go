package shelledits

import (
	"bytes"
	"io"
	"os"
	"unicode/utf8"
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

// readFile reads a regular file of at most max bytes; a larger one gives
// nil data with its stat. The stat is the open file's.
func readFile(path string, max int64) (data []byte, st fileStat, kind fileKind, err error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openFlags, 0)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, st, kindAbsent, nil
		}
		return nil, st, kindOther, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, st, kindOther, err
	}
	if !fi.Mode().IsRegular() {
		return nil, st, kindOther, nil
	}
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
