package logcmd

import (
	"context"
	"fmt"
	"io"

	"github.com/panto-dev/panto/internal/cli"
	"github.com/panto-dev/panto/pkg/exitcode"
	"github.com/panto-dev/panto/pkg/store"
)

type latestCmd struct{}

// Run runs the subcommand.
func (c *latestCmd) Run(e *env) error {
	st, err := e.store()
	if err != nil {
		return err
	}
	return runLatest(e.ctx, st, e.io, e.out)
}

func runLatest(ctx context.Context, st store.Store, io cli.IO, out io.Writer) error {
	list, err := sessions(ctx, st, io, false)
	if err != nil {
		return err
	}
	if len(list) == 0 {
		return exitcode.Findingsf("no session for %s", io.Cwd)
	}
	_, err = fmt.Fprintln(out, shown(io, list[0].Path))
	return err
}
