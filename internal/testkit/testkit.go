// Package testkit holds helpers that the tests of several packages share
// (imported only from _test.go files): bounded waits, a silent logger, a
// shell script standing in for a command, and fixtures such as an editor's
// notification burst and a small PNG, and commands built for a test
// (BuildCommands) without linking them again when nothing changed.
package testkit

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// WaitFor receives from ch, failing the test after 30 s rather than hang.
func WaitFor[T any](t testing.TB, ch <-chan T, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatal(what)
	}
}

// Script writes an executable shell script (#!/bin/sh, then body) named
// name in a new temporary directory and returns its path: a stand-in for a
// command such as codex.
func Script(t testing.TB, name, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// DiscardLogger is a logger that writes nothing.
func DiscardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// PNGBase64 is a 1×1 PNG, base64-encoded.
const PNGBase64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

// PNG is the 1×1 PNG of PNGBase64.
func PNG(t testing.TB) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(PNGBase64)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// JPEGBytes are magic bytes enough for http.DetectContentType.
var JPEGBytes = []byte("\xFF\xD8\xFF\xE0\x00\x10JFIF\x00")

// NotificationBurst is n notifications of every kind an editor may send,
// with a request after every tenth of them.
func NotificationBurst(n int, knownSession string) (burst []byte, requests int) {
	var b bytes.Buffer
	for i := range n {
		switch i % 5 {
		case 0:
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"no/such_notification","params":{"n":%d}}`+"\n", i)
		case 1:
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"_zed/extension","params":{}}`+"\n")
		case 2:
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"sess_unknown%d"}}`+"\n", i)
		case 3:
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":%q}}`+"\n", knownSession)
		case 4:
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":%d}}`+"\n", 1_000_000+i)
		}
		if (i+1)%(n/10) == 0 {
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":"burst-%d","method":"initialize","params":{"protocolVersion":1}}`+"\n", requests)
			requests++
		}
	}
	return b.Bytes(), requests
}
