// Package logcmd is panto-log, the only writer of session files and the
// session catalog.
package logcmd

import (
	"bufio"
	"context"
	"errors"
	"os"

	"github.com/panto-dev/panto/internal/cli"
	"github.com/panto-dev/panto/internal/exitcode"
	"github.com/panto-dev/panto/internal/stores"
	"github.com/panto-dev/panto/internal/tty"
	"github.com/panto-dev/panto/pkg/store"
)

const name = "panto-log"

type grammar struct {
	Version       cli.VersionFlag `help:"Print the version and exit."`
	cli.StoreFlag `embed:""`

	New      newCmd      `cmd:"" help:"Print the name a new session for this directory would get: a file path, or an id in a database (creates nothing)."`
	Append   appendCmd   `cmd:"" help:"Append message lines from stdin to a session, durably (one batch); print the entry lines written."`
	Truncate truncateCmd `cmd:"" help:"Cut a torn tail, or every entry after --after ID; what is cut is kept (beside the file, or in panto_cuts)."`
	List     listCmd     `cmd:"" help:"List the sessions of this directory (or of all), newest activity first."`
	Latest   latestCmd   `cmd:"" help:"Print the name of the newest session of this directory (exit 1 if none)."`
	Resolve  resolveCmd  `cmd:"" help:"Print the name of the session whose id starts with PREFIX."`
	Export   exportCmd   `cmd:"" help:"Write a session as a session file on stdout."`
	Push     pushCmd     `cmd:"" help:"Copy file sessions into a database: only the entries not there yet (idempotent; safe to kill and run again)."`
	Pull     pullCmd     `cmd:"" help:"Copy a session from a database into a session file here, incrementally; print its path."`
	Import   importCmd   `cmd:"" help:"Turn Claude Code, Codex or pi logs into panto sessions in the store, incrementally; print the name of each session written."`
	Search   searchCmd   `cmd:"" help:"Find the entries whose text holds words, a phrase or a regexp, in panto's sessions and every agent's logs (exit 1 when none)."`

	Completion completionCmd `cmd:"" help:"Print the shell completion script for bash, zsh or fish (the same as --completion SHELL)."`
}

// Main runs panto-log in this process.
func Main() int {
	cli.QuietPipe()
	return Run(os.Args[1:], cli.OS())
}

// Run runs panto-log with args.
func Run(args []string, proc cli.IO) int {
	var g grammar
	args = excludeWords(args)
	ctx, code, done := cli.Parse(name, "The only writer of panto sessions, and the session catalog.", &g, args, proc, nil)
	if done {
		return code
	}
	return cli.Buffered(name, proc, func(out *bufio.Writer) (int, error) {
		// A subcommand's flags are checked before anything is opened.
		if v, ok := ctx.Selected().Target.Addr().Interface().(validator); ok {
			if err := v.validate(); err != nil {
				return 0, err
			}
		}
		e := &env{ctx: context.Background(), proc: proc, out: out, url: g.Store}
		defer e.close()
		err := ctx.Run(e)
		return e.code, err
	})
}

// env is what a subcommand's Run is given: the process's IO, stdout
// buffered, and the store --store (else PANTO_STORE) names, opened when
// the command first asks for it.
type env struct {
	ctx  context.Context
	proc cli.IO
	out  *bufio.Writer
	url  string
	st   store.Store
	code int // the exit code when there is no error: 1 for import's and search's findings
}

// store opens the store once.
func (e *env) store() (store.Store, error) {
	if e.st == nil {
		st, err := stores.Open(e.url, e.proc)
		if err != nil {
			return nil, err
		}
		e.st = st
	}
	return e.st, nil
}

func (e *env) close() {
	if e.st != nil {
		e.st.Close()
	}
}

// validator is a subcommand whose flags go together by rules kong's tags
// do not say: validate refuses a combination (exit 2) before any work.
type validator interface{ validate() error }

// storeError gives a store error its exit code and what to do.
func storeError(err error, file string) error { return stores.Error(err, file) }

// shown is a session's name (a path, an id) as new, latest, resolve, pull
// and import print it on stdout: exact to a pipe, where a script takes it
// as it is, and with its control characters escaped on a terminal (a path
// holds a cwd, and an imported log's or a row's cwd is anybody's).
func shown(proc cli.IO, name string) string {
	if cli.IsTerminal(proc.Stdout) {
		return tty.Line(name)
	}
	return name
}

// database opens the database a --to or --from flag names.
func database(ctx context.Context, url string) (store.Follower, error) {
	db, err := store.OpenFollower(ctx, url)
	switch {
	case errors.Is(err, store.ErrNotFollower):
		return nil, notDatabase(url)
	case errors.Is(err, store.ErrBadURL):
		return nil, exitcode.New(exitcode.Usage, err)
	case err != nil:
		return nil, exitcode.New(exitcode.Failure, err)
	}
	return db, nil
}

// notDatabase refuses a --to or --from that names no database.
func notDatabase(url string) error {
	return exitcode.Usagef("%q is not a database URL: give postgres://… or libpq's host=… dbname=…", store.Redact(url))
}

// files is the file store, which push reads and pull writes.
func files(st store.Store, what string) (store.Files, error) {
	fs, ok := st.(store.Files)
	if !ok {
		return nil, exitcode.Usagef("%s: run it without --store (or PANTO_STORE) and name the database with --to or --from", what)
	}
	return fs, nil
}
