// Package stores opens the store a command's --store flag or PANTO_STORE
// names, with every backend linked in; only the commands that read or
// write sessions import it (panto-turn does not, and starts faster).
package stores

import (
	"errors"
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

// SetWait tells a store how long its writers wait for another writer's
// lock, where it has such a wait.
func SetWait(s store.Store, d time.Duration) {
	if w, ok := s.(interface{ SetWait(time.Duration) }); ok {
		w.SetWait(d)
	}
}
