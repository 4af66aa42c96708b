package execrun_test

import (
	"fmt"
	"strings"

	"github.com/codexacp/codexacp/codex/execrun"
)

// A Runner turns each Invocation into a `codex exec` command line; Run
// starts it, writes the prompt to its stdin and hands each JSONL line to a
// callback (events.Parse reads them). Command shows what Run would start.
func ExampleRunner_Command() {
	r := &execrun.Runner{Path: "codex", Config: []string{`model_reasoning_effort="high"`}}
	first := execrun.Invocation{Cwd: "/src/app", Prompt: "Fix the failing test", Sandbox: "workspace-write", Model: "gpt-5.5"}
	args, _ := r.Command(first)
	fmt.Println(strings.Join(args, " "))

	// The next turn of the same conversation resumes codex's thread.
	next := first
	next.ThreadID = "0199a213-81c0-7800-8aa1-bbab2a035a53"
	args, _ = r.Command(next)
	fmt.Println(strings.Join(args, " "))
	// Output:
	// exec --json --skip-git-repo-check -C /src/app -s workspace-write -m gpt-5.5 -c model_reasoning_effort="high" -
	// exec -C /src/app -s workspace-write -c model_reasoning_effort="high" resume --json --skip-git-repo-check -m gpt-5.5 0199a213-81c0-7800-8aa1-bbab2a035a53 -
}
