//go:build unix

package main

import (
	"os"
	"runtime"
	"strings"
	"testing"
)

func TestParseSmapsRollup(t *testing.T) {
	// Linux 6.x: the rolled-up range, then "Key: N kB" lines.
	linux6 := `55d9075a2000-7ffeba1b2000 ---p 00000000 00:00 0                          [rollup]
Rss:              158720 kB
Pss:               61234 kB
Pss_Dirty:         28001 kB
Pss_Anon:          28000 kB
Pss_File:          33234 kB
Pss_Shmem:             0 kB
Shared_Clean:     130000 kB
Shared_Dirty:          0 kB
Private_Clean:       720 kB
Private_Dirty:     28000 kB
Referenced:       158720 kB
Anonymous:         28000 kB
LazyFree:              0 kB
AnonHugePages:         0 kB
Swap:                  0 kB
SwapPss:               0 kB
Locked:                0 kB
`
	// Before Linux 5.8 there is no Pss_Anon/Pss_File split.
	linux4 := `00400000-7ffc5d5fe000 ---p 00000000 00:00 0                          [rollup]
Rss:                1708 kB
Pss:                 260 kB
Shared_Clean:       1560 kB
Private_Dirty:       112 kB
Anonymous:           112 kB
`
	tests := []struct {
		name string
		in   string
		want smapsRollup
		ok   bool
	}{
		{"linux 6", linux6, smapsRollup{Rss: 158720, Pss: 61234, PssAnon: 28000, PssFile: 33234, Anonymous: 28000}, true},
		{"without the Pss split", linux4, smapsRollup{Rss: 1708, Pss: 260, Anonymous: 112}, true},
		{"empty (a process that exited)", "", smapsRollup{}, false},
		{"no Pss", "Rss: 10 kB\nAnonymous: 2 kB\n", smapsRollup{Rss: 10, Anonymous: 2}, false},
		{"unreadable numbers are skipped", "Rss: x kB\nRss: 12 kB\nPss: 5 kB\nPss_Anon: 3 MB\n", smapsRollup{Rss: 12, Pss: 5}, true},
		{"a header line with colons is no field", "7f00:1000-7f00:2000 r--p 0 00:00 0 [rollup]\nRss: 1 kB\nPss: 1 kB\n", smapsRollup{Rss: 1, Pss: 1}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseSmapsRollup([]byte(tt.in))
			if got != tt.want || ok != tt.ok {
				t.Errorf("parseSmapsRollup = %+v, %v; want %+v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

// TestReadSmapsRollupSelf reads this process's own rollup: Pss is at most
// Rss, and both are there.
func TestReadSmapsRollupSelf(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("smaps_rollup is Linux's")
	}
	if _, err := os.Stat("/proc/self/smaps_rollup"); err != nil {
		t.Skip("this kernel has no smaps_rollup:", err)
	}
	r, ok := readSmapsRollup(os.Getpid())
	if !ok || r.Rss <= 0 || r.Pss <= 0 || r.Pss > r.Rss {
		t.Fatalf("readSmapsRollup(self) = %+v, %v", r, ok)
	}
}

func TestMemLinesOrderAndFields(t *testing.T) {
	mem := memBreakdown(map[string]memPart{
		"codex exec": {KiB: 2 * 158720, AnonKiB: 2 * 28000, PssKiB: 2 * 61234, Procs: 2},
		"codexacp":   {KiB: 18 << 10, AnonKiB: 6 << 10, PssKiB: 15 << 10, Procs: 1},
	})
	lines := memLines(mem)
	want := []string{
		"codex exec 310 MiB (55 anonymous, Pss 120; 2 processes)",
		"codexacp 18 MiB (6 anonymous, Pss 15; 1 processes)",
	}
	if strings.Join(lines, "|") != strings.Join(want, "|") {
		t.Errorf("memLines = %q, want %q", lines, want)
	}
}
