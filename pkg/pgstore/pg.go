// Package pgstore keeps sessions in PostgreSQL (SPEC §10), for teams and CI
// fleets: PANTO_STORE=postgres://… or --store URL, with libpq's connection
// settings (the URL, PG* variables, sslmode).
//
// A session is a row of panto_sessions (its header line kept exactly) and
// its entries rows of panto_entries in order (each line kept exactly, as
// bytea, beside columns a team can query). A batch is one transaction;
// appenders on any number of machines are serialized by a lock on the
// session's row (SELECT … FOR UPDATE), so a killed client, a killed server
// or a dropped connection leaves every batch whole or absent. Sessions are
// named by id or a unique prefix of it.
package pgstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/panto-dev/panto/pkg/store"
)

// PG is a connection to a database that holds sessions.
type PG struct {
	mu   sync.Mutex // one statement at a time: a connection is not shared
	conn *pgx.Conn
	cfg  *pgx.ConnConfig // what a new connection is made of
	raw  string          // the URL as given (for Scrub)
	url  string          // redacted
	wait time.Duration
	set  time.Duration // the connection's lock_timeout
	set0 time.Duration // a new connection's lock_timeout
	shut bool          // Close was called
}

// DefaultWait is how long an appender waits for another's lock, and
// every statement for a lock (a table locked by a migration or a VACUUM
// FULL): the connection's lock_timeout.
const DefaultWait = 10 * time.Second

// StatementTimeout bounds every statement (statement_timeout), unless the
// URL sets one: no query runs unbounded.
const StatementTimeout = 5 * time.Minute

// IdleTimeout ends a transaction its client left idle (a stopped process
// holding a session's row lock): idle_in_transaction_session_timeout.
const IdleTimeout = time.Minute

// checkInterval is how often the server looks whether the client of a
// running query is still there (client_connection_check_interval,
// PostgreSQL 14 on): a killed client's query is cancelled, not run on.
const checkInterval = time.Second

func init() {
	store.Register("postgres", func(url string, getenv func(string) string) (store.Store, error) {
		return Open(context.Background(), url)
	})
	store.RegisterFollower("postgres", func(ctx context.Context, url string) (store.Follower, error) {
		p, err := Open(ctx, url)
		if err != nil {
			return nil, err // not a nil *PG in the interface
		}
		return p, nil
	})
}

// Open connects to the database url names and makes sure it holds the
// schema (created on first use; a newer one is refused).
func Open(ctx context.Context, url string) (*PG, error) {
	url = normalize(url)
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		// pgx quotes the string it could not read, its password redacted
		// only in part: what it says follows our own redaction instead.
		msg := err.Error()
		if i := strings.Index(msg, "`: "); strings.HasPrefix(msg, "cannot parse `") && i > 0 {
			msg = msg[i+3:]
		}
		return nil, fmt.Errorf("%w: %s: %s", store.ErrBadURL, Redact(url), Scrub(msg, url))
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	p := &PG{url: Redact(url), wait: DefaultWait, set: DefaultWait}
	if _, set := cfg.RuntimeParams["lock_timeout"]; set {
		p.set = -1 // the URL's, for reads; a writer sets its --wait
	}
	for k, v := range map[string]time.Duration{"lock_timeout": DefaultWait, "statement_timeout": StatementTimeout, "idle_in_transaction_session_timeout": IdleTimeout} {
		if _, set := cfg.RuntimeParams[k]; !set {
			cfg.RuntimeParams[k] = ms(v)
		}
	}
	p.cfg, p.raw, p.set0 = cfg, url, p.set
	if err := p.connect(ctx); err != nil {
		return nil, err
	}
	if err := checkSchema(ctx, p.conn); err != nil {
		err = p.fail("open the schema", err) // said before the close: the store was reached
		p.conn.Close(ctx)
		return nil, err
	}
	if err := p.fillSearch(ctx); err != nil {
		err = p.fail("fill the search index", err)
		p.conn.Close(ctx)
		return nil, err
	}
	return p, nil
}

// connect opens a new connection.
func (p *PG) connect(ctx context.Context) error {
	conn, err := pgx.ConnectConfig(ctx, p.cfg)
	if err != nil {
		return fmt.Errorf("%w: cannot connect to %s: %s", store.ErrUnavailable, p.where(p.cfg), Scrub(scrub(err.Error(), p.cfg.Password), p.raw))
	}
	p.conn, p.set = conn, p.set0
	if _, err := p.conn.Exec(ctx, `SELECT set_config('client_connection_check_interval', $1, false)`, ms(checkInterval)); err != nil {
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "42704" { // undefined_object: a server before 14
			p.conn.Close(ctx)
			return p.fail("connect", err)
		}
	}
	return nil
}

// ready makes sure the store has a connection: one that was lost (a
// server restarted, a proxy cut it) is replaced by a new one. The call
// that met the loss failed with store.ErrUnavailable; the one after it
// connects again (a long-running embedder survives its server, SPEC §13).
// It is called with p.mu held.
func (p *PG) ready(ctx context.Context) error {
	if p.conn != nil && !p.conn.IsClosed() {
		return nil
	}
	if p.shut {
		return fmt.Errorf("pgstore: %s: the store is closed", p.url)
	}
	if p.conn != nil {
		p.conn.Close(ctx)
	}
	return p.connect(ctx)
}

// where names the server a config points at, for messages.
func (p *PG) where(cfg *pgx.ConnConfig) string {
	host := cfg.Host
	if strings.HasPrefix(host, "/") {
		host = "socket " + host
	}
	return fmt.Sprintf("%s (%s, port %d, database %s, user %s)", p.url, host, cfg.Port, cfg.Database, cfg.User)
}

// fail says what failed, and whether the store could not be reached.
func (p *PG) fail(what string, err error) error {
	if errors.Is(err, store.ErrNewerVersion) {
		return err
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "55P03": // lock_not_available: lock_timeout
			return store.Mark(fmt.Errorf("%s in %s: timed out waiting for a lock another holds (a writer, a migration, a VACUUM FULL?): try again", what, p.url), store.ErrBusy)
		case "57014": // query_canceled: statement_timeout
			return store.Mark(fmt.Errorf("%s in %s: the statement was cancelled after its timeout (%s): try again", what, p.url, pe.Message), store.ErrUnavailable)
		}
		return fmt.Errorf("%s in %s: %s (SQLSTATE %s)", what, p.url, pe.Message, pe.Code)
	}
	if pgconn.SafeToRetry(err) || p.conn.IsClosed() || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %s in %s: %v", store.ErrUnavailable, what, p.url, err)
	}
	return fmt.Errorf("%s in %s: %v", what, p.url, err)
}

// Where is the database URL, its password hidden.
func (p *PG) Where() string { return p.url }

// SetWait sets how long an appender waits for another's lock (any lock
// its statements take, table locks included); it takes effect with the
// next write.
func (p *PG) SetWait(d time.Duration) { p.wait = d }

// applyWait makes the connection's lock_timeout the wait, outside any
// transaction (a SET in one that rolls back is undone). It must come
// before the statements: a statement waits for its table's lock while it
// is parsed, before anything of its batch runs.
func (p *PG) applyWait(ctx context.Context) error {
	if p.wait == p.set {
		return nil
	}
	if _, err := p.conn.Exec(ctx, `SELECT set_config('lock_timeout', $1, false)`, ms(p.wait)); err != nil {
		return err
	}
	p.set = p.wait
	return nil
}

// ms is d as a setting in milliseconds (at least 1: 0 would be no bound).
func ms(d time.Duration) string { return fmt.Sprint(max(1, d.Milliseconds())) }

// Close closes the connection.
func (p *PG) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.shut = true
	return p.conn.Close(context.Background())
}

// NewName is a new session id: the session is created by its first reply.
func (p *PG) NewName(string) (string, error) { return session.NewSessionID() }

// likePrefix is a LIKE pattern for the ids that start with prefix.
func likePrefix(prefix string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(strings.ToLower(prefix)) + "%"
}

// resolve returns the id of the session name names: its id, or a unique
// prefix of one.
func (p *PG) resolve(ctx context.Context, q dbtx, name, cwd string, all bool) (string, error) {
	sql := `SELECT id FROM panto_sessions WHERE id LIKE $1 ORDER BY id LIMIT 21`
	args := []any{likePrefix(name)}
	if !all {
		sql = `SELECT id FROM panto_sessions WHERE id LIKE $1 AND cwd_bytes = $2 ORDER BY id LIMIT 21`
		args = append(args, []byte(cwd))
	}
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return "", p.fail("resolve "+name, err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return "", p.fail("resolve "+name, err)
	}
	for _, id := range ids {
		if id == name {
			return id, nil
		}
	}
	return store.Pick(name, ids, ids)
}

// Resolve returns the id of the session whose id starts with prefix.
func (p *PG) Resolve(ctx context.Context, cwd string, all bool, prefix string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.ready(ctx); err != nil {
		return "", err
	}
	return p.resolve(ctx, p.conn, prefix, cwd, all)
}

// Each calls fn with the id arg names (an id or a unique prefix).
func (p *PG) Each(ctx context.Context, arg string, fn func(string, error) error) error {
	p.mu.Lock()
	err := p.ready(ctx)
	id := ""
	if err == nil {
		id, err = p.resolve(ctx, p.conn, arg, "", true)
	}
	p.mu.Unlock()
	if err != nil {
		return fn(arg, err)
	}
	return fn(id, nil)
}

// List describes the sessions of cwd (of all), newest activity first.
// The rows are read raw (binary values, no reflection) and ordered here:
// a listing of ten thousand sessions is a few milliseconds of work.
func (p *PG) List(ctx context.Context, cwd string, all bool, _ func(error)) ([]store.Summary, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.ready(ctx); err != nil {
		return nil, err
	}
	// The lines a title is looked for in (session.Titles), joined by
	// newlines (a line holds none), as the file store reads them.
	sql := `SELECT s.id, s.cwd_bytes, s.created, coalesce(s.last_activity, s.created), s.messages, s.bytes, s.origin_agent,
		(SELECT string_agg(e.line, '\x0a'::bytea ORDER BY e.seq) FROM panto_entries e
		 WHERE e.session = s.id AND e.seq <= ` + strconv.Itoa(session.TitleLines) + ` AND octet_length(e.line) <= ` + strconv.Itoa(session.TitleLineMax) + `
		   AND (e.role = 'user' OR e.type IN ('claude.custom-title', 'claude.ai-title', 'claude.summary', 'pi.session_info')))
		FROM panto_sessions s`
	var args []any
	if !all {
		sql += ` WHERE s.cwd_bytes = $1`
		args = append(args, []byte(cwd))
	}
	rows, err := p.conn.Query(ctx, sql, args...)
	if err != nil {
		return nil, p.fail("list sessions", err)
	}
	defer rows.Close()
	var out []store.Summary
	cwds := map[string]string{} // a few projects, thousands of sessions
	for rows.Next() {
		v := rows.RawValues()
		if len(v) != 8 || len(v[4]) != 4 || len(v[5]) != 8 {
			return nil, p.fail("list sessions", fmt.Errorf("unexpected row"))
		}
		cwd, ok := cwds[string(v[1])]
		if !ok {
			cwd = string(v[1])
			cwds[cwd] = cwd
		}
		s := store.Summary{ID: string(v[0]), Cwd: cwd, Created: pgTime(v[2]), Modified: pgTime(v[3]),
			Messages: int(int32(binary.BigEndian.Uint32(v[4]))), Size: int64(binary.BigEndian.Uint64(v[5]))}
		s.Path = s.ID
		t := session.Titles{Agent: "panto"}
		if v[6] != nil {
			t.Agent = string(v[6])
		}
		for line := range bytes.SplitSeq(v[7], []byte("\n")) {
			if t.Done() {
				break
			}
			t.Line(line)
		}
		s.Title, s.Prompt, s.Agent = t.Title(), t.Prompt(), t.Agent
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, p.fail("list sessions", err)
	}
	store.SortNewest(out)
	return out, nil
}

// pgEpoch is where PostgreSQL's binary timestamps count from.
var pgEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()

// pgTime reads a binary timestamptz (microseconds since 2000); NULL is
// the zero time.
func pgTime(b []byte) time.Time {
	if len(b) != 8 {
		return time.Time{}
	}
	return time.UnixMicro(pgEpoch + int64(binary.BigEndian.Uint64(b))).UTC()
}

// Open reads the session into a temporary file (unlinked: it goes when
// closed), so that readers can go back over it at any offset with memory
// that does not grow with the session: the header, then the entry lines in
// order, all from one snapshot.
func (p *PG) Open(ctx context.Context, name string) (store.Reader, error) {
	return p.spoolRead(ctx, func(tx pgx.Tx, r *spool) error {
		id, err := p.resolve(ctx, tx, name, "", true)
		if err != nil {
			return err
		}
		return p.copyOut(ctx, tx, id, r)
	})
}

// spoolRead returns what fill writes, in one read-only snapshot, to a
// spool: an unnamed temporary file, closed on every failure.
func (p *PG) spoolRead(ctx context.Context, fill func(pgx.Tx, *spool) error) (store.Reader, error) {
	f, err := os.CreateTemp("", "panto-session-*")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name())
	r := &spool{File: f}
	p.mu.Lock()
	defer p.mu.Unlock()
	err = p.ready(ctx)
	if err == nil {
		err = pgx.BeginTxFunc(ctx, p.conn, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
			return fill(tx, r)
		})
	}
	if err == nil {
		_, err = f.Seek(0, 0)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return r, nil
}

// checkHeader refuses a session row whose header is not one session
// header line naming the row's id and cwd (ErrBadRow).
func checkHeader(id string, header, cwd []byte) error {
	h := session.Classify(header)
	switch {
	case bytes.IndexByte(header, '\n') >= 0 || h.Kind != session.KindHeader:
		return fmt.Errorf("%w: session %s: its header is not one session header line", store.ErrBadRow, id)
	case h.ID != id:
		return fmt.Errorf("%w: session %s: its header names session %q", store.ErrBadRow, id, h.ID)
	case h.Cwd != string(cwd):
		return fmt.Errorf("%w: session %s: its header's cwd is not the row's", store.ErrBadRow, id)
	}
	return nil
}

// copyOut writes the session id as a file's bytes to w. What the rows
// hold is input (SPEC §10: anyone with write access to the database may
// have written them): the header must be one session header, of this
// row's id and cwd; every line one complete JSON object, an entry, whose
// id and parent are the row's; and every parent that the session holds
// must come before its child (no cycle); the entries numbered 1 to n
// without a gap, n and the session's size as a file the row's entries and
// bytes (what push, append and followers go by). Anything else is
// ErrBadRow and nothing is given out.
func (p *PG) copyOut(ctx context.Context, tx pgx.Tx, id string, w *spool) error {
	var header []byte
	var cwd []byte
	var entries, size int64
	if err := tx.QueryRow(ctx, `SELECT header, cwd_bytes, entries, bytes FROM panto_sessions WHERE id = $1`, id).Scan(&header, &cwd, &entries, &size); err != nil {
		return p.fail("read session "+id, err)
	}
	if err := checkHeader(id, header, cwd); err != nil {
		return err
	}
	bw := w.writer()
	bw.Write(header)
	bw.WriteByte('\n')
	rows, err := tx.Query(ctx, `SELECT seq, id_bytes, parent_bytes, line FROM panto_entries WHERE session = $1 ORDER BY seq`, id)
	if err != nil {
		return p.fail("read session "+id, err)
	}
	defer rows.Close()
	// The chain: a parent the session holds comes before its child. A
	// parent not seen yet is pending until the session ends (it may be
	// dangling, a warning of panto-fsck) or its id comes (a cycle).
	seen := map[string]struct{}{}
	pending := map[string]int64{}
	n, total := int64(0), int64(len(header))+1
	for rows.Next() {
		v := rows.RawValues() // binary: int8, bytea, bytea, bytea (the line itself)
		line := v[3]
		seq := int64(-1)
		if len(v[0]) == 8 {
			seq = int64(binary.BigEndian.Uint64(v[0]))
		}
		if n++; seq != n {
			return fmt.Errorf("%w: session %s: entry %d comes where entry %d should (a gap in the sequence)", store.ErrBadRow, id, seq, n)
		}
		total += int64(len(line)) + 1
		if err := checkRow(line, v[1], v[2]); err != nil {
			return fmt.Errorf("%w: session %s: entry %d: %v", store.ErrBadRow, id, seq, err)
		}
		if len(v[2]) > 0 {
			if _, ok := seen[string(v[2])]; !ok {
				if _, ok := pending[string(v[2])]; !ok {
					pending[string(v[2])] = seq
				}
			}
		}
		if len(v[1]) > 0 {
			if child, ok := pending[string(v[1])]; ok {
				return fmt.Errorf("%w: session %s: entry %d has parent %q, itself or a later entry (a parent cycle)", store.ErrBadRow, id, child, v[1])
			}
			seen[string(v[1])] = struct{}{}
		}
		bw.Write(line)
		bw.WriteByte('\n')
	}
	if err := rows.Err(); err != nil {
		return p.fail("read session "+id, err)
	}
	if n != entries || total != size {
		return fmt.Errorf("%w: session %s: its row says %d entries, %d bytes; its entries are %d, %d bytes", store.ErrBadRow, id, entries, size, n, total)
	}
	return bw.Flush()
}

// checkRow checks that an entry row's line is one complete JSON object,
// an entry, whose id and parent are the row's columns (NULL: nil).
func checkRow(line, id, parent []byte) error {
	if bytes.IndexByte(line, '\n') >= 0 {
		return fmt.Errorf("its line holds a newline")
	}
	c := session.Classify(line)
	switch {
	case c.Kind == session.KindCorrupt:
		return fmt.Errorf("its line is not a complete JSON object (%s)", c.Problem)
	case c.Kind == session.KindHeader || c.Type == "session":
		return fmt.Errorf("its line is a session header")
	case c.ID != string(id) || c.ParentID != string(parent):
		return fmt.Errorf("its line's id and parentId (%q, %q) are not the row's (%q, %q)", c.ID, c.ParentID, id, parent)
	}
	return nil
}

// readable is s as a text column keeps it: valid UTF-8 without NUL (each
// run of invalid bytes, and each NUL, as U+FFFD). The exact bytes are in the line.
func readable(s string) string {
	if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// castagnoli is made when first needed: making it costs every command
// that links this package a million instructions at start.
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// crc is the checksum of a line kept in its row (for a team's queries and
// a follower's positions). Nothing compares a file's line with a row's by
// it: a row is input, and a line changed with SQL keeps its old crc.
func crc(line []byte) int32 { return int32(crc32.Checksum(line, castagnoli())) }

// lineSum is the SQL of the digest push and Shared compare a row's line
// by, SHA-256 computed by the server from the line's bytes (PostgreSQL 11
// on; md5 may be refused by a server in FIPS mode); sameSum compares it
// with a file's line.
const lineSum = `sha256(line)`

func sameSum(line, sum []byte) bool {
	d := sha256.Sum256(line)
	return bytes.Equal(d[:], sum)
}

var _ store.Store = (*PG)(nil)
