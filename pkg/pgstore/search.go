package pgstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/panto-dev/panto/internal/agents"
	"github.com/panto-dev/panto/internal/search"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/panto-dev/panto/pkg/store"
)

// The search index (SPEC §15): each entry's searchable text, folded
// (search.Text, search.Fold), in search_text, indexed by pg_trgm; a
// search asks it for the entries whose text may hold every needle, and
// searches those as their file is searched (internal/search reads a view of
// each session in which the other entries are empty lines).

// likeContains is a LIKE pattern for the texts that hold s.
func likeContains(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(s) + "%"
}

// Candidates returns the sessions holding an entry whose searchable text
// holds every needle (folded: search.Fold), or is not known (a row not
// filled yet, a text over TextMax), newest first, each with those
// entries' sequence numbers in order. Only the index and the candidate
// sessions' rows are read.
func (p *PG) Candidates(ctx context.Context, needles []string) ([]store.Candidate, error) {
	if len(needles) == 0 {
		return nil, errors.New("pgstore: Candidates needs a needle")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.ready(ctx); err != nil {
		return nil, err
	}
	sql, args := candidatesSQL(needles)
	rows, err := p.conn.Query(ctx, `SELECT c.session, coalesce(s.last_activity, s.created), s.bytes, c.seqs
		FROM (`+sql+`) c JOIN panto_sessions s ON s.id = c.session`, args...)
	if err != nil {
		return nil, p.fail("search the index", err)
	}
	defer rows.Close()
	var out []store.Candidate
	var list []store.Summary
	for rows.Next() {
		var c store.Candidate
		var mod *time.Time
		if err := rows.Scan(&c.ID, &mod, &c.Size, &c.Seqs); err != nil {
			return nil, p.fail("search the index", err)
		}
		c.Path = c.ID
		if mod != nil {
			c.Modified = mod.UTC()
		}
		out = append(out, c)
		list = append(list, store.Summary{ID: c.ID, Modified: c.Modified, Path: strconv.Itoa(len(list))})
	}
	if err := rows.Err(); err != nil {
		return nil, p.fail("search the index", err)
	}
	store.SortNewest(list) // the order List gives
	sorted := make([]store.Candidate, len(out))
	for i, s := range list {
		k, _ := strconv.Atoi(s.Path)
		sorted[i] = out[k]
	}
	return sorted, nil
}

// candidatesSQL is the query of Candidates: a LIKE for each needle, which
// the trigram index answers, or a text not known (the partial index of
// the rows not filled).
func candidatesSQL(needles []string) (string, []any) {
	var where []string
	var args []any
	for _, n := range needles {
		args = append(args, likeContains(n))
		where = append(where, "search_text LIKE $"+strconv.Itoa(len(args)))
	}
	return `SELECT session, array_agg(seq ORDER BY seq) AS seqs FROM panto_entries
		WHERE (` + strings.Join(where, " AND ") + `) OR search_text IS NULL
		GROUP BY session`, args
}

// ExplainCandidates is the plan of the query Candidates runs for needles
// (EXPLAIN ANALYZE): for benchmarks, that show the index used.
func (p *PG) ExplainCandidates(ctx context.Context, needles []string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.ready(ctx); err != nil {
		return "", err
	}
	sql, args := candidatesSQL(needles)
	rows, err := p.conn.Query(ctx, "EXPLAIN (ANALYZE, BUFFERS) "+sql, args...)
	if err != nil {
		return "", p.fail("explain the search", err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return "", p.fail("explain the search", err)
	}
	return strings.Join(lines, "\n"), nil
}

// headEntries is how many entries from a session's start a view of it
// keeps whatever matched: a search reads the first lines of a log for
// what they say of its session (its id, cwd and model: internal/search reads
// 64 lines, the header one of them) and its title (session.TitleLines).
var headEntries = int64(max(64, session.TitleLines))

// OpenCandidates reads session id as Open does, but keeps only the
// entries seqs, the first headEntries, and the entries holding the calls
// that the tool results among seqs answer (a search names a result's tool
// from its call): every other entry is an empty line, so that each line
// is where it is in the session's file. The lines kept are checked as
// Open checks them (each one complete JSON object, of its row's id and
// parent); the rest of the session is not read.
func (p *PG) OpenCandidates(ctx context.Context, id string, seqs []int64) (store.Reader, error) {
	return p.spoolRead(ctx, func(tx pgx.Tx, r *spool) error {
		return p.copyCandidates(ctx, tx, id, seqs, r)
	})
}

func (p *PG) copyCandidates(ctx context.Context, tx pgx.Tx, id string, seqs []int64, w *spool) error {
	var header, cwd []byte
	var entries int64
	if err := tx.QueryRow(ctx, `SELECT header, cwd_bytes, entries FROM panto_sessions WHERE id = $1`, id).Scan(&header, &cwd, &entries); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("%w: %s", store.ErrNoSuchSession, id)
		}
		return p.fail("read session "+id, err)
	}
	if err := checkHeader(id, header, cwd); err != nil {
		return err
	}
	// The calls the candidates' tool results answer, by their ids quoted
	// (as a search looks for them in the file).
	var calls [][]byte
	seen := map[string]bool{}
	rows, err := tx.Query(ctx, `SELECT line FROM panto_entries WHERE session = $1 AND seq = ANY($2) AND seq > $3`, id, seqs, headEntries)
	if err != nil {
		return p.fail("read session "+id, err)
	}
	for rows.Next() {
		v := rows.RawValues()
		for _, c := range search.Calls(agents.Panto, v[0]) {
			if !seen[c] {
				seen[c] = true
				calls = append(calls, []byte(`"`+c+`"`))
			}
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return p.fail("read session "+id, err)
	}
	if calls == nil {
		calls = [][]byte{}
	}
	rows, err = tx.Query(ctx, `SELECT seq, id_bytes, parent_bytes, line FROM panto_entries
		WHERE session = $1 AND (seq <= $3 OR seq = ANY($2)
			OR cardinality($4::bytea[]) > 0 AND EXISTS (SELECT FROM unnest($4::bytea[]) k WHERE position(k IN line) > 0))
		ORDER BY seq`, id, seqs, headEntries, calls)
	if err != nil {
		return p.fail("read session "+id, err)
	}
	defer rows.Close()
	bw := w.writer()
	bw.Write(header)
	bw.WriteByte('\n')
	n := int64(0)
	for rows.Next() {
		v := rows.RawValues() // binary: int8, bytea, bytea, bytea (the line itself)
		seq := int64(-1)
		if len(v[0]) == 8 {
			seq = int64(binary.BigEndian.Uint64(v[0]))
		}
		if seq <= n || seq > entries {
			return fmt.Errorf("%w: session %s: entry %d is out of its sequence (1 to %d)", store.ErrBadRow, id, seq, entries)
		}
		if err := checkRow(v[3], v[1], v[2]); err != nil {
			return fmt.Errorf("%w: session %s: entry %d: %v", store.ErrBadRow, id, seq, err)
		}
		for ; n+1 < seq; n++ {
			bw.WriteByte('\n')
		}
		n = seq
		bw.Write(v[3])
		bw.WriteByte('\n')
	}
	if err := rows.Err(); err != nil {
		return p.fail("read session "+id, err)
	}
	for ; n < entries; n++ {
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// fillLock is the advisory lock that one process at a time fills the
// search text of the rows written before version 5 under.
const fillLock = 7262627002

// fillRows and fillBytes bound one transaction of the fill.
const (
	fillRows  = 1000
	fillBytes = 16 << 20
)

// fillSearch fills search_text for the rows written before version 5
// (searchSchema), in transactions of at most fillRows rows and fillBytes
// of lines, from where the last one stopped (a fill killed half way goes
// on at the next open); one process at a time (another, finding it
// taken, goes on with its work: a search reads a row not filled). A role
// that may not write leaves it to one that may.
func (p *PG) fillSearch(ctx context.Context) error {
	var done bool
	if err := p.conn.QueryRow(ctx, `SELECT done FROM panto_search_fill`).Scan(&done); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		return err
	}
	if done {
		return nil
	}
	var mine bool
	if err := p.conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, int64(fillLock)).Scan(&mine); err != nil || !mine {
		return err
	}
	defer p.conn.Exec(context.Background(), `SELECT pg_advisory_unlock($1)`, int64(fillLock))
	for !done {
		var err error
		if done, err = p.fillOnce(ctx); err != nil {
			var pe *pgconn.PgError
			if errors.As(err, &pe) && (pe.Code == "42501" || pe.Code == "25006") { // insufficient_privilege, read_only_sql_transaction
				return nil
			}
			return err
		}
	}
	_, err := p.conn.Exec(ctx, `ANALYZE panto_entries`)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42501" { // not the table's owner: autovacuum will
		err = nil
	}
	return err
}

// fillOnce fills one batch; done when no row was left.
func (p *PG) fillOnce(ctx context.Context) (done bool, err error) {
	err = pgx.BeginFunc(ctx, p.conn, func(tx pgx.Tx) error {
		var after *string
		var afterSeq *int64
		if err := tx.QueryRow(ctx, `SELECT session, seq, done FROM panto_search_fill FOR UPDATE`).Scan(&after, &afterSeq, &done); err != nil || done {
			return err
		}
		from := `FROM panto_entries ORDER BY session, seq`
		args := []any{}
		if after != nil && afterSeq != nil {
			from = `FROM panto_entries WHERE (session, seq) > ($1, $2) ORDER BY session, seq`
			args = []any{*after, *afterSeq}
		}
		// The batch: up to fillRows rows, as many as fit in fillBytes (one at least).
		rows, err := tx.Query(ctx, `SELECT session, seq, octet_length(line) `+from+` LIMIT `+strconv.Itoa(fillRows), args...)
		if err != nil {
			return err
		}
		var last string
		var lastSeq, size int64
		n := 0
		for rows.Next() {
			var s string
			var q, l int64
			if err := rows.Scan(&s, &q, &l); err != nil {
				return err
			}
			if n > 0 && size+l > fillBytes {
				break
			}
			n++
			size += l
			last, lastSeq = s, q
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if n == 0 {
			done = true
			_, err := tx.Exec(ctx, `UPDATE panto_search_fill SET done = true`)
			return err
		}
		// The lines (those over LineMax are not read: their text stays NULL).
		// Rows written meanwhile (their text with them) may come between:
		// the batch ends at the last row counted.
		upto := `FROM panto_entries WHERE (session, seq) <= ($1, $2)`
		args = []any{last, lastSeq}
		if after != nil && afterSeq != nil {
			upto += ` AND (session, seq) > ($3, $4)`
			args = append(args, *after, *afterSeq)
		}
		rows, err = tx.Query(ctx, `SELECT session, seq, CASE WHEN octet_length(line) <= `+strconv.Itoa(LineMax)+` THEN line END `+upto+` ORDER BY session, seq`, args...)
		if err != nil {
			return err
		}
		var ids []string
		var seqs []int64
		var texts []*string
		for rows.Next() {
			var s string
			var q int64
			var line []byte
			if err := rows.Scan(&s, &q, &line); err != nil {
				return err
			}
			var t *string
			if line != nil {
				t = searchText(line)
			}
			ids, seqs, texts = append(ids, s), append(seqs, q), append(texts, t)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE panto_entries e SET search_text = v.t
			FROM unnest($1::text[], $2::bigint[], $3::text[]) AS v(s, q, t)
			WHERE e.session = v.s AND e.seq = v.q AND e.search_text IS NULL AND v.t IS NOT NULL`, ids, seqs, texts); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE panto_search_fill SET session = $1, seq = $2`, last, lastSeq)
		return err
	})
	return done, err
}
