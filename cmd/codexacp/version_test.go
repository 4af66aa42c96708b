package main

import (
	"runtime/debug"
	"testing"
)

func TestResolveVersion(t *testing.T) {
	info := func(main string, settings ...string) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/codexacp/codexacp", Version: main}}
			for i := 0; i+1 < len(settings); i += 2 {
				bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
			}
			return bi, true
		}
	}
	none := func() (*debug.BuildInfo, bool) { return nil, false }
	const rev = "fb92323aabbccddeeff00112233445566778899a"
	for _, tc := range []struct {
		name, stamped string
		info          func() (*debug.BuildInfo, bool)
		want          string
	}{
		{"stamped by the npm build", "1.2.3", info("(devel)"), "1.2.3"},
		{"stamped with a v", "v1.2.3-rc.1", info("v0.9.0"), "1.2.3-rc.1"},
		{"go install @version", "", info("v1.2.3"), "1.2.3"},
		{"go build in a checkout", "", info("v0.0.0-20261124233300-fb92323aabbc+dirty", "vcs.revision", rev), "0.0.0-20261124233300-fb92323aabbc+dirty"},
		{"no module version, a commit", "", info("(devel)", "vcs.revision", rev, "vcs.modified", "false"), "0.0.0-fb92323aabbc"},
		{"no module version, a modified commit", "", info("", "vcs.revision", rev, "vcs.modified", "true"), "0.0.0-fb92323aabbc-dirty"},
		{"nothing known", "", info("(devel)"), "(devel)"},
		{"no build info", "", none, "(devel)"},
	} {
		if got := resolveVersion(tc.stamped, tc.info); got != tc.want {
			t.Errorf("%s: version = %q, want %q", tc.name, got, tc.want)
		}
	}
}
