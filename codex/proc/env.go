package proc

import (
	"os"
	"strings"
)

// removedEnv are variables never passed to codex: with them set codex appends
// Rust backtraces to its error messages, even inside JSONL events.
var removedEnv = map[string]bool{"RUST_BACKTRACE": true, "RUST_LIB_BACKTRACE": true}

// Env is codex's environment: base (nil: os.Environ()) and extra merged,
// later values replacing earlier ones in place, without the variables that
// make codex print Rust backtraces (RUST_BACKTRACE, RUST_LIB_BACKTRACE).
func Env(base, extra []string) []string {
	if base == nil {
		base = os.Environ()
	}
	env := make([]string, 0, len(base)+len(extra))
	index := make(map[string]int, len(base)+len(extra))
	for _, list := range [][]string{base, extra} {
		for _, kv := range list {
			key, _, _ := strings.Cut(kv, "=")
			if removedEnv[key] {
				continue
			}
			if i, ok := index[key]; ok {
				env[i] = kv
				continue
			}
			index[key] = len(env)
			env = append(env, kv)
		}
	}
	return env
}
