package proc

import (
	"runtime"
	"slices"
	"strings"
	"testing"
)

// A proxy in the user's environment must not carry codex's requests to the
// agent's own tool host (127.0.0.1): codex's HTTP client honours
// HTTP_PROXY and ALL_PROXY for http:// URLs, so without a bypass the
// required MCP server never answers (codex 0.171: "required MCP servers
// failed to initialize", every thread fails) and its bearer token goes to
// the proxy.
func TestEnvBypassesProxiesForLoopback(t *testing.T) {
	for _, tc := range []struct {
		name string
		base []string
		want []string // the NO_PROXY and no_proxy entries of the result, in order; nil: none
		// windows, when set, is want on Windows, where NO_PROXY and
		// no_proxy are one variable (the later entry wins).
		windows []string
	}{
		{"no proxy: unchanged", []string{"PATH=/bin"}, nil, nil},
		{"only an https proxy: unchanged", []string{"HTTPS_PROXY=http://proxy:3128"}, nil, nil},
		{"empty proxy: unchanged", []string{"HTTP_PROXY="}, nil, nil},
		{"HTTP_PROXY", []string{"HTTP_PROXY=http://proxy:3128"}, []string{"NO_PROXY=127.0.0.1", "no_proxy=127.0.0.1"}, []string{"NO_PROXY=127.0.0.1"}},
		{"http_proxy", []string{"http_proxy=http://proxy:3128"}, []string{"NO_PROXY=127.0.0.1", "no_proxy=127.0.0.1"}, []string{"NO_PROXY=127.0.0.1"}},
		{"ALL_PROXY", []string{"ALL_PROXY=socks5://proxy:1080"}, []string{"NO_PROXY=127.0.0.1", "no_proxy=127.0.0.1"}, []string{"NO_PROXY=127.0.0.1"}},
		{"all_proxy", []string{"all_proxy=socks5://proxy:1080"}, []string{"NO_PROXY=127.0.0.1", "no_proxy=127.0.0.1"}, []string{"NO_PROXY=127.0.0.1"}},
		{"the user's NO_PROXY kept, loopback added", []string{"HTTP_PROXY=http://p:1", "NO_PROXY=.corp.example,10.0.0.0/8"},
			[]string{"NO_PROXY=.corp.example,10.0.0.0/8,127.0.0.1"}, nil},
		{"the user's no_proxy kept, loopback added", []string{"http_proxy=http://p:1", "no_proxy=localhost"},
			[]string{"no_proxy=localhost,127.0.0.1"}, nil},
		{"both spellings each extended", []string{"http_proxy=http://p:1", "NO_PROXY=a", "no_proxy=b"},
			[]string{"NO_PROXY=a,127.0.0.1", "no_proxy=b,127.0.0.1"}, []string{"no_proxy=b,127.0.0.1"}},
		{"already listed: unchanged", []string{"HTTP_PROXY=http://p:1", "NO_PROXY=localhost, 127.0.0.1"},
			[]string{"NO_PROXY=localhost, 127.0.0.1"}, nil},
		{"everything bypassed: unchanged", []string{"HTTP_PROXY=http://p:1", "no_proxy=*"}, []string{"no_proxy=*"}, nil},
		{"empty NO_PROXY filled", []string{"HTTP_PROXY=http://p:1", "NO_PROXY="}, []string{"NO_PROXY=127.0.0.1"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.want
			if runtime.GOOS == "windows" && tc.windows != nil {
				want = tc.windows
			}
			var got []string
			for _, kv := range Env(tc.base, nil) {
				if k, _, _ := strings.Cut(kv, "="); strings.EqualFold(k, "NO_PROXY") {
					got = append(got, kv)
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("NO_PROXY entries = %q, want %q", got, want)
			}
		})
	}
}

// A proxy set only by extra (an override for one run) counts too.
func TestEnvBypassesProxiesForLoopbackFromExtra(t *testing.T) {
	env := Env([]string{"PATH=/bin"}, []string{"HTTP_PROXY=http://p:1"})
	if !slices.Contains(env, "NO_PROXY=127.0.0.1") {
		t.Errorf("env = %q, want NO_PROXY=127.0.0.1", env)
	}
}
