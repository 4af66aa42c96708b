package acp

import (
	"bufio"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
)

func TestReadLine(t *testing.T) {
	r := bufio.NewReaderSize(strings.NewReader("short\n"+strings.Repeat("x", 40)+"\nlast-no-newline"), 16)
	line, err := readLine(r, 10)
	if err != nil || string(line) != "short\n" {
		t.Fatalf("first = %q, %v", line, err)
	}
	if _, err := readLine(r, 10); !errors.Is(err, errLineTooLong) {
		t.Fatalf("long line: err = %v, want errLineTooLong", err)
	}
	line, err = readLine(r, 20)
	if err != nil || string(line) != "last-no-newline" {
		t.Fatalf("last = %q, %v", line, err)
	}
	if _, err := readLine(r, 20); err != io.EOF {
		t.Fatalf("after the end: %v", err)
	}
}

func TestCheckMessage(t *testing.T) {
	for _, tc := range []struct {
		line string
		code int
		id   string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, 0, ""},
		{`{"jsonrpc":"2.0","method":"session/cancel","params":{}}`, 0, ""},
		{`{"jsonrpc":"2.0","id":"a","result":{}}`, 0, ""},
		{`{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"x"}}`, 0, ""},
		{`{"jsonrpc":"2.0","id":3`, -32700, ""},
		{`"just a string"`, -32600, ""},
		{`{"jsonrpc":"2.0","id":4}`, -32600, "4"},
		{`{"jsonrpc":"2.0","id":5,"method":""}`, -32600, "5"},
		{`{"jsonrpc":"2.0","id":[1],"method":"x"}`, -32600, ""},
		{`{"jsonrpc":"2.0","id":1,"method":7}`, -32600, ""},
	} {
		code, _, id := checkMessage([]byte(tc.line))
		if code != tc.code || string(id) != tc.id {
			t.Errorf("%s: code %d id %q, want %d %q", tc.line, code, id, tc.code, tc.id)
		}
	}
}

// A line over the SDK's limit is answered with an error and skipped; the
// next message still gets through.
func TestGuardInputOversizedLine(t *testing.T) {
	big := `{"jsonrpc":"2.0","id":1,"method":"x","params":"` + strings.Repeat("a", maxLineBytes) + `"}`
	in := strings.NewReader(big + "\n" + `{"jsonrpc":"2.0","id":2,"method":"initialize"}` + "\n")
	pr, pw := io.Pipe()
	var replies strings.Builder
	go guardInput(in, pw, &syncWriter{w: &replies}, discardLogger())
	passed, err := io.ReadAll(pr)
	if err != nil {
		t.Fatal(err)
	}
	if string(passed) != `{"jsonrpc":"2.0","id":2,"method":"initialize"}`+"\n" {
		t.Errorf("passed on %q", passed)
	}
	if !strings.Contains(replies.String(), `"code":-32600`) || !strings.Contains(replies.String(), "larger than 10 MiB") {
		t.Errorf("reply = %q", replies.String())
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
