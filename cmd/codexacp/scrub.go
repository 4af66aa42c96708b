package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"strings"

	"github.com/codexacp/codexacp/internal/regularfile"
	"github.com/codexacp/codexacp/record"
)

// maxTranscriptBytes bounds a transcript the record commands read: stored
// rollouts make a long session's file tens of megabytes, never gigabytes.
const maxTranscriptBytes = 1 << 30

// replaceFlag collects repeated --replace OLD=NEW flags.
type replaceFlag []record.Replacement

func (r *replaceFlag) String() string { return fmt.Sprint(len(*r)) }

// Set splits OLD=NEW at the first = that no backslash escapes (\= is a =
// of OLD, \\ a backslash).
func (r *replaceFlag) Set(v string) error {
	var old strings.Builder
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '\\' && i+1 < len(v) && (v[i+1] == '=' || v[i+1] == '\\'):
			old.WriteByte(v[i+1])
			i++
		case c == '=':
			if old.Len() == 0 {
				return errors.New("nothing to replace before =")
			}
			*r = append(*r, record.Replacement{Old: old.String(), New: v[i+1:]})
			return nil
		default:
			old.WriteByte(c)
		}
	}
	return fmt.Errorf("expected OLD=NEW, got %q", v)
}

const recordUsage = `Usage: codexacp record scrub [--replace OLD=NEW]... [-o OUT] [--check] FILE

Rewrites the --record transcript FILE with every OLD replaced by NEW, in
every message, command, file content, tool argument and result, and the
content hashes recomputed, so that the scrubbed transcript still replays
as a test (OLD and NEW must have as many lines). --check lists what still
looks private (paths under a home folder, your user and machine names,
key-like strings, email addresses) and fails when it finds any; alone, it
changes nothing. The first step of a bug report (docs/replay.md).

`

// recordCommand runs `codexacp record …`.
func recordCommand(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "scrub" {
		fmt.Fprint(stderr, recordUsage)
		if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
			return nil
		}
		return fmt.Errorf("record: unknown command %q", args[0])
	}
	var (
		replace replaceFlag
		out     string
		check   bool
	)
	fs := flag.NewFlagSet("codexacp record scrub", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, recordUsage, "Flags:\n")
		fs.PrintDefaults()
	}
	fs.Var(&replace, "replace", "replace OLD by NEW everywhere (OLD=NEW; \\= is a = of OLD); repeatable")
	fs.StringVar(&out, "o", "", "write the scrubbed transcript to this file (default: FILE itself)")
	fs.BoolVar(&check, "check", false, "list what looks private (after the replacements); fail when something is found")
	// Flags may come before or after FILE.
	var files []string
	rest := args[1:]
	for {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil
			}
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if len(files) != 1 {
		fs.Usage()
		return errors.New("record scrub: want one transcript")
	}
	if len(replace) == 0 && !check {
		fs.Usage()
		return errors.New("record scrub: nothing to do (--replace or --check)")
	}
	path := files[0]
	data, err := regularfile.ReadFile(path, maxTranscriptBytes, regularfile.FollowLink)
	if err != nil {
		return fmt.Errorf("record scrub: %w", err)
	}
	if len(replace) > 0 {
		res, err := record.Scrub(data, replace)
		if err != nil {
			return fmt.Errorf("record scrub %s: %w", path, err)
		}
		if out == "" {
			out = path
		}
		if err := writeTranscript(out, res.Data); err != nil {
			return fmt.Errorf("record scrub: %w", err)
		}
		fmt.Fprintf(stdout, "%s: %d lines changed, %d content hashes recomputed\n", out, res.Lines, res.Hashes)
		if len(res.Unknown) > 0 {
			fmt.Fprintf(stdout, "note: %d hashes are of contents the transcript does not hold whole (a file as an edit left it); if a replaced text was in one, the replay shows that hash as a difference\n", len(res.Unknown))
		}
		data = res.Data
		path = out
	}
	if !check {
		return nil
	}
	findings := record.Check(data, thisMachine())
	for _, f := range findings {
		fmt.Fprintf(stdout, "%s:%s\n", path, f)
	}
	if len(findings) > 0 {
		return fmt.Errorf("%s: %d things look private (%s): replace them with --replace OLD=NEW, or check that they may be posted",
			path, len(findings), strings.Join(record.Kinds(findings), ", "))
	}
	fmt.Fprintf(stdout, "%s: nothing looks private\n", path)
	return nil
}

// thisMachine is what Check looks for of the user running it.
func thisMachine() record.Machine {
	var m record.Machine
	m.Home, _ = os.UserHomeDir()
	m.Host, _ = os.Hostname()
	if u, err := user.Current(); err == nil {
		m.User = u.Username
		if i := strings.LastIndexByte(m.User, '\\'); i >= 0 { // DOMAIN\user on Windows
			m.User = m.User[i+1:]
		}
	}
	return m
}

// writeTranscript replaces path with data atomically (a temporary file in
// its directory, renamed over it), readable by the user only, as the
// recorder makes transcripts.
func writeTranscript(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".codexacp-scrub-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after a successful rename, nothing is there
	if err := f.Chmod(0o600); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
