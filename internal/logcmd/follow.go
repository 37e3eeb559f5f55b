package logcmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/panto-dev/panto/internal/agents"
	"github.com/panto-dev/panto/internal/cli"
	"github.com/panto-dev/panto/internal/exitcode"
	"github.com/panto-dev/panto/pkg/store"
)

// A follower (panto-log push --follow, import --follow, and their --once)
// commits every complete line of the files it follows to a database, each
// batch in one transaction with the session's position (store.Commit),
// so a follower killed at any moment resumes where the database is, and
// two followers never double a line: a commit that finds the session
// moved is refused, and the follower reads the database again.

// followOpts is what a follower is asked to do.
type followOpts struct {
	to     string
	roots  []string
	agents bool          // other agents' logs, converted (import); else panto sessions (push)
	files  store.Files   // push: the store of the sessions followed
	from   agents.Format // import: the format, or Unknown to sniff each file
	force  bool          // cut entries of a session that its changed file or log lacks
	once   bool          // one pass, then exit
	json   bool          // one JSON line per committed batch on stdout
	poll   time.Duration // poll every poll instead of watching (0: watch)
}

// Limits of one commit: a session far behind is caught up in batches.
const (
	batchLines = 4096
	batchBytes = 1 << 20
)

// rescanEvery is how often a watching follower looks at every file anyway
// (an event lost to an overflowing queue, a file system that sends none).
const rescanEvery = time.Minute

// tracked is what a follower knows of one file it follows: a few words,
// whatever the size of the file.
type tracked struct {
	path      string
	dev, ino  uint64
	size      int64
	mtime     int64
	id        string          // its session's id, once read
	pos       *store.Position // the last position committed or read (nil: ask the database)
	lastLen   int64           // the last committed line of the session (push), to notice a cut
	lastSum   uint32
	stuck     string              // why the file is not followed as it is (said once), until it changes
	writing   time.Time           // since when a writer has held the file's lock (zero: it did not)
	converted time.Time           // when another agent's log was last converted
	took      time.Duration       // how long that conversion took
	unchanged bool                // stat as last synced
	wal       walState            // a database's write-ahead log, as last synced
	subs      map[string]*tracked // a log of several sessions (an OpenCode database): each session's, by its id
}

type follower struct {
	o       followOpts
	proc    cli.IO
	out     *bufio.Writer
	db      store.Follower
	files   map[string]*tracked
	dirty   map[string]bool
	watcher *fsnotify.Watcher
	watched map[string]bool
	tty     bool
	down    time.Time // when the database went away (zero: it is there)
	backoff time.Duration
	trouble error             // the database's last error (--once: what the pass ends with)
	next    time.Time         // when to try the database again
	failed  int               // files (and directories) that could not be followed (--once: exit 3)
	unread  map[string]string // directories that could not be read: what was said
	gone    bool              // stdout was closed (its reader left): the follower ends
}

// follow runs a follower until it is stopped (SIGINT, SIGTERM), or after
// one pass with --once.
func follow(o followOpts, proc cli.IO, out *bufio.Writer) error {
	if !store.CanFollowInto(o.to) {
		return notDatabase(o.to)
	}
	for i, r := range o.roots {
		if abs, err := filepath.Abs(r); err == nil {
			o.roots[i] = abs
		}
	}
	f := &follower{o: o, proc: proc, out: out, files: map[string]*tracked{}, dirty: map[string]bool{},
		watched: map[string]bool{}, unread: map[string]string{}, tty: cli.IsTerminal(proc.Stderr)}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := f.connect(ctx); err != nil {
		var ec *exitcode.Error
		if o.once || errors.As(err, &ec) && ec.Code == exitcode.Usage || refused(err) {
			return err
		}
		f.lost(err)
	}
	defer func() {
		if f.db != nil {
			f.db.Close()
		}
	}()
	if !o.once && o.poll == 0 {
		w, err := fsnotify.NewWatcher()
		if err != nil {
			cli.Warnf(proc.Stderr, name, "cannot watch for changes (%v): polling every second", err)
			f.o.poll = time.Second
		} else {
			f.watcher = w
			defer w.Close()
		}
	}
	f.scan()
	f.syncDirty(ctx)
	if f.gone {
		return nil // the reader of --json left: quietly, as SPEC §7 says
	}
	if o.once {
		if ctx.Err() != nil && len(f.dirty) > 0 {
			return exitcode.Failuref("interrupted: %d files not followed; run again", len(f.dirty))
		}
		if f.db == nil || len(f.dirty) > 0 {
			if f.trouble != nil {
				return exitcode.Failuref("%v: %d files not followed; run again", f.trouble, len(f.dirty))
			}
			return exitcode.Failuref("the database is unreachable: %d files not followed; run again", len(f.dirty))
		}
		if f.failed > 0 {
			return exitcode.Failuref("%d files not followed (see above)", f.failed)
		}
		return nil
	}
	every := rescanEvery
	if f.o.poll > 0 {
		every = f.o.poll
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	var events <-chan fsnotify.Event
	var errs <-chan error
	if f.watcher != nil {
		events, errs = f.watcher.Events, f.watcher.Errors
	}
	for {
		var retry <-chan time.Time
		if len(f.dirty) > 0 {
			retry = time.After(max(time.Until(f.next), writingPause))
		}
		select {
		case <-ctx.Done():
			return nil
		case ev := <-events:
			f.event(ev)
			for drained := false; !drained; { // what came meanwhile, in the same pass
				select {
				case ev := <-events:
					f.event(ev)
				default:
					drained = true
				}
			}
		case err := <-errs:
			cli.Warnf(proc.Stderr, name, "watching: %v: every file is looked at again", err)
			f.scan()
		case <-tick.C:
			f.scan()
		case <-retry:
		}
		f.syncDirty(ctx)
		if f.gone {
			return nil
		}
	}
}

// connect opens the database, once it is there again.
func (f *follower) connect(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	db, err := database(cctx, f.o.to)
	if err != nil {
		return err
	}
	f.db = db
	if !f.down.IsZero() {
		fmt.Fprintf(f.proc.Stderr, "%s: %s is back after %s: catching up\n", name, db.Where(), time.Since(f.down).Round(time.Millisecond))
	}
	f.down, f.backoff = time.Time{}, 0
	return nil
}

// refused reports whether a server answered and refused: a wrong password
// or role, a database that does not exist. Retrying would not help.
func refused(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "SQLSTATE 28") || strings.Contains(msg, "SQLSTATE 3D000")
}

// lost closes a connection that failed and schedules the next try, with
// a backoff that doubles up to 10 s.
func (f *follower) lost(err error) {
	if f.db != nil {
		f.db.Close()
		f.db = nil
	}
	if f.down.IsZero() {
		f.down = time.Now()
	}
	f.trouble = err
	if f.o.once { // no retry: the pass ends with it
		return
	}
	f.backoff = min(max(2*f.backoff, 250*time.Millisecond), 10*time.Second)
	f.next = time.Now().Add(f.backoff)
	cli.Warnf(f.proc.Stderr, name, "%v: retrying in %s", err, f.backoff)
}

// inRoots reports whether path is followed: a root, or below a root
// directory.
func (f *follower) inRoots(path string) bool {
	for _, r := range f.o.roots {
		if path == r || strings.HasPrefix(path, r+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// scan walks the roots: every directory watched, every file followed
// looked at (the poll of a follower without events).
func (f *follower) scan() {
	seen := map[string]bool{}
	for _, root := range f.o.roots {
		fi, err := os.Stat(root)
		if err != nil {
			continue // not there (yet): a directory made later is scanned when it appears
		}
		if !fi.IsDir() {
			f.watch(filepath.Dir(root))
			seen[root] = true
			f.track(root)
			continue
		}
		filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				f.unreadable(path, err)
				return nil
			}
			if d.IsDir() {
				f.watch(path)
				return nil
			}
			if agents.IsLogPath(path) {
				seen[path] = true
				f.track(path)
			}
			return nil
		})
	}
	for path := range f.files {
		if !seen[path] {
			f.dirty[path] = true // gone: its sync forgets it
		}
	}
}

// unreadable says, once, that a directory of the tree cannot be read: the
// files in it are not followed (--once exits 3), as a file that cannot be
// is not. A file or directory gone meanwhile is no news.
func (f *follower) unreadable(path string, err error) {
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	msg := err.Error()
	if f.unread[path] == msg {
		return
	}
	f.unread[path] = msg
	f.failed++
	var pe *fs.PathError
	if errors.As(err, &pe) {
		msg = fmt.Sprintf("%s (%v)", pe.Path, pe.Err)
	}
	cli.Errorf(f.proc.Stderr, name, "cannot read %s: what it holds is not followed: give the follower read access", msg)
}

func (f *follower) watch(dir string) {
	if f.watcher == nil || f.watched[dir] {
		return
	}
	if err := f.watcher.Add(dir); err != nil {
		cli.Warnf(f.proc.Stderr, name, "cannot watch %s (%v): polling every second", dir, err)
		f.watcher.Close()
		f.watcher = nil
		f.o.poll = time.Second
		return
	}
	f.watched[dir] = true
}

// track makes path followed and marks it to be looked at.
func (f *follower) track(path string) {
	if f.files[path] == nil {
		f.files[path] = &tracked{path: path}
	}
	f.dirty[path] = true
}

// event marks what a change names.
func (f *follower) event(ev fsnotify.Event) {
	path := ev.Name
	if ev.Has(fsnotify.Create) {
		if fi, err := os.Stat(path); err == nil && fi.IsDir() && f.inRoots(path) {
			f.watch(path)
			f.scanDir(path)
			return
		}
	}
	if f.files[path] != nil {
		f.dirty[path] = true
		return
	}
	if db, ok := strings.CutSuffix(path, "-wal"); ok && f.files[db] != nil {
		f.dirty[db] = true // a database written through its write-ahead log (OpenCode's)
		return
	}
	if f.inRoots(path) && agents.IsLogPath(path) && !ev.Has(fsnotify.Remove) && !ev.Has(fsnotify.Rename) {
		f.track(path)
	}
	if ev.Has(fsnotify.Remove) && f.watched[path] {
		delete(f.watched, path)
	}
}

// scanDir follows what a new directory holds already.
func (f *follower) scanDir(dir string) {
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			f.unreadable(path, err)
		} else if d.IsDir() {
			f.watch(path)
		} else if err == nil && agents.IsLogPath(path) {
			f.track(path)
		}
		return nil
	})
}

// syncDirty commits what changed in the files marked, in order of their
// names; a file the database could not take stays marked.
func (f *follower) syncDirty(ctx context.Context) {
	if f.db == nil {
		if time.Now().Before(f.next) {
			return
		}
		if err := f.connect(ctx); err != nil {
			f.lost(err)
			return
		}
	}
	paths := make([]string, 0, len(f.dirty))
	for p := range f.dirty {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if ctx.Err() != nil || f.gone {
			return
		}
		t := f.files[p]
		if t == nil {
			delete(f.dirty, p)
			continue
		}
		sctx, cancel := context.WithTimeout(ctx, time.Minute)
		err := f.sync(sctx, t)
		cancel()
		switch {
		case err == nil:
			delete(f.dirty, p)
		case errors.Is(err, errWriting): // looked at again in a moment
		case errors.Is(err, errYoung):
			delete(f.dirty, p)
		case errors.Is(err, errNotRegular): // a FIFO named *.jsonl: skipped, said once, as every walk does
			delete(f.dirty, p)
			if msg := err.Error(); msg != t.stuck {
				t.stuck = msg
				cli.Warnf(f.proc.Stderr, name, "%s: not a regular file (a FIFO?): skipped", p)
			}
		case isDatabaseTrouble(err):
			if ctx.Err() == nil {
				f.lost(err)
			}
			return // everything marked waits for the database
		default:
			delete(f.dirty, p)
			if msg := err.Error(); msg != t.stuck {
				t.stuck = msg
				f.failed++
				cli.Errorf(f.proc.Stderr, name, "follow %s: %v", p, err)
			}
		}
	}
}

// isDatabaseTrouble tells a database that failed (to be retried) from a
// verdict on a file.
func isDatabaseTrouble(err error) bool {
	for _, e := range []error{errNotRegular, store.ErrConflict, store.ErrNeedsFsck, store.ErrNewerVersion, errNotFollowed, errWriting, errYoung, os.ErrNotExist} {
		if errors.Is(err, e) {
			return false
		}
	}
	var pe *fs.PathError
	return !errors.As(err, &pe)
}

// errWriting is a session a writer holds the lock of: it is read once the
// writer's batch is durable (a pause of writingPause, for at most
// writingWait; then what is complete is read anyway).
var errWriting = errors.New("a writer holds it")

const (
	writingPause = 2 * time.Millisecond
	writingWait  = time.Second
)

// errYoung is another agent's file, changed less than youngLog ago, that
// is no log it knows yet: looked at again when it changes, and at the next
// rescan.
var errYoung = errors.New("not a log yet")

const youngLog = time.Minute

// convertEvery is how often a log that keeps changing is converted again,
// at most; a log whose conversion takes longer than convertEvery/convertShare
// waits convertShare times its conversion's time: following a log of any
// size keeps the follower under a tenth of a core.
const (
	convertEvery = time.Second
	convertShare = 10
)

// errNotFollowed is a verdict on a file: said once, then the file waits
// until it changes.
var errNotFollowed = errors.New("not followed")

// follow runs push --follow (or --once).
func (c *pushCmd) follow(st store.Store, proc cli.IO, out *bufio.Writer) error {
	fs, ok := st.(store.Files)
	if !ok {
		return exitcode.Usagef("push copies file sessions: run it without --store (or PANTO_STORE) and name the database with --to")
	}
	roots := c.Paths
	if len(roots) == 0 {
		base, err := fs.BaseDir()
		if err != nil {
			return exitcode.New(exitcode.Usage, err)
		}
		if c.Follow { // watched from the start, so the first session is not missed
			if err := os.MkdirAll(base, 0o700); err != nil {
				return exitcode.Failuref("make the sessions base: %v", err)
			}
		}
		roots = []string{base}
	}
	return follow(followOpts{to: c.To, roots: roots, files: fs, force: c.Force, once: c.Once, json: c.JSON, poll: c.Poll}, proc, out)
}

// follow runs import --follow (or --once).
func (c *importCmd) follow(proc cli.IO, out *bufio.Writer) error {
	from, err := agents.ParseFormat(c.From)
	if err != nil {
		return exitcode.New(exitcode.Usage, err)
	}
	roots := c.Paths
	if len(roots) == 0 {
		if roots = agents.Places(from, proc.Getenv); len(roots) == 0 {
			return exitcode.Usagef("%s", agents.NoLogs(from, proc.Getenv, "follow"))
		}
	}
	return follow(followOpts{to: c.To, roots: roots, agents: true, from: from, force: c.Force, once: c.Once, json: c.JSON, poll: c.Poll}, proc, out)
}
