// Package stores opens the store a command's --store flag or PANTO_STORE
// names, with every backend linked in; only the commands that read or
// write sessions import it (panto-turn does not, and starts faster).
package stores

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/panto-dev/panto/internal/cli"
	"github.com/panto-dev/panto/pkg/exitcode"
	"github.com/panto-dev/panto/pkg/store"

	// The backends a store URL may name.
	_ "github.com/panto-dev/panto/pkg/filestore"
	_ "github.com/panto-dev/panto/pkg/nullstore"
	_ "github.com/panto-dev/panto/pkg/pgstore"
)

// Open opens the store the --store flag names, else PANTO_STORE,
// else the file store. A URL that names no store is a usage error; a
// store that cannot be reached, an operational one.
func Open(flag string, io cli.IO) (store.Store, error) {
	url := flag
	if url == "" {
		url = io.Getenv("PANTO_STORE")
	}
	s, err := store.Open(url, io.Getenv)
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
// The first whose error err is decides; an error of none is a failure.
var exits = []struct {
	err  error
	code int
	do   string
}{
	{store.ErrNoReply, exitcode.Usage, "append the prompt with its reply, or give --allow-empty"},
	{store.ErrNoStamp, exitcode.Usage, ""},
	{store.ErrNoParent, exitcode.Usage, ""},
	{store.ErrEmpty, exitcode.Usage, ""},
	{store.ErrIsDir, exitcode.Usage, ""},
	{store.ErrAmbiguousID, exitcode.Usage, ""},
	{store.ErrNoSuchSession, exitcode.Usage, ""},
	{store.ErrBadURL, exitcode.Usage, ""},
	{store.ErrNeedsFsck, exitcode.Failure, "nothing written; run panto-fsck %s"},
	{store.ErrNewerVersion, exitcode.Failure, "nothing written; run panto-fsck %s"},
	{store.ErrBadRow, exitcode.Failure, "nothing written: the database's rows are no session (written by hand?)"},
	{store.ErrBusy, exitcode.Failure, "nothing written; try again"},
	{store.ErrLeafMoved, exitcode.Failure, "nothing written; replay the session and retry"},
	{store.ErrConflict, exitcode.Failure, ""},
	{store.ErrExists, exitcode.Failure, ""},
	{store.ErrUnavailable, exitcode.Failure, ""},
}

// Error gives a store error about the session name its exit code and what
// to do, from the one table.
func Error(err error, name string) error {
	for _, e := range exits {
		if !errors.Is(err, e.err) {
			continue
		}
		switch {
		case e.do == "":
			return exitcode.New(e.code, err)
		case strings.Contains(e.do, "%s"):
			return exitcode.New(e.code, fmt.Errorf("%w: "+e.do, err, name))
		}
		return exitcode.New(e.code, fmt.Errorf("%w: %s", err, e.do))
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
