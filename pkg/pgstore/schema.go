package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/panto-dev/panto/pkg/store"
)

// SchemaVersion is the version of the schema this binary reads and
// writes. A database whose schema is newer is refused, never altered.
const SchemaVersion = 6

// migrations[v] takes a schema of version v-1 to version v, in the
// transaction that records v; after it, fixups[v] when there is one (what
// SQL alone cannot do).
var migrations = map[int]string{2: positionsSchema, 3: exactSchema, 4: exactIDsSchema, 5: searchSchema, 6: ""}

var fixups = map[int]func(context.Context, pgx.Tx) error{4: exactResponses, 6: compressLZ4}

// compressedColumns are the columns that hold the most bytes: each
// entry's line and searchable text, and the lines of cuts.
var compressedColumns = map[string][]string{"panto_entries": {"line", "search_text"}, "panto_cuts": {"line"}}

// haveLZ4 reports whether the server can compress TOAST values with lz4
// (PostgreSQL 14 on, built with lz4: the setting then offers it).
var haveLZ4 = func(ctx context.Context, tx pgx.Tx) (bool, error) {
	var ok bool
	err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals))`).Scan(&ok)
	return ok, err
}

// compressLZ4 is version 6: the large columns are compressed with lz4
// rather than pglz, PostgreSQL's default, when the server has it (else
// nothing changes, and version 6 is version 5). pglz was about a sixth of
// the server's work in a push (BENCHMARKS.md, the search index's cost on
// writes); lz4 compresses several times faster, a little less. Only the
// columns' setting changes: the rows already there keep what they were
// written with (both are read alike), and no table is rewritten.
func compressLZ4(ctx context.Context, tx pgx.Tx) error {
	ok, err := haveLZ4(ctx, tx)
	if err != nil || !ok {
		return err
	}
	for _, table := range []string{"panto_entries", "panto_cuts"} {
		var set []string
		for _, col := range compressedColumns[table] {
			set = append(set, "ALTER COLUMN "+col+" SET COMPRESSION lz4")
		}
		if _, err := tx.Exec(ctx, "ALTER TABLE "+table+" "+strings.Join(set, ", ")); err != nil {
			return err
		}
	}
	return nil
}

// searchSchema is version 5: each entry's searchable text, indexed by
// pg_trgm (SPEC §15), written with the entry by every path that writes
// one (rowOf). The rows already there are filled after the migration, in
// batches of their own (fillSearch: a big table is not one transaction,
// and writers go on meanwhile), from the first row on; until a row is
// filled its text is NULL, and a search reads it whatever it looks for.
const searchSchema = `
CREATE EXTENSION IF NOT EXISTS pg_trgm;
ALTER TABLE panto_entries ADD COLUMN search_text text; -- the text a search matches, folded (internal/search: Text, Fold); NULL: not filled yet, or over 1 MiB
CREATE INDEX panto_entries_search ON panto_entries USING gin (search_text gin_trgm_ops);
CREATE INDEX panto_entries_unsearched ON panto_entries (session, seq) WHERE search_text IS NULL;
-- How far the filling of the rows written before version 5 has come: the
-- last row filled (NULL: none yet), done when all are.
CREATE TABLE panto_search_fill (session text COLLATE "C", seq bigint, done boolean NOT NULL);
INSERT INTO panto_search_fill SELECT NULL, NULL, NOT EXISTS (SELECT FROM panto_entries);
`

// exactIDsSchema is version 4: the entries' ids, parents and responses and
// the session's leaf are kept exactly too (an id of invalid UTF-8 or NUL,
// which a text column refuses, and two ids that only their invalid bytes
// tell apart), in bytea columns beside the readable text ones; the store
// reads only them. An entry id is unique by its bytes, and panto_replies
// tells replies apart by their exact keys.
const exactIDsSchema = `
ALTER TABLE panto_entries
	ADD COLUMN id_bytes bytea,       -- the entry's id, exactly (id: readable)
	ADD COLUMN parent_bytes bytea,   -- its parentId, exactly (parent: readable)
	ADD COLUMN response_bytes bytea; -- its response, exactly (response: readable)
ALTER TABLE panto_sessions ADD COLUMN leaf_bytes bytea; -- the leaf, exactly (leaf: readable)
-- Ids, parents and leaves were text of exactly their bytes (others were
-- refused); a response was made readable, U+FFFD for its invalid bytes:
-- such a one is read again from its line (exactResponses).
UPDATE panto_entries SET id_bytes = convert_to(id, 'UTF8'), parent_bytes = convert_to(parent, 'UTF8'),
	response_bytes = CASE WHEN strpos(response, U&'\FFFD') = 0 THEN convert_to(response, 'UTF8') END
	WHERE id IS NOT NULL OR parent IS NOT NULL OR response IS NOT NULL;
UPDATE panto_sessions SET leaf_bytes = convert_to(leaf, 'UTF8') WHERE leaf IS NOT NULL;
DROP INDEX panto_entries_id;
CREATE UNIQUE INDEX panto_entries_id ON panto_entries (session, id_bytes) WHERE id_bytes IS NOT NULL;
DROP INDEX panto_entries_response;
CREATE INDEX panto_entries_response ON panto_entries (response_bytes) WHERE response_bytes IS NOT NULL;
` + repliesView

// repliesView is each reply once, by the key panto-cost counts it by: the
// response it was, or else its session and id, each by its exact bytes
// (two responses whose readable text is the same are two replies).
const repliesView = `
CREATE OR REPLACE VIEW panto_replies AS
SELECT DISTINCT ON (response_bytes, CASE WHEN response_bytes IS NULL THEN session END, CASE WHEN response_bytes IS NULL THEN id_bytes END) *
FROM panto_entries
WHERE role = 'assistant' AND valid AND model IS DISTINCT FROM '<synthetic>'
ORDER BY response_bytes, CASE WHEN response_bytes IS NULL THEN session END, CASE WHEN response_bytes IS NULL THEN id_bytes END, session, seq;
`

// exactResponses reads again from their lines the responses that version
// 3 kept only readable (U+FFFD for bytes that are not UTF-8).
func exactResponses(ctx context.Context, tx pgx.Tx) error {
	rows, err := tx.Query(ctx, `SELECT session, seq, line FROM panto_entries WHERE response IS NOT NULL AND response_bytes IS NULL`)
	if err != nil {
		return err
	}
	type fix struct {
		session  string
		seq      int64
		response []byte
	}
	var fixes []fix
	for rows.Next() {
		var f fix
		var line []byte
		if err := rows.Scan(&f.session, &f.seq, &line); err != nil {
			return err
		}
		r, _ := rowOf(f.seq, line)
		f.response = r.responseBytes
		fixes = append(fixes, f)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, f := range fixes {
		if _, err := tx.Exec(ctx, `UPDATE panto_entries SET response_bytes = $3 WHERE session = $1 AND seq = $2`, f.session, f.seq, f.response); err != nil {
			return err
		}
	}
	return nil
}

// exactSchema is version 3: every byte a file may hold is kept (SPEC §10:
// a cwd, a stamp or an origin with invalid UTF-8 or NUL), and what a team
// needs to count costs once (the response a reply was, the agent and id an
// imported session came from). The text columns are for people: valid
// UTF-8, U+FFFD where the bytes are not; the exact bytes are in the
// bytea columns and the lines.
const exactSchema = `
ALTER TABLE panto_sessions
	ADD COLUMN cwd_bytes bytea,     -- the header's cwd, exactly (cwd: readable)
	ADD COLUMN origin_agent text,   -- an imported session's agent: claude, codex, pi
	ADD COLUMN origin_id text,      -- and the agent's own session id
	ALTER COLUMN leaf_provider TYPE bytea USING convert_to(leaf_provider, 'UTF8'),
	ALTER COLUMN leaf_model TYPE bytea USING convert_to(leaf_model, 'UTF8');
UPDATE panto_sessions SET cwd_bytes = convert_to(cwd, 'UTF8'), origin_agent = origin->>'agent', origin_id = origin->>'id';
ALTER TABLE panto_sessions ALTER COLUMN cwd_bytes SET NOT NULL;
DROP INDEX panto_sessions_cwd;
CREATE INDEX panto_sessions_cwd ON panto_sessions (cwd_bytes, (coalesce(last_activity, created)) DESC NULLS LAST, id DESC);
ALTER TABLE panto_entries ADD COLUMN response text; -- the response a reply was (its responseId): a reply counts once by coalesce(response, session || '/' || id)
CREATE INDEX panto_entries_response ON panto_entries (response) WHERE response IS NOT NULL;
-- Each reply once, by the key panto-cost counts it by (README: team queries).
CREATE VIEW panto_replies AS
SELECT DISTINCT ON (coalesce(response, session || '/' || id)) *
FROM panto_entries
WHERE role = 'assistant' AND valid AND model IS DISTINCT FROM '<synthetic>'
ORDER BY coalesce(response, session || '/' || id), session, seq;
DO $$
DECLARE r record;
BEGIN
	FOR r IN SELECT session, seq, line FROM panto_entries WHERE role = 'assistant' AND position('"responseId"'::bytea IN line) > 0 LOOP
		BEGIN
			UPDATE panto_entries SET response = (convert_from(r.line, 'UTF8')::jsonb)->'message'->>'responseId' WHERE session = r.session AND seq = r.seq;
		EXCEPTION WHEN others THEN NULL; -- a line jsonb cannot hold: no response column
		END;
	END LOOP;
END $$;
`

// noTrigrams says what to do when the server cannot make the pg_trgm
// extension (the role may not, or the server does not have it); nil for
// another error.
func noTrigrams(err error) error {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || !strings.Contains(pe.Message, "pg_trgm") {
		return nil
	}
	return fmt.Errorf("the database cannot have the pg_trgm extension that panto's search index needs (%s): have the database's owner or a superuser run CREATE EXTENSION pg_trgm; in it (its files are in Debian's postgresql-contrib, or postgresql-NN), then run again (nothing was changed)", pe.Message)
}

// schema is version 1 (the later versions are migrations): sessions, their entries (the exact line beside
// columns a team can query), and what cuts took away.
const schema = `
CREATE TABLE panto_sessions (
	id            text COLLATE "C" PRIMARY KEY, -- the header's id (a UUIDv7)
	cwd           text NOT NULL,                -- the header's cwd
	created       timestamptz,                  -- the header's timestamp
	origin        jsonb,                        -- the header's origin, for imported sessions
	header        bytea NOT NULL,               -- the header line, exactly
	leaf          text COLLATE "C",             -- the last entry's id
	leaf_provider text,                         -- the active stamp at the leaf (NULL: no user entry on its path)
	leaf_model    text,
	entries       bigint NOT NULL DEFAULT 0,    -- entry lines (the seq of the last)
	messages      integer NOT NULL DEFAULT 0,   -- user and assistant entries
	last_activity timestamptz,                  -- the last message's timestamp
	bytes         bigint NOT NULL               -- its size as a session file
);
CREATE INDEX panto_sessions_activity ON panto_sessions ((coalesce(last_activity, created)) DESC NULLS LAST, id DESC);
CREATE INDEX panto_sessions_cwd ON panto_sessions (cwd, (coalesce(last_activity, created)) DESC NULLS LAST, id DESC);

CREATE TABLE panto_entries (
	session        text COLLATE "C" NOT NULL REFERENCES panto_sessions (id),
	seq            bigint NOT NULL,      -- 1 for the first entry (line 2 of the file)
	id             text COLLATE "C",     -- the entry's id; NULL for a line without one
	parent         text COLLATE "C",     -- parentId; NULL for a root
	type           text,                 -- message, or a type of a later version
	role           text,                 -- system, user, assistant
	ts             timestamptz,          -- the entry's timestamp (NULL when malformed)
	provider       text,                 -- a user entry's stamp, an assistant's own
	model          text,
	input          bigint,               -- usage of an assistant entry (NULL: none reported)
	output         bigint,
	cache_read     bigint,
	cache_write    bigint,
	cache_write_1h bigint,
	reasoning      bigint,
	valid          boolean NOT NULL,     -- the line follows the rules of docs/session-format.md
	crc            integer NOT NULL,     -- CRC-32C of line (push compares by it)
	line           bytea NOT NULL,       -- the line, exactly, without its newline
	PRIMARY KEY (session, seq)
);
CREATE UNIQUE INDEX panto_entries_id ON panto_entries (session, id) WHERE id IS NOT NULL;
CREATE INDEX panto_entries_ts ON panto_entries (ts);

CREATE TABLE panto_cuts (
	session text COLLATE "C" NOT NULL REFERENCES panto_sessions (id),
	seq     bigint NOT NULL,
	cut_at  timestamptz NOT NULL,
	line    bytea NOT NULL
);
`

// schemaVersion reads the schema's version: the largest row (a table of
// two rows is read the same whatever their order), 0 for none.
const schemaVersion = `SELECT coalesce(max(version), 0) FROM panto_schema`

// schemaLock is the advisory lock that serializes the creation of the
// schema by processes that find it missing at once.
const schemaLock = 7262627001

// checkSchema makes sure the database holds the schema this binary knows:
// created on first use, refused when newer.
func checkSchema(ctx context.Context, conn *pgx.Conn) error {
	var v int
	err := conn.QueryRow(ctx, schemaVersion).Scan(&v)
	var pe *pgconn.PgError
	switch {
	case err == nil:
	case errors.As(err, &pe) && pe.Code == "42P01": // undefined_table: first use
		if v, err = createSchema(ctx, conn); err != nil {
			return err
		}
	default:
		return err
	}
	if v < 1 {
		return errors.New("panto_schema holds no version (emptied by hand?): put back its row (nothing was changed)")
	}
	if v > SchemaVersion {
		return fmt.Errorf("%w: the database's panto schema is version %d, newer than this panto's %d: use a newer panto (nothing was changed)", store.ErrNewerVersion, v, SchemaVersion)
	}
	if v < SchemaVersion {
		return migrate(ctx, conn)
	}
	return nil
}

// migrate takes an older schema to this binary's version, one migration
// a version, under the schema's lock (another process may be at it too).
func migrate(ctx context.Context, conn *pgx.Conn) error {
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(schemaLock)); err != nil {
			return err
		}
		var v int
		if err := tx.QueryRow(ctx, schemaVersion).Scan(&v); err != nil {
			return err
		}
		if v >= SchemaVersion { // another process did it meanwhile
			return nil
		}
		for v++; v <= SchemaVersion; v++ {
			if err := migrateTo(ctx, tx, v); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, `UPDATE panto_schema SET version = $1`, SchemaVersion)
		return err
	})
}

// migrateTo takes a schema of version v-1 to v.
func migrateTo(ctx context.Context, tx pgx.Tx, v int) error {
	if sql := migrations[v]; sql != "" {
		if _, err := tx.Exec(ctx, sql); err != nil {
			if v == 5 {
				if err := noTrigrams(err); err != nil {
					return err
				}
			}
			return migrateError(v, err)
		}
	}
	if fix := fixups[v]; fix != nil {
		if err := fix(ctx, tx); err != nil {
			return migrateError(v, err)
		}
	}
	return nil
}

// migrateError says what stopped the migration to version v; a role
// that may not alter panto's tables is told who may.
func migrateError(v int, err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42501" { // insufficient_privilege
		return fmt.Errorf("the database's panto schema needs version %d, and this role may not alter its tables (%s): run any panto command against the database once as the tables' owner or a superuser, then run again (nothing was changed)", v, pe.Message)
	}
	return fmt.Errorf("migrate the schema to version %d: %w", v, err)
}

func createSchema(ctx context.Context, conn *pgx.Conn) (int, error) {
	var v int
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(schemaLock)); err != nil {
			return err
		}
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT to_regclass('panto_schema') IS NOT NULL`).Scan(&exists); err != nil {
			return err
		}
		if exists { // another process made it meanwhile
			return tx.QueryRow(ctx, schemaVersion).Scan(&v)
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE panto_schema (version integer NOT NULL)`+";"+schema); err != nil {
			return err
		}
		for m := 2; m <= SchemaVersion; m++ {
			if err := migrateTo(ctx, tx, m); err != nil {
				return err
			}
		}
		v = SchemaVersion
		_, err := tx.Exec(ctx, `INSERT INTO panto_schema (version) VALUES ($1)`, SchemaVersion)
		return err
	})
	return v, err
}
