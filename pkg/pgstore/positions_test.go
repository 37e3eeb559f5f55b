package pgstore

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/panto-dev/panto/pkg/scan"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/panto-dev/panto/pkg/store"
	"github.com/panto-dev/panto/pkg/store/storetest"
)

// followFile is a small session file: a header and n entries.
func followFile(t *testing.T, n int) (id string, header []byte, lines [][]byte) {
	return storetest.SessionFile(t, n)
}

// to is the position after the header and lines of a session file.
func to(path string, header []byte, lines [][]byte) Position {
	return storetest.PositionOf(path, header, lines)
}

func TestCommitPositions(t *testing.T) {
	ctx := context.Background()
	p := open(t, testDB(t))
	id, header, lines := followFile(t, 6)

	// New: the session and its position, in one commit.
	first := to("/f", header, lines[:3])
	if _, err := p.Commit(ctx, Commit{ID: id, Header: header, Keep: -1, Lines: lines[:3], To: first}); err != nil {
		t.Fatal(err)
	}
	f, err := p.Follows(ctx, id)
	if err != nil || !f.Agrees() || !samePosition(*f.Pos, first) || f.Pos.Source != "/f" {
		t.Fatalf("after the first commit: %+v %+v, %v", f, f.Pos, err)
	}

	// A stale expectation (another follower went first) writes nothing.
	cases := []struct {
		name    string
		entries int64
		expect  *Position
	}{
		{"no position expected", 3, nil},
		{"other entries", 2, &first},
		{"another position", 3, &Position{Bytes: first.Bytes - 1, Lines: 3, Entries: 3, SessionBytes: first.SessionBytes, SessionSum: first.SessionSum}},
	}
	for _, c := range cases {
		_, err := p.Commit(ctx, Commit{ID: id, Header: header, ExpectEntries: c.entries, Expect: c.expect, Keep: -1, Lines: lines[3:], To: to("/f", header, lines)})
		if !errors.Is(err, ErrMoved) {
			t.Errorf("%s: %v, want ErrMoved", c.name, err)
		}
	}
	if got := readAll(t, p, id); !bytes.Equal(got, fileOf(header, lines[:3])) {
		t.Fatalf("a refused commit wrote:\n%s", got)
	}

	// The rest, then a cut back to two entries: the cut lines kept in
	// panto_cuts, the session as a file of two entries.
	all := to("/f", header, lines)
	if _, err := p.Commit(ctx, Commit{ID: id, Header: header, ExpectEntries: 3, Expect: &first, Keep: -1, Lines: lines[3:], To: all}); err != nil {
		t.Fatal(err)
	}
	cut := to("/f", header, lines[:2])
	res, err := p.Commit(ctx, Commit{ID: id, Header: header, ExpectEntries: 6, Expect: &all, Keep: 2, To: cut})
	if err != nil || res.Cut != 4 {
		t.Fatalf("cut: %+v, %v", res, err)
	}
	if got := readAll(t, p, id); !bytes.Equal(got, fileOf(header, lines[:2])) {
		t.Fatalf("after the cut:\n%s", got)
	}
	var n int
	var leaf string
	if err := p.conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM panto_cuts WHERE session = $1), leaf FROM panto_sessions WHERE id = $1`, id).Scan(&n, &leaf); err != nil || n != 4 || leaf != session.Classify(lines[1]).ID {
		t.Fatalf("panto_cuts %d, leaf %s, %v", n, leaf, err)
	}

	// A commit computed for another session state is refused whole.
	if _, err := p.Commit(ctx, Commit{ID: id, Header: header, ExpectEntries: 2, Expect: &cut, Keep: -1, Lines: lines[2:3], To: all}); err == nil {
		t.Fatal("a commit whose position does not match its lines was taken")
	}
	if f, _ := p.Follows(ctx, id); !samePosition(*f.Pos, cut) {
		t.Fatalf("the position moved: %+v", f.Pos)
	}
}

func fileOf(header []byte, lines [][]byte) []byte { return storetest.FileOf(header, lines) }

func TestShared(t *testing.T) {
	ctx := context.Background()
	p := open(t, testDB(t))
	id, header, lines := followFile(t, 4)
	if _, err := p.Commit(ctx, Commit{ID: id, Header: header, Keep: -1, Lines: lines[:3], To: to("/f", header, lines[:3])}); err != nil {
		t.Fatal(err)
	}
	other := append([]byte(nil), lines[1]...)
	other[len(other)-5] = 'x'
	cases := []struct {
		name    string
		file    []byte
		entries int64
		err     error
	}{
		{"the same", fileOf(header, lines[:3]), 3, nil},
		{"longer", fileOf(header, lines), 3, nil},
		{"shorter", fileOf(header, lines[:1]), 1, nil},
		{"parts at line 3", fileOf(header, [][]byte{lines[0], other, lines[2]}), 1, nil},
		{"a torn tail is not shared", append(fileOf(header, lines[:2]), lines[2][:10]...), 2, nil},
		{"another header", fileOf([]byte(strings.Replace(string(header), "/t", "/u", 1)), lines[:3]), 0, store.ErrConflict},
	}
	for _, c := range cases {
		sh, err := p.Shared(ctx, id, scan.NewReader(bytes.NewReader(c.file), 0))
		if !errors.Is(err, c.err) || err == nil && (sh.Entries != c.entries || sh.Have != 3) {
			t.Errorf("%s: %+v, %v; want %d shared of 3", c.name, sh, err, c.entries)
			continue
		}
		if err == nil {
			prefix := fileOf(header, lines[:c.entries])
			if sh.Bytes != int64(len(prefix)) || sh.Sum != Sum(0, prefix) {
				t.Errorf("%s: %d bytes, sum %x; want %d, %x", c.name, sh.Bytes, sh.Sum, len(prefix), Sum(0, prefix))
			}
		}
	}
}

// TestMigrate: a database of schema version 1 is taken to this version
// on first use.
func TestMigrate(t *testing.T) {
	ctx := context.Background()
	u := testDB(t)
	c, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, `CREATE TABLE panto_schema (version integer NOT NULL);`+schema+`;INSERT INTO panto_schema VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	q := open(t, u)
	var v int
	var exists bool
	if err := q.conn.QueryRow(ctx, `SELECT version, to_regclass('panto_positions') IS NOT NULL FROM panto_schema`).Scan(&v, &exists); err != nil || v != SchemaVersion || !exists {
		t.Fatalf("version %d, panto_positions %v, %v", v, exists, err)
	}
}

// pushedFile writes a session file of n entries (followFile) and pushes it.
func pushedFile(ctx context.Context, t *testing.T, p *PG, n int) (id string, header []byte, lines [][]byte, path string) {
	t.Helper()
	id, header, lines = followFile(t, n)
	path = filepath.Join(t.TempDir(), id+".jsonl")
	if err := os.WriteFile(path, fileOf(header, lines), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := pushFile(ctx, p, path); err != nil {
		t.Fatal(err)
	}
	return id, header, lines, path
}
