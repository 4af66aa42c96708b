package e2e_test

import (
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/e2e/mockapi"
)

// session/load of a forked session replays the source's turns before its
// own: codex keeps a fork's rollout with only its own records and a base
// naming its source's (codex.OpenRolloutHistory, docs/undo.md).
func TestLoadForkReplaysSourceTurns(t *testing.T) {
	e := start(t, setup{backend: "app-server", fs: true})
	e.mock.Enqueue(mockapi.Reply(mockapi.Message("noted apple")))
	e.mustPrompt("remember the word apple")
	fork, err := e.editor.Conn.UnstableForkSession(e.ctx, acpsdk.UnstableForkSessionRequest{SessionId: e.session, Cwd: e.cwd})
	if err != nil {
		t.Fatal(err)
	}
	e.session = fork.SessionId
	e.mock.Enqueue(mockapi.Reply(mockapi.Message("the fork answers")))
	e.mustPrompt("the fork's own question")
	e.stop() // the app-server lets go of the threads when it exits

	e2 := e.restart(setup{backend: "app-server", fs: true})
	if _, err := e2.editor.Conn.LoadSession(e2.ctx, acpsdk.LoadSessionRequest{SessionId: fork.SessionId, Cwd: e.cwd, McpServers: []acpsdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	var user []string
	for _, u := range e2.editor.Updates() {
		if c := u.Update.UserMessageChunk; c != nil && c.Content.Text != nil {
			user = append(user, c.Content.Text.Text)
		}
	}
	if got := strings.Join(user, " | "); got != "remember the word apple | the fork's own question" {
		t.Errorf("the fork's replayed prompts: %q", got)
	}
	if got := agentText(e2); got != "noted applethe fork answers" {
		t.Errorf("the fork's replayed answers: %q", got)
	}
}
