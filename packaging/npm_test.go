package packaging

import (
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// packageJSON is what the tests read of npm/codexacp/package.json.
type packageJSON struct {
	Name       string `json:"name"`
	Version    string `json:"version"`
	License    string `json:"license"`
	Repository struct {
		URL string `json:"url"`
	} `json:"repository"`
	Bin                  map[string]string `json:"bin"`
	Files                []string          `json:"files"`
	OptionalDependencies map[string]string `json:"optionalDependencies"`
}

func mainPackage(t *testing.T) packageJSON {
	t.Helper()
	var p packageJSON
	if err := json.Unmarshal(readFile(t, "npm/codexacp/package.json"), &p); err != nil {
		t.Fatalf("npm/codexacp/package.json: %v", err)
	}
	return p
}

// The platforms agree everywhere: build.sh builds a package for each, the
// main package depends on each, and the launcher looks each up under the
// name npm's os and cpu give.
func TestNpmPlatformsAgree(t *testing.T) {
	out, err := exec.Command("bash", "npm/build.sh", "--list").Output()
	if err != nil {
		t.Fatalf("build.sh --list: %v", err)
	}
	var built []string
	for _, p := range strings.Fields(string(out)) {
		built = append(built, "codexacp-"+p)
	}
	slices.Sort(built)

	pkg := mainPackage(t)
	var deps []string
	for name, version := range pkg.OptionalDependencies {
		deps = append(deps, name)
		if version != pkg.Version {
			t.Errorf("optional dependency %s@%s: the platform packages have the launcher's version %s", name, version, pkg.Version)
		}
	}
	slices.Sort(deps)

	var looked []string
	launcher := string(readFile(t, "npm/codexacp/bin/codexacp.js"))
	for _, m := range regexp.MustCompile(`"(\w+) (\w+)": "([\w-]+)"`).FindAllStringSubmatch(launcher, -1) {
		if want := "codexacp-" + m[1] + "-" + m[2]; m[3] != want {
			t.Errorf("the launcher runs %s on %s %s, want %s", m[3], m[1], m[2], want)
		}
		looked = append(looked, m[3])
	}
	slices.Sort(looked)

	if !slices.Equal(deps, built) || !slices.Equal(looked, built) {
		t.Errorf("platform packages: build.sh makes %v, package.json depends on %v, the launcher knows %v", built, deps, looked)
	}
	if len(built) != 5 {
		t.Errorf("platforms = %v, want linux x64 and arm64, darwin x64 and arm64, win32 x64", built)
	}
}

// The main package installs the launcher as the codexacp command, and
// build.sh stamps the version (the checked-in one is a placeholder).
func TestNpmMainPackage(t *testing.T) {
	pkg := mainPackage(t)
	if pkg.Name != "codexacp" || pkg.Version != "0.0.0" {
		t.Errorf("package %s@%s, want codexacp@0.0.0 (build.sh sets the version)", pkg.Name, pkg.Version)
	}
	bin := pkg.Bin["codexacp"]
	if bin != "bin/codexacp.js" || len(pkg.Bin) != 1 || !slices.Contains(pkg.Files, bin) {
		t.Errorf("bin %v, files %v: want the one command codexacp → bin/codexacp.js, packed", pkg.Bin, pkg.Files)
	}
	fi, err := os.Stat("npm/codexacp/" + bin)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm()&0o111 == 0 {
		t.Errorf("%s is not executable", bin)
	}
	if !strings.HasPrefix(string(readFile(t, "npm/codexacp/"+bin)), "#!/usr/bin/env node\n") {
		t.Errorf("%s does not start with #!/usr/bin/env node", bin)
	}
}
