package proc

import (
	"os"
	"runtime"
	"strings"
)

// removedEnv are variables never passed to codex: with them set codex appends
// Rust backtraces to its error messages, even inside JSONL events.
var removedEnv = map[string]bool{"RUST_BACKTRACE": true, "RUST_LIB_BACKTRACE": true}

// loopback is the address of the agent's own servers that codex calls (the
// file tools' MCP host, mcp.NewHost): codex must reach it directly.
const loopback = "127.0.0.1"

// proxyEnv are the variables with which codex's HTTP client sends an
// http:// request through a proxy; noProxyEnv are those that exempt hosts.
var (
	proxyEnv   = []string{"HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"}
	noProxyEnv = []string{"NO_PROXY", "no_proxy"}
)

// Env is codex's environment: base (nil: os.Environ()) and extra merged,
// later values replacing earlier ones in place, without the variables that
// make codex print Rust backtraces (RUST_BACKTRACE, RUST_LIB_BACKTRACE).
//
// When a proxy applies to http:// requests (HTTP_PROXY, ALL_PROXY, either
// spelling), loopback is added to NO_PROXY (and no_proxy; each one set, or
// both when neither is), keeping the user's entries: a proxy cannot reach
// the agent's loopback servers, so through it the required file tools
// never start and their bearer token would go to the proxy.
func Env(base, extra []string) []string {
	if base == nil {
		base = os.Environ()
	}
	env := make([]string, 0, len(base)+len(extra)+len(noProxyEnv))
	index := make(map[string]int, len(base)+len(extra))
	for _, list := range [][]string{base, extra} {
		for _, kv := range list {
			key, _, _ := strings.Cut(kv, "=")
			if removedEnv[key] {
				continue
			}
			if runtime.GOOS == "windows" {
				key = strings.ToUpper(key) // one variable, whatever its case
			}
			if i, ok := index[key]; ok {
				env[i] = kv
				continue
			}
			index[key] = len(env)
			env = append(env, kv)
		}
	}
	return bypassProxyForLoopback(env, index)
}

// bypassProxyForLoopback adds loopback to env's NO_PROXY as Env describes;
// index is the position of each variable in env, by key (upper case on
// Windows).
func bypassProxyForLoopback(env []string, index map[string]int) []string {
	lookup := func(key string) (i int, value string, ok bool) {
		if runtime.GOOS == "windows" {
			key = strings.ToUpper(key)
		}
		if i, ok = index[key]; !ok {
			return 0, "", false
		}
		_, value, _ = strings.Cut(env[i], "=")
		return i, value, true
	}
	proxied := false
	for _, key := range proxyEnv {
		if _, v, ok := lookup(key); ok && v != "" {
			proxied = true
		}
	}
	if !proxied {
		return env
	}
	set := false
	for _, key := range noProxyEnv {
		i, v, ok := lookup(key)
		if !ok {
			continue
		}
		set = true
		if exempts(v) {
			continue
		}
		if strings.TrimSpace(v) != "" {
			env[i] += ","
		}
		env[i] += loopback
	}
	if !set {
		for _, key := range noProxyEnv {
			env = append(env, key+"="+loopback)
			if runtime.GOOS == "windows" {
				break // one variable there, whatever its case
			}
		}
	}
	return env
}

// exempts reports whether a NO_PROXY value already exempts loopback.
func exempts(noProxy string) bool {
	for _, entry := range strings.Split(noProxy, ",") {
		if e := strings.TrimSpace(entry); e == loopback || e == "*" {
			return true
		}
	}
	return false
}
