package logcmd

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"time"

	"github.com/panto-dev/panto/internal/cli"
	"github.com/panto-dev/panto/internal/exitcode"
	"github.com/panto-dev/panto/internal/ordered"
	"github.com/panto-dev/panto/pkg/scan"
	"github.com/panto-dev/panto/pkg/session"
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
	Jobs   *int          `help:"Without --follow, --once or --status: how many sessions to send at once, each in a transaction of its own over a connection of its own (the server indexes each on a core of its own); 4 when not given." placeholder:"N"`
}

// maxJobs bounds --jobs: each job is a connection of the server's;
// defaultJobs is push's without it.
const maxJobs, defaultJobs = 32, 4

// jobs is how many sessions a push sends at once.
func (c *pushCmd) jobs() int {
	if c.Jobs == nil {
		return defaultJobs
	}
	return *c.Jobs
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
	case c.Jobs != nil && (c.Status || c.Follow || c.Once):
		return exitcode.Usagef("--jobs goes with a push, not with --follow, --once or --status")
	case c.jobs() < 1 || c.jobs() > maxJobs:
		return exitcode.Usagef("--jobs %d: give 1 to %d", c.jobs(), maxJobs)
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
// are pushed, and the exit code is 3. Up to --jobs sessions are pushed at
// once, each over a connection of its own (a transaction is one
// connection's), and reported in the order the arguments name them.
func (c *pushCmd) run(ctx context.Context, st store.Store, proc cli.IO) error {
	fs, err := files(st, "push copies file sessions")
	if err != nil {
		return err
	}
	db, err := database(ctx, c.To)
	if err != nil {
		return err
	}
	pool := newConns(c.To, db, c.jobs())
	defer pool.close()
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
	type job struct {
		path string
		res  *store.Received
		err  error
	}
	produce := func(send func(*job) bool) error {
		for _, arg := range paths {
			err := fs.Each(ctx, arg, func(path string, err error) error {
				if !send(&job{path: path, err: err}) {
					return errStopPush
				}
				return nil
			})
			if errors.Is(err, errStopPush) {
				return nil
			}
		}
		return nil
	}
	var sessions, pushed, had, failed int64
	ids := &keyed{busy: map[string]chan struct{}{}}
	work := func(j *job) {
		if j.err == nil {
			j.res, j.err = push(ctx, fs, pool, ids, j.path)
		}
	}
	// Every session is pushed or said to fail (a SIGINT cancels ctx: the
	// pushes under way roll back, the others fail at once), as in order.
	ordered.Run(context.Background(), c.jobs(), produce, work, func(j *job) error {
		if j.err != nil {
			failed++
			cli.Errorf(proc.Stderr, name, "push %s: %v", j.path, j.err)
			return nil
		}
		if j.res.Ahead {
			cli.Warnf(proc.Stderr, name, "%s: the database holds entries this file lacks: nothing to push (pull it)", j.path)
		}
		sessions++
		pushed += j.res.Entries
		had += j.res.Had
		return nil
	})
	cli.Notef(proc.Stderr, name, "pushed %d entries of %d sessions to %s (%d there already)", pushed, sessions, db.Where(), had)
	if failed > 0 {
		return exitcode.Failuref("%d sessions not pushed (see above)", failed)
	}
	return nil
}

var errStopPush = errors.New("push stopped")

// push copies one session file into the database, over a connection of
// the pool's; two files of one session (a copy) are never pushed at once
// (the second would wait for the first's row lock, and give up after the
// store's wait).
func push(ctx context.Context, fs store.Store, pool *conns, ids *keyed, path string) (*store.Received, error) {
	r, err := fs.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	defer ids.lock(headerID(r))()
	db := pool.get(ctx)
	defer pool.put(db)
	return db.Receive(ctx, r)
}

// headerID is the id the session file r's first line names ("" for none:
// Receive refuses it).
func headerID(r io.ReaderAt) string {
	line, _, _, err := scan.NewReader(io.NewSectionReader(r, 0, 1<<20), 0).Next()
	if err != nil {
		return ""
	}
	return session.Classify(line).ID
}

// keyed holds a lock per session id.
type keyed struct {
	mu   sync.Mutex
	busy map[string]chan struct{} // closed when the id's holder is done
}

// lock waits until no other holds id, takes it, and returns its unlock.
func (k *keyed) lock(id string) func() {
	if id == "" {
		return func() {}
	}
	for {
		k.mu.Lock()
		done, held := k.busy[id]
		if !held {
			done = make(chan struct{})
			k.busy[id] = done
			k.mu.Unlock()
			return func() {
				k.mu.Lock()
				delete(k.busy, id)
				k.mu.Unlock()
				close(done)
			}
		}
		k.mu.Unlock()
		<-done
	}
}

// conns are push's connections to the database: the first, opened before
// anything is read (its failure is push's), and up to max-1 more, each
// opened when a session waits for one and none is free. A server that
// refuses one more (max_connections reached) leaves push with those it has.
type conns struct {
	url    string
	free   chan store.Store
	mu     sync.Mutex
	opened []store.Store
	n      int // opened, and being opened
	max    int
	failed bool // one more could not be opened: no more are tried
}

func newConns(url string, first store.Store, max int) *conns {
	c := &conns{url: url, free: make(chan store.Store, max), opened: []store.Store{first}, n: 1, max: max}
	c.free <- first
	return c
}

// get takes a free connection, or opens one more when none is free and
// fewer than max are open, or else waits for one.
func (c *conns) get(ctx context.Context) store.Store {
	select {
	case db := <-c.free:
		return db
	default:
	}
	if db := c.more(ctx); db != nil {
		return db
	}
	return <-c.free
}

// more opens one more connection; nil when it may not or could not.
func (c *conns) more(ctx context.Context) store.Store {
	c.mu.Lock()
	if c.failed || c.n >= c.max {
		c.mu.Unlock()
		return nil
	}
	c.n++
	c.mu.Unlock()
	db, err := database(ctx, c.url)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.n--
		c.failed = true
		return nil
	}
	c.opened = append(c.opened, db)
	return db
}

// put gives a connection back.
func (c *conns) put(db store.Store) { c.free <- db }

// close closes every connection.
func (c *conns) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, db := range c.opened {
		db.Close()
	}
}
