package events

import "testing"

func TestUnwrapShellCommand(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"bash -lc", `/bin/bash -lc 'echo hi'`, `echo hi`},
		{"zsh -lc", `/bin/zsh -lc 'ls -la'`, `ls -la`},
		{"bash -c double quotes", `bash -c "echo \"a b\""`, `echo "a b"`},
		{"sh -c", `sh -c 'make test'`, `make test`},
		{"separate flags", `/usr/bin/bash -l -c 'go vet ./...'`, `go vet ./...`},
		{"errexit flag", `bash -ec 'set -x'`, `set -x`},
		{"quote via double-quoted quote", `/bin/bash -lc 'echo it'"'"'s'`, `echo it's`},
		{"quote via backslash", `/bin/bash -lc 'echo it'\''s'`, `echo it's`},
		{"dollar kept in single quotes", `/bin/bash -lc 'echo exit=$?'`, `echo exit=$?`},
		{"escaped dollar in double quotes", `bash -lc "echo \$HOME \\ \x"`, `echo $HOME \ \x`},
		{"backslash-escaped space", `bash -lc echo\ hi`, `echo hi`},
		{"multi-line script", "/bin/bash -lc 'cat <<EOF\nline\nEOF'", "cat <<EOF\nline\nEOF"},
		{"surrounding space trimmed", `/bin/bash -lc '  ls  '`, `ls`},
		{"line continuation outside quotes", "bash -lc \\\n'ls'", `ls`},
		{"extra arguments after the script", `bash -lc 'echo $0' name`, `bash -lc 'echo $0' name`},
		{"option with an argument", `bash -o pipefail -c 'x | y'`, `bash -o pipefail -c 'x | y'`},
		{"no -c", `bash script.sh`, `bash script.sh`},
		{"-c without script", `bash -lc`, `bash -lc`},
		{"empty script", `bash -lc ''`, `bash -lc ''`},
		{"not a shell", `python3 -c 'print(1)'`, `python3 -c 'print(1)'`},
		{"plain command", `rg -n foo`, `rg -n foo`},
		{"unterminated single quote", `/bin/bash -lc 'echo hi`, `/bin/bash -lc 'echo hi`},
		{"unterminated double quote", `/bin/bash -lc "echo hi`, `/bin/bash -lc "echo hi`},
		{"trailing backslash", `/bin/bash -lc ls\`, `/bin/bash -lc ls\`},
		{"long option", `bash --login -c 'ls'`, `bash --login -c 'ls'`},
		{"empty", ``, ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := UnwrapShellCommand(tt.in); got != tt.want {
				t.Errorf("UnwrapShellCommand(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestSplitShellWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		ok   bool
	}{
		{`a b  c`, []string{"a", "b", "c"}, true},
		{`'' ""`, []string{"", ""}, true},
		{`a'b'"c"\d`, []string{"abcd"}, true},
		{"a\tb\nc", []string{"a", "b", "c"}, true},
		{`"a\"b\\c\$d\e"`, []string{`a"b\c$d\e`}, true},
		{"\"a\\\nb\"", []string{"ab"}, true},
		{`'a`, nil, false},
		{`"a`, nil, false},
		{`a\`, nil, false},
	}
	for _, tt := range tests {
		got, ok := splitShellWords(tt.in)
		if ok != tt.ok || len(got) != len(tt.want) {
			t.Errorf("splitShellWords(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("splitShellWords(%q) = %q; want %q", tt.in, got, tt.want)
				break
			}
		}
	}
}
