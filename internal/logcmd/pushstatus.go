package logcmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/panto-dev/panto/internal/cli"
	"github.com/panto-dev/panto/internal/exitcode"
	"github.com/panto-dev/panto/internal/tty"
	"github.com/panto-dev/panto/pkg/scan"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/panto-dev/panto/pkg/store"
)

// sessionStatus is what push --status says of one session.
type sessionStatus struct {
	Session  string `json:"session"`
	Path     string `json:"path"`
	Local    place  `json:"local"`
	Database *place `json:"database"` // nil: not in the database
	State    string `json:"state"`    // same, behind (the database lacks lines), ahead, differs, missing, damaged
}

type place struct {
	Entries int64 `json:"entries"`
	Bytes   int64 `json:"bytes"`
}

// status compares every session file the arguments name with the
// database.
func (c *pushCmd) status(ctx context.Context, st store.Store, proc cli.IO, out io.Writer) error {
	fs, ok := st.(store.Files)
	if !ok {
		return exitcode.Usagef("push --status compares file sessions: run it without --store (or PANTO_STORE) and name the database with --to")
	}
	db, err := database(ctx, c.To)
	if err != nil {
		return err
	}
	defer db.Close()
	all, err := db.FollowsAll(ctx)
	if err != nil {
		return exitcode.New(exitcode.Failure, err)
	}
	paths := c.Paths
	if len(paths) == 0 {
		base, err := fs.BaseDir()
		if err != nil {
			return exitcode.New(exitcode.Usage, err)
		}
		paths = []string{base}
	}
	var rows []sessionStatus
	var failed error
	for _, arg := range paths {
		fs.Each(ctx, arg, func(path string, err error) error {
			if err != nil {
				if !errors.Is(err, os.ErrNotExist) || arg != path {
					failed = err
					cli.Errorf(proc.Stderr, name, "%s: %v", path, err)
				}
				return nil
			}
			s, err := statusOf(ctx, fs, db, all, path)
			if err != nil {
				failed = err
				cli.Errorf(proc.Stderr, name, "%s: %v", path, err)
				return nil
			}
			rows = append(rows, s)
			return nil
		})
	}
	agree := true
	if c.JSON {
		enc := json.NewEncoder(out)
		enc.SetEscapeHTML(false)
		for _, r := range rows {
			enc.Encode(r)
			agree = agree && r.State == "same"
		}
	} else {
		table := [][]string{{"SESSION", "LOCAL", "DATABASE", "STATE", "PATH"}}
		for _, r := range rows {
			d := "-"
			if r.Database != nil {
				d = fmt.Sprintf("%d entries, %d B", r.Database.Entries, r.Database.Bytes)
			}
			table = append(table, []string{tty.Line(r.Session), fmt.Sprintf("%d entries, %d B", r.Local.Entries, r.Local.Bytes), d, r.State, tty.Line(r.Path)})
			agree = agree && r.State == "same"
		}
		writeColumns(out, table)
	}
	switch {
	case failed != nil:
		return exitcode.Failuref("some sessions could not be compared (see above)")
	case !agree:
		return exitcode.Findingsf("some sessions and the database do not agree")
	}
	return nil
}

// statusOf compares one session file with the database.
func statusOf(ctx context.Context, fs store.Files, db store.Follower, all map[string]store.Followed, path string) (sessionStatus, error) {
	r, err := fs.OpenFile(path)
	if err != nil {
		return sessionStatus{}, err
	}
	defer r.Close()
	if !r.Regular() {
		return sessionStatus{}, fmt.Errorf("not a regular file: not compared")
	}
	s := sessionStatus{Path: path}
	rd := scan.NewReader(io.NewSectionReader(r, 0, r.Size()), 0)
	for n := 0; ; n++ {
		line, off, term, err := rd.Next()
		if err == io.EOF || err == nil && !term {
			break
		}
		if err != nil {
			return s, err
		}
		c := session.Classify(line)
		if n == 0 {
			if c.Kind != session.KindHeader || !session.IsUUID(c.ID) {
				return s, fmt.Errorf("no valid session header: run panto-fsck %s", path)
			}
			s.Session = c.ID
		} else if c.Kind == session.KindCorrupt || c.Kind == session.KindHeader {
			if d, _ := scan.DamageAt(r, r.Size(), n+1, off, line, c.Kind); d.Verdict == scan.Damaged {
				s.State = "damaged"
			}
			break
		} else {
			s.Local.Entries++
		}
		s.Local.Bytes = off + int64(len(line)) + 1
	}
	f, ok := all[s.Session]
	if !ok {
		if s.State == "" {
			s.State = "missing"
		}
		return s, nil
	}
	s.Database = &place{Entries: f.Entries, Bytes: f.Bytes}
	if s.State != "" {
		return s, nil
	}
	shared := int64(-1)
	if f.Agrees() && f.Pos.SessionBytes <= s.Local.Bytes && prefixSum(r, f.Pos.SessionBytes) == f.Pos.SessionSum {
		shared = f.Entries
	} else {
		sh, err := db.Shared(ctx, s.Session, scan.NewReader(io.NewSectionReader(r, 0, s.Local.Bytes), 0))
		if err != nil && !errors.Is(err, store.ErrConflict) {
			return s, err
		}
		if err == nil {
			shared = sh.Entries
			if sh.Entries < sh.Have && sh.Entries < s.Local.Entries {
				shared = -1
			}
		}
	}
	switch {
	case shared < 0:
		s.State = "differs"
	case f.Entries == s.Local.Entries && shared == f.Entries:
		s.State = "same"
	case f.Entries < s.Local.Entries:
		s.State = "behind"
	default:
		s.State = "ahead"
	}
	return s, nil
}
