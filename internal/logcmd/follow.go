package logcmd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/panto-dev/panto/internal/cli"
	"github.com/panto-dev/panto/pkg/agents"
	"github.com/panto-dev/panto/pkg/catalog"
	"github.com/panto-dev/panto/pkg/exitcode"
	"github.com/panto-dev/panto/pkg/filestore"
	"github.com/panto-dev/panto/pkg/pgstore"
	"github.com/panto-dev/panto/pkg/scan"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/panto-dev/panto/pkg/store"
)

// A follower (panto-log push --follow, import --follow, and their --once)
// commits every complete line of the files it follows to a database, each
// batch in one transaction with the session's position (pgstore.Commit),
// so a follower killed at any moment resumes where the database is, and
// two followers never double a line: a commit that finds the session
// moved is refused, and the follower reads the database again.

// followOpts is what a follower is asked to do.
type followOpts struct {
	to     string
	roots  []string
	agents bool          // other agents' logs, converted (import); else panto sessions (push)
	from   agents.Format // import: the format, or Unknown to sniff each file
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
	id        string            // its session's id, once read
	pos       *pgstore.Position // the last position committed or read (nil: ask the database)
	lastLen   int64             // the last committed line of the session (push), to notice a cut
	lastSum   uint32
	stuck     string    // why the file is not followed as it is (said once), until it changes
	writing   time.Time // since when a writer has held the file's lock (zero: it did not)
	unchanged bool      // stat as last synced
}

type follower struct {
	o       followOpts
	io      cli.IO
	out     *bufio.Writer
	db      *pgstore.PG
	files   map[string]*tracked
	dirty   map[string]bool
	watcher *fsnotify.Watcher
	watched map[string]bool
	tty     bool
	down    time.Time // when the database went away (zero: it is there)
	backoff time.Duration
	next    time.Time // when to try the database again
	failed  int       // files that could not be followed (--once: exit 3)
}

// follow runs a follower until it is stopped (SIGINT, SIGTERM), or after
// one pass with --once.
func follow(o followOpts, io cli.IO, out *bufio.Writer) error {
	if !strings.HasPrefix(o.to, "postgres://") && !strings.HasPrefix(o.to, "postgresql://") {
		return exitcode.Usagef("%q is not a database URL: give postgres://…", store.Redact(o.to))
	}
	for i, r := range o.roots {
		if abs, err := filepath.Abs(r); err == nil {
			o.roots[i] = abs
		}
	}
	f := &follower{o: o, io: io, out: out, files: map[string]*tracked{}, dirty: map[string]bool{},
		watched: map[string]bool{}, tty: cli.IsTerminal(io.Stderr)}
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
			cli.Warnf(io.Stderr, name, "cannot watch for changes (%v): polling every second", err)
			f.o.poll = time.Second
		} else {
			f.watcher = w
			defer w.Close()
		}
	}
	f.scan()
	f.syncDirty(ctx)
	if o.once {
		if f.db == nil || len(f.dirty) > 0 {
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
			cli.Warnf(io.Stderr, name, "watching: %v: every file is looked at again", err)
			f.scan()
		case <-tick.C:
			f.scan()
		case <-retry:
		}
		f.syncDirty(ctx)
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
		fmt.Fprintf(f.io.Stderr, "%s: %s is back after %s: catching up\n", name, db.Where(), time.Since(f.down).Round(time.Millisecond))
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
	f.backoff = min(max(2*f.backoff, 250*time.Millisecond), 10*time.Second)
	f.next = time.Now().Add(f.backoff)
	cli.Warnf(f.io.Stderr, name, "%v: retrying in %s", err, f.backoff)
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
				return nil
			}
			if d.IsDir() {
				f.watch(path)
				return nil
			}
			if catalog.IsSessionName(d.Name()) {
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

func (f *follower) watch(dir string) {
	if f.watcher == nil || f.watched[dir] {
		return
	}
	if err := f.watcher.Add(dir); err != nil {
		cli.Warnf(f.io.Stderr, name, "cannot watch %s (%v): polling every second", dir, err)
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
	if f.inRoots(path) && catalog.IsSessionName(filepath.Base(path)) && !ev.Has(fsnotify.Remove) && !ev.Has(fsnotify.Rename) {
		f.track(path)
	}
	if ev.Has(fsnotify.Remove) && f.watched[path] {
		delete(f.watched, path)
	}
}

// scanDir follows what a new directory holds already.
func (f *follower) scanDir(dir string) {
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			f.watch(path)
		} else if err == nil && catalog.IsSessionName(d.Name()) {
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
		if ctx.Err() != nil {
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
				cli.Errorf(f.io.Stderr, name, "follow %s: %v", p, err)
			}
		}
	}
}

// isDatabaseTrouble tells a database that failed (to be retried) from a
// verdict on a file.
func isDatabaseTrouble(err error) bool {
	for _, e := range []error{store.ErrConflict, store.ErrNeedsFsck, store.ErrNewerVersion, errNotFollowed, errWriting, os.ErrNotExist} {
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

// errNotFollowed is a verdict on a file: said once, then the file waits
// until it changes.
var errNotFollowed = errors.New("not followed")

// sync commits what the file has that the database lacks.
func (f *follower) sync(ctx context.Context, t *tracked) error {
	fi, err := os.Stat(t.path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) { // deleted or renamed: the database keeps the session
			delete(f.files, t.path)
			return nil
		}
		return err
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	same := st != nil && uint64(st.Dev) == t.dev && st.Ino == t.ino && fi.Size() == t.size && fi.ModTime().UnixNano() == t.mtime
	if same && (t.unchanged || t.stuck != "") {
		return nil
	}
	t.unchanged = false
	if !same {
		t.stuck = ""
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%w: not a regular file", errNotFollowed)
	}
	for try := 0; ; try++ { // a session another writer moved meanwhile: read it again
		if f.o.agents {
			err = f.syncLog(ctx, t)
		} else {
			err = f.syncSession(ctx, t)
		}
		if !errors.Is(err, pgstore.ErrMoved) || try == 5 {
			break
		}
		t.pos = nil
	}
	if err == nil {
		if st != nil {
			t.dev, t.ino = uint64(st.Dev), st.Ino
		}
		t.size, t.mtime, t.unchanged = fi.Size(), fi.ModTime().UnixNano(), true
	}
	return err
}

// content is a session file's bytes to follow: the file itself (push), or
// the conversion of another agent's log (import).
type content struct {
	r      io.ReaderAt
	size   int64
	header []byte
	id     string
	source pgstore.Position // what the source's position becomes once all is committed
	mtime  time.Time
}

// syncSession follows a panto session file.
func (f *follower) syncSession(ctx context.Context, t *tracked) error {
	r, err := filestore.OpenRead(t.path)
	if err != nil {
		return err
	}
	defer r.Close()
	// A writer's batch is read once it is durable: the lock it holds for
	// the write and the fsync is tested (not waited for, and held for no
	// time at all), so the database gets no line the writer could still
	// cut back, and its commit does not compete with the writer's fsync.
	if locked, err := r.Locked(); err == nil && locked && (t.writing.IsZero() || time.Since(t.writing) < writingWait) {
		if t.writing.IsZero() {
			t.writing = time.Now()
		}
		return errWriting
	}
	t.writing = time.Time{}
	size, err := r.SizeNow()
	if err != nil {
		return err
	}
	fi, _ := os.Stat(t.path)
	c := content{r: r, size: size, mtime: fi.ModTime()}
	header, _, term, err := scan.NewReader(io.NewSectionReader(r, 0, c.size), 0).Next()
	if err == io.EOF || err == nil && !term {
		return nil // being written: a writer makes a file whole before it names it, so this is someone else's
	}
	if err != nil {
		return err
	}
	h := session.Classify(header)
	switch {
	case h.Kind != session.KindHeader:
		return fmt.Errorf("%w: no valid session header; run panto-fsck %s", errNotFollowed, t.path)
	case !session.IsUUID(h.ID):
		return fmt.Errorf("%w: the session id %q is not a UUID", errNotFollowed, h.ID)
	case h.Version > session.Version:
		return fmt.Errorf("%w: format version %d, newer than this panto's: use a newer panto", errNotFollowed, h.Version)
	}
	c.header, c.id = append([]byte(nil), header...), h.ID
	if t.id != "" && t.id != c.id {
		t.pos = nil // another session under this name now
	}
	t.id = c.id
	// The fast way: the same file, grown from where this follower
	// committed, its last committed line still there.
	if t.pos != nil && !(uint64(r.Dev()) == t.dev && r.Ino() == t.ino && c.size >= t.pos.Bytes && f.lastLineHolds(r, t)) {
		t.pos = nil
	}
	return f.commitAll(ctx, t, c)
}

// lastLineHolds reports whether the file still ends its committed part
// with the line committed last (a cut and a regrowth would change it).
func (f *follower) lastLineHolds(r io.ReaderAt, t *tracked) bool {
	if t.lastLen == 0 || t.lastLen > t.pos.Bytes {
		return false
	}
	sum, ok := rangeSum(r, t.pos.Bytes-t.lastLen, t.pos.Bytes)
	return ok && sum == t.lastSum
}

// commitAll commits what c holds beyond what the database holds of its
// session, in batches, each with its position.
func (f *follower) commitAll(ctx context.Context, t *tracked, c content) (err error) {
	var expect *pgstore.Position
	var entries, start int64
	var sum uint32
	keep := int64(-1)
	if t.pos != nil {
		expect, entries, start, sum = t.pos, t.pos.Entries, t.pos.SessionBytes, t.pos.SessionSum
	} else {
		fl, err := f.db.Follows(ctx, c.id)
		if err != nil {
			return err
		}
		expect, entries = fl.Pos, fl.Entries
		if fl.Agrees() && fl.Pos.SessionBytes <= c.size && prefixSum(c.r, fl.Pos.SessionBytes) == fl.Pos.SessionSum {
			start, sum = fl.Pos.SessionBytes, fl.Pos.SessionSum
		} else {
			sh, err := f.db.Shared(ctx, c.id, scan.NewReader(io.NewSectionReader(c.r, 0, c.size), 0))
			if err != nil {
				return err
			}
			if sh.Have != fl.Entries {
				return fmt.Errorf("session %s moved while it was compared: %w", c.id, pgstore.ErrMoved)
			}
			start, sum = sh.Bytes, sh.Sum
			if sh.Entries < sh.Have { // the file no longer holds what the database holds beyond
				more, err := hasLineAt(c.r, c.size, start)
				if err != nil {
					return err
				}
				// The file went on another way after a cut (more): the
				// database follows it. It stops short of the database:
				switch {
				case f.o.agents && !more: // the agent deleted history: the archive keeps it
					t.pos = nil
					return nil
				case f.o.agents: // as import does: cut only what the conversion holds again
					theirs, err := f.theirs(ctx, c, sh)
					if err != nil {
						return err
					}
					if theirs > 0 {
						return fmt.Errorf("%w: the log changed, and session %s holds %d entries after its entry %d that the log does not (appended since the import?): not cut (panto-log import --force cuts them aside)", errNotFollowed, c.id, theirs, sh.Entries)
					}
				case !more && !cutAside(t.path, sh): // a copy that lags behind the database: left alone
					return fmt.Errorf("%w: it holds %d entries of session %s, the database %d: a copy behind the database? nothing written (push --status shows it)", errNotFollowed, sh.Entries, c.id, sh.Have)
				}
				keep = sh.Entries
			}
		}
	}
	if !f.o.agents && t.pos == nil { // the last line committed, to tell the file was not cut under the position
		if t.lastLen, t.lastSum, err = lineBefore(c.r, start); err != nil {
			return err
		}
	}
	rd := scan.NewReader(io.NewSectionReader(c.r, start, c.size-start), start)
	var batch [][]byte
	var arena []byte
	var lastLen int64
	var lastSum uint32
	for {
		batch, arena = batch[:0], arena[:0]
		var ends []int
		end := start
		for len(batch) < batchLines && len(arena) < batchBytes {
			line, off, term, err := rd.Next()
			if err == io.EOF || err == nil && !term {
				break
			}
			if err != nil {
				return err
			}
			k := session.Classify(line).Kind
			if k == session.KindCorrupt || k == session.KindHeader {
				more, err := hasLineAt(c.r, c.size, off+int64(len(line))+1)
				if err != nil {
					return err
				}
				if more || k == session.KindHeader {
					return fmt.Errorf("%w: damaged at line %d (byte %d): nothing from there on committed; run panto-fsck %s", errNotFollowed, entries+int64(len(batch))+2, off, t.path)
				}
				break // a torn tail: never sent; the writer cuts it
			}
			arena = append(arena, line...)
			ends = append(ends, len(arena))
			batch = append(batch, nil)
			end = off + int64(len(line)) + 1
			lastLen, lastSum = int64(len(line))+1, pgstore.Sum(pgstore.Sum(0, line), []byte{'\n'})
		}
		for i, from := range ends {
			lo := 0
			if i > 0 {
				lo = ends[i-1]
			}
			batch[i] = arena[lo:from]
			sum = pgstore.Sum(pgstore.Sum(sum, batch[i]), []byte{'\n'})
		}
		if len(batch) == 0 && keep < 0 && expect != nil {
			t.pos = expect
			if !f.o.agents || expect.Bytes == c.source.Bytes && expect.Sum == c.source.Sum {
				return nil // nothing new
			}
		}
		to := pgstore.Position{Source: t.path, Bytes: end, Lines: entries + int64(len(batch)) + 1, Sum: sum,
			Entries: entries + int64(len(batch)), SessionBytes: end, SessionSum: sum}
		if keep >= 0 {
			to.Entries, to.Lines = keep+int64(len(batch)), keep+int64(len(batch))+1
		}
		if f.o.agents { // the source's position moves with its conversion's last batch
			to.Source, to.Bytes, to.Lines, to.Sum = c.source.Source, c.source.Bytes, c.source.Lines, c.source.Sum
			if end < c.size && expect != nil {
				to.Bytes, to.Lines, to.Sum = expect.Bytes, expect.Lines, expect.Sum
			} else if end < c.size {
				to.Bytes, to.Lines, to.Sum = 0, 0, 0
			}
		}
		started := time.Now()
		res, err := f.db.Commit(ctx, pgstore.Commit{ID: c.id, Header: c.header, ExpectEntries: entries, Expect: expect, Keep: keep, Lines: batch, To: to})
		if err != nil {
			t.pos = nil
			return err
		}
		f.report(t, c, to, res, started)
		expect, entries, start, keep = &to, to.Entries, end, -1
		t.pos = &to
		if len(batch) > 0 && !f.o.agents {
			t.lastLen, t.lastSum = lastLen, lastSum
		}
		if len(batch) < batchLines && len(arena) < batchBytes {
			return nil
		}
	}
}

// report says what a commit did: a JSON line with --json, progress on a
// terminal.
func (f *follower) report(t *tracked, c content, to pgstore.Position, res pgstore.Committed, started time.Time) {
	now := time.Now()
	lag := now.Sub(c.mtime)
	if f.o.json {
		b, _ := json.Marshal(struct {
			Session   string  `json:"session"`
			Path      string  `json:"path"`
			Entries   int64   `json:"entries"`
			Cut       int64   `json:"cut,omitempty"`
			Total     int64   `json:"total"`
			Bytes     int64   `json:"bytes"`
			LagMs     float64 `json:"lagMs"`
			CommitMs  float64 `json:"commitMs"`
			Committed string  `json:"committed"`
		}{c.id, t.path, res.Entries, res.Cut, to.Entries, to.Bytes, ms(lag), ms(now.Sub(started)), now.UTC().Format(time.RFC3339Nano)})
		f.out.Write(append(b, '\n'))
		f.out.Flush()
	}
	if f.tty || res.Cut > 0 {
		cut := ""
		if res.Cut > 0 {
			cut = fmt.Sprintf(", %d moved to panto_cuts", res.Cut)
		}
		fmt.Fprintf(f.io.Stderr, "%s: %s: +%d entries (%d in all%s), lag %s\n", name, shortID(c.id), res.Entries, to.Entries, cut, lag.Round(time.Millisecond))
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func shortID(id string) string {
	if len(id) > 13 {
		return id[:13]
	}
	return id
}

// lineBefore returns the length and CRC-32C of the line (its "\n"
// included) that ends at end, end > 0.
func lineBefore(r io.ReaderAt, end int64) (int64, uint32, error) {
	buf := make([]byte, 4096)
	start := int64(0)
	for hi := end - 1; hi > 0; { // the "\n" at end-1 is the line's own
		lo := max(0, hi-int64(len(buf)))
		if _, err := r.ReadAt(buf[:hi-lo], lo); err != nil {
			return 0, 0, err
		}
		if i := bytes.LastIndexByte(buf[:hi-lo], '\n'); i >= 0 {
			start = lo + int64(i) + 1
			break
		}
		hi = lo
	}
	sum, ok := rangeSum(r, start, end)
	if !ok {
		return 0, 0, io.ErrUnexpectedEOF
	}
	return end - start, sum, nil
}

// prefixSum is the CRC-32C of r's first n bytes (not that of any n
// bytes when r is shorter).
func prefixSum(r io.ReaderAt, n int64) uint32 {
	sum, ok := rangeSum(r, 0, n)
	if !ok {
		return ^sum
	}
	return sum
}

// rangeSum is the CRC-32C of r's bytes [lo, hi); false if r ends before.
func rangeSum(r io.ReaderAt, lo, hi int64) (uint32, bool) {
	var sum uint32
	buf := make([]byte, min(hi-lo, 256<<10))
	for off := lo; off < hi; {
		k, err := r.ReadAt(buf[:min(int64(len(buf)), hi-off)], off)
		sum = pgstore.Sum(sum, buf[:k])
		off += int64(k)
		if err != nil && off < hi {
			return sum, false
		}
	}
	return sum, true
}

// hasLineAt reports whether r holds a complete line from off on.
func hasLineAt(r io.ReaderAt, size, off int64) (bool, error) {
	if off >= size {
		return false, nil
	}
	_, _, term, err := scan.NewReader(io.NewSectionReader(r, off, size-off), off).Next()
	if err == io.EOF {
		return false, nil
	}
	return term, err
}

// cutAside reports whether panto-log truncate cut the file where it
// leaves the database: a cut saved beside it starts with the first entry
// the database holds beyond the file.
func cutAside(path string, sh pgstore.Share) bool {
	names, _ := filepath.Glob(globQuote(path) + ".cut-*")
	for _, n := range names {
		r, err := filestore.OpenRead(n)
		if err != nil {
			continue
		}
		line, _, term, err := scan.NewReader(io.NewSectionReader(r, 0, r.Size()), 0).Next()
		r.Close()
		if err == nil && term && int64(len(line)) == sh.NextLen && int32(pgstore.Sum(0, line)) == sh.NextCRC {
			return true
		}
	}
	return false
}

func globQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// syncLog follows another agent's log: converted whole when it changed
// (the importers' rules: a response that grew another copy replaces the
// old one, its lines moved to panto_cuts), and what the database lacks of
// the conversion committed with the log's position.
func (f *follower) syncLog(ctx context.Context, t *tracked) error {
	src, err := os.Open(t.path)
	if err != nil {
		return err
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		return err
	}
	size := fi.Size()
	// Unchanged since its position: not converted again.
	if t.pos != nil && t.pos.Bytes == size && prefixSum(src, size) == t.pos.Sum {
		return nil
	}
	from := f.o.from
	if from == agents.Unknown {
		if from, err = agents.Sniff(src, size); err != nil {
			return err
		}
		switch from {
		case agents.Panto:
			return fmt.Errorf("%w: a panto session: follow it with panto-log push --follow", errNotFollowed)
		case agents.Unknown:
			return fmt.Errorf("%w: %v", errNotFollowed, agents.ErrNotALog)
		}
	}
	tmp, n, stats, err := agents.Convert(agents.Source{Path: t.path, R: src, Size: size}, from)
	if err != nil {
		return fmt.Errorf("%w: %v", errNotFollowed, err)
	}
	defer tmp.Close()
	if k := len(stats.Corrupt); k > 0 && t.stuck == "" {
		cli.Warnf(f.io.Stderr, name, "%s: %d lines are not JSON objects (line %d first): not imported, the rest was", t.path, k, stats.Corrupt[0])
	}
	header, _, _, err := scan.NewReader(io.NewSectionReader(tmp, 0, n), 0).Next()
	if err != nil {
		return err
	}
	h := session.Classify(header)
	lines, err := countLines(io.NewSectionReader(src, 0, size))
	if err != nil {
		return err
	}
	c := content{r: tmp, size: n, header: append([]byte(nil), header...), id: h.ID, mtime: fi.ModTime(),
		source: pgstore.Position{Source: t.path, Bytes: size, Lines: lines, Sum: prefixSum(src, size)}}
	t.id = c.id
	t.pos = nil // the conversion's position is the database's
	err = f.commitAll(ctx, t, c)
	if errors.Is(err, store.ErrConflict) { // the header differs: the log was moved (Codex archives a session) or copied
		have, herr := f.db.Header(ctx, c.id)
		if herr != nil {
			return herr
		}
		if have == nil || string(have) == string(c.header) {
			return err
		}
		// As import does: the session keeps the header of its first import.
		moved, size, herr := withHeader(tmp, n, append(have, '\n'))
		if herr != nil {
			return herr
		}
		defer moved.Close()
		c.r, c.size, c.header = moved, size, have
		err = f.commitAll(ctx, t, c)
	}
	return err
}

// theirs counts the entries the database holds of c's session after the
// ones both share that c does not hold (by id).
func (f *follower) theirs(ctx context.Context, c content, sh pgstore.Share) (int, error) {
	ids, err := f.db.IDsAfter(ctx, c.id, sh.Entries)
	if err != nil {
		return 0, err
	}
	have := map[string]bool{}
	rd := scan.NewReader(io.NewSectionReader(c.r, sh.Bytes, c.size-sh.Bytes), sh.Bytes)
	for {
		line, _, term, err := rd.Next()
		if err == io.EOF || err == nil && !term {
			break
		}
		if err != nil {
			return 0, err
		}
		have[session.Classify(line).ID] = true
	}
	n := 0
	for _, id := range ids {
		if !have[id] {
			n++
		}
	}
	return n, nil
}

// countLines counts the newlines r holds.
func countLines(r io.Reader) (int64, error) { return lines(r) }

// follow runs push --follow (or --once).
func (c *pushCmd) follow(st store.Store, io cli.IO, out *bufio.Writer) error {
	fs, ok := st.(*filestore.Files)
	if !ok {
		return exitcode.Usagef("push copies file sessions: run it without --store (or PANTO_STORE) and name the database with --to")
	}
	if c.Follow && c.Once {
		return exitcode.Usagef("--follow and --once: give one")
	}
	roots := c.Paths
	if len(roots) == 0 {
		base, err := fs.Env.BaseDir()
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
	return follow(followOpts{to: c.To, roots: roots, once: c.Once, json: c.JSON, poll: c.Poll}, io, out)
}

// follow runs import --follow (or --once).
func (c *importCmd) follow(io cli.IO, out *bufio.Writer) error {
	if c.To == "" {
		return exitcode.Usagef("--follow and --once import into a database: give --to postgres://…")
	}
	if c.Follow && c.Once {
		return exitcode.Usagef("--follow and --once: give one")
	}
	from, err := agents.ParseFormat(c.From)
	if err != nil {
		return exitcode.New(exitcode.Usage, err)
	}
	roots := c.Paths
	if len(roots) == 0 {
		if roots = agents.Places(from, io.Getenv); len(roots) == 0 {
			return exitcode.Usagef("no logs of %s found in their places (~/.claude, ~/.codex, ~/.pi): give the directories", c.From)
		}
	}
	return follow(followOpts{to: c.To, roots: roots, agents: true, from: from, once: c.Once, json: c.JSON, poll: c.Poll}, io, out)
}

// sessionStatus is what push --status says of one session.
type sessionStatus struct {
	Session  string `json:"session"`
	Path     string `json:"path"`
	Local    place  `json:"local"`
	Database *place `json:"database"` // nil: not in the database
	State    string `json:"state"`    // same, behind (the database lacks lines), ahead, differs, missing, damaged
}

type place struct {
	Entries int64 `json:"entries"`
	Bytes   int64 `json:"bytes"`
}

// status compares every session file the arguments name with the
// database.
func (c *pushCmd) status(ctx context.Context, st store.Store, io cli.IO, out io.Writer) error {
	fs, ok := st.(*filestore.Files)
	if !ok {
		return exitcode.Usagef("push --status compares file sessions: run it without --store (or PANTO_STORE) and name the database with --to")
	}
	if c.Follow || c.Once {
		return exitcode.Usagef("--status goes alone")
	}
	db, err := database(ctx, c.To)
	if err != nil {
		return err
	}
	defer db.Close()
	all, err := db.FollowsAll(ctx)
	if err != nil {
		return exitcode.New(exitcode.Failure, err)
	}
	paths := c.Paths
	if len(paths) == 0 {
		base, err := fs.Env.BaseDir()
		if err != nil {
			return exitcode.New(exitcode.Usage, err)
		}
		paths = []string{base}
	}
	var rows []sessionStatus
	var failed error
	for _, arg := range paths {
		fs.Each(ctx, arg, func(path string, err error) error {
			if err != nil {
				if !errors.Is(err, os.ErrNotExist) || arg != path {
					failed = err
					cli.Errorf(io.Stderr, name, "%s: %v", path, err)
				}
				return nil
			}
			s, err := statusOf(ctx, db, all, path)
			if err != nil {
				failed = err
				cli.Errorf(io.Stderr, name, "%s: %v", path, err)
				return nil
			}
			rows = append(rows, s)
			return nil
		})
	}
	agree := true
	if c.JSON {
		enc := json.NewEncoder(out)
		enc.SetEscapeHTML(false)
		for _, r := range rows {
			enc.Encode(r)
			agree = agree && r.State == "same"
		}
	} else {
		table := [][]string{{"SESSION", "LOCAL", "DATABASE", "STATE", "PATH"}}
		for _, r := range rows {
			d := "-"
			if r.Database != nil {
				d = fmt.Sprintf("%d entries, %d B", r.Database.Entries, r.Database.Bytes)
			}
			table = append(table, []string{r.Session, fmt.Sprintf("%d entries, %d B", r.Local.Entries, r.Local.Bytes), d, r.State, r.Path})
			agree = agree && r.State == "same"
		}
		writeColumns(out, table)
	}
	switch {
	case failed != nil:
		return exitcode.Failuref("some sessions could not be compared (see above)")
	case !agree:
		return exitcode.Findingsf("some sessions and the database do not agree")
	}
	return nil
}

// statusOf compares one session file with the database.
func statusOf(ctx context.Context, db *pgstore.PG, all map[string]pgstore.Followed, path string) (sessionStatus, error) {
	r, err := filestore.OpenRead(path)
	if err != nil {
		return sessionStatus{}, err
	}
	defer r.Close()
	if !r.Regular() {
		return sessionStatus{}, fmt.Errorf("not a regular file: not compared")
	}
	s := sessionStatus{Path: path}
	rd := scan.NewReader(io.NewSectionReader(r, 0, r.Size()), 0)
	for n := 0; ; n++ {
		line, off, term, err := rd.Next()
		if err == io.EOF || err == nil && !term {
			break
		}
		if err != nil {
			return s, err
		}
		c := session.Classify(line)
		if n == 0 {
			if c.Kind != session.KindHeader || !session.IsUUID(c.ID) {
				return s, fmt.Errorf("no valid session header: run panto-fsck %s", path)
			}
			s.Session = c.ID
		} else if c.Kind == session.KindCorrupt || c.Kind == session.KindHeader {
			if more, _ := hasLineAt(r, r.Size(), off+int64(len(line))+1); more || c.Kind == session.KindHeader {
				s.State = "damaged"
			}
			break
		} else {
			s.Local.Entries++
		}
		s.Local.Bytes = off + int64(len(line)) + 1
	}
	f, ok := all[s.Session]
	if !ok {
		if s.State == "" {
			s.State = "missing"
		}
		return s, nil
	}
	s.Database = &place{Entries: f.Entries, Bytes: f.Bytes}
	if s.State != "" {
		return s, nil
	}
	shared := int64(-1)
	if f.Agrees() && f.Pos.SessionBytes <= s.Local.Bytes && prefixSum(r, f.Pos.SessionBytes) == f.Pos.SessionSum {
		shared = f.Entries
	} else {
		sh, err := db.Shared(ctx, s.Session, scan.NewReader(io.NewSectionReader(r, 0, s.Local.Bytes), 0))
		if err != nil && !errors.Is(err, store.ErrConflict) {
			return s, err
		}
		if err == nil {
			shared = sh.Entries
			if sh.Entries < sh.Have && sh.Entries < s.Local.Entries {
				shared = -1
			}
		}
	}
	switch {
	case shared < 0:
		s.State = "differs"
	case f.Entries == s.Local.Entries && shared == f.Entries:
		s.State = "same"
	case f.Entries < s.Local.Entries:
		s.State = "behind"
	default:
		s.State = "ahead"
	}
	return s, nil
}
