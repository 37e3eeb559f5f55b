package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/panto-dev/panto/pkg/store"
)

// Truncate cuts every entry after entry after, in one transaction; the
// lines cut are kept in panto_cuts, never simply deleted. A database holds
// no torn tail: without after there is nothing to cut.
func (p *PG) Truncate(ctx context.Context, name, after string) (*store.Cut, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.ready(ctx); err != nil {
		return nil, err
	}
	if err := p.applyWait(ctx); err != nil {
		return nil, p.fail("truncate session "+name, err)
	}
	id, err := p.resolve(ctx, p.conn, name, "", true)
	if err != nil || after == "" {
		return nil, err
	}
	var cut *store.Cut
	err = pgx.BeginFunc(ctx, p.conn, func(tx pgx.Tx) error {
		st, err := p.lock(ctx, tx, id, false)
		if err != nil {
			return err
		}
		if !st.exists {
			return fmt.Errorf("%w: %s", store.ErrNoSuchSession, id)
		}
		var seq int64
		if err := tx.QueryRow(ctx, `SELECT seq FROM panto_entries WHERE session = $1 AND id_bytes = $2 AND valid`, id, []byte(after)).Scan(&seq); err != nil {
			switch {
			case errors.Is(err, pgx.ErrNoRows) && after == id: // every entry
				after = ""
			case errors.Is(err, pgx.ErrNoRows):
				return fmt.Errorf("%w: session %s has no entry %q", store.ErrNoParent, id, after)
			default:
				return err
			}
		}
		if seq >= st.entries {
			return nil
		}
		c := &store.Cut{SavedAs: "panto_cuts (session " + id + ")"}
		if err := tx.QueryRow(ctx, `SELECT count(*), coalesce(sum(length(line) + 1), 0) FROM panto_entries WHERE session = $1 AND seq > $2`, id, seq).Scan(&c.Entries, &c.Bytes); err != nil {
			return err
		}
		c.From = st.bytes - c.Bytes
		if _, err := tx.Exec(ctx, `INSERT INTO panto_cuts (session, seq, cut_at, line) SELECT session, seq, $3, line FROM panto_entries WHERE session = $1 AND seq > $2`, id, seq, time.Now()); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM panto_entries WHERE session = $1 AND seq > $2`, id, seq); err != nil {
			return err
		}
		var stamp session.Stamp
		if after != "" {
			if stamp, err = activeStamp(ctx, tx, id, after); err != nil {
				return err
			}
		}
		var messages int
		var last *time.Time
		if err := tx.QueryRow(ctx, `SELECT count(*) FILTER (WHERE type = 'message' AND valid AND role IN ('user', 'assistant')),
				(SELECT ts FROM panto_entries WHERE session = $1 AND type = 'message' AND valid ORDER BY seq DESC LIMIT 1)
			FROM panto_entries WHERE session = $1`, id).Scan(&messages, &last); err != nil {
			return err
		}
		left := state{leaf: after, stamp: stamp, entries: seq, messages: messages, bytes: c.From, last: last}
		if _, err := tx.Exec(ctx, updateSession, sessionState(id, &left)...); err != nil {
			return err
		}
		cut = c
		return nil
	})
	if err != nil {
		if isStoreError(err) {
			return nil, err
		}
		return nil, p.fail("truncate session "+id, err)
	}
	return cut, nil
}
