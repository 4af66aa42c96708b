package codex

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestDefaultOverrides(t *testing.T) {
	const off = "features.skill_search=false"
	tests := []struct {
		name      string
		config    string // home's config.toml; "" none
		system    string // a file in the system directory; "" none
		overrides []string
		want      []string
	}{
		{name: "nothing configured", want: []string{off}},
		{name: "unrelated settings", config: "model = \"o3\"\n[features]\nweb_search = true\n", overrides: []string{`model="gpt-5.5"`}, want: []string{off}},
		{name: "user's -c", overrides: []string{"features.skill_search=true"}, want: nil},
		{name: "user's config.toml", config: "[features]\nskill_search = true\n", want: nil},
		{name: "a profile's", config: "[profiles.fast.features]\nskill_search = false\n", want: nil},
		{name: "system layer", system: "[features]\nskill_search = true\n", want: nil},
		{name: "value naming it is not a key", overrides: []string{`developer_instructions="no skill_search talk"`}, want: []string{off}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home, sys := t.TempDir(), t.TempDir()
			if tt.config != "" {
				write(t, filepath.Join(home, "config.toml"), tt.config)
			}
			if tt.system != "" {
				write(t, filepath.Join(sys, "managed_config.toml"), tt.system)
			}
			got := []string(nil)
			if !mentionsSkillSearch(home, sys, tt.overrides) {
				got = []string{off}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// A config file that exists but cannot be read may hold the user's
// setting: codexacp then sets nothing.
func TestDefaultOverridesUnreadableConfig(t *testing.T) {
	home := t.TempDir()
	if err := os.Mkdir(filepath.Join(home, "config.toml"), 0o755); err != nil { // reading a directory fails, even as root
		t.Fatal(err)
	}
	if !mentionsSkillSearch(home, t.TempDir(), nil) {
		t.Error("an unreadable config.toml was taken as not mentioning skill_search")
	}
	if got := DefaultOverrides([]string{"CODEX_HOME=" + home}, nil); got != nil {
		t.Errorf("DefaultOverrides = %q, want none", got)
	}
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
