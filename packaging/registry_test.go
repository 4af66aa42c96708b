// Package packaging holds the tests of how codexacp is distributed: the
// npm packages (npm/, see npm/README.md) and the ACP registry entry
// (acp-registry/codexacp/agent.json). The end-to-end install test is
// e2e/npminstall.
package packaging

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// registryEntry is the file the ACP registry takes for codexacp: a folder
// named after the id, holding agent.json.
const registryEntry = "acp-registry/codexacp/agent.json"

// agentSchema resolves testdata/agent.schema.json, the registry's schema.
func agentSchema(t *testing.T) *jsonschema.Resolved {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal(readFile(t, "testdata/agent.schema.json"), &s); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("resolve the registry's schema: %v", err)
	}
	return rs
}

func TestRegistryEntryMatchesSchema(t *testing.T) {
	var entry map[string]any
	if err := json.Unmarshal(readFile(t, registryEntry), &entry); err != nil {
		t.Fatalf("%s: %v", registryEntry, err)
	}
	if err := agentSchema(t).Validate(entry); err != nil {
		t.Errorf("%s does not match the registry's schema: %v", registryEntry, err)
	}
}

// The schema does reject what the registry rejects, so the test above can
// fail.
func TestRegistrySchemaRejects(t *testing.T) {
	rs := agentSchema(t)
	for name, edit := range map[string]func(map[string]any){
		"no distribution":     func(e map[string]any) { delete(e, "distribution") },
		"an id with capitals": func(e map[string]any) { e["id"] = "CodexACP" },
		"a version not x.y.z": func(e map[string]any) { e["version"] = "latest" },
		"an unknown way": func(e map[string]any) {
			e["distribution"] = map[string]any{"brew": map[string]any{"package": "codexacp"}}
		},
		"npx without package": func(e map[string]any) { e["distribution"] = map[string]any{"npx": map[string]any{"args": []any{}}} },
		"no way at all":       func(e map[string]any) { e["distribution"] = map[string]any{} },
		"a binary for plan 9": func(e map[string]any) {
			e["distribution"] = map[string]any{"binary": map[string]any{"plan9-x86_64": map[string]any{"archive": "https://x/y.tgz", "cmd": "./codexacp"}}}
		},
		"an empty description": func(e map[string]any) { e["description"] = "" },
	} {
		var entry map[string]any
		if err := json.Unmarshal(readFile(t, registryEntry), &entry); err != nil {
			t.Fatal(err)
		}
		edit(entry)
		if err := rs.Validate(entry); err == nil {
			t.Errorf("%s: the schema accepts it", name)
		}
	}
}

// The registry's checks beyond the schema (its CONTRIBUTING.md), and that
// the entry names our npm package, version and license.
func TestRegistryEntryRules(t *testing.T) {
	var entry struct {
		ID           string `json:"id"`
		Version      string `json:"version"`
		Repository   string `json:"repository"`
		License      string `json:"license"`
		Distribution struct {
			Npx *struct {
				Package string `json:"package"`
			} `json:"npx"`
		} `json:"distribution"`
	}
	if err := json.Unmarshal(readFile(t, registryEntry), &entry); err != nil {
		t.Fatal(err)
	}
	if dir := filepath.Base(filepath.Dir(registryEntry)); entry.ID != dir {
		t.Errorf("id %q is not its folder's name %q", entry.ID, dir)
	}
	if !regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`).MatchString(entry.Version) {
		t.Errorf("version %q is not x.y.z", entry.Version)
	}
	if u, err := url.Parse(entry.Repository); err != nil || u.Scheme != "https" || u.Host == "" {
		t.Errorf("repository %q is not an https URL", entry.Repository)
	}

	pkg := mainPackage(t)
	if entry.Distribution.Npx == nil {
		t.Fatal("no npx distribution")
	}
	name, version, _ := strings.Cut(entry.Distribution.Npx.Package, "@")
	if name != pkg.Name {
		t.Errorf("npx package %q, want the npm package %q", name, pkg.Name)
	}
	// The registry wants the version pinned, and equal to the entry's.
	if version != entry.Version {
		t.Errorf("npx package %q: want %s@%s", entry.Distribution.Npx.Package, pkg.Name, entry.Version)
	}
	if repo := strings.TrimSuffix(strings.TrimPrefix(pkg.Repository.URL, "git+"), ".git"); repo != entry.Repository {
		t.Errorf("repository %q, the npm package's is %q", entry.Repository, repo)
	}
	if entry.License != pkg.License {
		t.Errorf("license %q, the npm package's is %q", entry.License, pkg.License)
	}
	checkLicenseFile(t, entry.License)
}

// checkLicenseFile checks that the repository's LICENSE, once there, is the
// license the packages and the entry name.
func checkLicenseFile(t *testing.T, spdx string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "LICENSE"))
	if os.IsNotExist(err) {
		t.Logf("no LICENSE file yet; the packages and the registry entry say %s", spdx)
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	// A phrase each license's text has and the others lack.
	phrase, ok := map[string]string{
		"MIT":          "Permission is hereby granted, free of charge",
		"Apache-2.0":   "Apache License",
		"BSD-3-Clause": "Neither the name of",
		"MPL-2.0":      "Mozilla Public License",
	}[spdx]
	if !ok {
		t.Fatalf("license %s: add a phrase of its text here", spdx)
	}
	if !strings.Contains(strings.Join(strings.Fields(string(b)), " "), phrase) {
		t.Errorf("LICENSE is not the %s license that the npm packages and the registry entry name", spdx)
	}
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.FromSlash(name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
