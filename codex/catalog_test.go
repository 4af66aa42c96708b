package codex

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// fakeCatalogCodex answers --version with version and `debug models --bundled`
// with a two-model catalog, counting catalog runs in dir/runs.
// fakeCatalogCodex is a codex of version whose "debug models" runs take
// 200 ms when slow: long enough that concurrent callers meet one run.
func fakeCatalogCodex(t *testing.T, dir, version string, slow bool) string {
	t.Helper()
	delay := "0"
	if slow {
		delay = "0.2"
	}
	return fakeCodex(t, `
case "$1" in
--version) echo version >> "`+dir+`/versions"; echo "codex-cli `+version+`" ;;
debug)
	[ "$2 $3" = "models --bundled" ] || exit 2
	echo run >> "`+dir+`/runs"
	sleep `+delay+`
	echo '{"models":[{"slug":"a","apply_patch_tool_type":"freeform","context_window":1000,"nested":{"k":[1,2]}},{"slug":"b","shell_type":"x"}],"extra":true}'
	;;
*) exit 2 ;;
esac
`)
}

func TestModelCatalog(t *testing.T) {
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	codex := fakeCatalogCodex(t, dir, "9.9.9", true)

	const callers = 8
	paths := make([]string, callers)
	errs := make([]error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() { paths[i], errs[i] = ModelCatalog(context.Background(), codex, cache) })
	}
	wg.Wait()
	want := filepath.Join(cache, "model-catalog-9.9.9.json")
	for i := range callers {
		if errs[i] != nil || paths[i] != want {
			t.Fatalf("caller %d: ModelCatalog = %q, %v; want %q", i, paths[i], errs[i], want)
		}
	}
	if runs, _ := os.ReadFile(filepath.Join(dir, "runs")); strings.Count(string(runs), "run") != 1 {
		t.Errorf("debug models ran %d times, want once", strings.Count(string(runs), "run"))
	}

	raw, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Models []map[string]any `json:"models"`
		Extra  bool             `json:"extra"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("catalog is not JSON: %v", err)
	}
	if len(got.Models) != 2 || !got.Extra {
		t.Fatalf("catalog lost content: %s", raw)
	}
	for _, m := range got.Models {
		v, ok := m["apply_patch_tool_type"]
		if !ok || v != nil {
			t.Errorf("model %v: apply_patch_tool_type = %v (present %v), want null", m["slug"], v, ok)
		}
	}
	if got.Models[0]["context_window"] != float64(1000) || got.Models[1]["shell_type"] != "x" {
		t.Errorf("other fields changed: %s", raw)
	}
	entries, _ := os.ReadDir(cache)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != 2 || names[0] != "model-catalog-9.9.9.json" || !strings.HasPrefix(names[1], "model-catalog-for-") {
		t.Errorf("cache dir holds %v, want the catalog and its binary index (no temp files)", names)
	}

	// A later process (no memory of this one) reuses the file without
	// running codex at all: the index knows this binary.
	catalogPaths.Clear()
	if p, err := ModelCatalog(context.Background(), codex, cache); err != nil || p != want {
		t.Errorf("second ModelCatalog = %q, %v", p, err)
	}
	if runs, _ := os.ReadFile(filepath.Join(dir, "runs")); strings.Count(string(runs), "run") != 1 {
		t.Errorf("cached catalog was rebuilt")
	}
	if versions, _ := os.ReadFile(filepath.Join(dir, "versions")); strings.Count(string(versions), "version") != 1 {
		t.Errorf("codex --version ran %d times, want once", strings.Count(string(versions), "version"))
	}

	// Another codex version gets its own file.
	other := fakeCatalogCodex(t, dir, "10.0.0", false)
	if p, err := ModelCatalog(context.Background(), other, cache); err != nil || p != filepath.Join(cache, "model-catalog-10.0.0.json") {
		t.Errorf("ModelCatalog(other version) = %q, %v", p, err)
	}
}

func TestModelCatalogErrors(t *testing.T) {
	tests := []struct {
		name, script, want string
	}{
		{"debug models fails", `[ "$1" = --version ] && { echo "codex-cli 1.0"; exit 0; }; echo "unknown subcommand" >&2; exit 2`, "unknown subcommand"},
		{"no version", `exit 0`, "no version"},
		{"catalog not JSON", `[ "$1" = --version ] && { echo "codex-cli 1.1"; exit 0; }; echo "not json"`, "parse catalog"},
		{"empty catalog", `[ "$1" = --version ] && { echo "codex-cli 1.2"; exit 0; }; echo '{"models":[]}'`, "no models"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cache := t.TempDir()
			_, err := ModelCatalog(context.Background(), fakeCodex(t, tt.script), cache)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ModelCatalog = %v, want an error containing %q", err, tt.want)
			}
		})
	}
	if _, err := ModelCatalog(context.Background(), filepath.Join(t.TempDir(), "none"), t.TempDir()); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing binary: %v, want ErrNotFound", err)
	}
}

func TestModelCatalogCallerCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := ModelCatalog(ctx, fakeCatalogCodex(t, t.TempDir(), "3.0.0", false), t.TempDir())
	if !errors.Is(err, context.Canceled) {
		t.Errorf("ModelCatalog = %v, want context.Canceled", err)
	}
}

func TestVersionOf(t *testing.T) {
	for in, want := range map[string]string{
		"codex-cli 0.169.0\n":    "0.169.0",
		"codex-cli 1.2.3-beta+x": "1.2.3-beta+x",
		"0.1/../../etc":          "0.1....etc",
		"":                       "",
		"codex-cli 0.169.0\nWARNING: something else\n": "0.169.0",
	} {
		if got := versionOf(in); got != want {
			t.Errorf("versionOf(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestVersionRunsCodexOnce: the agent's start asks for the version (log,
// /status) and makes the catalog (named after the version) at once; codex
// --version runs once for both, and again for a binary that changed.
func TestVersionRunsCodexOnce(t *testing.T) {
	dir := t.TempDir()
	codex := fakeCatalogCodex(t, dir, "7.7.7", true)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if v, err := Version(context.Background(), codex); err != nil || v != "7.7.7" {
				t.Errorf("Version = %q, %v", v, err)
			}
		})
		wg.Go(func() {
			if _, err := ModelCatalog(context.Background(), codex, filepath.Join(dir, "cache")); err != nil {
				t.Errorf("ModelCatalog: %v", err)
			}
		})
	}
	wg.Wait()
	if versions, _ := os.ReadFile(filepath.Join(dir, "versions")); strings.Count(string(versions), "version") != 1 {
		t.Errorf("codex --version ran %d times, want once", strings.Count(string(versions), "version"))
	}

	// An update in place (another size): asked again.
	script, err := os.ReadFile(codex)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(codex, []byte(strings.ReplaceAll(string(script), "7.7.7", "7.10.0")), 0o755); err != nil {
		t.Fatal(err)
	}
	if v, err := Version(context.Background(), codex); err != nil || v != "7.10.0" {
		t.Errorf("Version after the update = %q, %v; want 7.10.0", v, err)
	}
}
