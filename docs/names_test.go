package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// declared is what one package declares, as the docs name it: "Runner",
// "Runner.Run" (a method, a field, an interface's method), test functions
// included; embeds maps a type to the types it embeds ("backend.Unsupported").
type declared struct {
	names  map[string]bool
	embeds map[string][]string
}

// declarations parses every Go file of the package in dir (all platforms,
// tests included).
func declarations(t *testing.T, dir string) declared {
	t.Helper()
	d := declared{names: map[string]bool{}, embeds: map[string][]string{}}
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, file := range files {
		f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.FuncDecl:
				name := decl.Name.Name
				if decl.Recv != nil && len(decl.Recv.List) == 1 {
					name = typeName(decl.Recv.List[0].Type) + "." + name
				}
				d.names[name] = true
			case *ast.GenDecl:
				for _, spec := range decl.Specs {
					switch spec := spec.(type) {
					case *ast.ValueSpec:
						for _, n := range spec.Names {
							d.names[n.Name] = true
						}
					case *ast.TypeSpec:
						d.addType(spec)
					}
				}
			}
		}
	}
	return d
}

// addType records a type, its fields and its interface's methods.
func (d declared) addType(spec *ast.TypeSpec) {
	typ := spec.Name.Name
	d.names[typ] = true
	var fields *ast.FieldList
	switch st := spec.Type.(type) {
	case *ast.StructType:
		fields = st.Fields
	case *ast.InterfaceType:
		fields = st.Methods
	}
	if fields == nil {
		return
	}
	for _, field := range fields.List {
		if len(field.Names) == 0 {
			d.embeds[typ] = append(d.embeds[typ], typeName(field.Type))
		}
		for _, n := range field.Names {
			d.names[typ+"."+n.Name] = true
		}
	}
}

// typeName is the name of a receiver or embedded type: T, *T, T[P], pkg.T.
func typeName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return typeName(e.X)
	case *ast.IndexExpr:
		return typeName(e.X)
	case *ast.IndexListExpr:
		return typeName(e.X)
	case *ast.SelectorExpr:
		return typeName(e.X) + "." + e.Sel.Name
	case *ast.Ident:
		return e.Name
	}
	return ""
}

// docRef matches a qualified Go name in a doc: a package (its path or its
// last element), a name, and perhaps a member: `codex/execrun.Runner.Run`,
// `appserver.Backend`, `acp.editorFiles`; a final * stands for the names
// that begin so (`acp.TestTurnFailure*`). What stands after a dot, a slash,
// a word or a hyphen (config keys such as mcp_servers.acp.x) is not one.
var docRef = regexp.MustCompile(`(?:^|[^\w./-])((?:[a-z][a-z0-9]*/)*[a-z][a-z0-9]*)\.([A-Za-z_]\w*)(?:\.([A-Za-z_]\w*))?(\*?)`)

// notNames are what follows a package's name in file names the docs
// mention (events.md, codex.exe), not Go names.
var notNames = []string{"cmd", "exe", "go", "js", "json", "jsonl", "md", "ndjson", "ps1", "sh", "toml"}

// codeSpans returns the text of a Markdown file's code: its fenced blocks
// and its `spans`, each with its line number.
func codeSpans(text string) (spans []string, lines []int) {
	inBlock := false
	for i, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inBlock = !inBlock
			continue
		}
		if inBlock {
			spans, lines = append(spans, line), append(lines, i+1)
			continue
		}
		parts := strings.Split(line, "`")
		for j := 1; j < len(parts); j += 2 {
			spans, lines = append(spans, parts[j]), append(lines, i+1)
		}
	}
	return spans, lines
}

// TestDocsNameWhatExists keeps the docs' code in step with the code: every
// qualified Go name in a doc's code spans and drawings (`codex.Runner`,
// `acp.Agent.Prompt`, `e2e.TestX`) must be declared in a package of that
// path or last element, so a type that moves or is renamed fails here
// rather than misleading a reader.
func TestDocsNameWhatExists(t *testing.T) {
	pkgs := modulePackages(t)
	decls := map[string]declared{}
	for _, pkg := range pkgs {
		decls[pkg] = declarations(t, filepath.Join("..", filepath.FromSlash(pkg)))
	}
	// candidates are the packages a name such as "appserver" may mean.
	candidates := func(p string) []string {
		var out []string
		for _, pkg := range pkgs {
			if pkg == p || strings.HasSuffix(pkg, "/"+p) {
				out = append(out, pkg)
			}
		}
		return out
	}
	var has func(pkg, name, member string, depth int) bool
	has = func(pkg, name, member string, depth int) bool {
		d := decls[pkg]
		if !d.names[name] {
			return false
		}
		if member == "" || d.names[name+"."+member] {
			return true
		}
		if !d.names[name+"."+member] && !isType(d, name) {
			return true // a value's field or method: not followed
		}
		for _, embedded := range d.embeds[name] {
			if depth > 3 {
				break
			}
			qual, typ, ok := strings.Cut(embedded, ".")
			if !ok {
				if has(pkg, qual, member, depth+1) {
					return true
				}
				continue
			}
			for _, other := range candidates(qual) {
				if has(other, typ, member, depth+1) {
					return true
				}
			}
		}
		return false
	}
	files, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range append(files, filepath.Join("..", "README.md")) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		spans, lines := codeSpans(string(data))
		for i, span := range spans {
			for _, m := range docRef.FindAllStringSubmatch(span, -1) {
				pkg, name, member, prefix := m[1], m[2], m[3], m[4] == "*"
				cands := candidates(pkg)
				if len(cands) == 0 || slices.Contains(notNames, name) {
					continue
				}
				found := func(c string) bool {
					if prefix {
						return slices.ContainsFunc(slices.Collect(maps.Keys(decls[c].names)), func(n string) bool {
							return strings.HasPrefix(n, strings.TrimSuffix(name+"."+member, "."))
						})
					}
					return has(c, name, member, 0)
				}
				if !slices.ContainsFunc(cands, found) {
					ref := strings.TrimSuffix(pkg+"."+name+"."+member, ".")
					t.Errorf("%s:%d: `%s`: %s declares no %s", filepath.ToSlash(file), lines[i], ref, strings.Join(cands, " or "), strings.TrimSuffix(name+"."+member, "."))
				}
			}
		}
	}
}

// isType reports whether d declares name as a type (it has members or
// embeds, or it is a receiver).
func isType(d declared, name string) bool {
	if len(d.embeds[name]) > 0 {
		return true
	}
	for n := range d.names {
		if strings.HasPrefix(n, name+".") {
			return true
		}
	}
	return false
}
