package e2e_test

import (
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/e2e/mockapi"
)

// Fast mode is codex's service tier: on the app-server each turn sends the
// picker's value and the model request carries it; codex exec cannot
// change a thread's tier after its first turn, so exec offers no picker.
func TestFastMode(t *testing.T) { eachBackend(t, testFastMode) }

func testFastMode(t *testing.T, backend string) {
	e := start(t, setup{backend: backend, fs: true})
	// The harness's first session is the one under test; its options come
	// again with a second session/new.
	resp, err := e.editor.Conn.NewSession(e.ctx, acpsdk.NewSessionRequest{Cwd: e.cwd, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	e.session = resp.SessionId
	var option *acpsdk.SessionConfigOptionSelect
	for _, o := range resp.ConfigOptions {
		if o.Select != nil && o.Select.Id == "service_tier" {
			option = o.Select
		}
	}
	if backend == "exec" {
		if option != nil {
			t.Fatalf("exec offers fast mode: %+v", option)
		}
		return
	}
	if option == nil || option.CurrentValue != "off" {
		t.Fatalf("fast mode option = %+v", option)
	}
	tierOfNextTurn := func(value string) any {
		t.Helper()
		if _, err := e.editor.Conn.SetSessionConfigOption(e.ctx, acpsdk.SetSessionConfigOptionRequest{ValueId: &acpsdk.SetSessionConfigOptionValueId{
			SessionId: e.session, ConfigId: "service_tier", Value: acpsdk.SessionConfigValueId(value)}}); err != nil {
			t.Fatalf("service_tier=%s: %v", value, err)
		}
		e.mock.Enqueue(mockapi.Reply(mockapi.Message("ok")))
		e.mustPrompt("hi")
		reqs := e.mock.Requests()
		return reqs[len(reqs)-1].Body["service_tier"]
	}
	for i, step := range []struct {
		value string
		want  any
	}{
		{"priority", "priority"},
		{"off", nil}, // cleared: the thread keeps a tier until a turn clears it
		{"priority", "priority"},
	} {
		if got := tierOfNextTurn(step.value); got != step.want {
			t.Errorf("step %d (%s): the model request's service_tier = %v, want %v", i, step.value, got, step.want)
		}
	}
}
