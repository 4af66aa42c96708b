package e2e_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/codexacp/codexacp/e2e/mockapi"
)

// BenchmarkProjectSessionFirstPrompt times, on each backend, what a new
// agent process's first session costs from session/new to its first
// prompt's answer (a one-message turn), in a trusted project with its own
// .codex/config.toml ("project") and in one without ("plain"): the
// project's settings are read from codex before session/new answers. Each
// iteration is a fresh agent process, left to finish its start-up work
// (the model catalog) first; the user's config.toml names no setting, so
// nothing is read at launch.
func BenchmarkProjectSessionFirstPrompt(b *testing.B) {
	for _, backend := range backends {
		for _, project := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/%s", backend, map[bool]string{false: "plain", true: "project"}[project]), func(b *testing.B) {
				var news, firsts []time.Duration
				for range b.N {
					b.StopTimer()
					first := start(b, setup{backend: backend, fs: true})
					if project {
						first.writeFile(filepath.Join(".codex", "config.toml"), "approval_policy = \"never\"\nsandbox_mode = \"workspace-write\"\n")
					}
					trust := fmt.Sprintf("[projects.%q]\ntrust_level = \"trusted\"\n", first.cwd)
					if err := os.WriteFile(filepath.Join(first.codexHome, "config.toml"), []byte(trust), 0o600); err != nil {
						b.Fatal(err)
					}
					first.stop()
					e := first.restart(setup{fs: true})
					time.Sleep(time.Second) // the agent's own start-up work, not measured
					e.mock.Enqueue(mockapi.Reply(mockapi.Message("benchmark answer")))
					b.StartTimer()
					t0 := time.Now()
					e.session = e.newSession()
					t1 := time.Now()
					e.mustPrompt("say something")
					t2 := time.Now()
					b.StopTimer()
					news, firsts = append(news, t1.Sub(t0)), append(firsts, t2.Sub(t0))
					e.stop()
				}
				b.ReportMetric(float64(median(news).Microseconds())/1000, "new-ms")
				b.ReportMetric(float64(median(firsts).Microseconds())/1000, "first-prompt-ms")
			})
		}
	}
}
