package docs

import (
	"go/build"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// moduleNames are the names the package table gives the third-party
// modules the project imports. A module missing here fails
// TestDocsDependsOnTheImports: give it a name before the table uses it.
var moduleNames = map[string]string{
	"github.com/coder/acp-go-sdk":            "acp-go-sdk",
	"github.com/google/jsonschema-go":        "jsonschema-go",
	"github.com/modelcontextprotocol/go-sdk": "MCP go-sdk",
	"github.com/sergi/go-diff":               "go-diff",
	"golang.org/x/sync":                      "x/sync",
	"golang.org/x/sys":                       "x/sys",
}

// platforms are the systems codexacp is built for: a package's imports are
// the union of its imports on each (codex/proc imports x/sys on Windows only).
var platforms = []string{"linux", "darwin", "windows"}

// modulePath returns the module path go.mod declares.
func modulePath(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if p, ok := strings.CutPrefix(line, "module "); ok {
			return strings.TrimSpace(p)
		}
	}
	t.Fatal("go.mod declares no module")
	return ""
}

// deps are what a package imports, as the table names them: the module's
// packages by their path relative to its root, third-party modules by
// their name in moduleNames; the standard library is left out.
type deps struct {
	prod  map[string]bool // imported by the package's own files
	tests map[string]bool // imported only by its tests
}

// packageDeps reads the import clauses of pkg's files that build on any of
// the platforms (build constraints and _GOOS file names honoured), and
// sorts them into deps. An import of a module moduleNames does not name is
// an error.
func packageDeps(t *testing.T, module, pkg string) deps {
	t.Helper()
	dir := filepath.Join("..", filepath.FromSlash(pkg))
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	d := deps{prod: map[string]bool{}, tests: map[string]bool{}}
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || !buildsOnAPlatform(t, dir, name) {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		into := d.prod
		if strings.HasSuffix(name, "_test.go") {
			into = d.tests
		}
		for _, spec := range f.Imports {
			path, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				t.Fatal(err)
			}
			if name, ok := depName(module, path); ok && name != pkg {
				into[name] = true
			} else if !ok && !isStd(path) {
				t.Errorf("%s imports %s, of a module moduleNames (docs/imports_test.go) does not name", pkg, path)
			}
		}
	}
	for name := range d.prod {
		delete(d.tests, name)
	}
	return d
}

// buildsOnAPlatform reports whether the file dir/name is part of its
// package on one of the platforms, with or without the race detector.
func buildsOnAPlatform(t *testing.T, dir, name string) bool {
	t.Helper()
	for _, goos := range platforms {
		for _, tags := range [][]string{nil, {"race"}} {
			ctx := build.Default
			ctx.GOOS, ctx.GOARCH, ctx.BuildTags = goos, "amd64", tags
			ok, err := ctx.MatchFile(dir, name)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				return true
			}
		}
	}
	return false
}

// depName is the table's name of an imported path, if it is not the
// standard library's.
func depName(module, path string) (string, bool) {
	if rel, ok := strings.CutPrefix(path, module+"/"); ok {
		return rel, true
	}
	for mod, name := range moduleNames {
		if path == mod || strings.HasPrefix(path, mod+"/") {
			return name, true
		}
	}
	return "", false
}

// isStd reports whether path is the standard library's: its first element
// has no dot.
func isStd(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// tableDeps reads a "depends on" cell: names separated by ", "; a
// parenthesised list of names (the tests' imports) after the last one or
// alone; any other parenthesis is a note on the name before it
// ("x/sys (Windows)", "fsops (`Within`)") and is not read; "—" is none.
func tableDeps(cell string, known func(string) bool) (d deps) {
	d = deps{prod: map[string]bool{}, tests: map[string]bool{}}
	cell = strings.TrimSpace(cell)
	if cell == "—" {
		return d
	}
	for _, item := range splitTop(cell) {
		name, rest := item, ""
		if i := strings.Index(item, "("); i >= 0 {
			name, rest = strings.TrimSpace(item[:i]), item[i:]
		}
		if name != "" {
			d.prod[name] = true
		}
		for rest != "" {
			end := closing(rest)
			group := rest[1:end]
			rest = strings.TrimSpace(rest[end+1:])
			names := strings.Split(group, ", ")
			if !slices.ContainsFunc(names, func(n string) bool { return !known(n) }) {
				for _, n := range names {
					d.tests[n] = true
				}
			}
		}
	}
	return d
}

// splitTop splits s at the ", " that stand outside parentheses.
func splitTop(s string) []string {
	var items []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				items = append(items, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return append(items, strings.TrimSpace(s[start:]))
}

// closing returns the index of the parenthesis that closes s[0].
func closing(s string) int {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return len(s) - 1
}

// packageTable returns each row of the package table as path → its last
// cell ("depends on"), with the row's line number.
func packageTable(t *testing.T) (cells map[string]string, lines map[string]int) {
	t.Helper()
	lines = tableRows(t, "architecture.md", "## Packages")
	data, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Split(string(data), "\n")
	cells = map[string]string{}
	for path, n := range lines {
		row := strings.TrimSuffix(strings.TrimSpace(text[n-1]), "|")
		cells[path] = strings.TrimSpace(row[strings.LastIndex(row, " | ")+3:])
	}
	return cells, lines
}

// TestDocsDependsOnTheImports keeps the package table's "depends on"
// column in step with the code: each row names exactly the module's
// packages and third-party modules its package imports (on any platform),
// and in brackets those only its tests import.
func TestDocsDependsOnTheImports(t *testing.T) {
	module := modulePath(t)
	pkgs := modulePackages(t)
	known := func(name string) bool {
		return slices.Contains(pkgs, name) || slices.Contains(slices.Collect(maps.Values(moduleNames)), name)
	}
	cells, lines := packageTable(t)
	for _, pkg := range pkgs {
		cell, ok := cells[pkg]
		if !ok {
			continue // TestDocsListEveryPackage says so
		}
		got, want := tableDeps(cell, known), packageDeps(t, module, pkg)
		for _, kind := range []struct {
			what      string
			got, want map[string]bool
		}{
			{"imports", got.prod, want.prod},
			{"tests' imports (in brackets)", got.tests, want.tests},
		} {
			if missing, extra := diff(kind.want, kind.got), diff(kind.got, kind.want); len(missing)+len(extra) > 0 {
				t.Errorf("docs/architecture.md:%d: `%s` %s: the row lacks %v and names %v it does not import; the cell would be: %s",
					lines[pkg], pkg, kind.what, missing, extra, formatDeps(want))
			}
		}
	}
}

// diff returns the names in a that b lacks, sorted.
func diff(a, b map[string]bool) []string {
	var out []string
	for name := range a {
		if !b[name] {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// formatDeps writes d as a cell: the project's packages (internal ones
// last), the modules, then the tests' imports in brackets.
func formatDeps(d deps) string {
	list := func(m map[string]bool) string {
		names := slices.Collect(maps.Keys(m))
		rank := func(n string) int {
			switch {
			case slices.Contains(slices.Collect(maps.Values(moduleNames)), n):
				return 2
			case strings.HasPrefix(n, "internal/"):
				return 1
			}
			return 0
		}
		slices.SortFunc(names, func(a, b string) int {
			if ra, rb := rank(a), rank(b); ra != rb {
				return ra - rb
			}
			return strings.Compare(a, b)
		})
		return strings.Join(names, ", ")
	}
	cell := list(d.prod)
	if len(d.tests) > 0 {
		cell = strings.TrimSpace(cell + " (" + list(d.tests) + ")")
	}
	if cell == "" {
		return "—"
	}
	return cell
}

// TestTableDeps pins how a "depends on" cell is read.
func TestTableDeps(t *testing.T) {
	known := func(n string) bool { return !strings.ContainsAny(n, "` ") || n == "MCP go-sdk" }
	for _, tc := range []struct {
		cell        string
		prod, tests []string
	}{
		{"—", nil, nil},
		{"fsops, MCP go-sdk, jsonschema-go", []string{"fsops", "MCP go-sdk", "jsonschema-go"}, nil},
		{"backend (internal/testkit)", []string{"backend"}, []string{"internal/testkit"}},
		{"(jsonschema-go)", nil, []string{"jsonschema-go"}},
		{"internal/secrets, x/sys (Windows)", []string{"internal/secrets", "x/sys"}, []string{"Windows"}},
		{"fsops (`Within`)", []string{"fsops"}, nil},
		{"internal/backtrace, acp-go-sdk (as `acpsdk`) (a, b/c)", []string{"internal/backtrace", "acp-go-sdk"}, []string{"a", "b/c"}},
	} {
		d := tableDeps(tc.cell, known)
		if got := slices.Sorted(maps.Keys(d.prod)); !slices.Equal(got, slices.Sorted(slices.Values(tc.prod))) {
			t.Errorf("%q: imports %v, want %v", tc.cell, got, tc.prod)
		}
		if got := slices.Sorted(maps.Keys(d.tests)); !slices.Equal(got, slices.Sorted(slices.Values(tc.tests))) {
			t.Errorf("%q: tests' imports %v, want %v", tc.cell, got, tc.tests)
		}
	}
}

// TestTestHelpersStayInTests checks what architecture.md says of the test
// helpers it lists ("The test helpers (`fsops/fsopstest`, …) are imported
// by tests and by the e2e tooling only"): no package outside e2e/ imports
// one in its own files.
func TestTestHelpersStayInTests(t *testing.T) {
	data, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	const lead = "The test helpers ("
	_, after, ok := strings.Cut(strings.ReplaceAll(string(data), "\n", " "), lead)
	if !ok {
		t.Fatalf("docs/architecture.md has no sentence beginning %q", lead)
	}
	list, _, _ := strings.Cut(after, ")")
	var helpers []string
	for _, item := range strings.Split(list, ", ") {
		helpers = append(helpers, strings.Trim(item, "` "))
	}
	module := modulePath(t)
	for _, pkg := range modulePackages(t) {
		if pkg == "e2e" || strings.HasPrefix(pkg, "e2e/") || slices.Contains(helpers, pkg) {
			continue
		}
		for name := range packageDeps(t, module, pkg).prod {
			if slices.Contains(helpers, name) {
				t.Errorf("%s imports the test helper %s in its own files (docs/architecture.md: test helpers are for tests and the e2e tooling)", pkg, name)
			}
		}
	}
}
