//go:build unix

package main

import (
	"strings"
	"testing"
)

// A count of runs (the cancel case's "model request before a cancel") is
// reported as k/n, never as a median or a ratio; the times beside it are
// medians as usual.
func TestReportCountsRuns(t *testing.T) {
	res := &results{N: 3, Order: []string{"a", "zed"}, Candidates: map[string]*candResult{
		"a": {Samples: []*sample{
			{Values: map[string]float64{mCancelSent: 1, mCancelReq: 300}},
			{Values: map[string]float64{mCancelSent: 0, mCancelReq: 700}},
			{Values: map[string]float64{mCancelSent: 1, mCancelReq: 400}},
		}},
		"zed": {Peer: true, Samples: []*sample{
			{Values: map[string]float64{mCancelSent: 1, mCancelReq: 100}},
			{Values: map[string]float64{mCancelSent: 1, mCancelReq: 200}},
		}},
	}}
	res.summarize()
	if got := res.Candidates["a"].Medians[mCancelSent]; got != 2 {
		t.Errorf("runs with the request out: %v, want 2", got)
	}
	md := res.markdown()
	for _, want := range []string{
		"| " + mCancelSent + " | 2/3 | 2/2 |",
		"| " + mCancelReq + " | 400 ms (2.67×) | 150 ms (1.00×) * |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}
}
