// Package mcp is the MCP server that gives Codex its file tools
// (read_text_file, write_text_file, edit_text_file, multi_edit_text_file,
// replace_text_lines, insert_text_lines, append_text_file).
//
// Each ACP session gets its own server ([NewServer]), bound to that session's
// fsops engine and to an [Observer] through which the ACP layer reports every
// call to the editor and asks the user before a write. One [Host] per agent
// process serves all of them over streamable HTTP on 127.0.0.1 and, where it
// can, on a private unix socket that codex reaches through a relay process
// (the agent's binary as `codexacp mcp-relay`, [RunRelay]); a random token
// registered with the host selects the session on either route.
//
// Every tool result carries structuredContent, because Codex shows the model
// only the structured content when a result has it: the fsops result struct
// on success, {"error": {"code", "message", "hint"}} with isError on failure.
package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"runtime/debug"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codexacp/codexacp/fsops"
	"github.com/codexacp/codexacp/internal/recovery"
)

// Call is one tools/call as the observer sees it.
type Call struct {
	// ID is unique per call (random), usable as an ACP toolCallId.
	ID string
	// Tool is the tool name, e.g. fsops.ToolEditTextFile.
	Tool string
	// Arguments are the raw arguments as the client sent them (possibly
	// invalid: the observer hears of calls that fail validation too).
	Arguments json.RawMessage
	// Path is the "path" argument: cleaned when absolute, as given when not,
	// "" when missing or not a string.
	Path string
}

// Observer is told about every tool call. The ACP layer implements it to
// emit tool_call / tool_call_update and to ask the user for permission.
// Calls of one tool call happen in order on the goroutine serving it;
// different tool calls may run concurrently.
type Observer interface {
	// CallStarted is called when a call arrives, before its arguments are
	// validated and before anything is read. It returns the context the
	// call runs under: ctx, or one derived from it that also ends with
	// whatever the call belongs to (the ACP layer ends calls with their
	// prompt turn, so a dead codex cannot leave a call holding a file).
	CallStarted(ctx context.Context, c *Call) context.Context
	// BeforeWrite is called with the computed change after validation and
	// before the write. A non-nil error vetoes the write: nothing is written
	// and the model gets the error (an *fsops.Error as it is, anything else
	// as "Permission denied: {path}"). Never called for read_text_file.
	BeforeWrite(ctx context.Context, c *Call, ch *fsops.Change) error
	// CallFinished is called once the call is done, with either the fsops
	// result (e.g. *fsops.EditResult) or the error, never both.
	CallFinished(ctx context.Context, c *Call, result any, err *fsops.Error)
}

// NewServer returns an MCP server offering the file tools on engine. obs
// may be nil. The server can be registered with a [Host] or connected to
// any go-sdk transport (tests use mcpsdk.NewInMemoryTransports).
func NewServer(engine *fsops.Engine, obs Observer) *mcpsdk.Server {
	s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "codexacp", Title: "codexacp file tools", Version: version()},
		&mcpsdk.ServerOptions{Instructions: serverInstructions})
	for _, spec := range specs() {
		s.AddTool(spec.tool, handler(engine, obs, spec))
	}
	return s
}

const serverInstructions = "File tools that read and edit files through the user's editor, so every change is shown " +
	"to the user as a diff (and may need their approval). Use them for all file edits. Paths must be absolute. " +
	"Read a file with read_text_file before editing it and pass its hash along. " +
	"Failures come back as {\"error\": {\"code\", \"message\", \"hint\"}}."

// handler runs one tool call: report it, validate, run the engine with the
// observer's veto in the write path, report the outcome, shape the result.
func handler(engine *fsops.Engine, obs Observer, spec toolSpec) mcpsdk.ToolHandler {
	name := spec.tool.Name
	return func(ctx context.Context, req *mcpsdk.CallToolRequest) (res *mcpsdk.CallToolResult, _ error) {
		// The go-sdk serves each call on a goroutine of its own and recovers
		// nothing: a panic anywhere in the call (the observer's reports
		// included) is this call's internal error. One in the tool itself is
		// also reported to the observer (runGuarded).
		defer func() {
			if recovery.Handle(loggerFrom(ctx), "file tool "+name, recover()) != nil {
				res = errorResult(internalToolError(name, "This is a bug in codexacp; the file may or may not have changed: read it again before editing it. Tell the user."))
			}
		}()
		args := parseArguments(req.Params.Arguments)
		c := &Call{ID: newCallID(), Tool: name, Arguments: req.Params.Arguments, Path: args.path()}
		var before fsops.BeforeWrite
		if obs != nil {
			ctx = obs.CallStarted(ctx, c)
			before = func(ctx context.Context, ch *fsops.Change) error { return obs.BeforeWrite(ctx, c, ch) }
		}
		result, err := runGuarded(ctx, engine, args, before, spec)
		var terr *fsops.Error
		if err != nil {
			terr = toolError(err)
			result = nil
		}
		if obs != nil {
			obs.CallFinished(ctx, c, result, terr)
		}
		if terr != nil {
			return errorResult(terr), nil
		}
		return successResult(c, result), nil
	}
}

// runGuarded runs a tool, turning a panic into a tool error: one bad call
// must not take down the agent and every session with it. The panic goes to
// the serving host's logger.
func runGuarded(ctx context.Context, engine *fsops.Engine, args *arguments, before fsops.BeforeWrite, spec toolSpec) (result any, err error) {
	defer func() {
		if recovery.Handle(loggerFrom(ctx), "file tool "+spec.tool.Name, recover()) != nil {
			result, err = nil, internalToolError(spec.tool.Name, "This is a bug in codexacp; nothing was written. Tell the user.")
		}
	}()
	return spec.run(ctx, engine, args, before)
}

// internalToolError is a call's answer when codexacp panicked in it.
func internalToolError(tool, hint string) *fsops.Error {
	return &fsops.Error{Code: fsops.CodeInternal, Message: fmt.Sprintf("Internal error in %s", tool), Hint: hint}
}

// newCallID returns 96 random bits in hex. crypto/rand.Read never fails.
func newCallID() string {
	var b [12]byte
	rand.Read(b[:])
	return "acp_" + hex.EncodeToString(b[:])
}

// version is the main module's version, "(devel)" in development builds.
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}
