package logcmd

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/panto-dev/panto/internal/agents"
	"github.com/panto-dev/panto/internal/cli"
	"github.com/panto-dev/panto/pkg/scan"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/panto-dev/panto/pkg/store"
)

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
	wal := walOf(t.path)
	same := st != nil && uint64(st.Dev) == t.dev && st.Ino == t.ino && fi.Size() == t.size && fi.ModTime().UnixNano() == t.mtime && wal == t.wal
	if same && (t.unchanged || t.stuck != "") {
		return nil
	}
	t.unchanged = false
	if !same {
		t.stuck = ""
	}
	if !fi.Mode().IsRegular() {
		return errNotRegular
	}
	for try := 0; ; try++ { // a session another writer moved meanwhile: read it again
		if f.o.agents {
			err = f.syncLog(ctx, t)
		} else {
			err = f.syncSession(ctx, t)
		}
		if !errors.Is(err, store.ErrMoved) || try == 5 {
			break
		}
		t.pos = nil
	}
	if err == nil {
		if st != nil {
			t.dev, t.ino = uint64(st.Dev), st.Ino
		}
		t.size, t.mtime, t.unchanged, t.wal = fi.Size(), fi.ModTime().UnixNano(), true, wal
	}
	return err
}

// walState is the size and time of a database's write-ahead log: where
// OpenCode writes, the database file itself changing only when the log is
// checkpointed into it.
type walState struct{ size, mtime int64 }

// walOf is the state of the write-ahead log beside a database followed
// (path ends in .db), zero when there is none.
func walOf(path string) walState {
	if !strings.HasSuffix(path, ".db") {
		return walState{}
	}
	fi, err := os.Stat(agents.WALOf(path))
	if err != nil {
		return walState{}
	}
	return walState{fi.Size(), fi.ModTime().UnixNano()}
}

// errNotRegular is a name a follower would follow that is no regular
// file (a FIFO): skipped with a warning, never waited on.
var errNotRegular = errors.New("not a regular file")

// content is a session file's bytes to follow: the file itself (push), or
// the conversion of another agent's log (import).
type content struct {
	r      io.ReaderAt
	size   int64
	header []byte
	id     string
	source store.Position // what the source's position becomes once all is committed
	mtime  time.Time
}

// syncSession follows a panto session file.
func (f *follower) syncSession(ctx context.Context, t *tracked) error {
	r, err := f.o.files.OpenFile(t.path)
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
	var expect *store.Position
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
				return fmt.Errorf("session %s moved while it was compared: %w", c.id, store.ErrMoved)
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
				case f.o.agents && !f.o.force: // as import does: cut only what the conversion holds again
					theirs, err := f.theirs(ctx, c, sh)
					if err != nil {
						return err
					}
					if theirs > 0 {
						return fmt.Errorf("%w: the log changed, and session %s holds %d entries after its entry %d that the log does not (appended since the import?): not cut (--force cuts them, into panto_cuts)", errNotFollowed, c.id, theirs, sh.Entries)
					}
				case !more && !f.cutAside(t.path, sh): // a copy that lags behind the database: left alone
					return fmt.Errorf("%w: it holds %d entries of session %s, the database %d: a copy behind the database? nothing written (push --status shows it)", errNotFollowed, sh.Entries, c.id, sh.Have)
				case more && !f.o.force:
					// The database holds entries beyond where the file parts
					// from it. Each must be one a follower committed (the
					// database holds what the position describes) or a line
					// of a cut of the file saved beside it; any other is
					// someone else's (a teammate's append --store, also after
					// a cut in the database), not cut to follow the file.
					theirs, err := f.unexplained(ctx, c.id, t.path, sh, fl.Pos)
					if err != nil {
						return err
					}
					if theirs > 0 {
						return fmt.Errorf("%w: session %s holds %d entries after its entry %d that this file does not, no follower committed and no cut of the file holds (appended in the database since?): not cut (--force cuts them, into panto_cuts)", errNotFollowed, c.id, theirs, sh.Entries)
					}
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
			if k := session.Classify(line).Kind; k == session.KindCorrupt || k == session.KindHeader {
				n := int(entries) + len(batch) + 2
				d, err := scan.DamageAt(c.r, c.size, n, off, line, k)
				if err != nil {
					return err
				}
				if d.Verdict == scan.Damaged {
					return fmt.Errorf("%w: damaged at line %d (byte %d): nothing from there on committed; run panto-fsck %s", errNotFollowed, n, off, t.path)
				}
				break // a torn tail: never sent; the writer cuts it
			}
			arena = append(arena, line...)
			ends = append(ends, len(arena))
			batch = append(batch, nil)
			end = off + int64(len(line)) + 1
			lastLen, lastSum = int64(len(line))+1, store.Sum(store.Sum(0, line), []byte{'\n'})
		}
		for i, from := range ends {
			lo := 0
			if i > 0 {
				lo = ends[i-1]
			}
			batch[i] = arena[lo:from]
			sum = store.Sum(store.Sum(sum, batch[i]), []byte{'\n'})
		}
		if len(batch) == 0 && keep < 0 && expect != nil {
			t.pos = expect
			if !f.o.agents || expect.Bytes == c.source.Bytes && expect.Sum == c.source.Sum {
				return nil // nothing new
			}
		}
		to := store.Position{Source: t.path, Bytes: end, Lines: entries + int64(len(batch)) + 1, Sum: sum,
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
		res, err := f.db.Commit(ctx, store.Commit{ID: c.id, Header: c.header, ExpectEntries: entries, Expect: expect, Keep: keep, Lines: batch, To: to})
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
func (f *follower) report(t *tracked, c content, to store.Position, res store.Committed, started time.Time) {
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
		if err := f.out.Flush(); cli.IsBrokenPipe(err) {
			f.gone = true // SIGPIPE is ignored (cli.QuietPipe): a follower would report to nobody forever
		}
	}
	if f.tty || res.Cut > 0 && !f.o.agents { // a cut of a session is news; a response that grew is the import's routine
		cut := ""
		if res.Cut > 0 {
			cut = fmt.Sprintf(", %d moved to panto_cuts", res.Cut)
		}
		fmt.Fprintf(f.proc.Stderr, "%s: %s: +%d entries (%d in all%s), lag %s\n", name, shortID(c.id), res.Entries, to.Entries, cut, lag.Round(time.Millisecond))
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
		sum = store.Sum(sum, buf[:k])
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

// unexplained counts the entries session id holds beyond those the file
// at path shares with it (sh) that are neither a follower's (the position
// pos still describes the database's session up to them) nor a line of a
// cut of the file saved beside it.
func (f *follower) unexplained(ctx context.Context, id, path string, sh store.Share, pos *store.Position) (int64, error) {
	tail, err := f.db.Beyond(ctx, id, sh, pos)
	if err != nil {
		return 0, err
	}
	if tail.Committed >= int64(len(tail.Lens)) {
		return 0, nil
	}
	cut := map[string]bool{} // length and SHA-256 of every line of the file's cuts
	for _, n := range f.o.files.Cuts(path) {
		r, err := f.o.files.OpenFile(n)
		if err != nil {
			continue
		}
		rd := scan.NewReader(io.NewSectionReader(r, 0, r.Size()), 0)
		for {
			line, _, term, err := rd.Next()
			if err != nil || !term {
				break
			}
			d := sha256.Sum256(line)
			cut[fmt.Sprint(len(line), string(d[:]))] = true
		}
		r.Close()
	}
	var n int64
	for i := tail.Committed; i < int64(len(tail.Lens)); i++ {
		if !cut[fmt.Sprint(tail.Lens[i], string(tail.Sums[i]))] {
			n++
		}
	}
	return n, nil
}

// cutAside reports whether panto-log truncate cut the file where it
// leaves the database: a cut saved beside it starts with the first entry
// the database holds beyond the file.
func (f *follower) cutAside(path string, sh store.Share) bool {
	for _, n := range f.o.files.Cuts(path) {
		r, err := f.o.files.OpenFile(n)
		if err != nil {
			continue
		}
		line, _, term, err := scan.NewReader(io.NewSectionReader(r, 0, r.Size()), 0).Next()
		r.Close()
		if err == nil && term && int64(len(line)) == sh.NextLen && int32(store.Sum(0, line)) == sh.NextCRC {
			return true
		}
	}
	return false
}

// syncLog follows another agent's log: converted whole when it changed
// (the importers' rules: a response that grew another copy replaces the
// old one, its lines moved to panto_cuts), and what the database lacks of
// the conversion committed with the log's position.
func (f *follower) syncLog(ctx context.Context, t *tracked) error {
	if agents.InDatabase(t.path) != "" {
		return nil // a session of OpenCode's storage/ tree its database holds: followed from there
	}
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
	// A log that keeps changing is converted at most once a second, and
	// a large one less often (convertShare): it is converted whole, and an
	// agent writes a line per content block.
	if !f.o.once && time.Since(t.converted) < max(convertEvery, convertShare*t.took) {
		return errWriting
	}
	t.converted = time.Now()
	defer func() { t.took = time.Since(t.converted) }()
	// A log that is not one yet (Claude Code begins with lines of no
	// conversation; a first line being written) is waited on while it is
	// young, and said once it has been left alone for a while.
	young := !f.o.once && time.Since(fi.ModTime()) < youngLog
	from := f.o.from
	if from == agents.Unknown {
		if from, err = agents.Sniff(src, size); err != nil {
			return err
		}
		switch {
		case young && (from == agents.Panto || from == agents.Unknown):
			return errYoung
		case from == agents.Panto:
			return fmt.Errorf("%w: a panto session: follow it with panto-log push --follow", errNotFollowed)
		case from == agents.Unknown:
			return fmt.Errorf("%w: %v", errNotFollowed, agents.ErrNotALog)
		}
	}
	if head := make([]byte, 16); from == agents.OpenCode {
		if k, _ := src.ReadAt(head, 0); agents.IsSQLite(head[:k]) {
			return f.syncDatabase(ctx, t, src, fi, young)
		}
	}
	tmp, n, stats, err := agents.ConvertContext(ctx, agents.Source{Path: t.path, R: src, Size: size}, from)
	if err != nil && ctx.Err() != nil {
		return ctx.Err() // a signal: the follower stops, the log is not said to be unfollowable
	}
	if err != nil && young {
		return errYoung
	}
	if err != nil {
		return fmt.Errorf("%w: %v", errNotFollowed, err)
	}
	defer tmp.Close()
	if k := len(stats.Corrupt); k > 0 && t.stuck == "" {
		cli.Warnf(f.proc.Stderr, name, "%s: %d lines are not JSON objects (line %d first): not imported, the rest was", t.path, k, stats.Corrupt[0])
	}
	lines, err := lines(io.NewSectionReader(src, 0, size))
	if err != nil {
		return err
	}
	return f.commitConverted(ctx, t, tmp, n, fi.ModTime(), store.Position{Source: t.path, Bytes: size, Lines: lines, Sum: prefixSum(src, size)})
}

// syncDatabase follows a log that holds several sessions (an OpenCode
// database): converted whole when it changed, each session into a panto
// session of its own, with what the database lacks of each committed. A
// session that cannot be committed is said, and the others are committed
// all the same.
func (f *follower) syncDatabase(ctx context.Context, t *tracked, src *os.File, fi os.FileInfo, young bool) error {
	all, spans, stats, err := agents.ConvertAll(agents.Source{Path: t.path, R: src, Size: fi.Size()}, agents.OpenCode)
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil && young {
		return errYoung
	}
	if err != nil {
		return fmt.Errorf("%w: %v", errNotFollowed, err)
	}
	defer all.Close()
	if k := len(stats.Corrupt); k > 0 && t.stuck == "" {
		cli.Warnf(f.proc.Stderr, name, "%s: %d messages or parts are not JSON objects: not imported, the rest was", t.path, k)
	}
	if t.subs == nil {
		t.subs = map[string]*tracked{}
	}
	t.id, t.pos = "", nil
	var first error
	for _, sp := range spans {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		sub := t.subs[sp.ID]
		if sub == nil {
			sub = &tracked{path: t.path}
			t.subs[sp.ID] = sub
		}
		tmp, err := spanFile(all, sp)
		if err == nil {
			// The session's source is its part of the database, DB#SESSION
			// (what every command takes), as its conversion: a session
			// OpenCode did not write to is not committed again.
			var n int64
			if n, err = lines(io.NewSectionReader(tmp, 0, sp.Size)); err == nil {
				source := store.Position{Source: t.path + "#" + sp.ID, Bytes: sp.Size, Lines: n, Sum: prefixSum(tmp, sp.Size)}
				err = f.commitConverted(ctx, sub, tmp, sp.Size, fi.ModTime(), source)
			}
			tmp.Close()
		}
		if err != nil && first == nil {
			first = fmt.Errorf("session %s: %w", sp.ID, err)
		}
	}
	return first
}

// commitConverted commits what the database lacks of a log's conversion
// (one session, n bytes of tmp) with the log's position.
func (f *follower) commitConverted(ctx context.Context, t *tracked, tmp *os.File, n int64, mtime time.Time, source store.Position) error {
	header, _, _, err := scan.NewReader(io.NewSectionReader(tmp, 0, n), 0).Next()
	if err != nil {
		return err
	}
	h := session.Classify(header)
	c := content{r: tmp, size: n, header: append([]byte(nil), header...), id: h.ID, mtime: mtime, source: source}
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
func (f *follower) theirs(ctx context.Context, c content, sh store.Share) (int, error) {
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
