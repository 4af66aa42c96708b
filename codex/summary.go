package codex

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/codexacp/codexacp/internal/regularfile"
)

// Summary is what the agent reads from a model catalog: the models the
// picker lists (Models) and the context window of every model, listed or
// hidden, by slug.
type Summary struct {
	Models         []Model        `json:"models"`
	ContextWindows map[string]int `json:"context_windows"`
}

// ContextWindow is the context window of model, or of codex's default (the
// first listed model) when model is empty; false when the catalog does not
// name it.
func (s Summary) ContextWindow(model string) (int, bool) {
	if model == "" {
		if len(s.Models) == 0 {
			return 0, false
		}
		return s.Models[0].ContextWindow, true
	}
	n, ok := s.ContextWindows[model]
	return n, ok
}

// summaryFormat changes when Summary's stored form does: a summary of
// another format is made again.
const summaryFormat = 1

// storedSummary is a Summary as kept beside its catalog, stamped with the
// catalog file it was made from.
type storedSummary struct {
	Format       int   `json:"format"`
	CatalogSize  int64 `json:"catalog_size"`
	CatalogMtime int64 `json:"catalog_mtime_ns"`
	Summary
}

// summaryMax bounds a stored summary read: a real one is a few KiB.
const summaryMax = 1 << 20

// SummaryPath is where ReadSummary keeps the summary of the catalog at
// catalogPath.
func SummaryPath(catalogPath string) string {
	return strings.TrimSuffix(catalogPath, ".json") + ".summary.json"
}

// ReadSummary returns the summary of the model catalog at catalogPath.
// A catalog is ~1 MB of JSON, whose parse costs a CPU 10–25 ms that the
// first session/new would wait for; so the summary is kept beside the
// catalog (SummaryPath), stamped with the catalog's size and modification
// time, and read from there while they match. Keeping it is best effort:
// a cache directory that cannot be written costs the parse, nothing else.
func ReadSummary(catalogPath string) (Summary, error) {
	fi, err := os.Stat(catalogPath)
	if err != nil {
		return Summary{}, fmt.Errorf("reading model catalog: %w", err)
	}
	stamp := storedSummary{Format: summaryFormat, CatalogSize: fi.Size(), CatalogMtime: fi.ModTime().UnixNano()}
	path := SummaryPath(catalogPath)
	if b, err := regularfile.ReadFile(path, summaryMax, regularfile.FollowLink); err == nil {
		var kept storedSummary
		if json.Unmarshal(b, &kept) == nil && kept.Format == stamp.Format &&
			kept.CatalogSize == stamp.CatalogSize && kept.CatalogMtime == stamp.CatalogMtime {
			return kept.Summary, nil
		}
	}
	s, err := summarize(catalogPath)
	if err != nil {
		return Summary{}, err
	}
	stamp.Summary = s
	if b, err := json.Marshal(stamp); err == nil {
		_ = writeFileAtomic(path, b) // best effort, as above
	}
	return s, nil
}

// summarize parses the catalog at catalogPath once for everything in a
// Summary.
func summarize(catalogPath string) (Summary, error) {
	b, err := readCatalog(catalogPath)
	if err != nil {
		return Summary{}, err
	}
	var catalog struct {
		Models []catalogModel `json:"models"`
	}
	if err := json.Unmarshal(b, &catalog); err != nil {
		return Summary{}, fmt.Errorf("parsing model catalog %s: %w", catalogPath, err)
	}
	s := Summary{Models: listedModels(catalog.Models), ContextWindows: map[string]int{}}
	for _, m := range catalog.Models {
		if _, seen := s.ContextWindows[m.Slug]; m.Slug != "" && !seen {
			s.ContextWindows[m.Slug] = m.ContextWindow // the first of a slug, as ContextWindow
		}
	}
	return s, nil
}

// CatalogVersion is the codex version whose catalog ModelCatalog made at
// path ("" when path is not one of its files): it names the file, so that
// a later process knows the version without running `codex --version`.
func CatalogVersion(path string) string {
	v, ok := strings.CutPrefix(filepath.Base(path), "model-catalog-")
	if !ok {
		return ""
	}
	v, ok = strings.CutSuffix(v, ".json")
	if !ok || v == "" || versionOf(v) != v || strings.HasSuffix(v, ".summary") {
		return ""
	}
	return v
}
