package pgstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/panto-dev/panto/pkg/filestore"
	"github.com/panto-dev/panto/pkg/scan"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/panto-dev/panto/pkg/store"
)

// Pushed is what a push did to one session.
type Pushed struct {
	ID      string
	Entries int64 // entries copied now
	Had     int64 // entries the database had already
}

// Push copies the session file at path into the database: only the
// entries not there yet, in one transaction, so a push killed half way
// leaves the session as it was and a rerun copies every entry exactly
// once. A torn tail is never pushed. The entries the database has must be
// the file's first ones, byte for byte (compared by length and CRC-32C):
// an entry that exists with other bytes is an error, and nothing is
// overwritten.
func (p *PG) Push(ctx context.Context, path string) (Pushed, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f, err := filestore.OpenRead(path)
	if err != nil {
		return Pushed{}, err
	}
	defer f.Close()
	if !f.Regular() {
		return Pushed{}, fmt.Errorf("%s is not a regular file", path)
	}
	l, err := scan.Scan(io.NewSectionReader(f, 0, f.Size()), scan.ScanOptions{})
	if err != nil {
		return Pushed{}, err
	}
	if err := pushable(path, l); err != nil {
		return Pushed{}, err
	}
	h := l.Header
	header := make([]byte, 0, 256)
	rd := scan.NewReader(io.NewSectionReader(f, 0, l.Good), 0)
	first, _, _, err := rd.Next()
	if err != nil {
		return Pushed{}, err
	}
	header = append(header, first...)
	res := Pushed{ID: h.ID}
	err = pgx.BeginFunc(ctx, p.conn, func(tx pgx.Tx) error {
		st, err := p.lock(ctx, tx, h.ID, false)
		if err != nil {
			return err
		}
		if !st.exists {
			var created *time.Time
			if t, err := time.Parse(time.RFC3339Nano, h.Timestamp); err == nil {
				created = &t
			}
			origin := session.Field(header, "origin")
			if _, err := tx.Exec(ctx, `INSERT INTO panto_sessions (id, cwd, created, origin, header, bytes) VALUES ($1, $2, $3, $4, $5, $6)`,
				h.ID, h.Cwd, created, jsonOrNil(origin), header, int64(len(header))+1); err != nil {
				return err
			}
			st.bytes = int64(len(header)) + 1
		} else if err := p.sameHeader(ctx, tx, h.ID, header); err != nil {
			return err
		}
		res.Had = st.entries
		n, err := p.samePrefix(ctx, tx, h.ID, st.entries, rd, path)
		if err != nil {
			return err
		}
		if n < st.entries {
			return fmt.Errorf("%w: session %s: the database has %d entries, %s only %d: pull it instead", store.ErrConflict, h.ID, st.entries, path, n)
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
		_, err = tx.Exec(ctx, `UPDATE panto_sessions SET leaf = $2, leaf_provider = $3, leaf_model = $4, entries = $5, messages = $6, bytes = $7, last_activity = $8 WHERE id = $1`,
			h.ID, opt(st.leaf), opt(st.stamp.Provider), opt(st.stamp.Model), st.entries, st.messages, st.bytes, st.last)
		return err
	})
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "23505" {
			return res, fmt.Errorf("%w: session %s: an entry id of %s is already in the database with other bytes: nothing was pushed", store.ErrConflict, h.ID, path)
		}
		if isStoreError(err) || errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNeedsFsck) {
			return res, err
		}
		return res, p.fail("push "+path, err)
	}
	return res, nil
}

// pushable refuses a file a push must not copy: without a valid header,
// damaged before its end, or of a newer version.
func pushable(path string, l *scan.Log) error {
	switch {
	case !l.HeaderOK:
		return fmt.Errorf("%w: %s has no valid session header", store.ErrNeedsFsck, path)
	case !session.IsUUID(l.Header.ID):
		return fmt.Errorf("%w: %s: the session id %q is not a UUID", store.ErrNeedsFsck, path, l.Header.ID)
	case l.Header.Version > session.Version:
		return fmt.Errorf("%w: %s is format version %d", store.ErrNewerVersion, path, l.Header.Version)
	case len(l.Corrupt) > 0 && l.Corrupt[0].Off < l.Good, len(l.Headers) > 0:
		return fmt.Errorf("%w: %s is damaged before its end", store.ErrNeedsFsck, path)
	case len(l.DupIDs) > 0:
		return fmt.Errorf("%w: %s repeats entry id %s", store.ErrNeedsFsck, path, l.DupIDs[0].ID)
	}
	return nil
}

func jsonOrNil(b []byte) any {
	if len(b) == 0 || b[0] != '{' {
		return nil
	}
	return string(b)
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
// them with the database's, by length and CRC-32C. It returns how many the
// file has (fewer than n when the file is behind).
func (p *PG) samePrefix(ctx context.Context, tx pgx.Tx, id string, n int64, rd *scan.Reader, path string) (int64, error) {
	if n == 0 {
		return 0, nil
	}
	rows, err := tx.Query(ctx, `SELECT seq, length(line), crc FROM panto_entries WHERE session = $1 ORDER BY seq`, id)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var k int64
	for rows.Next() {
		var seq, length int64
		var sum int32
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
		if int64(len(line)) != length || crc(line) != sum || seq != k {
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
