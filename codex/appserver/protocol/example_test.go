package protocol_test

import (
	"fmt"

	"github.com/codexacp/codexacp/codex/appserver/protocol"
)

// A Handler reads a server request's params with the request's Decode and
// answers with its result type.
func ExampleServerRequest_Decode() {
	params := []byte(`{"threadId":"t1","turnId":"u1","itemId":"i1","command":"make test","cwd":"/src/app","startedAtMs":1}`)
	req, err := protocol.CommandExecutionRequestApproval.Decode(params)
	if err != nil {
		fmt.Println(err)
		return
	}
	answer := protocol.CommandExecutionRequestApprovalResponse{Decision: protocol.DecisionAccept}
	fmt.Printf("%s in %s → %s\n", req.Command, req.Cwd, answer.Decision)
	// Output:
	// make test in /src/app → accept
}
