// Package docs holds the documentation of codexacp (Markdown) and the
// tests that keep it in step with the code: the package table of
// architecture.md and the README's layout against `go list ./...`, the
// table's "depends on" column against the packages' imports
// (imports_test.go), and the README's quickstart, run as a newcomer would
// (quickstart_test.go).
package docs

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// modulePackages returns the module's packages as paths relative to its
// root ("acp", "internal/stress"), as `go list ./...` lists them; the go
// command runs once for all the tests that ask.
func modulePackages(t *testing.T) []string {
	t.Helper()
	pkgs, err := listPackages()
	if err != nil {
		t.Fatal(err)
	}
	return slices.Clone(pkgs)
}

var listPackages = sync.OnceValues(func() ([]string, error) {
	root, err := filepath.Abs("..")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("go", "list", "-f", "{{.Dir}}", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list ./...: %w", err)
	}
	var pkgs []string
	for _, dir := range strings.Fields(string(out)) {
		rel, err := filepath.Rel(root, dir)
		if err != nil {
			return nil, err
		}
		pkgs = append(pkgs, filepath.ToSlash(rel))
	}
	if len(pkgs) == 0 {
		return nil, errors.New("go list ./... listed no package")
	}
	return pkgs, nil
})

// tableRows returns the first cell (`path`) of each row of the first
// table after the heading line in the Markdown file, with its line number.
func tableRows(t *testing.T, file, heading string) map[string]int {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	start := slices.Index(lines, heading)
	if start < 0 {
		t.Fatalf("%s has no line %q", file, heading)
	}
	rows := map[string]int{}
	inTable := false
	for i := start + 1; i < len(lines); i++ {
		line := lines[i]
		if !strings.HasPrefix(line, "|") {
			if inTable {
				break
			}
			if strings.HasPrefix(line, "#") {
				break
			}
			continue
		}
		inTable = true
		cell, ok := strings.CutPrefix(line, "| `")
		if !ok {
			continue // the header and its separator
		}
		path, _, ok := strings.Cut(cell, "` |")
		if !ok {
			t.Errorf("%s:%d: a row whose first cell is not one `path`: %s", file, i+1, line)
			continue
		}
		rows[path] = i + 1
	}
	if len(rows) == 0 {
		t.Fatalf("%s: no table rows under %q", file, heading)
	}
	return rows
}

// TestDocsListEveryPackage keeps docs/architecture.md's package table in
// step with `go list ./...`: one row per package, none for a package that
// does not exist.
func TestDocsListEveryPackage(t *testing.T) {
	const file = "architecture.md"
	rows := tableRows(t, file, "## Packages")
	pkgs := modulePackages(t)
	for _, pkg := range pkgs {
		if _, ok := rows[pkg]; !ok {
			t.Errorf("docs/%s: package %s has no row in the table under \"## Packages\": add | `%s` | job | depends on |", file, pkg, pkg)
		}
	}
	for path, line := range rows {
		if !slices.Contains(pkgs, path) {
			t.Errorf("docs/%s:%d: row `%s` names no package of `go list ./...`: remove it (or correct the path)", file, line, path)
		}
	}
	checkGrouped(t, "docs/"+file, rows)
}

// checkGrouped fails the test where the rows of one folder do not stand
// together: codex, codex/execrun, codex/appserver… with no other row
// among them, and likewise internal/…, e2e/….
func checkGrouped(t *testing.T, file string, rows map[string]int) {
	t.Helper()
	paths := slices.SortedFunc(maps.Keys(rows), func(a, b string) int { return rows[a] - rows[b] })
	folders := map[string]bool{}
	for _, p := range paths {
		for f := p; f != "."; f = filepath.ToSlash(filepath.Dir(f)) {
			folders[f] = true
		}
	}
	for folder := range folders {
		in := func(p string) bool { return p == folder || strings.HasPrefix(p, folder+"/") }
		first := slices.IndexFunc(paths, in)
		last := first
		for i, p := range paths {
			if in(p) {
				last = i
			}
		}
		for _, p := range paths[first : last+1] {
			if !in(p) {
				t.Errorf("%s:%d: row `%s` stands among the rows of %s/: move it after `%s`", file, rows[p], p, folder, paths[last])
			}
		}
	}
}

// TestReadmeLayoutListsEveryPackage keeps the README's layout in step with
// `go list ./...`: every package has a row of its own or lies under a
// folder that has one (`e2e` covers e2e/replay), and every row names a
// package or a folder of the repository.
func TestReadmeLayoutListsEveryPackage(t *testing.T) {
	const file = "../README.md"
	rows := tableRows(t, file, "## Layout")
	pkgs := modulePackages(t)
	for _, pkg := range pkgs {
		covered := false
		for p := pkg; p != "."; p = filepath.ToSlash(filepath.Dir(p)) {
			if _, ok := rows[p]; ok {
				covered = true
				break
			}
		}
		if !covered {
			t.Errorf("README.md: package %s has no row under \"## Layout\" (nor a folder above it): add | `%s` | job |", pkg, pkg)
		}
	}
	for path, line := range rows {
		if slices.Contains(pkgs, path) {
			continue
		}
		if fi, err := os.Stat(filepath.Join("..", filepath.FromSlash(path))); err != nil || !fi.IsDir() {
			t.Errorf("README.md:%d: row `%s` names no package of `go list ./...` and no folder: remove it (or correct the path)", line, path)
		}
	}
	checkGrouped(t, "README.md", rows)
}
