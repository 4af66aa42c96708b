//go:build unix

// Command sidebyside puts codexacp beside raw `codex exec` and the two peer
// ACP adapters for Codex — Zed's codex-acp (Rust, codex embedded) and
// @agentclientprotocol/codex-acp (TypeScript, on `codex app-server`) — in one
// run, on the same scripted turns of the mock Responses API (e2e/mockapi) on
// loopback, and prints a markdown table of medians and ratios.
//
// It is a program rather than a test or a Go benchmark so that `go test
// ./...` never runs it, needs no build tag or variable to stay out of the
// way, and can take its own flags; it only has to compile. Run it through
// e2e/sidebyside/run.sh (`just bench-side`), which installs the peers into a
// cache directory outside the repository and builds codexacp.
//
// Each iteration runs every available candidate once (round robin, the
// order rotating), each run in a fresh workspace and a fresh mock, each
// candidate in its own CODEX_HOME/HOME/XDG directories kept across its runs
// (a warm-up run per candidate first, not counted). A run: initialize,
// session/new, then after an idle gap each of four prompts on that session —
// a text answer (first turn), another (warm turn), `echo x` through the shell
// tool then an answer (shell turn), an edit of notes.txt then an answer (edit
// turn) — while /proc is sampled for the agent's and its process tree's
// resident memory. Then, in a second session in a git repository of
// 10,000 files (-bigfiles), a text turn and the shell turn again. Then the
// agent's stdin is closed; it must exit and leave no process behind. A
// second, cold run of the agent (-cold) sends a prompt right after
// session/new and times the first chunk from the process start.
//
// With -load N, every iteration runs each candidate twice: quiet, then with
// N busy worker processes (this program, spinning) started before and
// stopped after that candidate's run; the report has a table for each.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/codexacp/codexacp/internal/testkit"
)

func main() {
	busyMain() // a busy worker of -load never returns
	var (
		n        = flag.Int("n", 7, "iterations (runs of each candidate)")
		warmup   = flag.Int("warmup", 1, "uncounted runs of each candidate before the iterations")
		gap      = flag.Duration("gap", 1500*time.Millisecond, "idle time before each prompt (an editor user types)")
		every    = flag.Duration("sample", 50*time.Millisecond, "/proc memory sampling interval (one sample of ~100 processes costs ~2 ms of CPU)")
		timeout  = flag.Duration("timeout", 2*time.Minute, "bound on one turn")
		jsonOut  = flag.String("json", "", "also write all samples and medians as JSON to this file")
		only     = flag.String("only", "", "comma-separated candidate names (substrings) to run; default all")
		verbose  = flag.Bool("v", false, "log each run's progress to stderr")
		codexacp = flag.String("codexacp", "", "codexacp binary (run.sh builds it)")
		from     = flag.String("codexacp-from", "", "where the codexacp binary was built from, for the report")
		codex    = flag.String("codex", "", "codex binary (default: the pinned one in e2e/node_modules)")
		cache    = flag.String("cache", defaultCache(), "the bench's cache: peers/ (installed by run.sh) and work/ (each run's homes and workspaces, removed after)")
		peers    = flag.String("peers", "", "directory whose node_modules holds the peer adapters (default: CACHE/peers)")
		busy     = flag.Int("load", 0, "also run every candidate with this many busy worker processes (one CPU each) beside it; 0: quiet runs only")
		bigFiles = flag.Int("bigfiles", 10000, "files in the git repository of the large shell turn; 0 skips it")
		cold     = flag.Bool("cold", true, "also start each agent cold and prompt right after session/new, and again -gap after it")
		waits    = flag.Bool("waits", false, "run codexacp's cold starts with debug logs and report the timeline of its waits")
		cancelAt = flag.Duration("cancel", 500*time.Millisecond, "with -cold, also a cold run that sends session/cancel this long after the prompt, counting the runs whose model request was out before it; 0 skips it")
		base     = flag.String("codexacp-base", "", "another codexacp binary (run.sh: CODEXACP_BENCH_BASE=<ref>) run as the extra candidates \"codexacp app-server (base)\" and \"codexacp exec (base)\", interleaved with the others: before and after a change in one run")
	)
	flag.Parse()

	if *peers == "" {
		*peers = filepath.Join(*cache, "peers")
	}
	p := paths{codexacp: *codexacp, codex: *codex, peers: *peers}
	if err := p.locate(); err != nil {
		fmt.Fprintln(os.Stderr, "sidebyside:", err)
		os.Exit(2)
	}
	// Homes and workspaces live outside the temporary directory, as a
	// user's do: codex refuses to put its helper binaries (arg0 links) into a
	// CODEX_HOME under the temporary directory and skips that work there.
	work := filepath.Join(*cache, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "sidebyside:", err)
		os.Exit(1)
	}
	tmp, err := os.MkdirTemp(work, "run-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "sidebyside:", err)
		os.Exit(1)
	}
	defer os.RemoveAll(tmp)
	r := &runner{paths: p, gap: *gap, every: *every, timeout: *timeout, verbose: *verbose, tmp: tmp, log: os.Stderr, cold: *cold, waits: *waits, cancel: *cancelAt}
	if *bigFiles > 0 {
		r.bigRepo = filepath.Join(tmp, "big-repo")
		fmt.Fprintf(os.Stderr, "writing a git repository of %d files\n", *bigFiles)
		if err := makeBigRepo(r.bigRepo, *bigFiles); err != nil {
			fmt.Fprintln(os.Stderr, "sidebyside:", err)
			os.Exit(1)
		}
	}

	var cands []candidate
	all := candidates()
	if *base != "" {
		all = append(all, baseCandidates(*base)...)
	}
	for _, c := range all {
		if *only == "" || matchesAny(c.Name, *only) {
			cands = append(cands, c)
		}
	}
	if l, err := strconv.ParseFloat(strings.Fields(loadavg() + " 0")[0], 64); err == nil && l > float64(runtime.NumCPU()) {
		fmt.Fprintf(os.Stderr, "sidebyside: warning: load average %.1f on %d CPUs; the figures will be noisy\n", l, runtime.NumCPU())
	}
	res := &results{Started: time.Now(), N: *n, Gap: gap.String(), Codex: versionOf(p.codex), CodexacpFrom: *from,
		LoadBefore: loadavg(), Candidates: map[string]*candResult{}}
	var loaded *results // the runs beside the busy workers
	if *busy > 0 {
		loaded = &results{Started: res.Started, N: *n, Gap: res.Gap, Codex: res.Codex, CodexacpFrom: *from, Busy: *busy,
			LoadBefore: res.LoadBefore, Candidates: map[string]*candResult{}}
	}
	homes := map[string]home{}
	for _, c := range cands {
		dir, err := os.MkdirTemp(tmp, "home-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "sidebyside:", err)
			os.Exit(1)
		}
		if err := os.Mkdir(filepath.Join(dir, "user"), 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "sidebyside:", err)
			os.Exit(1)
		}
		homes[c.Name] = home{dir: dir}
		res.Order = append(res.Order, c.Name)
		res.Candidates[c.Name] = &candResult{How: c.How, Peer: c.Peer}
		if loaded != nil {
			loaded.Order = append(loaded.Order, c.Name)
			loaded.Candidates[c.Name] = &candResult{How: c.How, Peer: c.Peer}
		}
	}

	// Warm-up: the first run in a fresh home is slower (codex creates its
	// state, codexacp its model catalog); a candidate whose warm-up fails is
	// reported unavailable and not run again.
	for _, c := range cands {
		for i := 0; i < *warmup; i++ {
			fmt.Fprintf(os.Stderr, "warm-up %s\n", c.Name)
			s := r.runOne(c, homes[c.Name])
			if s.Err != "" {
				res.Candidates[c.Name].Unavailable = firstLine(s.Err)
				fmt.Fprintf(os.Stderr, "  %s unavailable: %s\n", c.Name, s.Err)
				break
			}
			for _, note := range s.Notes {
				fmt.Fprintf(os.Stderr, "  note: %s\n", note)
			}
		}
	}
	for i := 0; i < *n; i++ {
		for k := range cands {
			c := cands[(i+k)%len(cands)]
			cr := res.Candidates[c.Name]
			if cr.Unavailable != "" {
				continue
			}
			fmt.Fprintf(os.Stderr, "iteration %d/%d: %s\n", i+1, *n, c.Name)
			s := r.runOne(c, homes[c.Name])
			if s.Err != "" {
				fmt.Fprintf(os.Stderr, "  error: %s\n", s.Err)
			}
			for _, note := range s.Notes {
				fmt.Fprintf(os.Stderr, "  note: %s\n", note)
			}
			cr.Samples = append(cr.Samples, s)
			if loaded == nil {
				continue
			}
			fmt.Fprintf(os.Stderr, "iteration %d/%d: %s with %d busy workers\n", i+1, *n, c.Name, *busy)
			l, err := startLoad(*busy)
			if err != nil {
				fmt.Fprintln(os.Stderr, "sidebyside: busy workers:", err)
				os.Exit(1)
			}
			s = r.runOne(c, homes[c.Name])
			l.stop()
			if s.Err != "" {
				fmt.Fprintf(os.Stderr, "  error: %s\n", s.Err)
			}
			for _, note := range s.Notes {
				fmt.Fprintf(os.Stderr, "  note: %s\n", note)
			}
			lr := loaded.Candidates[c.Name]
			lr.Samples = append(lr.Samples, s)
		}
	}
	res.LoadAfter = loadavg()
	res.summarize()
	fmt.Print(res.markdown())
	out := any(res)
	if loaded != nil {
		loaded.LoadAfter = res.LoadAfter
		for name, cr := range res.Candidates {
			loaded.Candidates[name].Unavailable = cr.Unavailable
		}
		loaded.summarize()
		fmt.Print("\n" + loaded.markdown())
		out = map[string]*results{"quiet": res, "loaded": loaded}
	}
	if *jsonOut != "" {
		b, err := json.MarshalIndent(out, "", "  ")
		if err == nil {
			err = os.WriteFile(*jsonOut, append(b, '\n'), 0o644)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "sidebyside:", err)
			os.Exit(1)
		}
	}
	// The last check: nothing any run started is still alive.
	if left := reapLeftovers(func(kv string) bool { return strings.HasPrefix(kv, markerPrefix()) }); len(left) > 0 {
		fmt.Fprintf(os.Stderr, "sidebyside: processes left running (killed): %q\n", left)
		os.Exit(1)
	}
}

func matchesAny(name, list string) bool {
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s != "" && strings.Contains(strings.ToLower(name), strings.ToLower(s)) {
			return true
		}
	}
	return false
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// defaultCache is run.sh's cache directory: $CODEXACP_BENCH_CACHE, else
// codexacp-bench in the user's cache directory.
func defaultCache() string {
	if d := os.Getenv("CODEXACP_BENCH_CACHE"); d != "" {
		return d
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "codexacp-bench")
	}
	return filepath.Join(cache, "codexacp-bench")
}

// locate fills in the pinned codex, its bundled bwrap and node.
func (p *paths) locate() error {
	modules, err := nodeModules()
	if err != nil {
		return err
	}
	vendor, _ := filepath.Glob(filepath.Join(modules, "@openai", "codex-*", "vendor", "*"))
	if p.codex == "" {
		for _, v := range vendor {
			if c := filepath.Join(v, "bin", "codex"); isExecutable(c) {
				p.codex = c
				break
			}
		}
		if p.codex == "" {
			return fmt.Errorf("the pinned codex is not installed under %s: run `cd e2e && npm ci`", modules)
		}
	}
	for _, v := range vendor {
		if isExecutable(filepath.Join(v, "codex-resources", "bwrap")) {
			p.bwrapDir = filepath.Join(v, "codex-resources")
			break
		}
	}
	if p.codexacp != "" {
		out, _ := exec.Command(p.codexacp, "--help").CombinedOutput()
		p.backendFlag = strings.Contains(string(out), "-backend")
	}
	if p.node, err = exec.LookPath("node"); err != nil {
		p.node = "node"
	}
	return nil
}

// nodeModules is e2e/node_modules of the repository holding the working
// directory.
func nodeModules() (string, error) {
	root, err := testkit.ModuleRoot()
	if errors.Is(err, testkit.ErrNoModule) {
		return "", fmt.Errorf("not inside the codexacp repository")
	}
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "e2e", "node_modules"), nil
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode().Perm()&0o111 != 0
}

func versionOf(bin string) string {
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(out))
}

// loadavg is /proc/loadavg's 1, 5 and 15 minute figures: the machine's other
// work shows in the spread of the figures.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
