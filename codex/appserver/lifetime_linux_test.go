package appserver

import (
	"os"
	"os/exec"
	"testing"

	"github.com/codexacp/codexacp/codex/proc/proctest"
)

// TestAppServerDiesWithAgent: an agent killed without cleaning up takes the
// app-server's process group with it (parent-death SIGINT, then the
// watchdog), and OS threads that end meanwhile do not.
func TestAppServerDiesWithAgent(t *testing.T) {
	for _, mode := range []string{"", "ignore-eof"} { // the latter also ignores SIGINT
		t.Run("mode "+mode, func(t *testing.T) {
			agent := exec.Command(os.Args[0], "-test.run=^$")
			agent.Env = append(os.Environ(), appServerAgentEnv+"="+mode, "GORACE=atexit_sleep_ms=0")
			proctest.CheckGroupDiesWithAgent(t, agent, "app-server", "the app-server")
		})
	}
}
