package codex

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestModels(t *testing.T) {
	p := filepath.Join(t.TempDir(), "catalog.json")
	catalog := `{"models":[
		{"slug":"b","display_name":"B","priority":2,"visibility":"list","context_window":2000,"default_reasoning_level":"medium","supported_reasoning_levels":[{"effort":"low"},{"effort":"medium"}],
		 "service_tiers":[{"id":"priority","name":"Fast","description":"1.5x speed"},{"id":"","name":"nameless"},{"id":"flex"}]},
		{"slug":"hidden","priority":0,"visibility":"hide"},
		{"slug":"a","priority":1,"visibility":"list","context_window":1000,"description":"first","supported_reasoning_levels":[]},
		{"slug":"unranked","visibility":"list"}]}`
	if err := os.WriteFile(p, []byte(catalog), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Models(p)
	if err != nil {
		t.Fatal(err)
	}
	want := []Model{
		{Slug: "a", Name: "a", Description: "first", ContextWindow: 1000},
		{Slug: "b", Name: "B", ContextWindow: 2000, DefaultEffort: "medium", Efforts: []string{"low", "medium"},
			ServiceTiers: []ServiceTier{{ID: "priority", Name: "Fast", Description: "1.5x speed"}, {ID: "flex", Name: "flex"}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Models = %+v\nwant %+v", got, want)
	}
	if _, err := Models(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("a missing catalog gave no error")
	}
}

func TestConfiguredValue(t *testing.T) {
	for _, tc := range []struct {
		config []string
		key    string
		want   string
	}{
		{nil, "model", ""},
		{[]string{`model="gpt-5.5"`}, "model", "gpt-5.5"},
		{[]string{`model='a'`, ` model = b `}, "model", "b"},
		{[]string{`model_reasoning_effort="high"`, `model="x"`}, "model_reasoning_effort", "high"},
		{[]string{`models="x"`}, "model", ""},
	} {
		if got := ConfiguredValue(tc.config, tc.key); got != tc.want {
			t.Errorf("ConfiguredValue(%q, %q) = %q, want %q", tc.config, tc.key, got, tc.want)
		}
	}
}
