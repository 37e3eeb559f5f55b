package pgstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/panto-dev/panto/pkg/scan"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/panto-dev/panto/pkg/store"
)

// Receive copies the session src holds into the database: only the
// entries not there yet, in one transaction, so a push killed half way
// leaves the session as it was and a rerun copies every entry exactly
// once. A torn tail is never pushed. The entries the database has must be
// src's first ones, byte for byte (compared by length and CRC-32C): an
// entry that exists with other bytes is an error, and nothing is
// overwritten; a src that holds fewer is left out (nothing to add). A
// src that is no clean session, a parent cycle included, is refused
// (store.CheckSource).
func (p *PG) Receive(ctx context.Context, src store.Source) (*store.Received, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.ready(ctx); err != nil {
		return nil, err
	}
	l, err := store.CheckSource(src, "the session received")
	if err != nil {
		return nil, err
	}
	if err := p.applyWait(ctx); err != nil {
		return nil, p.fail("push session "+l.Header.ID, err)
	}
	h := l.Header
	header := make([]byte, 0, 256)
	rd := scan.NewReader(io.NewSectionReader(src, 0, l.Good), 0)
	first, _, _, err := rd.Next()
	if err != nil {
		return nil, err
	}
	header = append(header, first...)
	res := &store.Received{Name: h.ID, ID: h.ID}
	path := "the session " + h.ID
	err = pgx.BeginFunc(ctx, p.conn, func(tx pgx.Tx) error {
		st, err := p.lock(ctx, tx, h.ID, false)
		if err != nil {
			return err
		}
		if !st.exists {
			// A racing creator's row is waited for (it commits or not), never
			// taken for an entry with other bytes.
			tag, err := tx.Exec(ctx, insertSession+` ON CONFLICT (id) DO NOTHING`, sessionRow(h.ID, header)...)
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 1 {
				st.bytes = int64(len(header)) + 1
				res.Created = true
			} else if st, err = p.lock(ctx, tx, h.ID, false); err != nil {
				return err
			} else if !st.exists {
				return fmt.Errorf("%w: session %s: created and removed meanwhile: try again", store.ErrBusy, h.ID)
			}
		}
		if !res.Created {
			if err := p.sameHeader(ctx, tx, h.ID, header); err != nil {
				return err
			}
		}
		res.Had = st.entries
		n, err := p.samePrefix(ctx, tx, h.ID, st.entries, rd, path)
		if err != nil {
			return err
		}
		if n < st.entries {
			res.Ahead = true
			return nil // the database holds all of src, and more
		}
		src := &lines{rd: rd, id: h.ID, st: &st}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"panto_entries"}, entryColumns, src); err != nil {
			return err
		}
		if src.err != nil {
			return src.err
		}
		res.Entries = st.entries - res.Had
		if res.Entries == 0 {
			return nil
		}
		// The active stamp at the file's leaf, from the whole tree.
		st.stamp = session.Stamp{}
		if leaf := l.Leaf(); leaf >= 0 {
			st.stamp, _ = l.Active(leaf)
		}
		_, err = tx.Exec(ctx, updateSession, sessionState(h.ID, &st)...)
		return err
	})
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "23505" && pe.ConstraintName == "panto_entries_id" {
			return res, fmt.Errorf("%w: session %s: an entry id is already in the database with other bytes: nothing was pushed", store.ErrConflict, h.ID)
		}
		if errors.Is(err, store.ErrConflict) {
			return res, err
		}
		if isStoreError(err) || errors.Is(err, store.ErrNeedsFsck) {
			return nil, err
		}
		return nil, p.fail("push session "+h.ID, err)
	}
	return res, nil
}

// sameHeader makes sure the database's session has the file's header.
func (p *PG) sameHeader(ctx context.Context, tx pgx.Tx, id string, header []byte) error {
	var have []byte
	if err := tx.QueryRow(ctx, `SELECT header FROM panto_sessions WHERE id = $1`, id).Scan(&have); err != nil {
		return err
	}
	if !bytes.Equal(have, header) {
		return fmt.Errorf("%w: session %s: the database's header differs from the file's: nothing was pushed", store.ErrConflict, id)
	}
	return nil
}

// samePrefix reads the first n entries of the file from rd and compares
// them with the database's, by length and a SHA-256 the server computes from
// each line (the crc column is a row's input like any other: a line changed
// with SQL keeps the crc it had). It returns how many the file has (fewer
// than n when the file is behind).
func (p *PG) samePrefix(ctx context.Context, tx pgx.Tx, id string, n int64, rd *scan.Reader, path string) (int64, error) {
	if n == 0 {
		return 0, nil
	}
	rows, err := tx.Query(ctx, `SELECT seq, length(line), `+lineSum+` FROM panto_entries WHERE session = $1 ORDER BY seq`, id)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var k int64
	for rows.Next() {
		var seq, length int64
		var sum []byte
		if err := rows.Scan(&seq, &length, &sum); err != nil {
			return 0, err
		}
		line, _, term, err := rd.Next()
		if err == io.EOF || err == nil && !term {
			return k, rows.Err()
		}
		if err != nil {
			return 0, err
		}
		k++
		if int64(len(line)) != length || !sameSum(line, sum) || seq != k {
			return 0, fmt.Errorf("%w: session %s: line %d of %s differs from the database's entry %d: nothing was pushed", store.ErrConflict, id, k+1, path, seq)
		}
	}
	return k, rows.Err()
}

// lines feeds COPY the entry lines rd has left, moving st on.
type lines struct {
	rd   *scan.Reader
	id   string
	st   *state
	vals []any
	err  error
}

func (s *lines) Next() bool {
	line, _, term, err := s.rd.Next()
	if err != nil || !term {
		if err != io.EOF {
			s.err = err
		}
		return false
	}
	s.st.entries++
	r, c := rowOf(s.st.entries, line)
	s.st.follow(&c, int64(len(line))+1)
	s.vals = r.values(s.id)
	return true
}

func (s *lines) Values() ([]any, error) { return s.vals, nil }

func (s *lines) Err() error { return s.err }
