package main

import (
	"runtime/debug"
	"strings"
)

func init() { version = resolveVersion(version, debug.ReadBuildInfo) }

// resolveVersion is the version codexacp reports (--version, initialize's
// agentInfo, codex's clientInfo): the one a release build stamps with
// -ldflags "-X main.version=1.2.3" (packaging/npm/build.sh does), else the
// main module's version from the build info — v1.2.3 for `go install
// …@v1.2.3`, a pseudo-version with the commit for `go build` in a git
// checkout (Go ≥ 1.24) — else the commit the build info records, else Go's
// own "(devel)". A leading "v" is dropped: "1.2.3", as npm writes it.
func resolveVersion(stamped string, buildInfo func() (*debug.BuildInfo, bool)) string {
	if stamped != "" {
		return strings.TrimPrefix(stamped, "v")
	}
	info, ok := buildInfo()
	if !ok {
		return "(devel)"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return strings.TrimPrefix(v, "v")
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch {
		case s.Key == "vcs.revision":
			rev = s.Value
		case s.Key == "vcs.modified" && s.Value == "true":
			dirty = "-dirty"
		}
	}
	if rev == "" {
		return "(devel)"
	}
	return "0.0.0-" + rev[:min(len(rev), 12)] + dirty
}
