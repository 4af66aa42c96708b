package codex

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestReadSummary(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "model-catalog-1.2.3.json")
	catalog := `{"models":[
		{"slug":"big","display_name":"Big","context_window":500000,"priority":7,"visibility":"list"},
		{"slug":"default","context_window":272000,"priority":1,"visibility":"list","supported_reasoning_levels":[{"effort":"low"}]},
		{"slug":"hidden","context_window":1000,"priority":0,"visibility":"hide"}]}`
	if err := os.WriteFile(path, []byte(catalog), 0o644); err != nil {
		t.Fatal(err)
	}
	want := Summary{
		Models: []Model{
			{Slug: "default", Name: "default", ContextWindow: 272000, Efforts: []string{"low"}},
			{Slug: "big", Name: "Big", ContextWindow: 500000},
		},
		ContextWindows: map[string]int{"big": 500000, "default": 272000, "hidden": 1000},
	}
	got, err := ReadSummary(path)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("ReadSummary = %+v, %v\nwant %+v", got, err, want)
	}
	if models, err := Models(path); err != nil || !reflect.DeepEqual(models, want.Models) {
		t.Errorf("Models = %+v, %v; the summary's models differ", models, err)
	}
	for _, tc := range []struct {
		model string
		want  int
		ok    bool
	}{{"", 272000, true}, {"big", 500000, true}, {"hidden", 1000, true}, {"nope", 0, false}} {
		if n, ok := got.ContextWindow(tc.model); n != tc.want || ok != tc.ok {
			t.Errorf("ContextWindow(%q) = %d, %v; want %d, %v", tc.model, n, ok, tc.want, tc.ok)
		}
		if n, err := ContextWindow(path, tc.model); n != tc.want || (err == nil) != tc.ok {
			t.Errorf("codex.ContextWindow(%q) = %d, %v; the summary says %d", tc.model, n, err, tc.want)
		}
	}
	if _, err := os.Stat(SummaryPath(path)); err != nil {
		t.Fatalf("no summary kept beside the catalog: %v", err)
	}

	// The kept summary is read, not the catalog: a catalog of the same size
	// and time whose content is no longer JSON still gives the summary.
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Repeat("x", int(fi.Size()))), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadSummary(path); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ReadSummary with a kept summary = %+v, %v; want it read from the summary", got, err)
	}

	// A catalog changed since (another time) is parsed again.
	later := fi.ModTime().Add(time.Second)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadSummary(path); err == nil {
		t.Error("a changed catalog that is not JSON gave a summary")
	}
	other := `{"models":[{"slug":"only","context_window":9,"priority":1,"visibility":"list"}]}`
	if err := os.WriteFile(path, []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadSummary(path); err != nil || len(got.Models) != 1 || got.Models[0].Slug != "only" {
		t.Errorf("ReadSummary of a new catalog = %+v, %v", got, err)
	}
}

func TestReadSummaryUnkept(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "model-catalog-1.2.3.json")
	if err := os.WriteFile(path, []byte(`{"models":[{"slug":"a","context_window":5,"priority":1}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// Where the summary would go stands a directory: it cannot be kept,
	// and the catalog's summary comes all the same.
	if err := os.Mkdir(SummaryPath(path), 0o755); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if got, err := ReadSummary(path); err != nil || len(got.Models) != 1 || got.ContextWindows["a"] != 5 {
			t.Errorf("ReadSummary = %+v, %v", got, err)
		}
	}
	// A kept summary of another format, or not JSON, is made again.
	for _, kept := range []string{`{"format":0}`, `not json`} {
		p := filepath.Join(t.TempDir(), "model-catalog-2.json")
		if err := os.WriteFile(p, []byte(`{"models":[{"slug":"b","context_window":7,"priority":1}]}`), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(SummaryPath(p), []byte(kept), 0o644); err != nil {
			t.Fatal(err)
		}
		if got, err := ReadSummary(p); err != nil || got.ContextWindows["b"] != 7 {
			t.Errorf("with %q kept: ReadSummary = %+v, %v", kept, got, err)
		}
	}
	if _, err := ReadSummary(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("a missing catalog gave no error")
	}
}

func TestCatalogVersion(t *testing.T) {
	for path, want := range map[string]string{
		"/c/model-catalog-0.171.0.json":            "0.171.0",
		"model-catalog-1.0.0-alpha.2.json":         "1.0.0-alpha.2",
		"/c/model-catalog-for-b8ad662846f70ccb":    "",
		"/c/model-catalog-.json":                   "",
		"/c/catalog.json":                          "",
		"/c/model-catalog-0.171.0.json.tmp":        "",
		"/c/model-catalog-0.1 71.json":             "",
		"/c/model-catalog-0.171.0.summary.json":    "",
		"/c/other-model-catalog-0.171.0.json":      "",
		filepath.Join("d", "model-catalog-2.json"): "2",
	} {
		if got := CatalogVersion(path); got != want {
			t.Errorf("CatalogVersion(%q) = %q, want %q", path, got, want)
		}
	}
}
