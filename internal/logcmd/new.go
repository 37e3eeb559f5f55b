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
	return runNew(st, e.proc, e.out)
}

func runNew(st store.Store, proc cli.IO, out io.Writer) error {
	n, err := st.NewName(proc.Cwd)
	if err != nil {
		return stores.ErrorOf(err, proc.Cwd, stores.Write)
	}
	_, err = fmt.Fprintln(out, shown(proc, n))
	return err
}
