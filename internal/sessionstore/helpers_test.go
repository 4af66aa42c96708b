package sessionstore

import (
	"encoding/json"

	"github.com/codexacp/codexacp/internal/testkit"
)

// Session ids of the tests, of newSessionID's form, and a codex thread id.
const (
	sidUnknown   = "sess_00000000000000000000000000000000"
	sidGone      = "sess_00000000000000000000000000000001"
	sidHere      = "sess_00000000000000000000000000000002"
	sidElsewhere = "sess_00000000000000000000000000000003"
	threadID     = "01a20602-22f9-7a33-a8c4-4064f84c2b10"
)

// malformedSessionIDs are ids newSessionID cannot make, some shaped to
// reach outside the state directory.
var malformedSessionIDs = []string{
	"", "../../x", "sess_../../etc/passwd", "/etc/passwd", ".json", "sess_unknown",
	"sess_0000000000000000000000000000000", "sess_0000000000000000000000000000000A",
	"sess_00000000000000000000000000000000/..", "sess_00000000000000000000000000000000\x00",
}

// discardLogger is testkit.DiscardLogger, under the name these tests use.
var discardLogger = testkit.DiscardLogger

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
