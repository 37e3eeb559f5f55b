package logcmd

import (
	"context"
	"fmt"
	"io"

	"github.com/panto-dev/panto/internal/cli"
	"github.com/panto-dev/panto/pkg/store"
)

type pullCmd struct {
	ID   string `arg:"" help:"The session: an id or a unique prefix."`
	From string `required:"" help:"The database: postgres://…" placeholder:"URL"`
}

// Run runs the subcommand.
func (c *pullCmd) Run(e *env) error {
	st, err := e.store()
	if err != nil {
		return err
	}
	return c.run(e.ctx, st, e.proc, e.out)
}

// run pulls the session into the file store, at the path of its own cwd.
func (c *pullCmd) run(ctx context.Context, st store.Store, proc cli.IO, out io.Writer) error {
	fs, err := files(st, "pull writes a session file")
	if err != nil {
		return err
	}
	db, err := database(ctx, c.From)
	if err != nil {
		return err
	}
	defer db.Close()
	id, err := db.Resolve(ctx, "", true, c.ID)
	if err != nil {
		return storeError(err, c.ID)
	}
	r, err := db.Open(ctx, id)
	if err != nil {
		return storeError(err, c.ID)
	}
	defer r.Close()
	res, err := fs.Receive(ctx, r)
	if err != nil {
		return storeError(err, id)
	}
	if res.Ahead {
		cli.Warnf(proc.Stderr, name, "%s holds entries the database lacks: nothing to pull (push it)", res.Name)
	}
	cli.Notef(proc.Stderr, name, "pulled %d bytes of session %s into %s", res.Bytes, id, res.Name)
	_, err = fmt.Fprintln(out, shown(proc, res.Name))
	return err
}
