package codex

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
)

// The codex versions codexacp's tests passed on: CI runs the e2e suite
// with the codex e2e/package.json pins (the newest) and again with the one
// e2e/codex-oldest/package.json pins (the oldest); a test checks the pins
// are these. A codex outside the range is told to the user (doctor, the
// agent's log, /status), not refused. See docs/codex.md, "Which codex".
const (
	// OldestTested is the oldest codex the e2e suite passes on in CI.
	OldestTested = "0.169.0"
	// NewestTested is the newest codex the e2e suite passes on in CI.
	NewestTested = "0.171.0"
)

// TestedRange names the tested versions for a message: "0.169.0", or
// "0.169.0 to 0.171.0".
func TestedRange() string {
	if OldestTested == NewestTested {
		return OldestTested
	}
	return OldestTested + " to " + NewestTested
}

// VersionNote says, in one sentence for a user, how version (as
// Version returns it) stands against the tested range: "" inside it, or
// when the version cannot be compared (empty, "unknown", not a release
// number) — nothing is claimed about what cannot be read.
func VersionNote(version string) string {
	if CompareVersions(version, OldestTested) < 0 {
		return fmt.Sprintf("codex %s is older than any codex codexacp was tested with (%s): app-server features may be missing; update codex (npm i -g @openai/codex)",
			version, TestedRange())
	}
	if CompareVersions(version, NewestTested) > 0 {
		return fmt.Sprintf("codex %s is newer than any codex codexacp was tested with (%s): it is untested; if something goes wrong, please report it (README, \"Reporting a bug\")",
			version, TestedRange())
	}
	return ""
}

// CompareVersions orders two codex versions the way semantic versioning
// does ("0.99.1" < "0.169.0" < "0.171.0-alpha.2" < "0.171.0"; a leading
// "v" and "+build" metadata are ignored). It answers 0 when either is not a
// version (so an unreadable version is never "older" or "newer").
func CompareVersions(a, b string) int {
	va, ok := parseVersion(a)
	if !ok {
		return 0
	}
	vb, ok := parseVersion(b)
	if !ok {
		return 0
	}
	for i := range va.core {
		if c := cmp.Compare(va.core[i], vb.core[i]); c != 0 {
			return c
		}
	}
	return comparePrerelease(va.pre, vb.pre)
}

type semver struct {
	core [3]uint64
	pre  []string // nil: a release
}

// parseVersion reads MAJOR[.MINOR[.PATCH]][-PRERELEASE][+BUILD].
func parseVersion(s string) (semver, bool) {
	var v semver
	s = strings.TrimPrefix(strings.TrimSpace(s), "v")
	s, _, _ = strings.Cut(s, "+")
	s, pre, hasPre := strings.Cut(s, "-")
	parts := strings.Split(s, ".")
	if len(parts) > 3 {
		return v, false
	}
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 10, 64)
		if err != nil { // also "" and signs
			return v, false
		}
		v.core[i] = n
	}
	if hasPre {
		if pre == "" {
			return v, false
		}
		v.pre = strings.Split(pre, ".")
	}
	return v, true
}

// comparePrerelease: a release is after its prereleases; identifiers
// compare numerically when both are numbers, numbers before words, else
// as text; a longer list wins a tie.
func comparePrerelease(a, b []string) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	for i := 0; i < len(a) && i < len(b); i++ {
		na, ea := strconv.ParseUint(a[i], 10, 64)
		nb, eb := strconv.ParseUint(b[i], 10, 64)
		var c int
		switch {
		case ea == nil && eb == nil:
			c = cmp.Compare(na, nb)
		case ea == nil:
			c = -1
		case eb == nil:
			c = 1
		default:
			c = strings.Compare(a[i], b[i])
		}
		if c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

// VersionOf extracts the version from `codex --version` output
// ("codex-cli 0.169.0" → "0.169.0"), or "".
func VersionOf(out string) string { return versionOf(out) }
