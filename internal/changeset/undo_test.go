package changeset

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

func TestUndo(t *testing.T) {
	ctx := context.Background()
	setup := func(t *testing.T) (*Log, *memFiles) {
		l, _ := newLog(t, Limits{})
		turn(t, l, "t1", [3]string{"/w/keep", "k1", "k2"})
		turn(t, l, "t2",
			[3]string{"/w/a.go", "old", "new"},
			[3]string{"/w/made.txt", "", "made"},
			[3]string{"/w/gone.txt", "gone", ""},
			[3]string{"/w/user.txt", "u1", "u2"},
			[3]string{"/w/big.bin", "?", "x"},
		)
		return l, newMemFiles(map[string]string{"/w/keep": "k2", "/w/a.go": "new", "/w/made.txt": "made", "/w/user.txt": "u2 and the user's", "/w/big.bin": "x"})
	}
	short := func(p string) string { return filepath.Base(p) }

	t.Run("codex forgets, files restored, one question", func(t *testing.T) {
		l, files := setup(t)
		var questions [][]string
		var forgot []string
		res, err := l.Undo(ctx, 1, Undo{Files: files, Writer: files,
			Ask: func(_ context.Context, steps []Step) (map[string]bool, error) {
				var q []string
				for _, s := range steps {
					q = append(q, short(s.Path))
				}
				questions = append(questions, q)
				return map[string]bool{"/w/made.txt": true}, nil
			},
			Forget: func(_ context.Context, p Plan) error {
				for _, tr := range p.Turns {
					forgot = append(forgot, tr.ID)
				}
				if len(files.writes) != 0 {
					t.Error("files written before codex forgot")
				}
				return nil
			}})
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(questions) != "[[made.txt user.txt]]" || fmt.Sprint(forgot) != "[t2]" {
			t.Errorf("asked %v, forgot %v", questions, forgot)
		}
		want := map[string]string{"/w/keep": "k2", "/w/a.go": "old", "/w/gone.txt": "gone", "/w/user.txt": "u2 and the user's", "/w/big.bin": "x"}
		if fmt.Sprint(files.files) != fmt.Sprint(want) {
			t.Errorf("files %v\nwant %v", files.files, want)
		}
		if ts := l.Turns(); len(ts) != 1 || ts[0].ID != "t1" || res.ForgetErr != nil {
			t.Errorf("turns left %+v, %v", ts, res.ForgetErr)
		}
		wantSummary := "Undid the last turn.\n" +
			"Restored a.go, recreated gone.txt, removed made.txt.\n" +
			"Left as they are: big.bin (its content before was not kept); user.txt (changed since, not allowed).\n" +
			"Codex no longer has these turns in its conversation."
		if got := res.Summary(short); got != wantSummary {
			t.Errorf("summary:\n%s\nwant:\n%s", got, wantSummary)
		}
	})
	t.Run("ask mode: every write asked, a refusal leaves the files", func(t *testing.T) {
		l, files := setup(t)
		var asked []string
		res, err := l.Undo(ctx, 1, Undo{Files: files, Writer: files, AskAll: true,
			Ask: func(_ context.Context, steps []Step) (map[string]bool, error) {
				for _, s := range steps {
					asked = append(asked, short(s.Path))
				}
				return map[string]bool{"/w/a.go": true}, nil
			}})
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(asked) != "[a.go gone.txt made.txt user.txt]" || fmt.Sprint(files.writes) != "[write /w/a.go]" {
			t.Errorf("asked %v, wrote %v", asked, files.writes)
		}
		if got := res.Summary(short); !strings.Contains(got, "Restored a.go.") || !strings.Contains(got, "gone.txt (not allowed)") {
			t.Errorf("summary:\n%s", got)
		}
	})
	t.Run("codex cannot forget: nothing is done", func(t *testing.T) {
		l, files := setup(t)
		_, err := l.Undo(ctx, 2, Undo{Files: files, Writer: files,
			Forget: func(context.Context, Plan) error { return errors.New("thread not found") }})
		if !errors.Is(err, ErrCodexRemembers) || len(files.writes) != 0 || l.Len() != 2 {
			t.Errorf("err %v, writes %v, %d turns", err, files.writes, l.Len())
		}
	})
	t.Run("the question is cancelled: nothing is done", func(t *testing.T) {
		l, files := setup(t)
		forgot := false
		_, err := l.Undo(ctx, 1, Undo{Files: files, Writer: files,
			Ask:    func(context.Context, []Step) (map[string]bool, error) { return nil, context.Canceled },
			Forget: func(context.Context, Plan) error { forgot = true; return nil }})
		if !errors.Is(err, context.Canceled) || forgot || len(files.writes) != 0 || l.Len() != 2 {
			t.Errorf("err %v, forgot %v, writes %v, %d turns", err, forgot, files.writes, l.Len())
		}
	})
	t.Run("codex cannot be told: files only, said so", func(t *testing.T) {
		l, files := setup(t)
		res, err := l.Undo(ctx, 2, Undo{Files: files, Writer: files})
		if err != nil {
			t.Fatal(err)
		}
		want := "Undid the last 2 turns.\n" +
			"Restored a.go, recreated gone.txt, restored keep.\n" +
			"Left as they are: big.bin (its content before was not kept); made.txt (created by the turns, removal not allowed); user.txt (changed since, not allowed).\n" +
			"Codex still has these turns in its conversation: only the files were restored."
		if got := res.Summary(short); got != want {
			t.Errorf("summary:\n%s\nwant:\n%s", got, want)
		}
	})
	t.Run("during a turn", func(t *testing.T) {
		l, files := setup(t)
		l.BeginTurn("t3")
		if _, err := l.Undo(ctx, 1, Undo{Files: files, Writer: files}); !errors.Is(err, ErrTurnRunning) {
			t.Errorf("undo during a turn: %v", err)
		}
	})
}
