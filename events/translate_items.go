package events

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"
)

// How subagent and image items show in the editor: each is a tool call.

// agentImageState is the tool call state of a collab_tool_call,
// sub_agent_activity, image_view or image_generation item.
func agentImageState(done bool, it *Item) toolState {
	switch it.Type {
	case ItemCollabToolCall:
		return collabState(done, it)
	case ItemSubAgentActivity:
		return activityState(it)
	case ItemImageView:
		return imageViewState(done, it)
	}
	return imageGenerationState(done, it)
}

// titleMax bounds the part of a title taken from the model's text (a
// subagent's task, an image prompt): the whole text is in the content.
const titleMax = 100

// shortTitle is the first line of s, cut to titleMax runes.
func shortTitle(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i]) + " …"
	}
	if r := []rune(s); len(r) > titleMax {
		s = string(r[:titleMax-1]) + "…"
	}
	return s
}

// collabState shows a call of a subagent tool: the task (spawn_agent) or
// message (send_input, ...) as title and content, and once it ends the
// states of the agents it addressed, whose messages are their results
// (a wait returns the finished agents' answers).
func collabState(done bool, it *Item) toolState {
	st := toolState{kind: acpsdk.ToolKindOther, status: collabStatus(done, it.Status)}
	task := shortTitle(it.Prompt)
	agents := "agent"
	if len(it.ReceiverThreadIDs) > 1 {
		agents = fmt.Sprintf("%d agents", len(it.ReceiverThreadIDs))
	}
	switch it.Tool {
	case "spawn_agent":
		st.title = "Subagent"
	case "send_input", "send_message":
		st.title = "Message to " + agents
	case "followup_task":
		st.title = "Follow-up task for " + agents
	case "resume_agent":
		st.title = "Resume " + agents
	case "wait":
		st.title = "Wait for " + agents
	case "close_agent":
		st.title = "Close " + agents
	case "interrupt_agent":
		st.title = "Interrupt " + agents
	case "list_agents":
		st.title = "List agents"
	default:
		st.title = "Subagent tool " + it.Tool
	}
	if task != "" {
		st.title += ": " + task
	}
	input := map[string]any{"tool": it.Tool}
	if it.Prompt != "" {
		input["prompt"] = it.Prompt
		st.content = append(st.content, acpsdk.ToolContent(acpsdk.TextBlock(it.Prompt)))
	}
	if it.Model != "" {
		input["model"] = it.Model
	}
	if len(it.ReceiverThreadIDs) > 0 {
		input["receiver_thread_ids"] = it.ReceiverThreadIDs
	}
	st.rawInput = input
	if len(it.AgentsStates) > 0 {
		st.rawOutput = map[string]any{"agents_states": it.AgentsStates}
		// Receivers first, in the call's order; then any other agent.
		ids := slices.Clone(it.ReceiverThreadIDs)
		for _, id := range slices.Sorted(maps.Keys(it.AgentsStates)) {
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
		for _, id := range ids {
			s, ok := it.AgentsStates[id]
			if !ok {
				continue
			}
			text := fmt.Sprintf("Agent %s: %s", id, strings.ReplaceAll(s.Status, "_", " "))
			if s.Message != "" {
				text += "\n\n" + s.Message
			}
			st.content = append(st.content, acpsdk.ToolContent(acpsdk.TextBlock(text)))
		}
	}
	return st
}

// collabStatus maps a collab tool call's status; interrupted is failed.
func collabStatus(done bool, status string) acpsdk.ToolCallStatus {
	switch status {
	case "completed":
		return acpsdk.ToolCallStatusCompleted
	case "failed", "interrupted":
		return acpsdk.ToolCallStatusFailed
	}
	if done {
		return acpsdk.ToolCallStatusCompleted
	}
	return acpsdk.ToolCallStatusInProgress
}

// activityState shows a subagent's lifecycle step (multi-agent v2 tools):
// "Started agent /root/reviewer". A step is something that happened, not
// work that runs: completed from its item/started on (codex never
// completes a "completed" step, which would otherwise end as failed with
// the turn).
func activityState(it *Item) toolState {
	verb := "Subagent " + it.Activity
	switch it.Activity {
	case "started":
		verb = "Started agent"
	case "interacted":
		verb = "Messaged agent"
	case "interrupted":
		verb = "Interrupted agent"
	case "completed":
		verb = "Agent finished"
	}
	name := it.AgentPath
	if name == "" {
		name = it.AgentThreadID
	}
	return toolState{
		title:    strings.TrimSpace(verb + " " + name),
		kind:     acpsdk.ToolKindOther,
		status:   acpsdk.ToolCallStatusCompleted,
		rawInput: map[string]any{"activity": it.Activity, "agent_thread_id": it.AgentThreadID, "agent_path": it.AgentPath},
	}
}

// imageViewState shows the model looking at a local image (view_image).
func imageViewState(done bool, it *Item) toolState {
	st := toolState{
		title:    "View image",
		kind:     acpsdk.ToolKindRead,
		status:   acpsdk.ToolCallStatusInProgress,
		rawInput: map[string]any{"path": it.Path},
	}
	if it.Path != "" {
		st.title += " " + it.Path
		st.locations = []acpsdk.ToolCallLocation{{Path: it.Path}}
	}
	if done {
		st.status = acpsdk.ToolCallStatusCompleted
	}
	return st
}

// imageGenerationState shows an image the model generated, with the image
// itself once there is one and where codex saved it.
func imageGenerationState(done bool, it *Item) toolState {
	st := toolState{title: "Generate image", kind: acpsdk.ToolKindOther, status: acpsdk.ToolCallStatusInProgress}
	if p := shortTitle(it.RevisedPrompt); p != "" {
		st.title += ": " + p
	}
	switch {
	case it.Status == "failed" || it.Failure != "":
		st.status = acpsdk.ToolCallStatusFailed
	case done || it.Status == "completed":
		st.status = acpsdk.ToolCallStatusCompleted
	}
	out := map[string]any{"status": it.Status}
	if it.RevisedPrompt != "" {
		out["revised_prompt"] = it.RevisedPrompt
	}
	if it.Path != "" {
		out["saved_path"] = it.Path
		st.locations = []acpsdk.ToolCallLocation{{Path: it.Path}}
	}
	if it.Failure != "" {
		out["failure"] = it.Failure
		st.content = append(st.content, acpsdk.ToolContent(acpsdk.TextBlock("Image generation failed: "+it.Failure)))
	}
	if done || it.Status != "" {
		st.rawOutput = out
	}
	if it.ImageData != "" {
		st.content = append(st.content, acpsdk.ToolContent(acpsdk.ImageBlock(it.ImageData, imageMIME(it.ImageData))))
	}
	if it.Path != "" && st.status == acpsdk.ToolCallStatusCompleted {
		st.content = append(st.content, acpsdk.ToolContent(acpsdk.TextBlock("Saved to "+it.Path)))
	}
	return st
}

// imageMIME tells the image's type by the base64 of its magic number; the
// image model's default, PNG, otherwise.
func imageMIME(b64 string) string {
	switch {
	case strings.HasPrefix(b64, "/9j/"):
		return "image/jpeg"
	case strings.HasPrefix(b64, "R0lGOD"):
		return "image/gif"
	case strings.HasPrefix(b64, "UklGR"):
		return "image/webp"
	}
	return "image/png"
}
