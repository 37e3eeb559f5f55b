package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/panto-dev/panto/pkg/scan"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/panto-dev/panto/pkg/store"
)

// positionsSchema is version 2: where a follower (panto-log push --follow,
// import --follow) stands in the file it follows, one row per session,
// written in the transaction that commits the lines, so that a follower
// killed at any moment, or another one on another machine, goes on from
// what the database holds.
const positionsSchema = `
CREATE TABLE panto_positions (
	session       text COLLATE "C" PRIMARY KEY REFERENCES panto_sessions (id),
	source        bytea NOT NULL,  -- the path of the file followed, where it was last read
	bytes         bigint NOT NULL, -- its bytes committed: complete lines only
	lines         bigint NOT NULL, -- its complete lines committed
	crc           bigint NOT NULL, -- CRC-32C of those bytes
	entries       bigint NOT NULL, -- the session's entries after that commit
	session_bytes bigint NOT NULL, -- the session's size as a file after that commit
	session_crc   bigint NOT NULL, -- CRC-32C of the session as a file, up to there
	updated       timestamptz NOT NULL
);
`

// The follower's types are the store's (store.Follower, which PG
// implements); their names here are kept for code that used them.
type (
	Position  = store.Position
	Followed  = store.Followed
	Share     = store.Share
	Tail      = store.Tail
	Commit    = store.Commit
	Committed = store.Committed
)

// ErrMoved is store.ErrMoved.
var ErrMoved = store.ErrMoved

// Sum is store.Sum: it extends a CRC-32C (the checksum of positions) by b.
func Sum(sum uint32, b []byte) uint32 { return store.Sum(sum, b) }

var _ store.Follower = (*PG)(nil)

// Follows returns what the database holds of session id.
func (p *PG) Follows(ctx context.Context, id string) (Followed, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.ready(ctx); err != nil {
		return Followed{}, err
	}
	m, err := p.followed(ctx, p.conn, id)
	if err != nil {
		return Followed{}, p.fail("read the position of session "+id, err)
	}
	return m[id], nil
}

// FollowsAll returns what the database holds of every session, by id.
func (p *PG) FollowsAll(ctx context.Context) (map[string]Followed, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.ready(ctx); err != nil {
		return nil, err
	}
	m, err := p.followed(ctx, p.conn, "")
	if err != nil {
		return nil, p.fail("read positions", err)
	}
	return m, nil
}

func (p *PG) followed(ctx context.Context, q dbtx, id string) (map[string]Followed, error) {
	sql := `SELECT s.id, s.entries, s.bytes, p.source, p.bytes, p.lines, p.crc, p.entries, p.session_bytes, p.session_crc, p.updated
		FROM panto_sessions s LEFT JOIN panto_positions p ON p.session = s.id`
	var args []any
	if id != "" {
		sql += ` WHERE s.id = $1`
		args = append(args, id)
	}
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	m := map[string]Followed{}
	for rows.Next() {
		var sid string
		var f Followed
		var source []byte
		var bytes, lines, sum, entries, sbytes, ssum *int64
		var updated *time.Time
		if err := rows.Scan(&sid, &f.Entries, &f.Bytes, &source, &bytes, &lines, &sum, &entries, &sbytes, &ssum, &updated); err != nil {
			return nil, err
		}
		f.Exists = true
		if bytes != nil {
			f.Pos = &Position{Source: string(source), Bytes: *bytes, Lines: *lines, Sum: uint32(*sum),
				Entries: *entries, SessionBytes: *sbytes, SessionSum: uint32(*ssum), Updated: *updated}
		}
		m[sid] = f
	}
	return m, rows.Err()
}

// Shared compares the session file rd reads (from its header; complete
// lines only) with session id in the database, entry by entry by length
// and CRC-32C, and says how much they share. Their headers must be the
// same (store.ErrConflict otherwise).
func (p *PG) Shared(ctx context.Context, id string, rd *scan.Reader) (Share, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.ready(ctx); err != nil {
		return Share{}, err
	}
	var s Share
	err := pgx.BeginTxFunc(ctx, p.conn, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		header, _, term, err := rd.Next()
		if err != nil || !term {
			return fmt.Errorf("%w: session %s: the file has no complete header", store.ErrNeedsFsck, id)
		}
		s.Bytes = int64(len(header)) + 1
		s.Sum = Sum(Sum(0, header), nl)
		var have []byte
		if err := tx.QueryRow(ctx, `SELECT header, entries FROM panto_sessions WHERE id = $1`, id).Scan(&have, &s.Have); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return nil
			}
			return err
		}
		if string(have) != string(header) {
			return fmt.Errorf("%w: session %s: the database's header differs from the file's: nothing written", store.ErrConflict, id)
		}
		rows, err := tx.Query(ctx, `SELECT seq, length(line), `+lineSum+` FROM panto_entries WHERE session = $1 ORDER BY seq`, id)
		if err != nil {
			return err
		}
		defer rows.Close()
		next := int64(-1) // the seq of the first entry the file does not share
		for rows.Next() {
			var seq, length int64
			var sum []byte
			if err := rows.Scan(&seq, &length, &sum); err != nil {
				return err
			}
			line, _, term, err := rd.Next()
			if err != nil && err != io.EOF {
				return err
			}
			if err == nil && term && int64(len(line)) == length && sameSum(line, sum) {
				s.Entries++
				s.Bytes += length + 1
				s.Sum = Sum(Sum(s.Sum, line), nl)
				continue
			}
			next = seq
			break
		}
		rows.Close() // the rest is not needed
		if err := rows.Err(); err != nil || next < 0 {
			return err
		}
		// The next entry's length and checksum, of its own bytes (not the
		// crc column, which a row may hold wrong).
		var line []byte
		if err := tx.QueryRow(ctx, `SELECT line FROM panto_entries WHERE session = $1 AND seq = $2`, id, next).Scan(&line); err != nil {
			return err
		}
		s.NextLen, s.NextCRC = int64(len(line)), crc(line)
		return nil
	})
	if err != nil {
		if errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNeedsFsck) {
			return s, err
		}
		return s, p.fail("compare session "+id, err)
	}
	return s, nil
}

// Beyond returns the Tail of session id after the entries sh shares with
// a file, pos the session's position (nil: none).
func (p *PG) Beyond(ctx context.Context, id string, sh Share, pos *Position) (Tail, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var t Tail
	err := pgx.BeginTxFunc(ctx, p.conn, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT length(line), `+lineSum+` FROM panto_entries WHERE session = $1 AND seq > $2 ORDER BY seq`, id, sh.Entries)
		if err != nil {
			return err
		}
		for rows.Next() {
			var n int64
			var sum []byte
			if err := rows.Scan(&n, &sum); err != nil {
				rows.Close()
				return err
			}
			t.Lens, t.Sums = append(t.Lens, n), append(t.Sums, sum)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if pos == nil || pos.Entries <= sh.Entries || pos.Entries > sh.Entries+int64(len(t.Lens)) {
			return nil
		}
		rows, err = tx.Query(ctx, `SELECT line FROM panto_entries WHERE session = $1 AND seq > $2 AND seq <= $3 ORDER BY seq`, id, sh.Entries, pos.Entries)
		if err != nil {
			return err
		}
		defer rows.Close()
		size, sum := sh.Bytes, sh.Sum
		for rows.Next() {
			var line []byte
			if err := rows.Scan(&line); err != nil {
				return err
			}
			size += int64(len(line)) + 1
			sum = Sum(Sum(sum, line), nl)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if size == pos.SessionBytes && sum == pos.SessionSum {
			t.Committed = pos.Entries - sh.Entries
		}
		return nil
	})
	if err != nil {
		return t, p.fail("read session "+id, err)
	}
	return t, nil
}

var nl = []byte{'\n'}

// Commit applies c in one transaction, the position with the lines: the
// session's row is locked first (as appenders lock it), and the position
// advances only if the lines are committed with it. A commit of a few lines
// is three round trips: BEGIN with the lock, the position, and the rows
// with COMMIT.
func (p *PG) Commit(ctx context.Context, c Commit) (Committed, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.ready(ctx); err != nil {
		return Committed{}, err
	}
	res, err := p.commitTx(ctx, c)
	if err != nil && !p.conn.IsClosed() {
		p.conn.Exec(context.Background(), "ROLLBACK") // nothing of the commit stays
	}
	if err != nil {
		var pe *pgconn.PgError
		switch {
		case errors.Is(err, ErrMoved):
			return Committed{}, err
		case errors.As(err, &pe) && pe.Code == "23505" && pe.ConstraintName == "panto_sessions_pkey":
			return Committed{}, ErrMoved // another follower created it first
		case errors.As(err, &pe) && pe.Code == "23505":
			return Committed{}, fmt.Errorf("%w: session %s: an entry id is already in the session: nothing written; run panto-fsck on %s", store.ErrNeedsFsck, c.ID, c.To.Source)
		case isStoreError(err), errors.Is(err, store.ErrNeedsFsck):
			return Committed{}, err
		}
		return Committed{}, p.fail("commit session "+c.ID, err)
	}
	return res, nil
}

// copyOver is the number of lines from which a commit sends its rows by
// COPY rather than as statements of its last round trip.
const copyOver = 64

func (p *PG) commitTx(ctx context.Context, c Commit) (Committed, error) {
	var res Committed
	tx := p.conn
	st, err := p.lock(ctx, tx, c.ID, true)
	if err != nil {
		return res, err
	}
	m, err := p.followed(ctx, tx, c.ID)
	if err != nil {
		return res, err
	}
	f := m[c.ID]
	if f.Entries != c.ExpectEntries || (f.Pos == nil) != (c.Expect == nil) ||
		f.Pos != nil && !samePosition(*f.Pos, *c.Expect) {
		return res, ErrMoved
	}
	var b pgx.Batch
	if !st.exists {
		h := session.Classify(c.Header)
		if h.Kind != session.KindHeader || h.ID != c.ID {
			return res, fmt.Errorf("%w: session %s: no valid header", store.ErrNeedsFsck, c.ID)
		}
		b.Queue(insertSession, sessionRow(c.ID, c.Header)...)
		st.bytes = int64(len(c.Header)) + 1
	}
	if c.Keep >= 0 && c.Keep < st.entries {
		if res.Cut, err = cutTo(ctx, tx, c.ID, &st, c.Keep); err != nil {
			return res, err
		}
	}
	branched := false
	rows := &newRows{lines: c.Lines, id: c.ID, st: &st, branched: &branched}
	if len(c.Lines) > copyOver {
		if b.Len() > 0 { // the session's row first
			if err := tx.SendBatch(ctx, &b).Close(); err != nil {
				return res, err
			}
			b = pgx.Batch{}
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"panto_entries"}, entryColumns, rows); err != nil {
			return res, err
		}
	} else {
		for rows.Next() {
			b.Queue(insertEntry, rows.vals...)
		}
	}
	res.Entries = int64(len(c.Lines))
	if branched && st.leaf != "" { // a branch: the stamp is the leaf path's, read once the rows are in
		if b.Len() > 0 {
			if err := tx.SendBatch(ctx, &b).Close(); err != nil {
				return res, err
			}
			b = pgx.Batch{}
		}
		if st.stamp, err = activeStamp(ctx, tx, c.ID, st.leaf); err != nil {
			return res, err
		}
	}
	to := c.To
	if st.entries != to.Entries || st.bytes != to.SessionBytes {
		return res, fmt.Errorf("session %s: the commit would leave %d entries (%d bytes), not the %d (%d bytes) it was computed for", c.ID, st.entries, st.bytes, to.Entries, to.SessionBytes)
	}
	b.Queue(updateSession, sessionState(c.ID, &st)...)
	b.Queue(`INSERT INTO panto_positions (session, source, bytes, lines, crc, entries, session_bytes, session_crc, updated)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now())
		ON CONFLICT (session) DO UPDATE SET source = $2, bytes = $3, lines = $4, crc = $5, entries = $6, session_bytes = $7, session_crc = $8, updated = now()`,
		c.ID, []byte(to.Source), to.Bytes, to.Lines, int64(to.Sum), to.Entries, to.SessionBytes, int64(to.SessionSum))
	b.Queue("COMMIT")
	return res, tx.SendBatch(ctx, &b).Close()
}

// samePosition compares what a follower compares of two positions (the
// path a file was seen at may differ: it was renamed, or read on another
// machine).
func samePosition(a, b Position) bool {
	return a.Bytes == b.Bytes && a.Lines == b.Lines && a.Sum == b.Sum &&
		a.Entries == b.Entries && a.SessionBytes == b.SessionBytes && a.SessionSum == b.SessionSum
}

// cutTo cuts session id back to its first keep entries: the lines after
// are moved to panto_cuts, never simply deleted, and st is what is left.
func cutTo(ctx context.Context, tx dbtx, id string, st *state, keep int64) (int64, error) {
	tag, err := tx.Exec(ctx, `INSERT INTO panto_cuts (session, seq, cut_at, line) SELECT session, seq, $3, line FROM panto_entries WHERE session = $1 AND seq > $2`, id, keep, time.Now())
	if err != nil {
		return 0, err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM panto_entries WHERE session = $1 AND seq > $2`, id, keep); err != nil {
		return 0, err
	}
	var leaf []byte
	var cut, messages int64
	if err := tx.QueryRow(ctx, `SELECT
			(SELECT id_bytes FROM panto_entries WHERE session = $1 AND valid AND id_bytes IS NOT NULL ORDER BY seq DESC LIMIT 1),
			(SELECT coalesce(sum(length(line) + 1), 0) FROM panto_entries WHERE session = $1),
			(SELECT count(*) FROM panto_entries WHERE session = $1 AND type = 'message' AND valid AND role IN ('user', 'assistant')),
			(SELECT ts FROM panto_entries WHERE session = $1 AND type = 'message' AND valid ORDER BY seq DESC LIMIT 1),
			(SELECT length(header) + 1 FROM panto_sessions WHERE id = $1)`, id).Scan(&leaf, &cut, &messages, &st.last, &st.bytes); err != nil {
		return 0, err
	}
	st.bytes += cut
	st.entries, st.messages, st.leaf, st.stamp = keep, int(messages), "", session.Stamp{}
	if leaf != nil {
		st.leaf = string(leaf)
		if st.stamp, err = activeStamp(ctx, tx, id, st.leaf); err != nil {
			return 0, err
		}
	}
	return tag.RowsAffected(), nil
}

// newRows feeds COPY the lines of a commit, moving st on.
type newRows struct {
	lines    [][]byte
	id       string
	st       *state
	i        int
	vals     []any
	branched *bool
}

func (s *newRows) Next() bool {
	if s.i == len(s.lines) {
		return false
	}
	line := s.lines[s.i]
	s.i++
	s.st.entries++
	r, c := rowOf(s.st.entries, line)
	if c.IsNode() && c.ParentID != s.st.leaf {
		*s.branched = true
	}
	s.st.follow(&c, int64(len(line))+1)
	s.vals = r.values(s.id)
	return true
}

func (s *newRows) Values() ([]any, error) { return s.vals, nil }

func (s *newRows) Err() error { return nil }

// Header returns the header line of session id (nil when the database does
// not hold it).
func (p *PG) Header(ctx context.Context, id string) ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.ready(ctx); err != nil {
		return nil, err
	}
	var h []byte
	err := p.conn.QueryRow(ctx, `SELECT header FROM panto_sessions WHERE id = $1`, id).Scan(&h)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, p.fail("read session "+id, err)
	}
	return h, nil
}

// IDsAfter returns the entry ids of session id after its first n entries
// ("" for a line without one).
func (p *PG) IDsAfter(ctx context.Context, id string, n int64) ([]string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.ready(ctx); err != nil {
		return nil, err
	}
	rows, err := p.conn.Query(ctx, `SELECT coalesce(id_bytes, ''::bytea) FROM panto_entries WHERE session = $1 AND seq > $2 ORDER BY seq`, id, n)
	if err != nil {
		return nil, p.fail("read session "+id, err)
	}
	ids, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
		var b []byte
		err := r.Scan(&b)
		return string(b), err
	})
	if err != nil {
		return nil, p.fail("read session "+id, err)
	}
	return ids, nil
}
