package logcmd

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/panto-dev/panto/internal/cli"
	"github.com/panto-dev/panto/internal/exitcode"
	"github.com/panto-dev/panto/internal/stores"
	"github.com/panto-dev/panto/pkg/store"
)

type resolveCmd struct {
	Prefix string `arg:"" help:"Leading characters of a session id."`
	All    bool   `help:"Look in every project, not only this directory's."`
}

// Run runs the subcommand.
func (c *resolveCmd) Run(e *env) error {
	st, err := e.store()
	if err != nil {
		return err
	}
	return c.run(e.ctx, st, e.proc, e.out)
}

func (c *resolveCmd) run(ctx context.Context, st store.Store, proc cli.IO, out io.Writer) error {
	p, err := st.Resolve(ctx, proc.Cwd, c.All, c.Prefix)
	if errors.Is(err, store.ErrNoSuchSession) && len(c.Prefix) >= stores.MinPrefix {
		// Every project's sessions, the agents' own ids and imports'
		// origins (SPEC §15: one id).
		// A store that is not files resolves ids itself: Session hands the
		// prefix back unchanged, which is no session found.
		if q, qerr := stores.Session(ctx, st, proc.Getenv, c.Prefix); qerr != nil || q != c.Prefix {
			p, err = q, qerr
		}
	}
	switch {
	case errors.Is(err, store.ErrNoSuchSession): // nothing matched: a finding (SPEC §7)
		return exitcode.New(exitcode.Findings, err)
	case err != nil:
		return stores.ErrorOf(err, c.Prefix, stores.Read)
	}
	_, err = fmt.Fprintln(out, shown(proc, p))
	return err
}
