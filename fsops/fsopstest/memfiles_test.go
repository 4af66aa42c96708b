package fsopstest

import (
	"context"
	"errors"
	"testing"

	"github.com/codexacp/codexacp/fsops"
)

func TestMemFiles(t *testing.T) {
	ctx := context.Background()
	m := NewMemFiles()
	m.Set("/a/b/c.txt", "hi")

	tests := []struct {
		path string
		want fsops.FileInfo
	}{
		{"/", fsops.FileInfo{Exists: true, IsDir: true}},
		{"/a", fsops.FileInfo{Exists: true, IsDir: true}},
		{"/a/b/c.txt", fsops.FileInfo{Exists: true}},
		{"/a/x", fsops.FileInfo{}},
	}
	for _, tc := range tests {
		if got, err := m.Stat(ctx, tc.path); err != nil || got != tc.want {
			t.Errorf("Stat(%s) = %+v, %v; want %+v", tc.path, got, err, tc.want)
		}
	}

	if b, err := m.ReadFile(ctx, "/a/b/c.txt"); err != nil || string(b) != "hi" {
		t.Errorf("ReadFile = %q, %v", b, err)
	}
	wantCode := func(err error, code int) {
		t.Helper()
		var te *fsops.Error
		if !errors.As(err, &te) || te.Code != code {
			t.Errorf("err = %v, want code %d", err, code)
		}
	}
	_, err := m.ReadFile(ctx, "/a/missing")
	wantCode(err, fsops.CodeNotFound)
	_, err = m.ReadFile(ctx, "/a")
	wantCode(err, fsops.CodeIsDirectory)
	wantCode(m.WriteFile(ctx, "/nope/f", []byte("x")), fsops.CodeNotFound)
	wantCode(m.WriteFile(ctx, "/a", []byte("x")), fsops.CodeIsDirectory)

	if err := m.WriteFile(ctx, "/a/new", []byte("x")); err != nil || m.Writes() != 1 {
		t.Fatalf("WriteFile: %v, writes %d", err, m.Writes())
	}
	if got, ok := m.Get("/a/new"); !ok || got != "x" {
		t.Errorf("Get = %q, %v", got, ok)
	}

	boom := errors.New("boom")
	m.FailRead("/a/new", boom)
	m.FailWrite("/a/new", boom)
	m.FailStat("/a/new", boom)
	if _, err := m.ReadFile(ctx, "/a/new"); err != boom {
		t.Errorf("injected read error: %v", err)
	}
	if err := m.WriteFile(ctx, "/a/new", nil); err != boom {
		t.Errorf("injected write error: %v", err)
	}
	if _, err := m.Stat(ctx, "/a/new"); err != boom {
		t.Errorf("injected stat error: %v", err)
	}
	m.FailRead("/a/new", nil)
	if _, err := m.ReadFile(ctx, "/a/new"); err != nil {
		t.Errorf("cleared read error: %v", err)
	}

	m.Remove("/a/new")
	if _, ok := m.Get("/a/new"); ok {
		t.Error("removed file still there")
	}
	if got := m.Paths(); len(got) != 1 || got[0] != "/a/b/c.txt" {
		t.Errorf("Paths = %v", got)
	}
	m.Set("/e", "")
	if info, _ := m.Stat(ctx, "/e"); !info.Exists {
		t.Error("empty file does not exist")
	}

	// MkdirAll: idempotent, refuses a file on the way, honours FailMkdir
	// before creating anything.
	for _, dir := range []string{"/d/x/y", "/d/x/y", "/a"} {
		if err := m.MkdirAll(ctx, dir); err != nil {
			t.Errorf("MkdirAll(%s): %v", dir, err)
		}
		if info, _ := m.Stat(ctx, dir); !info.IsDir {
			t.Errorf("%s is not a directory after MkdirAll", dir)
		}
	}
	wantCode(m.MkdirAll(ctx, "/e/sub"), fsops.CodeNotFound)
	m.FailMkdir("/f/g", boom)
	if err := m.MkdirAll(ctx, "/f/g/h"); err != boom {
		t.Errorf("injected mkdir error: %v", err)
	}
	if info, _ := m.Stat(ctx, "/f"); info.Exists {
		t.Error("a failed MkdirAll created /f")
	}
}
