package stores

import (
	"errors"
	"fmt"
	"testing"

	"github.com/panto-dev/panto/internal/exitcode"
	"github.com/panto-dev/panto/pkg/catalog"
	"github.com/panto-dev/panto/pkg/store"
)

// TestErrorOf: the one table gives every command the same exit code for
// a store error (SPEC §7), but for a session that is not there or is no
// file among many inputs (panto-cost, panto-fsck: a failure to read it,
// 3), and says what to do as the command met it.
func TestErrorOf(t *testing.T) {
	missing := store.Mark(errors.New("open missing.jsonl: no such file or directory"), store.ErrNoSuchSession)
	dir := store.Mark(errors.New(". is a directory"), store.ErrIsDir)
	for _, c := range []struct {
		name string
		err  error
		use  Use
		code int
		msg  string
	}{
		{"missing, appended to", missing, Write, exitcode.Usage, "open missing.jsonl: no such file or directory"},
		{"missing, replayed", missing, Read, exitcode.Usage, "open missing.jsonl: no such file or directory: give a session file (panto-log latest prints the newest)"},
		{"missing, one of many", missing, Input, exitcode.Failure, "open missing.jsonl: no such file or directory"},
		{"a directory, replayed", dir, Read, exitcode.Usage, ". is a directory: give a session file (panto-log list shows them)"},
		{"a directory, one of many", dir, Input, exitcode.Failure, ". is a directory: give session files"},
		{"a FIFO, one of many", fmt.Errorf("%w: f.jsonl", catalog.ErrNotRegular), Input, exitcode.Failure, "catalog: not a regular file: f.jsonl: give session files"},
		{"no sessions base, listed", fmt.Errorf("%w: HOME is not set", catalog.ErrNoSessionDir), Read, exitcode.Usage, ""},
		{"ambiguous, one of many", &store.AmbiguousError{Prefix: "01", IDs: []string{"01a", "01b"}}, Input, exitcode.Usage, ""},
		{"a bad row, written", store.ErrBadRow, Write, exitcode.Failure, store.ErrBadRow.Error() + ": nothing written: the database's rows are no session (written by hand?)"},
		{"a bad row, read", store.ErrBadRow, Read, exitcode.Failure, store.ErrBadRow.Error()},
		{"damaged, written", store.ErrNeedsFsck, Write, exitcode.Failure, store.ErrNeedsFsck.Error() + ": nothing written; run panto-fsck s.jsonl"},
		{"no reply", store.ErrNoReply, Write, exitcode.Usage, store.ErrNoReply.Error() + ": append the prompt with its reply, or give --allow-empty"},
		{"busy, one of many", store.ErrBusy, Input, exitcode.Failure, store.ErrBusy.Error()},
		{"an error of its own code", exitcode.Findingsf("x"), Input, exitcode.Findings, "x"},
		{"an error of none", errors.New("disk on fire"), Read, exitcode.Failure, "disk on fire"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := ErrorOf(c.err, "s.jsonl", c.use)
			if got := exitcode.Of(err); got != c.code {
				t.Errorf("exit code %d, want %d", got, c.code)
			}
			if c.msg != "" && err.Error() != c.msg {
				t.Errorf("says %q\nwant %q", err.Error(), c.msg)
			}
			if !errors.Is(err, c.err) && !errors.Is(c.err, err) {
				t.Errorf("%v is no longer %v", err, c.err)
			}
		})
	}
}

// TestLooksLikeID: what may be (the start of) a session id, and so is
// looked up when no file has that name: a UUID's hex and hyphens, an
// OpenCode id (ses_ and letters and digits, mixed case) or its start.
func TestLooksLikeID(t *testing.T) {
	for s, want := range map[string]bool{
		"019a0000-0000-7000":             true,
		"ABCDEF12":                       true,
		"ses_04ca851f7ffevKrKMHW3RsPK1U": true,
		"ses_":                           true,
		"ses":                            true, // too short, said so
		"ses_04ca/x":                     false,
		"session.jsonl":                  false,
		"sesame":                         false,
		"ses_a-b":                        false,
		"x.jsonl":                        false,
		"":                               false,
	} {
		if got := looksLikeID(s); got != want {
			t.Errorf("looksLikeID(%q) = %v, want %v", s, got, want)
		}
	}
}
