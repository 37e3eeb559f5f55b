package pgstore

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/panto-dev/panto/pkg/store"
)

// compression is what the large columns are set to compress with: "l"
// for lz4, "" for the server's default, by table.column.
func compression(t *testing.T, c *pgx.Conn) map[string]string {
	t.Helper()
	rows, err := c.Query(context.Background(), `SELECT attrelid::regclass::text || '.' || attname, attcompression::text FROM pg_attribute
		WHERE attrelid IN ('panto_entries'::regclass, 'panto_cuts'::regclass) AND attname IN ('line', 'search_text')`)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for rows.Next() {
		var col, how string
		if err := rows.Scan(&col, &how); err != nil {
			t.Fatal(err)
		}
		got[col] = how
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}

// lz4Columns: every large column set to lz4.
var lz4Columns = map[string]string{"panto_entries.line": "l", "panto_entries.search_text": "l", "panto_cuts.line": "l"}

// atVersion5 is a database of schema version 5 holding one session of
// one long entry, written (compressed) before the migration.
func atVersion5(t *testing.T) (u string, c *pgx.Conn, id string, file []byte) {
	t.Helper()
	u, c = atVersion(t, 5)
	ctx := context.Background()
	id = "01a232e4-4db3-7556-907c-f9d5fda4e0d1"
	header := `{"type":"session","version":1,"id":"` + id + `","timestamp":"2026-04-25T17:40:15.990Z","cwd":"/p"}`
	line := `{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"2026-04-25T14:00:01.000Z","provider":"p","model":"m","message":{"role":"user","content":[{"type":"text","text":"` + strings.Repeat("a needle in a long prompt ", 400) + `"}]}}`
	if _, err := c.Exec(ctx, `INSERT INTO panto_sessions (id, cwd, cwd_bytes, created, header, leaf, leaf_bytes, leaf_provider, leaf_model, entries, messages, bytes) VALUES ($1, '/p', '/p', now(), $2, 'aaaaaaaa', 'aaaaaaaa', 'p', 'm', 1, 1, $3)`,
		id, []byte(header), len(header)+1+len(line)+1); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, `INSERT INTO panto_entries (session, seq, id, id_bytes, type, role, valid, crc, line, search_text) VALUES ($1, 1, 'aaaaaaaa', 'aaaaaaaa', 'message', 'user', true, 0, $2, $3)`,
		id, []byte(line), *searchText([]byte(line))); err != nil {
		t.Fatal(err)
	}
	return u, c, id, []byte(header + "\n" + line + "\n")
}

// TestMigrateToLZ4: a database of schema version 5 is taken to 6: on a
// server that has lz4 the large columns (lines, search text, cuts) are
// set to compress with it; the rows already there keep their pglz and
// read back byte for byte, and the rows written after are lz4. Nothing
// else changes: the same session, the same candidates.
func TestMigrateToLZ4(t *testing.T) {
	u, c, id, file := atVersion5(t)
	ctx := context.Background()
	serverLZ4(t, c)
	if got := compression(t, c); !maps.Equal(got, map[string]string{"panto_entries.line": "", "panto_entries.search_text": "", "panto_cuts.line": ""}) {
		t.Fatalf("before the migration: %v", got)
	}
	p := open(t, u)
	var v int
	if err := p.conn.QueryRow(ctx, `SELECT max(version) FROM panto_schema`).Scan(&v); err != nil || v != 6 {
		t.Fatalf("version %d, %v", v, err)
	}
	if got := compression(t, p.conn); !maps.Equal(got, lz4Columns) {
		t.Fatalf("after the migration: %v", got)
	}
	if got := readAll(t, p, id); !bytes.Equal(got, file) {
		t.Fatalf("the session written before reads back as\n%s", got)
	}
	long := strings.Repeat("another needle, in a long reply ", 400)
	if _, err := p.Append(ctx, id, []store.Msg{{Raw: session.TextMessage("user", long), Role: "user"}}, store.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	rows, err := p.conn.Query(ctx, `SELECT seq, pg_column_compression(line), pg_column_compression(search_text) FROM panto_entries WHERE session = $1 ORDER BY seq`, id)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var seq int64
		var line, text string
		if err := rows.Scan(&seq, &line, &text); err != nil {
			t.Fatal(err)
		}
		got = append(got, line+" "+text)
	}
	if rows.Err() != nil || strings.Join(got, ", ") != "pglz pglz, lz4 lz4" {
		t.Fatalf("the entries' compression (before, after the migration): %v %v", got, rows.Err())
	}
	cands, err := p.Candidates(ctx, []string{"needle"})
	if err != nil || len(cands) != 1 || len(cands[0].Seqs) != 2 {
		t.Fatalf("candidates: %v %v", cands, err)
	}
	if got := readAll(t, p, id); !bytes.HasPrefix(got, file) || !bytes.Contains(got, []byte(long)) {
		t.Fatalf("the session after an append reads back as\n%.300s", got)
	}
}

// TestMigrateWithoutLZ4: on a server without lz4 the migration to 6
// changes nothing but the version: the columns keep the server's default.
func TestMigrateWithoutLZ4(t *testing.T) {
	u, _, id, file := atVersion5(t)
	old := haveLZ4
	haveLZ4 = func(context.Context, pgx.Tx) (bool, error) { return false, nil }
	t.Cleanup(func() { haveLZ4 = old })
	p := open(t, u)
	var v int
	if err := p.conn.QueryRow(context.Background(), `SELECT max(version) FROM panto_schema`).Scan(&v); err != nil || v != 6 {
		t.Fatalf("version %d, %v", v, err)
	}
	if got := compression(t, p.conn); !maps.Equal(got, map[string]string{"panto_entries.line": "", "panto_entries.search_text": "", "panto_cuts.line": ""}) {
		t.Fatalf("without lz4: %v", got)
	}
	if got := readAll(t, p, id); !bytes.Equal(got, file) {
		t.Fatalf("the session reads back as\n%s", got)
	}
}

// TestMigrateNotOwner: a role that may read and write panto's tables but
// not alter them (not their owner) is told in one line who may take the
// schema to version 6 (exit 3: a plain failure), and nothing is changed;
// once the owner has, the role opens the database.
func TestMigrateNotOwner(t *testing.T) {
	u, c, _, _ := atVersion5(t)
	serverLZ4(t, c) // else the migration alters nothing
	ctx := context.Background()
	if _, err := c.Exec(ctx, `GRANT ALL ON ALL TABLES IN SCHEMA public TO panto_pw`); err != nil {
		t.Fatal(err)
	}
	pu, _ := url.Parse(u)
	pu.User = url.UserPassword("panto_pw", "right-pw-7")
	_, err := Open(ctx, pu.String())
	if err == nil || !strings.Contains(err.Error(), "as the tables' owner or a superuser") || !strings.Contains(err.Error(), "version 6") ||
		strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), "right-pw-7") || errors.Is(err, store.ErrUnavailable) || errors.Is(err, store.ErrBusy) {
		t.Fatalf("a role that does not own the tables: %v", err)
	}
	t.Log(err)
	var v int
	if err := c.QueryRow(ctx, `SELECT max(version) FROM panto_schema`).Scan(&v); err != nil || v != 5 {
		t.Fatalf("the version after a refused migration: %d %v", v, err)
	}
	open(t, u)
	open(t, pu.String())
}

// serverLZ4 skips the test on a server without lz4.
func serverLZ4(t *testing.T, c *pgx.Conn) {
	t.Helper()
	var lz4 bool
	if err := c.QueryRow(context.Background(), `SELECT EXISTS (SELECT FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals))`).Scan(&lz4); err != nil {
		t.Fatal(err)
	}
	if !lz4 {
		t.Skip("this server has no lz4 (PostgreSQL before 14, or built without it): TestMigrateWithoutLZ4 covers it")
	}
}
