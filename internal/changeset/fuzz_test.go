package changeset

import (
	"fmt"
	"testing"
)

// FuzzDecodeIndex: an index read back from the state directory is data.
// DecodeIndex never panics, and what it takes encodes again to an index it
// takes the same way, with only absolute clean paths and hash names that
// cannot reach outside a Dir.
func FuzzDecodeIndex(f *testing.F) {
	good, _ := EncodeIndex([]Turn{{ID: "t1", CodexTurn: "019a", Files: []FileChange{
		{Path: "/w/a", Before: Version{Exists: true, Hash: HashOf([]byte("x")), Size: 1, Kept: true}, After: Missing},
		{Path: "/w/b", Before: Missing, After: Version{Exists: true, Size: -1}},
	}, Unrecorded: 2}})
	f.Add(good)
	f.Add([]byte(`{"version":1,"turns":[]}`))
	f.Add([]byte(`{"version":1,"turns":[{"id":"t","files":[{"path":"/a/../b","before":{},"after":{}}]}]}`))
	f.Add([]byte(`{"version":1,"turns":[{"id":"t","files":[{"path":"/a","before":{"exists":true,"hash":"../../x","kept":true},"after":{}}]}]}`))
	f.Add([]byte(`{"version":1,"turns":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		turns, err := DecodeIndex(data)
		if err != nil {
			return
		}
		for _, tr := range turns {
			for _, c := range tr.Files {
				if c.Before.Kept && !ValidHash(c.Before.Hash) {
					t.Fatalf("kept content named %q", c.Before.Hash)
				}
			}
		}
		again, err := EncodeIndex(turns)
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodeIndex(again)
		if err != nil {
			t.Fatalf("re-encoded index refused: %v\n%s", err, again)
		}
		if fmt.Sprint(back) != fmt.Sprint(turns) && !(len(back) == 0 && len(turns) == 0) {
			t.Fatalf("round trip changed the turns:\n%+v\n%+v", turns, back)
		}
	})
}
