// Package stores opens the store a command's --store flag or PANTO_STORE
// names, with every backend linked in; only the commands that read or
// write sessions import it (panto-turn does not, and starts faster).
package stores

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/panto-dev/panto/internal/agents"
	"github.com/panto-dev/panto/internal/cli"
	"github.com/panto-dev/panto/internal/exitcode"
	"github.com/panto-dev/panto/pkg/catalog"
	"github.com/panto-dev/panto/pkg/store"

	// The backends a store URL may name.
	_ "github.com/panto-dev/panto/pkg/filestore"
	_ "github.com/panto-dev/panto/pkg/nullstore"
	_ "github.com/panto-dev/panto/pkg/pgstore"
)

// Open opens the store the --store flag names, else PANTO_STORE,
// else the file store. A URL that names no store is a usage error; a
// store that cannot be reached, an operational one.
func Open(flag string, proc cli.IO) (store.Store, error) {
	url := flag
	if url == "" {
		url = proc.Getenv("PANTO_STORE")
	}
	s, err := store.Open(url, proc.Getenv)
	switch {
	case errors.Is(err, store.ErrBadURL):
		return nil, exitcode.New(exitcode.Usage, err)
	case err != nil:
		return nil, exitcode.New(exitcode.Failure, err)
	}
	return s, nil
}

// exits is the one table of what each store error means to a command: its
// exit code (SPEC §7) and what to say to do, "%s" for the session's name.
// A command uses it in one of three ways (a Use): after a write, after a
// read of the session it names, and for one input of many (panto-cost's,
// panto-fsck's files and sessions), where a session that is not there, or
// is no file, is a failure to read that input (exit 3), not a bad
// argument. The first row whose error err is decides; an error of none is
// a failure, unless it carries its own code.
var exits = []struct {
	err                error
	code, input        int    // the exit code; as one input of many
	write, read, other string // what to do: after a write, a read, as an input
}{
	{store.ErrNoReply, exitcode.Usage, exitcode.Usage, "append the prompt with its reply, or give --allow-empty", "", ""},
	{store.ErrNoStamp, exitcode.Usage, exitcode.Usage, "", "", ""},
	{store.ErrNoParent, exitcode.Usage, exitcode.Usage, "", "", ""},
	{store.ErrEmpty, exitcode.Usage, exitcode.Usage, "", "", ""},
	{store.ErrIsDir, exitcode.Usage, exitcode.Failure, "give a session file (panto-log new prints the path of a new one)", "give a session file (panto-log list shows them)", "give session files"},
	{catalog.ErrNotRegular, exitcode.Failure, exitcode.Failure, "", "", "give session files"},
	{store.ErrAmbiguousID, exitcode.Usage, exitcode.Usage, "", "", ""},
	{catalog.ErrNoSessionDir, exitcode.Usage, exitcode.Usage, "", "", ""},
	{store.ErrNoSuchSession, exitcode.Usage, exitcode.Failure, "", "give a session file (panto-log latest prints the newest)", ""},
	{store.ErrBadURL, exitcode.Usage, exitcode.Usage, "", "", ""},
	{store.ErrNeedsFsck, exitcode.Failure, exitcode.Failure, "nothing written; run panto-fsck %s", "", ""},
	{store.ErrNewerVersion, exitcode.Failure, exitcode.Failure, "nothing written; run panto-fsck %s", "", ""},
	{store.ErrBadRow, exitcode.Failure, exitcode.Failure, "nothing written: the database's rows are no session (written by hand?)", "", ""},
	{store.ErrBusy, exitcode.Failure, exitcode.Failure, "nothing written; try again", "", ""},
	{store.ErrLeafMoved, exitcode.Failure, exitcode.Failure, "nothing written; replay the session and retry", "", ""},
	{store.ErrConflict, exitcode.Failure, exitcode.Failure, "", "", ""},
	{store.ErrExists, exitcode.Failure, exitcode.Failure, "", "", ""},
	{store.ErrUnavailable, exitcode.Failure, exitcode.Failure, "", "", ""},
}

// A Use is how a command met a store error: what the table says depends
// on it.
type Use int

const (
	Write Use = iota // a write to the session (append, truncate, pull, push)
	Read             // a read of the one session the command names (panto-replay)
	Input            // a read of one input of many (panto-cost, panto-fsck)
)

// Error gives a store error about the session name, met after a write,
// its exit code and what to do, from the one table.
func Error(err error, name string) error { return ErrorOf(err, name, Write) }

// ErrorOf gives a store error about the session name, met as use says,
// its exit code and what to do, from the one table.
func ErrorOf(err error, name string, use Use) error {
	for _, e := range exits {
		if !errors.Is(err, e.err) {
			continue
		}
		code, do := e.code, e.write
		switch use {
		case Read:
			do = e.read
		case Input:
			code, do = e.input, e.other
		}
		switch {
		case do == "":
			return exitcode.New(code, err)
		case strings.Contains(do, "%s"):
			return exitcode.New(code, fmt.Errorf("%w: "+do, err, name))
		}
		return exitcode.New(code, fmt.Errorf("%w: %s", err, do))
	}
	var coded interface{ ExitCode() int }
	if errors.As(err, &coded) {
		return err
	}
	return exitcode.New(exitcode.Failure, err)
}

// SetWait tells a store how long its writers wait for another writer's
// lock, where it has such a wait.
func SetWait(s store.Store, d time.Duration) {
	if w, ok := s.(interface{ SetWait(time.Duration) }); ok {
		w.SetWait(d)
	}
}

// EachLog is st.Each, taking for a file store the other agents' logs a
// directory holds too (agents.IsLogPath: a Gemini CLI chat is a *.json):
// what cost, replay and fsck read of the paths they are given.
func EachLog(ctx context.Context, st store.Store, arg string, fn func(string, error) error) error {
	// A session's id (panto's, an agent's own, an import's origin) is one
	// session (SPEC §15).
	p, err := SessionArg(ctx, st, cli.IO{Getenv: os.Getenv}, arg)
	if err != nil {
		return fn(arg, err)
	}
	arg = p
	if _, files := st.(store.Files); files {
		if _, _, ok := catalog.SplitSession(arg); ok { // one session of a database: DB#SESSION
			return fn(arg, nil)
		}
		taken := 0
		err := catalog.WalkWith(arg, agents.LogPathIn(arg), func(p string, err error) error {
			taken++
			return fn(p, err)
		})
		if err != nil || taken > 0 {
			return err
		}
		// A directory with no file named as a log: its files are read as
		// named, each said to be no log (exit 1), not passed over in silence.
		for _, p := range agents.PassedOver(arg) {
			if err := fn(p, nil); err != nil {
				return err
			}
		}
		return nil
	}
	return st.Each(ctx, arg, fn)
}
