package codex

import (
	"os"
	"path/filepath"
	"testing"
)

func TestContextWindow(t *testing.T) {
	catalog := `{"models":[
		{"slug":"big","context_window":500000,"priority":7,"visibility":"list"},
		{"slug":"default","context_window":272000,"priority":1,"visibility":"list"},
		{"slug":"hidden","context_window":1000,"priority":0,"visibility":"hide"}]}`
	path := filepath.Join(t.TempDir(), "catalog.json")
	if err := os.WriteFile(path, []byte(catalog), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		model string
		want  int
		err   bool
	}{
		{"", 272000, false},
		{"big", 500000, false},
		{"hidden", 1000, false},
		{"nope", 0, true},
	} {
		got, err := ContextWindow(path, tc.model)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ContextWindow(%q) = %d, %v; want %d (error %v)", tc.model, got, err, tc.want, tc.err)
		}
	}
	if _, err := ContextWindow(filepath.Join(t.TempDir(), "missing.json"), ""); err == nil {
		t.Error("missing catalog: no error")
	}
}

func TestConfiguredModel(t *testing.T) {
	for _, tc := range []struct {
		config []string
		want   string
	}{
		{nil, ""},
		{[]string{`model="gpt-5.5"`}, "gpt-5.5"},
		{[]string{`model=o3`, `model_provider=mock`}, "o3"},
		{[]string{`model='a'`, ` model = "b" `}, "b"},
		{[]string{`model_reasoning_effort="high"`}, ""},
	} {
		if got := ConfiguredModel(tc.config); got != tc.want {
			t.Errorf("ConfiguredModel(%q) = %q, want %q", tc.config, got, tc.want)
		}
	}
}
