package appserver_test

import (
	"context"
	"fmt"
	"os"

	"github.com/codexacp/codexacp/codex/appserver"
	"github.com/codexacp/codexacp/codex/appserver/protocol"
)

// Call sends a request of package protocol: the method's constant names
// its params and result types, so nothing is spelled out by hand. Here the
// app-server is this test binary standing in for codex (see TestMain);
// Path would be codex's executable (codex.Find).
func ExampleCall() {
	ctx := context.Background()
	server, err := appserver.Start(ctx, appserver.Options{
		Path: os.Args[0],
		Env:  append(os.Environ(), "CODEXACP_TEST_FAKE_APPSERVER="),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer server.Close()

	res, err := appserver.Call(ctx, server, protocol.SkillsList, protocol.SkillsListParams{Cwds: []string{"/src/app"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, entry := range res.Data {
		for _, skill := range entry.Skills {
			fmt.Printf("%s (%s, enabled %v): %s\n", skill.Name, skill.Scope, skill.Enabled, skill.Path)
		}
	}
	// Output:
	// greet (repo, enabled true): /src/app/.agents/skills/greet/SKILL.md
	// off (user, enabled false):
}
