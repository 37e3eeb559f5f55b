package pgstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/panto-dev/panto/pkg/store"
)

// state is what an append must know of a session, read under its row lock.
type state struct {
	exists   bool
	leaf     string
	stamp    session.Stamp // active at the leaf; empty when no user entry is on its path
	entries  int64
	messages int
	bytes    int64
	last     *time.Time
}

// dbtx is what the statements of a transaction go through: a pgx.Tx, or
// the connection itself inside a BEGIN sent with the first statements (an
// append's two round trips).
type dbtx interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// lock takes the lock on the session's row (waiting up to p.wait for
// another appender) and reads its state, in one round trip (with BEGIN
// first when begin is set); a session that does not exist yet has none.
func (p *PG) lock(ctx context.Context, tx dbtx, id string, begin bool) (state, error) {
	var b pgx.Batch
	if begin {
		b.Queue("BEGIN")
	}
	b.Queue(`SELECT leaf_bytes, leaf_provider, leaf_model, entries, messages, bytes, last_activity
		FROM panto_sessions WHERE id = $1 FOR UPDATE`, id)
	br := tx.SendBatch(ctx, &b)
	var s state
	var leaf, provider, model []byte
	var err error
	for range b.Len() - 1 {
		if _, err = br.Exec(); err != nil {
			break
		}
	}
	if err == nil {
		err = br.QueryRow().Scan(&leaf, &provider, &model, &s.entries, &s.messages, &s.bytes, &s.last)
	}
	if cerr := br.Close(); err == nil || errors.Is(err, pgx.ErrNoRows) && cerr != nil {
		err = cerr
	}
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return s, nil
	case err != nil:
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "55P03" { // lock_not_available
			return s, fmt.Errorf("%w: session %s", store.ErrBusy, id)
		}
		return s, err
	}
	s.exists = true
	s.leaf = string(leaf)
	if provider != nil && model != nil {
		s.stamp = session.Stamp{Provider: string(provider), Model: string(model)}
	}
	return s, nil
}

// Append writes msgs to the session name names as one transaction. A
// full id that names no session creates it (by its first reply, SPEC §4).
func (p *PG) Append(ctx context.Context, name string, msgs []store.Msg, o store.AppendOptions) (*store.Result, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.ready(ctx); err != nil {
		return nil, err
	}
	if len(msgs) == 0 {
		return nil, store.ErrEmpty
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if err := p.applyWait(ctx); err != nil {
		return nil, p.fail("append to session "+name, err)
	}
	id := name
	if !session.IsUUID(name) { // a prefix: the session must exist
		var err error
		if id, err = p.resolve(ctx, p.conn, name, "", true); err != nil {
			if errors.Is(err, store.ErrNoSuchSession) {
				return nil, store.Mark(fmt.Errorf("%v: a new session needs a whole id (panto-log new prints one)", err), store.ErrNoSuchSession)
			}
			return nil, err
		}
	}
	var res *store.Result
	var err error
	for try := 0; ; try++ {
		res, err = p.appendOnce(ctx, id, msgs, o)
		var pe *pgconn.PgError
		if try < 3 && errors.As(err, &pe) && pe.Code == "23505" && pe.ConstraintName == "panto_entries_id" {
			continue // a random entry id drawn twice: draw again
		}
		break
	}
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "23505" && pe.ConstraintName == "panto_sessions_pkey" {
			return nil, fmt.Errorf("%w: session %s (another writer created it first)", store.ErrExists, id)
		}
		if errors.As(err, &pe) || !isStoreError(err) {
			return nil, p.fail("append to session "+id, err)
		}
		return nil, err
	}
	return res, nil
}

// isStoreError reports whether err is one of the store's own verdicts.
func isStoreError(err error) bool {
	for _, e := range []error{store.ErrLeafMoved, store.ErrNoReply, store.ErrNoStamp, store.ErrNoParent, store.ErrBusy, store.ErrExists, store.ErrNoSuchSession} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// appendOnce is one transaction of an append, in two round trips: BEGIN,
// the row lock and the session's state; then the entries, the row moved
// on, and COMMIT. On any error it rolls back.
func (p *PG) appendOnce(ctx context.Context, id string, msgs []store.Msg, o store.AppendOptions) (*store.Result, error) {
	st, err := p.lock(ctx, p.conn, id, true)
	var res *store.Result
	if err == nil {
		res, err = p.appendTx(ctx, p.conn, id, st, msgs, o)
	}
	if err != nil && !p.conn.IsClosed() {
		p.conn.Exec(context.Background(), "ROLLBACK") // nothing of the batch stays
	}
	return res, err
}

func (p *PG) appendTx(ctx context.Context, tx dbtx, id string, st state, msgs []store.Msg, o store.AppendOptions) (*store.Result, error) {
	res := &store.Result{}
	var created []any // the new session's row, when the batch creates it
	stamp := session.Stamp{Provider: o.Provider, Model: o.Model}
	parent := st.leaf
	if !st.exists {
		if err := store.CheckNew("session "+id, "session", msgs, o); err != nil {
			return nil, err
		}
		now := o.Now()
		header := session.Header{ID: id, Timestamp: session.Timestamp(now), Cwd: o.Cwd}.AppendLine(nil)
		header = header[:len(header)-1]
		st.bytes = int64(len(header)) + 1
		created = sessionRow(id, header)
		res.Created = true
	} else {
		if err := store.CheckLeaf(st.leaf, o.ExpectLeaf); err != nil {
			return nil, err
		}
		if o.Parent != "" {
			var seq int64
			if err := tx.QueryRow(ctx, `SELECT seq FROM panto_entries WHERE session = $1 AND id_bytes = $2 AND valid`, id, []byte(o.Parent)).Scan(&seq); err != nil {
				if errors.Is(err, pgx.ErrNoRows) {
					return nil, fmt.Errorf("%w: session %s has no entry %q", store.ErrNoParent, id, o.Parent)
				}
				return nil, err
			}
			base, err := activeStamp(ctx, tx, id, o.Parent)
			if err != nil {
				return nil, err
			}
			parent, st.leaf, st.stamp = o.Parent, o.Parent, base // a branch grows from there
		}
		if o.Root {
			var others int64
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM panto_entries WHERE session = $1 AND NOT (parent IS NULL AND type = 'message' AND role = 'user')`, id).Scan(&others); err != nil {
				return nil, err
			}
			if others > 0 {
				return nil, fmt.Errorf("%w: session %s: only a prompt that got no reply, alone in its session, may get a second root", store.ErrNoParent, id)
			}
			parent = ""
		}
		if stamp.Provider == "" {
			stamp = st.stamp
		}
	}
	lines, _, err := store.Build(msgs, parent, stamp, func(string) bool { return false }, o.Now())
	if err != nil {
		return nil, err
	}
	res.Lines = lines
	if err := p.insert(ctx, tx, id, &st, lines, created, true); err != nil {
		return nil, err
	}
	return res, nil
}

// insert adds the entry lines to the session after st and moves its row
// on, in one round trip: first the session's row when created is set (a
// new session), and COMMIT last when commit is set.
func (p *PG) insert(ctx context.Context, tx dbtx, id string, st *state, lines []byte, created []any, commit bool) error {
	var b pgx.Batch
	if created != nil {
		b.Queue(insertSession, created...)
	}
	for len(lines) > 0 {
		i := bytes.IndexByte(lines, '\n')
		line := lines[:i]
		lines = lines[i+1:]
		st.entries++
		r, c := rowOf(st.entries, line)
		b.Queue(insertEntry, r.values(id)...)
		st.follow(&c, int64(len(line))+1)
	}
	b.Queue(updateSession, sessionState(id, st)...)
	if commit {
		b.Queue("COMMIT")
	}
	return tx.SendBatch(ctx, &b).Close()
}

// follow moves the state past the entry c: the rules of the tree, as the
// scan and the file checkpoints follow them.
func (st *state) follow(c *session.Line, size int64) {
	st.bytes += size
	if !c.IsNode() {
		return
	}
	if s, ok := c.UserStamp(); ok {
		st.stamp = s
	}
	if c.Counted() {
		st.messages++
	}
	if t, err := time.Parse(time.RFC3339Nano, c.Activity()); err == nil {
		st.last = &t
	}
	st.leaf = c.ID
}

// activeStamp is the stamp of the last user entry on the path to entry
// leaf (SPEC §2), walking up its parents. Each step goes to an earlier
// entry (a parent after its child is no parent: SPEC §10, a row is input),
// so the walk ends within the session's entries whatever the rows say, a
// crafted cycle included. The stamp is read from the entry's line, the
// exact bytes (the text columns are for people).
func activeStamp(ctx context.Context, tx dbtx, id, leaf string) (session.Stamp, error) {
	var line []byte
	err := tx.QueryRow(ctx, `WITH RECURSIVE path(seq, parent, role) AS (
			SELECT seq, parent_bytes, role FROM panto_entries WHERE session = $1 AND id_bytes = $2 AND valid
			UNION ALL
			SELECT e.seq, e.parent_bytes, e.role
			FROM panto_entries e JOIN path p ON e.session = $1 AND e.id_bytes = p.parent AND e.seq < p.seq AND e.valid
		)
		SELECT e.line FROM panto_entries e
		WHERE e.session = $1 AND e.seq = (SELECT max(seq) FROM path WHERE role = 'user')`, id, []byte(leaf)).Scan(&line)
	if errors.Is(err, pgx.ErrNoRows) {
		return session.Stamp{}, nil
	}
	if err != nil {
		return session.Stamp{}, err
	}
	c := session.Classify(line)
	st, _ := c.UserStamp()
	return st, nil
}
