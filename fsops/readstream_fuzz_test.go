package fsops

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"testing/iotest"
)

// A streamed read_text_file gives the answer read_text_file gives on the
// whole content, for any content, line, limit, chunk size and byte cap: the
// same result and the same errors for a file small enough to hash; for a
// larger one the same lines (no hash, no line count; a line counted from
// the end refused).
func FuzzStreamedRead(f *testing.F) {
	for _, s := range []struct {
		content     string
		line, limit int
		chunk, capB uint8
		hashMax     uint16
	}{
		{"a\nb\nc\n", 1, 2, 1, 31, 100},
		{"a\nb\nc", 2, 5, 3, 31, 100},
		{"\uFEFFone\ntwo\n", 1, 1, 2, 31, 100},
		{"\uFEFF", 1, 1, 1, 31, 100},
		{"", 1, 1, 1, 31, 100},
		{"x\r\ny\r\n", -1, 1, 4, 31, 100},
		{"a very long line\nb\n", 1, 3, 5, 7, 100},
		{"short\na very long line\nb\n", 1, 3, 5, 9, 100},
		{"é€𝄞é€𝄞\n", 1, 1, 1, 6, 100},
		{"first line\n\x00\x00\x00", 1, 1, 4, 31, 3},
		{"a\nb\nc\nd\n", 2, 2, 2, 31, 3},
		{"a\nb\n", 5, 2, 2, 31, 3},
		{"a\xffb\n", 1, 1, 1, 31, 100},
		{"ab\xe2\x82", 1, 1, 3, 31, 100},
	} {
		f.Add([]byte(s.content), s.line, s.limit, s.chunk, s.capB, s.hashMax)
	}
	f.Fuzz(func(t *testing.T, content []byte, line, limit int, chunk, capB uint8, hashMax uint16) {
		lim := readLimits{chunk: 1 + int(chunk%16), cap: 1 + int(capB%40), hashMax: int64(hashMax % 64)}
		limit = 1 + abs(limit)%12
		line %= 16
		var want *ReadResult
		var wantErr error
		if line == 0 {
			wantErr = lineZeroError() // checked before the file is read
		} else if IsBinary(content) {
			wantErr = BinaryError("/f")
		} else {
			want, wantErr = sliceLinesCap(content, &line, limit, lim.cap)
		}
		r := iotest.HalfReader(bytes.NewReader(content))
		got, err := lim.read(context.Background(), "/f", r, int64(len(content)), &line, limit)

		if int64(len(content)) <= lim.hashMax {
			if !sameError(err, wantErr) {
				t.Fatalf("error %v, want %v", err, wantErr)
			}
			if err == nil && *got != *want {
				t.Fatalf("streamed %+v\nwhole    %+v", *got, *want)
			}
			return
		}
		switch {
		case line < 0:
			if te := AsError(err); te.Code != CodeInvalidRequest {
				t.Fatalf("a line from the end of a large file: %v, want -32600", err)
			}
		case err != nil:
			// Only a binary stretch read, or a line past an end it reached.
			if te := AsError(err); te.Code == CodeBinary && IsBinary(content) {
				return
			}
			if !sameError(err, wantErr) {
				t.Fatalf("error %v, want %v", err, wantErr)
			}
		case wantErr != nil:
			// The whole content is binary past the lines read.
			if te := AsError(wantErr); te.Code != CodeBinary {
				t.Fatalf("streamed %+v, whole: %v", *got, wantErr)
			}
		default:
			if got.Content != want.Content || got.StartLine != want.StartLine || got.EndLine != want.EndLine ||
				got.HasMore != want.HasMore || got.Hash != "" || got.TotalLines != 0 {
				t.Fatalf("streamed %+v\nwhole    %+v", *got, *want)
			}
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -(n + 1) // no overflow at MinInt
	}
	return n
}

func sameError(a, b error) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	var ta, tb *Error
	return errors.As(a, &ta) && errors.As(b, &tb) && ta.Code == tb.Code && ta.Message == tb.Message && ta.Hint == tb.Hint
}
