package logcmd

import (
	"context"
	"fmt"
	"io"

	"github.com/panto-dev/panto/internal/cli"
	"github.com/panto-dev/panto/internal/exitcode"
	"github.com/panto-dev/panto/pkg/store"
)

type latestCmd struct{}

// Run runs the subcommand.
func (c *latestCmd) Run(e *env) error {
	st, err := e.store()
	if err != nil {
		return err
	}
	return runLatest(e.ctx, st, e.proc, e.out)
}

func runLatest(ctx context.Context, st store.Store, proc cli.IO, out io.Writer) error {
	list, err := sessions(ctx, st, proc, false)
	if err != nil {
		return err
	}
	if len(list) == 0 {
		return exitcode.Findingsf("no session for %s", proc.Cwd)
	}
	_, err = fmt.Fprintln(out, shown(proc, list[0].Path))
	return err
}
