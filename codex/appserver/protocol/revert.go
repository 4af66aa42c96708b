package protocol

// Forgetting a thread's last turns (/undo, docs/undo.md): the turns'
// ids, newest first, and the cut. Both are experimental in codex 0.169
// and 0.171 (InitializeCapabilities.ExperimentalAPI).
const (
	ThreadTurnsList Request[ThreadTurnsListParams, ThreadTurnsListResponse] = "thread/turns/list"
	ThreadRevert    Request[ThreadRevertParams, ThreadRevertResponse]       = "thread/revert"
)

// ThreadTurnsListParams page through a stored thread's turns (the thread
// need not be loaded). SortDirection "desc" lists the newest first.
type ThreadTurnsListParams struct {
	Cursor        string `json:"cursor,omitempty"`
	Limit         int    `json:"limit,omitempty"`
	SortDirection string `json:"sortDirection,omitempty"`
	ThreadID      string `json:"threadId"`
}

// ThreadTurnsListResponse is one page of turns; NextCursor is nil (or
// empty) on the last.
type ThreadTurnsListResponse struct {
	Data       []ThreadTurn `json:"data"`
	NextCursor *string      `json:"nextCursor"`
}

// ThreadTurn is one turn of a thread as thread/turns/list describes it.
type ThreadTurn struct {
	ID string `json:"id"`
}

// ThreadRevertParams cut a loaded thread's history before BeforeTurnID:
// that turn and every later one are forgotten (local files are not
// touched).
type ThreadRevertParams struct {
	BeforeTurnID string `json:"beforeTurnId"`
	ThreadID     string `json:"threadId"`
}

// ThreadRevertResponse is the answer to thread/revert: the thread (its
// turns left out).
type ThreadRevertResponse struct {
	Thread Thread `json:"thread"`
}
