package codex

import (
	"strings"
	"testing"
)

func TestCompareVersions(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"0.169.0", "0.169.0", 0},
		{"0.169.0", "0.171.0", -1},
		{"0.171.0", "0.169.0", 1},
		{"0.99.1", "0.169.0", -1}, // numeric, not text, order
		{"1.0.0", "0.999.999", 1},
		{"v0.169.0", "0.169.0", 0},
		{"0.169", "0.169.0", 0},
		{"0.169.0+build.7", "0.169.0", 0},
		{"0.171.0-alpha.2", "0.171.0", -1}, // a prerelease comes before its release
		{"0.171.0-alpha.2", "0.169.0", 1},
		{"0.171.0-alpha.2", "0.171.0-alpha.10", -1},
		{"0.171.0-alpha", "0.171.0-alpha.1", -1},
		{"0.171.0-1", "0.171.0-alpha", -1},
		{"0.171.0-beta", "0.171.0-alpha", 1},
		// Not versions: never ordered.
		{"", "0.169.0", 0},
		{"unknown", "0.169.0", 0},
		{"0.169.0", "dev", 0},
		{"0.169.0-", "0.169.0", 0},
		{"1.2.3.4", "0.169.0", 0},
		{"-1.0.0", "0.169.0", 0},
		{"0..1", "0.169.0", 0},
		{"99999999999999999999.0.0", "0.169.0", 0},
		{"codex-cli 0.169.0", "0.169.0", 0},
	}
	for _, tt := range tests {
		if got := CompareVersions(tt.a, tt.b); got != tt.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestTestedRangeOrdered(t *testing.T) {
	if CompareVersions(OldestTested, NewestTested) > 0 {
		t.Errorf("OldestTested %s is after NewestTested %s", OldestTested, NewestTested)
	}
	for _, v := range []string{OldestTested, NewestTested} {
		if _, ok := parseVersion(v); !ok {
			t.Errorf("%q is not a version", v)
		}
	}
}

func TestVersionNote(t *testing.T) {
	tests := []struct {
		version string
		want    []string // "" parts: no note at all
	}{
		{OldestTested, nil},
		{NewestTested, nil},
		{"", nil},
		{"unknown", nil},
		{"dev", nil},
		{"0.99.1", []string{"codex 0.99.1 is older than any codex codexacp was tested with (" + TestedRange() + ")",
			"app-server features may be missing", "npm i -g @openai/codex"}},
		{OldestTested + "-alpha.1", []string{"is older than"}},
		{"99.0.0", []string{"codex 99.0.0 is newer than any codex codexacp was tested with (" + TestedRange() + ")",
			"untested", "Reporting a bug"}},
		{NewestTested + "+build.1", nil},
	}
	for _, tt := range tests {
		got := VersionNote(tt.version)
		if tt.want == nil {
			if got != "" {
				t.Errorf("VersionNote(%q) = %q, want none", tt.version, got)
			}
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("VersionNote(%q) = %q, lacks %q", tt.version, got, w)
			}
		}
	}
}

func TestTestedRangeText(t *testing.T) {
	got := TestedRange()
	if !strings.Contains(got, OldestTested) || !strings.Contains(got, NewestTested) {
		t.Errorf("TestedRange() = %q, want both ends", got)
	}
}
