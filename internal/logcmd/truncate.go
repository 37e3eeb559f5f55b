package logcmd

import (
	"context"
	"time"

	"github.com/panto-dev/panto/internal/cli"
	"github.com/panto-dev/panto/internal/stores"
	"github.com/panto-dev/panto/pkg/store"
)

type truncateCmd struct {
	File  string        `arg:"" help:"The session: a file (in a database: an id or a unique prefix)."`
	After string        `help:"Cut every entry after entry ID." placeholder:"ID"`
	Wait  time.Duration `default:"10s" help:"How long to wait for another writer's lock."`
}

// Run runs the subcommand.
func (c *truncateCmd) Run(e *env) error {
	st, err := e.store()
	if err != nil {
		return err
	}
	return c.run(e.ctx, st, e.proc)
}

func (c *truncateCmd) run(ctx context.Context, st store.Store, proc cli.IO) error {
	stores.SetWait(st, c.Wait)
	cut, err := st.Truncate(ctx, c.File, c.After)
	if err != nil {
		return storeError(err, c.File)
	}
	if cut == nil {
		cli.Notef(proc.Stderr, name, "%s: nothing to cut", c.File)
		return nil
	}
	cli.Notef(proc.Stderr, name, "%s: cut %d bytes (%d complete entries) at byte %d, saved as %s",
		c.File, cut.Bytes, cut.Entries, cut.From, cut.SavedAs)
	return nil
}
