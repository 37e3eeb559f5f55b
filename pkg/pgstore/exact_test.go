package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/panto-dev/panto/pkg/store"
)

// TestEveryByte is hostile report §11: invalid UTF-8 and NUL in a cwd, a
// model, a provider or an origin were refused by the database (SQLSTATE
// 22021, 22P05) where files keep them. Each is pushed and given back
// exactly, the text columns readable beside.
func TestEveryByte(t *testing.T) {
	u := testDB(t)
	p := open(t, u)
	ctx := context.Background()
	id := "01a232e4-4db3-7556-907c-f9d5fda4e0ac"
	src := `{"type":"session","version":1,"id":"` + id + `","timestamp":"2026-04-25T17:40:15.990Z","cwd":"/caf` + "\xe9" + `/n\u0000ul","origin":{"agent":"claude","id":"abc\u0000def","path":"/x` + "\xff" + `"}}` + "\n" +
		`{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"2026-04-25T14:00:01.000Z","provider":"anth` + "\xff" + `","model":"m\u0000x","message":{"role":"user","content":[{"type":"text","text":"A"}]}}` + "\n" +
		`{"type":"message","id":"bbbbbbbb","parentId":"aaaaaaaa","timestamp":"2026-04-25T14:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"B"}],"provider":"anth` + "\xff" + `","model":"m\u0000x","stopReason":"stop","usage":{"input":1,"output":1},"responseId":"resp_1"}}` + "\n"
	if _, err := p.Receive(ctx, strings.NewReader(src)); err != nil {
		t.Fatalf("push: %v", err)
	}
	if got := readAll(t, p, id); string(got) != src {
		t.Fatalf("given back\n%q\nwant\n%q", got, src)
	}
	// The stamp at the leaf, exactly: an append stamps its user entry with it.
	res, err := p.Append(ctx, id, []store.Msg{{Raw: session.TextMessage("user", "more"), Role: "user"}}, store.AppendOptions{AllowEmpty: true})
	if err != nil {
		t.Fatal(err)
	}
	if c := session.Classify(res.Lines[:len(res.Lines)-1]); c.Provider != "anth\xff" || c.Model != "m\x00x" {
		t.Fatalf("append stamped %q/%q", c.Provider, c.Model)
	}
	// Listed by its exact cwd.
	cwd := "/caf\xe9/n\x00ul"
	list, err := p.List(ctx, cwd, false, nil)
	if err != nil || len(list) != 1 || list[0].Cwd != cwd {
		t.Fatalf("list of its cwd: %+v %v", list, err)
	}
	if got, err := p.Resolve(ctx, cwd, false, "01a2"); err != nil || got != id {
		t.Fatalf("resolve in its cwd: %q %v", got, err)
	}
	// The columns a team reads.
	c, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var text, agent, oid, model, response string
	var origin *string
	if err := c.QueryRow(ctx, `SELECT s.cwd, s.origin::text, s.origin_agent, s.origin_id, e.model, e.response FROM panto_sessions s JOIN panto_entries e ON e.session = s.id AND e.seq = 2`).Scan(&text, &origin, &agent, &oid, &model, &response); err != nil {
		t.Fatal(err)
	}
	if text != "/caf\uFFFD/n\uFFFDul" || origin != nil || agent != "claude" || oid != "abc\uFFFDdef" || model != "m\uFFFDx" || response != "resp_1" {
		t.Fatalf("columns: %q %v %q %q %q %q", text, origin, agent, oid, model, response)
	}
	// An append from a directory whose name is Latin-1 creates its session.
	nid, _ := session.NewSessionID()
	if _, err := p.Append(ctx, nid, pair("latin"), store.AppendOptions{Cwd: "/t/caf\xe9"}); err != nil {
		t.Fatalf("append from a Latin-1 cwd: %v", err)
	}
	if list, err := p.List(ctx, "/t/caf\xe9", false, nil); err != nil || len(list) != 1 {
		t.Fatalf("list of the Latin-1 cwd: %+v %v", list, err)
	}
}

// TestMigrateToExact: a database of schema version 2 is taken to 3: its
// rows keep what they had, the exact cwd and the origin's agent and id
// filled in, the response of an imported reply read from its line.
func TestMigrateToExact(t *testing.T) {
	u, c := atVersion(t, 2)
	ctx := context.Background()
	id := "01a232e4-4db3-7556-907c-f9d5fda4e0ac"
	header := `{"type":"session","version":1,"id":"` + id + `","timestamp":"2026-04-25T17:40:15.990Z","cwd":"/p","origin":{"agent":"claude","id":"abc","path":"/x"}}`
	reply := `{"type":"message","id":"bbbbbbbb","parentId":null,"timestamp":"2026-04-25T14:00:02.000Z","message":{"role":"assistant","content":[],"provider":"anthropic","model":"m","stopReason":"stop","usage":{"input":1,"output":1},"responseId":"resp_9"}}`
	if _, err := c.Exec(ctx, `INSERT INTO panto_sessions (id, cwd, created, origin, header, leaf, leaf_provider, leaf_model, entries, messages, bytes) VALUES ($1, '/p', now(), $2, $3, 'bbbbbbbb', 'anthropic', 'm', 1, 1, 10)`, id, `{"agent":"claude","id":"abc","path":"/x"}`, []byte(header)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, `INSERT INTO panto_entries (session, seq, id, role, type, valid, crc, line) VALUES ($1, 1, 'bbbbbbbb', 'assistant', 'message', true, 0, $2)`, id, []byte(reply)); err != nil {
		t.Fatal(err)
	}
	p := open(t, u)
	var v int
	var cwd []byte
	var agent, oid, response string
	var provider []byte
	if err := p.conn.QueryRow(ctx, `SELECT (SELECT version FROM panto_schema), s.cwd_bytes, s.origin_agent, s.origin_id, s.leaf_provider, e.response FROM panto_sessions s JOIN panto_entries e ON e.session = s.id`).Scan(&v, &cwd, &agent, &oid, &provider, &response); err != nil {
		t.Fatal(err)
	}
	if v != SchemaVersion || string(cwd) != "/p" || agent != "claude" || oid != "abc" || string(provider) != "anthropic" || response != "resp_9" {
		t.Fatalf("after the migration: %d %q %q %q %q %q", v, cwd, agent, oid, provider, response)
	}
}

// TestSchemaTable: an emptied panto_schema is refused with a line that
// says so (it said "no rows in result set"); of two rows the largest is
// the version, whatever their order.
func TestSchemaTable(t *testing.T) {
	u := testDB(t)
	ctx := context.Background()
	p := open(t, u)
	if _, err := p.conn.Exec(ctx, `DELETE FROM panto_schema`); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, u); err == nil || !strings.Contains(err.Error(), "panto_schema holds no version") {
		t.Fatalf("an empty panto_schema: %v", err)
	}
	if _, err := p.conn.Exec(ctx, `INSERT INTO panto_schema VALUES ($1), (1)`, SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, u); !errors.Is(err, store.ErrNewerVersion) || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("rows %d and 1: %v", SchemaVersion+1, err)
	}
}

// TestEveryByteOfIDs: entry ids and parentIds with invalid UTF-8, and
// with a NUL escaped in the JSON (\u0000), are kept exactly: a push gives
// back the same bytes, two ids that differ only in bytes that are not
// UTF-8 are two entries, and the leaf, an append's --parent and a
// truncate's --after find the entry by its exact id.
func TestEveryByteOfIDs(t *testing.T) {
	u := testDB(t)
	p := open(t, u)
	ctx := context.Background()
	id := "01a232e4-4db3-7556-907c-f9d5fda4e0ad"
	user := func(eid, parent, text string) string {
		return `{"type":"message","id":"` + eid + `","parentId":` + parent + `,"timestamp":"2026-04-25T14:00:01.000Z","provider":"p","model":"m","message":{"role":"user","content":[{"type":"text","text":"` + text + `"}]}}` + "\n"
	}
	reply := func(eid, parent string) string {
		return `{"type":"message","id":"` + eid + `","parentId":"` + parent + `","timestamp":"2026-04-25T14:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"B"}],"provider":"p","model":"m","stopReason":"stop","usage":{"input":1,"output":1}}}` + "\n"
	}
	src := `{"type":"session","version":1,"id":"` + id + `","timestamp":"2026-04-25T17:40:15.990Z","cwd":"/p"}` + "\n" +
		user("a\xff", "null", "A") +
		reply("a\xfe", "a\xff") + // the same readable text as a\xff
		user(`n\u0000ul`, "\"a\xfe\"", "C") +
		reply(`r\u0000`, `n\u0000ul`)
	if _, err := p.Receive(ctx, strings.NewReader(src)); err != nil {
		t.Fatalf("push: %v", err)
	}
	if got := readAll(t, p, id); string(got) != src {
		t.Fatalf("given back\n%q\nwant\n%q", got, src)
	}
	// The leaf is the last entry's exact id.
	leaf := "r\x00"
	if _, err := p.Append(ctx, id, []store.Msg{{Raw: session.TextMessage("user", "D"), Role: "user"}}, store.AppendOptions{ExpectLeaf: &leaf}); err != nil {
		t.Fatalf("append expecting leaf %q: %v", leaf, err)
	}
	// A branch from an entry whose id is not UTF-8: its parent is that id,
	// and its stamp the one on that path.
	res, err := p.Append(ctx, id, []store.Msg{{Raw: session.TextMessage("user", "E"), Role: "user"}}, store.AppendOptions{Parent: "a\xfe"})
	if err != nil {
		t.Fatalf("append --parent a\\xfe: %v", err)
	}
	if c := session.Classify(res.Lines[:len(res.Lines)-1]); c.ParentID != "a\xfe" || c.Provider != "p" {
		t.Fatalf("the branch: parent %q, stamp %q", c.ParentID, c.Provider)
	}
	if _, err := p.Append(ctx, id, []store.Msg{{Raw: session.TextMessage("user", "F"), Role: "user"}}, store.AppendOptions{Parent: "a\xfd"}); !errors.Is(err, store.ErrNoParent) {
		t.Fatalf("append --parent a\\xfd, which no entry is: %v", err)
	}
	// Cut back to the entry n\0ul: what is left is the file up to it.
	if _, err := p.Truncate(ctx, id, "n\x00ul"); err != nil {
		t.Fatalf("truncate --after n\\0ul: %v", err)
	}
	want := src[:strings.Index(src, `{"type":"message","id":"r\u0000"`)]
	if got := readAll(t, p, id); string(got) != want {
		t.Fatalf("after the cut\n%q\nwant\n%q", got, want)
	}
	leaf = "n\x00ul"
	if _, err := p.Append(ctx, id, pair("after"), store.AppendOptions{ExpectLeaf: &leaf}); err != nil {
		t.Fatalf("append expecting leaf %q after the cut: %v", leaf, err)
	}
	// An entry whose id is only the same readable text is another's id:
	// pushed into a session that holds a\xff, a\xfd is new, not a conflict.
	var readableID, exact []byte
	if err := p.conn.QueryRow(ctx, `SELECT convert_to(id, 'UTF8'), id_bytes FROM panto_entries WHERE session = $1 AND seq = 1`, id).Scan(&readableID, &exact); err != nil {
		t.Fatal(err)
	}
	if string(readableID) != "a\uFFFD" || string(exact) != "a\xff" {
		t.Fatalf("the columns of entry 1: id %q, id_bytes %q", readableID, exact)
	}
}

// TestMigrateToExactIDs: a database of schema version 3 is taken to 4:
// the ids, parents and leaves it held (text of exactly their bytes) are
// copied to the exact columns, a response kept only readable (U+FFFD for
// an invalid byte) is read again from its line, and the session reads,
// branches and grows as before.
func TestMigrateToExactIDs(t *testing.T) {
	u, c := atVersion(t, 3)
	ctx := context.Background()
	id := "01a232e4-4db3-7556-907c-f9d5fda4e0ae"
	header := `{"type":"session","version":1,"id":"` + id + `","timestamp":"2026-04-25T17:40:15.990Z","cwd":"/p","origin":{"agent":"claude","id":"abc","path":"/x"}}`
	prompt := `{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"2026-04-25T14:00:01.000Z","provider":"anthropic","model":"m","message":{"role":"user","content":[{"type":"text","text":"A"}]}}`
	reply := `{"type":"message","id":"bbbbbbbb","parentId":"aaaaaaaa","timestamp":"2026-04-25T14:00:02.000Z","message":{"role":"assistant","content":[],"provider":"anthropic","model":"m","stopReason":"stop","usage":{"input":1,"output":1},"responseId":"resp_` + "\xff" + `"}}`
	if _, err := c.Exec(ctx, `INSERT INTO panto_sessions (id, cwd, cwd_bytes, created, header, leaf, leaf_provider, leaf_model, entries, messages, bytes) VALUES ($1, '/p', '/p', now(), $2, 'bbbbbbbb', 'anthropic', 'm', 2, 2, $3)`, id, []byte(header), len(header)+len(prompt)+len(reply)+3); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, `INSERT INTO panto_entries (session, seq, id, parent, role, type, valid, crc, line, response) VALUES
		($1, 1, 'aaaaaaaa', NULL, 'user', 'message', true, $2, $3, NULL),
		($1, 2, 'bbbbbbbb', 'aaaaaaaa', 'assistant', 'message', true, $4, $5, 'resp_'||U&'\FFFD')`, id, crc([]byte(prompt)), []byte(prompt), crc([]byte(reply)), []byte(reply)); err != nil {
		t.Fatal(err)
	}
	p := open(t, u)
	var v int
	var leaf, eid, parent, response []byte
	if err := p.conn.QueryRow(ctx, `SELECT (SELECT max(version) FROM panto_schema), s.leaf_bytes, e.id_bytes, e.parent_bytes, e.response_bytes
		FROM panto_sessions s JOIN panto_entries e ON e.session = s.id AND e.seq = 2`).Scan(&v, &leaf, &eid, &parent, &response); err != nil {
		t.Fatal(err)
	}
	if v != SchemaVersion || string(leaf) != "bbbbbbbb" || string(eid) != "bbbbbbbb" || string(parent) != "aaaaaaaa" || string(response) != "resp_\xff" {
		t.Fatalf("after the migration: version %d, leaf %q, id %q, parent %q, response %q", v, leaf, eid, parent, response)
	}
	want := header + "\n" + prompt + "\n" + reply + "\n"
	if got := readAll(t, p, id); string(got) != want {
		t.Fatalf("read after the migration\n%q\nwant\n%q", got, want)
	}
	bb := "bbbbbbbb"
	if _, err := p.Append(ctx, id, []store.Msg{{Raw: session.TextMessage("user", "C"), Role: "user"}}, store.AppendOptions{ExpectLeaf: &bb}); err != nil {
		t.Fatalf("append at the migrated leaf: %v", err)
	}
	res, err := p.Append(ctx, id, []store.Msg{{Raw: session.TextMessage("user", "D"), Role: "user"}}, store.AppendOptions{Parent: "aaaaaaaa"})
	if err != nil {
		t.Fatalf("append --parent aaaaaaaa: %v", err)
	}
	if c := session.Classify(res.Lines[:len(res.Lines)-1]); c.ParentID != "aaaaaaaa" || c.Provider != "anthropic" {
		t.Fatalf("the branch: parent %q, stamp %q", c.ParentID, c.Provider)
	}
}

// TestRepliesByExactKey: the view panto_replies tells replies apart as
// panto-cost does, by the exact bytes of their response (or of their
// session and id): two responses, or two entry ids, whose readable text
// is the same (their invalid bytes differ) are two replies; one response
// recorded in two sessions is one.
func TestRepliesByExactKey(t *testing.T) {
	u := testDB(t)
	p := open(t, u)
	ctx := context.Background()
	reply := func(eid, parent, response string) string {
		r := ""
		if response != "" {
			r = `,"responseId":"` + response + `"`
		}
		return `{"type":"message","id":"` + eid + `","parentId":"` + parent + `","timestamp":"2026-04-25T14:00:02.000Z","message":{"role":"assistant","content":[],"provider":"p","model":"m","stopReason":"stop","usage":{"input":1,"output":1}` + r + `}}` + "\n"
	}
	for _, s := range []struct{ id, replies string }{
		{"01a232e4-4db3-7556-907c-f9d5fda4e0b1", reply("r1", "u", "resp_\xff") + reply("r2", "r1", "resp_\xfe") + reply("a\xff", "r2", "") + reply("a\xfe", "a\xff", "")},
		{"01a232e4-4db3-7556-907c-f9d5fda4e0b2", reply("r1", "u", "resp_\xff")}, // the same response, recorded twice
	} {
		src := `{"type":"session","version":1,"id":"` + s.id + `","timestamp":"2026-04-25T17:40:15.990Z","cwd":"/p"}` + "\n" +
			`{"type":"message","id":"u","parentId":null,"timestamp":"2026-04-25T14:00:01.000Z","provider":"p","model":"m","message":{"role":"user","content":[{"type":"text","text":"A"}]}}` + "\n" + s.replies
		if _, err := p.Receive(ctx, strings.NewReader(src)); err != nil {
			t.Fatalf("push %s: %v", s.id, err)
		}
	}
	var n, entries int
	if err := p.conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM panto_replies), (SELECT count(*) FROM panto_entries WHERE role = 'assistant')`).Scan(&n, &entries); err != nil {
		t.Fatal(err)
	}
	if n != 4 || entries != 5 {
		t.Fatalf("panto_replies holds %d replies of %d (want 4 of 5)", n, entries)
	}
}

// atVersion makes a database of schema version v (the first schema and
// its migrations up to v), as an older panto left it, and a connection to
// it (closed when the test ends).
func atVersion(t *testing.T, v int) (string, *pgx.Conn) {
	t.Helper()
	u := testDB(t)
	ctx := context.Background()
	c, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(ctx) })
	ddl := `CREATE TABLE panto_schema (version integer NOT NULL);` + schema
	for k := 2; k <= v; k++ {
		ddl += migrations[k]
	}
	if _, err := c.Exec(ctx, ddl+fmt.Sprintf(`;INSERT INTO panto_schema VALUES (%d)`, v)); err != nil {
		t.Fatal(err)
	}
	return u, c
}
