package events

// Subagents on the app-server run in threads of their own: the caller
// converts a child thread's notifications with an AppServer of its own and
// routes them to the parent turn whose item named the child first
// (ChildThreads), showing what ChildEvent lets through.

// ChildThreads names the child threads (subagents) an item refers to: a
// collab_tool_call's receivers, a sub_agent_activity's agent; none for any
// other item.
func (it *Item) ChildThreads() []string {
	switch it.Type {
	case ItemCollabToolCall:
		return it.ReceiverThreadIDs
	case ItemSubAgentActivity:
		if it.AgentThreadID != "" {
			return []string{it.AgentThreadID}
		}
	}
	return nil
}

// ChildEvent is an event of a subagent's thread as the parent's session
// shows it, callID being the parent's tool call item that named the
// subagent first: its tool calls as they are (its edits through our tools
// show as diffs); its completed messages, its progress and its answer, in
// that tool call's content (Item.ParentCallID), not as the agent's text;
// nothing else: reasoning, plans, errors and its turn's lifecycle are not
// the session's (the parent's turn is the one the editor sees). ok is
// false for an event not shown.
func ChildEvent(ev Event, callID string) (_ Event, ok bool) {
	if ev.Item == nil {
		return ev, false
	}
	switch ev.Type {
	case TypeItemStarted, TypeItemUpdated, TypeItemCompleted:
	default:
		return ev, false
	}
	switch ev.Item.Type {
	case ItemAgentMessage:
		if ev.Type != TypeItemCompleted || callID == "" {
			return ev, false
		}
		it := *ev.Item
		it.ParentCallID = callID
		ev.Item = &it
		return ev, true
	case ItemReasoning, ItemTodoList, ItemError:
		return ev, false
	}
	return ev, true
}
