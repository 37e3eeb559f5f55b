package logcmd

import (
	"fmt"
	"io"

	"github.com/panto-dev/panto/internal/cli"
	"github.com/panto-dev/panto/internal/stores"
	"github.com/panto-dev/panto/pkg/store"
)

type newCmd struct{}

// Run runs the subcommand.
func (c *newCmd) Run(e *env) error {
	st, err := e.store()
	if err != nil {
		return err
	}
	return runNew(st, e.io, e.out)
}

func runNew(st store.Store, io cli.IO, out io.Writer) error {
	n, err := st.NewName(io.Cwd)
	if err != nil {
		return stores.ErrorOf(err, io.Cwd, stores.Write)
	}
	_, err = fmt.Fprintln(out, shown(io, n))
	return err
}
