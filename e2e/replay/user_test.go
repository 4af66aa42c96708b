package replay_test

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// userDir holds transcripts users recorded (--record) and attached to bug
// reports, kept as regression tests. It is not the corpus: `just
// record-corpus` re-records the corpus and deletes its transcripts first,
// never these (TestCorpusRecordingKeepsUserTranscripts).
const userDir = "../testdata/user-transcripts"

// TestUserTranscripts replays every user transcript; each is a subtest
// named after its file, which -run selects alone:
//
//	go test ./e2e/replay/ -run '^TestUserTranscripts$/^Name$'
func TestUserTranscripts(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join(userDir, "*.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	replayEach(t, files)
}

// TestCorpusRecordingKeepsUserTranscripts reads the justfile's
// record-corpus recipe: what it deletes (rm) must not reach the user
// transcripts, which live outside the corpus folder, and a user transcript
// must not be named like a corpus one.
func TestCorpusRecordingKeepsUserTranscripts(t *testing.T) {
	recipe := justRecipe(t, "../../justfile", "record-corpus")
	if len(recipe) == 0 {
		t.Fatal("the justfile has no record-corpus recipe")
	}
	user, err := filepath.Glob(filepath.Join(userDir, "*"))
	if err != nil || len(user) == 0 {
		t.Fatalf("no user transcripts to protect (%v)", err)
	}
	removes := 0
	for _, line := range recipe {
		fields := strings.Fields(line)
		if len(fields) == 0 || fields[0] != "rm" {
			continue
		}
		removes++
		for _, pattern := range fields[1:] {
			if strings.HasPrefix(pattern, "-") {
				continue
			}
			for _, u := range user {
				// The recipe runs from the repository root.
				rel := filepath.ToSlash(filepath.Clean(filepath.Join("e2e/replay", u)))
				if ok, _ := filepath.Match(pattern, rel); ok || strings.HasPrefix(rel, strings.TrimSuffix(pattern, "*")+"/") {
					t.Errorf("the recipe's %q deletes the user transcript %s", line, rel)
				}
			}
		}
	}
	if removes == 0 {
		t.Error("the recipe deletes nothing: then it does not start from an empty corpus either; update this test")
	}
	if rel, err := filepath.Rel(corpusDir, userDir); err != nil || !strings.HasPrefix(rel, "..") {
		t.Errorf("the user transcripts (%s) lie inside the corpus (%s)", userDir, corpusDir)
	}
}

// justRecipe returns the command lines of a justfile recipe.
func justRecipe(t *testing.T, justfile, name string) []string {
	t.Helper()
	f, err := os.Open(justfile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, name+":") || strings.HasPrefix(line, name+" "):
			in = true
		case in && (strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t")):
			lines = append(lines, strings.TrimSpace(line))
		case in && strings.TrimSpace(line) != "":
			return lines
		}
	}
	return lines
}
