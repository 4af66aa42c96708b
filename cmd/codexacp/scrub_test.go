package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codexacp/codexacp/record"
)

func TestReplaceFlag(t *testing.T) {
	tests := []struct {
		in   string
		want record.Replacement
		bad  bool
	}{
		{in: "hunter2=PASSWORD", want: record.Replacement{Old: "hunter2", New: "PASSWORD"}},
		{in: `abc\=\=def==x`, want: record.Replacement{Old: "abc==def", New: "=x"}},
		{in: `a\\=b`, want: record.Replacement{Old: `a\`, New: "b"}},
		{in: "secret=", want: record.Replacement{Old: "secret", New: ""}},
		{in: "=x", bad: true},
		{in: "no-equals", bad: true},
	}
	for _, tt := range tests {
		var r replaceFlag
		err := r.Set(tt.in)
		if tt.bad {
			if err == nil {
				t.Errorf("Set(%q) accepted", tt.in)
			}
			continue
		}
		if err != nil || len(r) != 1 || r[0] != tt.want {
			t.Errorf("Set(%q) = %+v, %v; want %+v", tt.in, r, err, tt.want)
		}
	}
}

// TestRecordScrubCommand: flags after the file, -o, --check's exit status.
func TestRecordScrubCommand(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "t.ndjson")
	data := `{"t":0,"kind":"start","format":1}` + "\n" + `{"t":1,"kind":"acp","dir":"in","msg":{"text":"mail me at bob@corp.io"}}` + "\n"
	if err := os.WriteFile(in, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if err := run([]string{"record", "scrub", in, "--check"}, nil, &stdout, &stderr); err == nil || !strings.Contains(stdout.String(), "email: bob@corp.io") {
		t.Errorf("--check: err %v, out %s", err, stdout.String())
	}
	out := filepath.Join(dir, "out.ndjson")
	stdout.Reset()
	if err := run([]string{"record", "scrub", in, "--replace", "bob@corp.io=someone", "-o", out, "--check"}, nil, &stdout, &stderr); err != nil {
		t.Fatalf("scrub: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	got, _ := os.ReadFile(out)
	if !strings.Contains(string(got), "mail me at someone") || !strings.Contains(stdout.String(), "nothing looks private") {
		t.Errorf("scrubbed: %s\nout: %s", got, stdout.String())
	}
	if orig, _ := os.ReadFile(in); string(orig) != data {
		t.Errorf("-o changed the input")
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("output mode = %v, %v", fi.Mode(), err)
	}
	if err := run([]string{"record", "bogus"}, nil, &stdout, &stderr); err == nil {
		t.Error("an unknown record command succeeded")
	}
	if err := run([]string{"record", "scrub", in}, nil, &stdout, &stderr); err == nil {
		t.Error("scrub with nothing to do succeeded")
	}
}
