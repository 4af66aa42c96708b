//go:build unix

package main

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

type candResult struct {
	How         string             `json:"how"`
	Peer        bool               `json:"peer,omitempty"`
	Unavailable string             `json:"unavailable,omitempty"`
	Samples     []*sample          `json:"samples,omitempty"`
	Medians     map[string]float64 `json:"medians,omitempty"`
	NA          map[string]string  `json:"na,omitempty"` // metric → why it has no median
	// Of is, for a count of runs (countMetric), how many runs its
	// "median" (their sum) is out of.
	Of     map[string]int `json:"of,omitempty"`
	Errors int            `json:"errors,omitempty"`
	// Mem is the median of each part of the tree's peak (run.go's
	// memBreakdown labels).
	Mem map[string]float64 `json:"mem,omitempty"`
	// Waits are the medians of the log timelines (run.go's sample.Waits).
	Waits map[string]map[string]float64 `json:"waits,omitempty"`
}

type results struct {
	Started      time.Time              `json:"started"`
	N            int                    `json:"n"`
	Gap          string                 `json:"gap"`
	Codex        string                 `json:"codex"`
	CodexacpFrom string                 `json:"codexacp_from,omitempty"`
	LoadBefore   string                 `json:"load_before"`
	LoadAfter    string                 `json:"load_after"`
	Busy         int                    `json:"busy_workers,omitempty"` // busy worker processes beside each run
	Order        []string               `json:"order"`
	Candidates   map[string]*candResult `json:"candidates"`
	// FasterPeer is, per metric, the peer with the lower median.
	FasterPeer map[string]string `json:"faster_peer"`
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func (res *results) summarize() {
	res.FasterPeer = map[string]string{}
	for _, name := range res.Order {
		cr := res.Candidates[name]
		cr.Medians, cr.NA = map[string]float64{}, map[string]string{}
		parts := map[string][]float64{}
		waits := map[string]map[string][]float64{}
		for _, s := range cr.Samples {
			for kind, w := range s.Waits {
				if waits[kind] == nil {
					waits[kind] = map[string][]float64{}
				}
				for k, v := range w {
					waits[kind][k] = append(waits[kind][k], v)
				}
			}
			if s.Err != "" {
				cr.Errors++
			}
			for label, v := range s.Mem {
				parts[label] = append(parts[label], v)
			}
		}
		for kind, w := range waits {
			if cr.Waits == nil {
				cr.Waits = map[string]map[string]float64{}
			}
			cr.Waits[kind] = map[string]float64{}
			for k, vals := range w {
				cr.Waits[kind][k] = median(vals)
			}
		}
		if len(parts) > 0 {
			cr.Mem = map[string]float64{}
			for label, vals := range parts {
				cr.Mem[label] = median(vals)
			}
		}
		for _, m := range metricOrder {
			var vals []float64
			why := ""
			for _, s := range cr.Samples {
				if v, ok := s.Values[m]; ok {
					vals = append(vals, v)
				} else if w, ok := s.NA[m]; ok && why == "" {
					why = w
				}
			}
			switch {
			case len(vals) > 0 && countMetric(m):
				// k of n: the sum, and n beside it.
				for _, v := range vals {
					cr.Medians[m] += v
				}
				if cr.Of == nil {
					cr.Of = map[string]int{}
				}
				cr.Of[m] = len(vals)
			case len(vals) > 0:
				cr.Medians[m] = median(vals)
			case why != "":
				cr.NA[m] = why
			}
		}
	}
	for _, m := range metricOrder {
		if countMetric(m) {
			continue // no faster peer of a count
		}
		best, bestName := math.Inf(1), ""
		for _, name := range res.Order {
			cr := res.Candidates[name]
			if v, ok := cr.Medians[m]; ok && cr.Peer && v < best {
				best, bestName = v, name
			}
		}
		if bestName != "" {
			res.FasterPeer[m] = bestName
		}
	}
}

func format(v float64, unit string) string {
	switch unit {
	case "ms":
		if v >= 100 {
			return fmt.Sprintf("%.0f ms", v)
		}
		return fmt.Sprintf("%.1f ms", v)
	case "MiB":
		return fmt.Sprintf("%.0f MiB", v)
	case "k/n":
		return fmt.Sprintf("%.0f", v) // the caller adds "/n"
	}
	return fmt.Sprintf("%.0f", v)
}

// markdown renders the medians, each with its ratio to the faster peer's.
func (res *results) markdown() string {
	var b strings.Builder
	from := ""
	if res.CodexacpFrom != "" {
		from = "; codexacp built from " + res.CodexacpFrom
	}
	busy := "quiet (no busy workers)"
	if res.Busy > 0 {
		busy = fmt.Sprintf("LOADED: %d busy worker processes beside each run", res.Busy)
	}
	fmt.Fprintf(&b, "%s. Medians of %d runs per candidate (interleaved; idle gap %s before each prompt; %s%s; load average %s before, %s after). "+
		"In parentheses: the ratio to the faster peer's median (the peer marked *).\n\n",
		busy, res.N, res.Gap, res.Codex, from, res.LoadBefore, res.LoadAfter)
	b.WriteString("| metric |")
	for _, name := range res.Order {
		fmt.Fprintf(&b, " %s |", name)
	}
	b.WriteString("\n|---|")
	for range res.Order {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	var notes []string
	noteIndex := map[string]int{}
	footnote := func(text string) string {
		i, ok := noteIndex[text]
		if !ok {
			notes = append(notes, text)
			i = len(notes)
			noteIndex[text] = i
		}
		return fmt.Sprintf("[%d]", i)
	}
	for _, m := range metricOrder {
		unit := metricUnit(m)
		fmt.Fprintf(&b, "| %s |", m)
		peerName := res.FasterPeer[m]
		peerVal := 0.0
		if peerName != "" {
			peerVal = res.Candidates[peerName].Medians[m]
		}
		for _, name := range res.Order {
			cr := res.Candidates[name]
			if cr.Unavailable != "" {
				b.WriteString(" unavailable |")
				continue
			}
			v, ok := cr.Medians[m]
			if !ok {
				if why := cr.NA[m]; why != "" {
					fmt.Fprintf(&b, " n/a %s |", footnote(why))
				} else {
					b.WriteString(" — |")
				}
				continue
			}
			cell := format(v, unit)
			if unit == "k/n" {
				cell += fmt.Sprintf("/%d", cr.Of[m])
			} else if unit != "" && peerVal > 0 {
				cell += fmt.Sprintf(" (%.2f×)", v/peerVal)
			}
			if name == peerName {
				cell += " *"
			}
			fmt.Fprintf(&b, " %s |", cell)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	for _, name := range res.Order {
		cr := res.Candidates[name]
		switch {
		case cr.Unavailable != "":
			fmt.Fprintf(&b, "- %s: unavailable — %s\n", name, cr.Unavailable)
		case cr.Errors > 0:
			fmt.Fprintf(&b, "- %s: %d of %d runs failed (their completed steps are counted)\n", name, cr.Errors, len(cr.Samples))
		}
	}
	for i, n := range notes {
		fmt.Fprintf(&b, "- [%d] %s\n", i+1, n)
	}
	b.WriteString(res.memMarkdown())
	b.WriteString(res.waitsMarkdown())
	return b.String()
}

// memMarkdown lists, per candidate, what each kind of process held at the
// tree's peak (medians; a process counted in several labels never is).
func (res *results) memMarkdown() string {
	var b strings.Builder
	for _, name := range res.Order {
		cr := res.Candidates[name]
		if len(cr.Mem) == 0 {
			continue
		}
		if len(b.String()) == 0 {
			b.WriteString("\nProcess tree at its summed-VmRSS peak, by process (median MiB resident, of which anonymous — heap and stacks, the rest mapped program files —, Pss — its share of the pages it maps —, and processes of that kind):\n\n")
		}
		fmt.Fprintf(&b, "- %s: %s\n", name, strings.Join(memLines(cr.Mem), ", "))
	}
	return b.String()
}

// memLines renders a memory breakdown (run.go's memBreakdown labels), one
// entry per process label, largest VmRSS first.
func memLines(mem map[string]float64) []string {
	var labels []string
	for label := range mem {
		if !strings.HasSuffix(label, " processes") && !strings.HasSuffix(label, " anon") && !strings.HasSuffix(label, " pss") {
			labels = append(labels, label)
		}
	}
	slices.SortFunc(labels, func(a, b string) int {
		if c := cmp.Compare(mem[b], mem[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	out := make([]string, 0, len(labels))
	for _, label := range labels {
		out = append(out, fmt.Sprintf("%s %.0f MiB (%.0f anonymous, Pss %.0f; %.0f processes)", label, mem[label], mem[label+" anon"], mem[label+" pss"], mem[label+" processes"]))
	}
	return out
}

// waitsMarkdown prints the timelines of codexacp's first prompts (-waits):
// each milestone's median offset from the prompt, in time order.
func (res *results) waitsMarkdown() string {
	var b strings.Builder
	for _, name := range res.Order {
		cr := res.Candidates[name]
		for _, kind := range []string{"cold", "paced"} {
			w := cr.Waits[kind]
			if len(w) == 0 {
				continue
			}
			keys := make([]string, 0, len(w))
			for k := range w {
				keys = append(keys, k)
			}
			slices.SortFunc(keys, func(a, b string) int {
				switch {
				case w[a] < w[b]:
					return -1
				case w[a] > w[b]:
					return 1
				}
				return strings.Compare(a, b)
			})
			fmt.Fprintf(&b, "\nTimeline of %s's first prompt (%s; median ms from the prompt, negative before it):\n\n", name, kind)
			for _, k := range keys {
				fmt.Fprintf(&b, "- %+.1f %s\n", w[k], k)
			}
		}
	}
	return b.String()
}
