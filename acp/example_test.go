package acp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"

	"github.com/codexacp/codexacp/acp"
	"github.com/codexacp/codexacp/backend"
)

// noTurns is a backend for the example (the command uses one of
// backend/codexexec or backend/appserver): embedding backend.Unsupported,
// it offers nothing beyond Run.
type noTurns struct{ backend.Unsupported }

func (noTurns) Name() string                                            { return "none" }
func (noTurns) Run(context.Context, backend.Turn, backend.Output) error { return nil }

// An agent speaks ACP on any reader and writer (the command passes stdin
// and stdout); Serve returns nil once the input ends.
func ExampleNewAgent() {
	agent := acp.NewAgent(acp.Options{Backend: noTurns{}, Version: "1.0.0", Logger: slog.New(slog.DiscardHandler)})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- agent.Serve(context.Background(), inR, outW)
		outW.Close()
	}()

	fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	line, _ := bufio.NewReader(outR).ReadBytes('\n')
	var resp struct {
		Result struct {
			ProtocolVersion int `json:"protocolVersion"`
			AgentInfo       struct {
				Name, Version string
			} `json:"agentInfo"`
		} `json:"result"`
	}
	if err := json.Unmarshal(line, &resp); err != nil {
		fmt.Println(err)
	}
	fmt.Println(resp.Result.AgentInfo.Name, resp.Result.AgentInfo.Version, "speaks ACP", resp.Result.ProtocolVersion)

	inW.Close() // the editor went away
	fmt.Println("Serve:", <-served)
	// Output:
	// codexacp 1.0.0 speaks ACP 1
	// Serve: <nil>
}
