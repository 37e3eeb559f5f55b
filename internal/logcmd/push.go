package logcmd

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/panto-dev/panto/internal/cli"
	"github.com/panto-dev/panto/internal/exitcode"
	"github.com/panto-dev/panto/pkg/store"
)

type pushCmd struct {
	Paths  []string      `arg:"" optional:"" help:"Session files or directories (default: every session of the sessions base)."`
	To     string        `required:"" help:"The database: postgres://…" placeholder:"URL"`
	Follow bool          `help:"Keep following: commit every complete line as it is written (each batch with its position, so a restart resumes where the database is); until SIGINT or SIGTERM."`
	Once   bool          `help:"One pass of --follow, then exit (for cron): exit 3 if a session could not be committed."`
	Status bool          `help:"Print, per session, the local and the database position and whether they agree (exit 1 if any does not)."`
	JSON   bool          `help:"With --follow or --once: one JSON line per committed batch on stdout; with --status: one JSON object per session."`
	Poll   time.Duration `help:"With --follow: look at every file every DURATION instead of watching for changes (file systems without inotify)." placeholder:"DURATION"`
	Force  bool          `help:"With --follow or --once: cut, into panto_cuts, the entries a session holds in the database beyond where its file parts from it that no follower committed (appended in the database since)."`
}

func (c *pushCmd) validate() error {
	switch {
	case c.Force && !c.Follow && !c.Once:
		return exitcode.Usagef("--force goes with --follow or --once")
	case c.Status && (c.Follow || c.Once):
		return exitcode.Usagef("--status goes alone")
	case c.Follow && c.Once:
		return exitcode.Usagef("--follow and --once: give one")
	case !c.Status && !c.Follow && !c.Once && (c.JSON || c.Poll != 0):
		return exitcode.Usagef("--json and --poll go with --follow, --once or --status")
	}
	return nil
}

// Run pushes, follows (--follow, --once) or compares (--status).
func (c *pushCmd) Run(e *env) error {
	st, err := e.store()
	if err != nil {
		return err
	}
	switch {
	case c.Status:
		return c.status(e.ctx, st, e.proc, e.out)
	case c.Follow || c.Once:
		return c.follow(st, e.proc, e.out)
	}
	return c.run(e.ctx, st, e.proc)
}

// run pushes every session file the arguments name (all of the sessions
// base without any). A file that cannot be pushed is reported, the others
// are pushed, and the exit code is 3.
func (c *pushCmd) run(ctx context.Context, st store.Store, proc cli.IO) error {
	fs, err := files(st, "push copies file sessions")
	if err != nil {
		return err
	}
	db, err := database(ctx, c.To)
	if err != nil {
		return err
	}
	defer db.Close()
	paths := c.Paths
	if len(paths) == 0 {
		base, err := fs.BaseDir()
		if err != nil {
			return exitcode.New(exitcode.Usage, err)
		}
		if _, err := os.Stat(base); errors.Is(err, os.ErrNotExist) {
			return nil // no sessions yet
		}
		paths = []string{base}
	}
	var sessions, pushed, had, failed int64
	for _, arg := range paths {
		fs.Each(ctx, arg, func(path string, err error) error {
			var res *store.Received
			if err == nil {
				res, err = push(ctx, fs, db, path)
			}
			if err != nil {
				failed++
				cli.Errorf(proc.Stderr, name, "push %s: %v", path, err)
				return nil
			}
			if res.Ahead {
				cli.Warnf(proc.Stderr, name, "%s: the database holds entries this file lacks: nothing to push (pull it)", path)
			}
			sessions++
			pushed += res.Entries
			had += res.Had
			return nil
		})
	}
	cli.Notef(proc.Stderr, name, "pushed %d entries of %d sessions to %s (%d there already)", pushed, sessions, db.Where(), had)
	if failed > 0 {
		return exitcode.Failuref("%d sessions not pushed (see above)", failed)
	}
	return nil
}

// push copies one session file into the database.
func push(ctx context.Context, fs store.Store, db store.Store, path string) (*store.Received, error) {
	r, err := fs.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return db.Receive(ctx, r)
}
