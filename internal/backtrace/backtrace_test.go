package backtrace

import "testing"

func TestStrip(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"plain", "plain"},
		{"  padded \n", "padded"},
		{"plain error\n", "plain error"},
		// anyhow's error chain, then its backtrace (codex's turn.failed messages).
		{"tool call failed\n\nCaused by:\n    timed out\n\nStack backtrace:\n   0: <unknown>\n", "tool call failed\n\nCaused by:\n    timed out"},
		{"Error: boom\n\nStack backtrace:\n   0: <unknown>\n   1: <unknown>\n", "Error: boom"},
		{"boom\nstack backtrace:\n   0: main", "boom"},
		{"boom\n   Stack backtrace:\n 0: x", "boom"},
		{"boom\r\nStack backtrace:\r\n   0: x\r\n", "boom"},
		{"Stack backtrace:\n 0: x", ""},
		// A mention inside a line is not a backtrace.
		{"see Stack backtrace: in the log", "see Stack backtrace: in the log"},
		{"see Stack backtrace: below\nStack backtrace:\n 0: x", "see Stack backtrace: below"},
		// A panic's backtrace and the hints about RUST_BACKTRACE.
		{"thread 'main' panicked at src/x.rs:1:1:\nboom\nstack backtrace:\n   0: f\n             at x.rs:1\nnote: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.\n",
			"thread 'main' panicked at src/x.rs:1:1:\nboom"},
		{"panicked\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n", "panicked"},
		// Unindented text after a backtrace is kept.
		{"a\nStack backtrace:\n  0: x\nb\n", "a\nb"},
	}
	for _, tt := range tests {
		if got := Strip(tt.in); got != tt.want {
			t.Errorf("Strip(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
