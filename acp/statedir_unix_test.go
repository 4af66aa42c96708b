//go:build unix

package acp

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/internal/fakeeditor"
	"github.com/codexacp/codexacp/internal/sessionstore"
	"github.com/codexacp/codexacp/internal/sessionstore/sessionstoretest"
)

// Session ids of the special files sessionstoretest.Plant puts in a
// state directory.
const (
	sidFIFO    = sessionstoretest.FIFO
	sidZero    = sessionstoretest.Zero
	sidHuge    = sessionstoretest.Huge
	sidCorrupt = sessionstoretest.Corrupt
	sidFIFOLog = sessionstoretest.FIFOLog
	sidZeroLog = sessionstoretest.ZeroLog
	sidLinked  = sessionstoretest.Linked
)

// stateWait bounds every request of these tests: a regression hangs the
// request, and the test must fail rather than hang CI.
const stateWait = 30 * time.Second

// TestStateDirSpecialFiles: FIFOs, links to /dev/zero, oversized and
// corrupt files named like records or write logs never hang session/list
// or session/load: a list skips them, a load of such a record answers an
// error naming what is wrong, and a good record whose write log is special
// loads without the log.
func TestStateDirSpecialFiles(t *testing.T) {
	codexHomeWithRollout(t)
	state, cwd := t.TempDir(), t.TempDir()
	sessionstoretest.Plant(t, state, cwd, loadThreadID)
	h := startAgentWith(t, Options{Backend: &fakeBackend{}, StateDir: state}, fakeeditor.Options{})
	if _, err := h.editor.Initialize(h.ctx); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(h.ctx, stateWait)
	defer cancel()

	list, err := h.editor.Conn.ListSessions(ctx, acpsdk.ListSessionsRequest{Cwd: &cwd})
	if err != nil {
		t.Fatalf("session/list: %v", err)
	}
	var got []string
	for _, s := range list.Sessions {
		got = append(got, string(s.SessionId))
	}
	slices.Sort(got)
	if want := []string{sidFIFOLog, sidZeroLog}; !slices.Equal(got, want) {
		t.Errorf("session/list = %q, want %q", got, want)
	}

	for _, tc := range []struct{ id, want string }{
		{sidFIFO, "not a regular file (a FIFO)"},
		{sidZero, "is a symbolic link"},
		{sidHuge, "too large"},
		{sidCorrupt, "unexpected end of JSON input"},
		{sidLinked, "is a symbolic link"},
	} {
		_, err := h.editor.Conn.LoadSession(ctx, acpsdk.LoadSessionRequest{SessionId: acpsdk.SessionId(tc.id), Cwd: cwd, McpServers: []acpsdk.McpServer{}})
		if ctx.Err() != nil {
			t.Fatalf("session/load of %s did not answer within %v", tc.id, stateWait)
		}
		var re *acpsdk.RequestError
		if !errors.As(err, &re) || re.Code != -32603 || !strings.Contains(re.Message, tc.want) || !strings.Contains(re.Message, tc.id) {
			t.Errorf("session/load of %s: %v, want -32603 naming it and %q", tc.id, err, tc.want)
		}
	}
	for _, id := range []string{sidFIFOLog, sidZeroLog} {
		if _, err := h.editor.Conn.LoadSession(ctx, acpsdk.LoadSessionRequest{SessionId: acpsdk.SessionId(id), Cwd: cwd, McpServers: []acpsdk.McpServer{}}); err != nil {
			t.Errorf("session/load of %s (special write log): %v", id, err)
		}
	}
	if ctx.Err() != nil {
		t.Fatalf("requests did not answer within %v", stateWait)
	}

	// session/delete removes what cannot be loaded.
	for _, id := range []string{sidFIFO, sidZero, sidCorrupt} {
		done := make(chan error, 1)
		go func() { done <- h.agent.DeleteSession(ctx, acpsdk.SessionId(id)) }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("session/delete of %s: %v", id, err)
			}
		case <-ctx.Done():
			t.Fatalf("session/delete of %s did not answer within %v", id, stateWait)
		}
		if _, err := os.Lstat(filepath.Join(state, id+".json")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s still there after session/delete: %v", id, err)
		}
	}
}

// TestForeignRecordGrantsNoMode: a record another user could have written
// (writable by group or others here; owned by another user in
// TestRecordForeign) loads in the mode session/new gives, not in its
// stored full-access; the user's own 0600 record keeps its mode.
func TestForeignRecordGrantsNoMode(t *testing.T) {
	codexHomeWithRollout(t)
	state, cwd := t.TempDir(), t.TempDir()
	st := sessionstore.New(state, nil)
	for _, id := range []string{sidHere, sidElsewhere} {
		if err := st.Save(sessionstore.Record{SessionID: id, ThreadID: loadThreadID, Cwd: cwd, Mode: string(backend.ModeFullAccess)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(state, sidElsewhere+".json"), 0o666); err != nil {
		t.Fatal(err)
	}
	be := &fakeBackend{script: oneTurn}
	h := startAgentWith(t, Options{Backend: be, StateDir: state}, fakeeditor.Options{})
	if _, err := h.editor.Initialize(h.ctx); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]backend.Mode{sidHere: backend.ModeFullAccess, sidElsewhere: DefaultMode} {
		load, err := h.editor.Conn.LoadSession(h.ctx, acpsdk.LoadSessionRequest{SessionId: acpsdk.SessionId(id), Cwd: cwd, McpServers: []acpsdk.McpServer{}})
		if err != nil {
			t.Fatal(err)
		}
		if load.Modes == nil || load.Modes.CurrentModeId != acpsdk.SessionModeId(want) {
			t.Errorf("%s: mode = %+v, want %s", id, load.Modes, want)
		}
		if _, err := h.prompt(acpsdk.SessionId(id), "go"); err != nil {
			t.Fatal(err)
		}
		runs := be.invocations()
		if last := runs[len(runs)-1]; want == DefaultMode && last.Sandbox != "read-only" {
			t.Errorf("%s: the turn ran with sandbox %q, want read-only", id, last.Sandbox)
		}
	}
}
