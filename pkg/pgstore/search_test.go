package pgstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/panto-dev/panto/internal/agents"
	"github.com/panto-dev/panto/internal/search"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/panto-dev/panto/pkg/store"
)

// checkTexts fails the test unless every row's search_text is the text a
// search of its line matches, folded (NULL only over TextMax); it returns
// how many rows it looked at.
func checkTexts(t *testing.T, p *PG) int {
	t.Helper()
	rows, err := p.conn.Query(context.Background(), `SELECT session, seq, line, search_text FROM panto_entries ORDER BY session, seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var id string
		var seq int64
		var line []byte
		var text *string
		if err := rows.Scan(&id, &seq, &line, &text); err != nil {
			t.Fatal(err)
		}
		n++
		want := search.Fold(search.Text(agents.Panto, line))
		if text == nil || *text != want {
			t.Errorf("session %s entry %d: search_text %v, want %q", id, seq, text, want)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSearchTextWritten: every path that writes entries writes their
// searchable text with them: append, push (Receive, as import does), and
// a follower's commits (statements, and COPY past copyOver lines).
func TestSearchTextWritten(t *testing.T) {
	ctx := context.Background()
	p := open(t, testDB(t))
	id, _ := p.NewName("")
	msgs := append([]store.Msg{{Raw: session.TextMessage("user", "Crème BRÛLÉE \"quoted\" \\ KAFKA"), Role: "user"}}, pair("x")[1])
	if _, err := p.Append(ctx, id, msgs, store.AppendOptions{Cwd: "/p", Provider: "p", Model: "m"}); err != nil {
		t.Fatal(err)
	}
	if _, err := pushFile(ctx, p, sessionFile(t, t.TempDir(), 3)); err != nil {
		t.Fatal(err)
	}
	fid, header, lines := followFile(t, 80)
	if _, err := p.Commit(ctx, Commit{ID: fid, Header: header, Keep: -1, Lines: lines[:3], To: to("/f", header, lines[:3])}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Commit(ctx, Commit{ID: fid, Header: header, ExpectEntries: 3, Expect: ptr(to("/f", header, lines[:3])), Keep: -1, Lines: lines[3:], To: to("/f", header, lines)}); err != nil {
		t.Fatal(err)
	}
	if n := checkTexts(t, p); n != 2+13+80 {
		t.Fatalf("%d rows, want %d", n, 2+13+80)
	}
	var text string
	if err := p.conn.QueryRow(ctx, `SELECT search_text FROM panto_entries WHERE session = $1 AND seq = 1`, id).Scan(&text); err != nil {
		t.Fatal(err)
	}
	if text != `crème brûlée "quoted" \ kafka` {
		t.Fatalf("the prompt's text: %q", text)
	}
}

func ptr[T any](v T) *T { return &v }

// TestMigrateToSearch: a database of schema version 4 is taken to 5 and
// its rows filled, in batches, by the process that migrates. A process
// that opens the database while another fills it goes on at once: its
// search reads the rows not filled yet (never fewer hits), and it writes
// as before. A fill stopped half way goes on where it stopped.
func TestMigrateToSearch(t *testing.T) {
	u, c := atVersion(t, 4)
	ctx := context.Background()
	sessions := []string{"01a232e4-4db3-7556-907c-f9d5fda4e0c1", "01a232e4-4db3-7556-907c-f9d5fda4e0c2"}
	const per = 1500 // two sessions of 1,500 entries: three batches
	for _, id := range sessions {
		header := `{"type":"session","version":1,"id":"` + id + `","timestamp":"2026-04-25T17:40:15.990Z","cwd":"/p"}`
		if _, err := c.Exec(ctx, `INSERT INTO panto_sessions (id, cwd, cwd_bytes, created, header, entries, messages, bytes) VALUES ($1, '/p', '/p', now(), $2, $3, $4, 0)`, id, []byte(header), per, per); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Exec(ctx, `INSERT INTO panto_entries (session, seq, id, id_bytes, type, role, valid, crc, line)
			SELECT $1, i, 'e' || i, convert_to('e' || i, 'UTF8'), 'message', 'user', true, 0,
				convert_to(format('{"type":"message","id":"e%s","parentId":null,"timestamp":"2026-04-25T14:00:01.000Z","provider":"p","model":"m","message":{"role":"user","content":[{"type":"text","text":"needle %s \u00c4rger"}]}}', i, i), 'UTF8')
			FROM generate_series(1, $2) i`, id, per); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Exec(ctx, `UPDATE panto_sessions SET bytes = length(header) + 1 + (SELECT sum(length(line) + 1) FROM panto_entries WHERE session = $1) WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
	}

	// Another process fills (it holds the lock): this one goes on at once.
	if _, err := c.Exec(ctx, `SELECT pg_advisory_lock($1)`, int64(fillLock)); err != nil {
		t.Fatal(err)
	}
	p := open(t, u)
	var v int
	var done bool
	if err := p.conn.QueryRow(ctx, `SELECT (SELECT max(version) FROM panto_schema), (SELECT done FROM panto_search_fill)`).Scan(&v, &done); err != nil {
		t.Fatal(err)
	}
	if v != SchemaVersion || done {
		t.Fatalf("after the migration: version %d, filled %v", v, done)
	}
	cands, err := p.Candidates(ctx, []string{"needle 7 ärger"})
	if err != nil {
		t.Fatal(err)
	}
	if len(cands) != 2 || len(cands[0].Seqs) != per+0 || len(cands[1].Seqs) != per {
		t.Fatalf("before the fill every row is a candidate: %v", cands)
	}
	if _, err := p.Append(ctx, sessions[0], []store.Msg{{Raw: session.TextMessage("user", "written meanwhile"), Role: "user"}}, store.AppendOptions{Provider: "p", Model: "m"}); err != nil {
		t.Fatalf("append while the fill waits: %v", err)
	}
	// One batch, then the fill stops (killed): it goes on from there.
	if done, err := p.fillOnce(ctx); err != nil || done {
		t.Fatalf("a batch: done %v, %v", done, err)
	}
	var filled, left int
	if err := p.conn.QueryRow(ctx, `SELECT count(*) FILTER (WHERE search_text IS NOT NULL), count(*) FILTER (WHERE search_text IS NULL) FROM panto_entries`).Scan(&filled, &left); err != nil {
		t.Fatal(err)
	}
	if filled != fillRows+1 || left != 2*per-fillRows {
		t.Fatalf("after one batch: %d filled, %d left", filled, left)
	}
	if _, err := c.Exec(ctx, `SELECT pg_advisory_unlock($1)`, int64(fillLock)); err != nil {
		t.Fatal(err)
	}
	p2 := open(t, u)
	if n := checkTexts(t, p2); n != 2*per+1 {
		t.Fatalf("%d rows, want %d", n, 2*per+1)
	}
	if err := p2.conn.QueryRow(ctx, `SELECT done FROM panto_search_fill`).Scan(&done); err != nil || !done {
		t.Fatalf("the fill is not done: %v", err)
	}
	cands, err = p2.Candidates(ctx, []string{"needle 7 ärger"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]int64{}
	for _, c := range cands {
		got[c.ID] = c.Seqs
	}
	if !reflect.DeepEqual(got, map[string][]int64{sessions[0]: {7}, sessions[1]: {7}}) {
		t.Fatalf("candidates once filled: %v", got)
	}
	// A table this small is read whole: the plan shows the index can be used.
	if _, err := p2.conn.Exec(ctx, `SET enable_seqscan = off`); err != nil {
		t.Fatal(err)
	}
	plan, err := p2.ExplainCandidates(ctx, []string{"needle 7 ärger"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan, "panto_entries_search") {
		t.Errorf("the plan does not use the trigram index:\n%s", plan)
	}
}

// TestNoTrigramExtension: a role that may not make the pg_trgm extension
// (no CREATE on the database) is told, in one line, what to do, and
// nothing is changed: neither a new database's schema nor an older one's
// version. Once the owner made the extension, the same role migrates.
func TestNoTrigramExtension(t *testing.T) {
	base := os.Getenv("PANTO_TEST_PG")
	if base == "" {
		t.Skip("PANTO_TEST_PG is not set: ./scripts/test starts a PostgreSQL server for these tests")
	}
	ctx := context.Background()
	u := newDatabase(t, base)
	admin, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, `GRANT CREATE ON SCHEMA public TO panto_pw`); err != nil {
		t.Fatal(err)
	}
	pu, _ := url.Parse(u)
	pu.User = url.UserPassword("panto_pw", "right-pw-7")
	_, err = Open(ctx, pu.String())
	if err == nil || !strings.Contains(err.Error(), "CREATE EXTENSION pg_trgm") || strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), "right-pw-7") || errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("a role without CREATE on the database: %v", err)
	}
	t.Log(err)
	var exists bool
	if err := admin.QueryRow(ctx, `SELECT to_regclass('panto_schema') IS NOT NULL`).Scan(&exists); err != nil || exists {
		t.Fatalf("a schema was left: %v %v", exists, err)
	}
	// An older schema of this role's, taken to 5 once the owner made the extension.
	c, err := pgx.Connect(ctx, pu.String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	ddl := `CREATE TABLE panto_schema (version integer NOT NULL);` + schema
	for k := 2; k <= 4; k++ {
		ddl += migrations[k]
	}
	if _, err := c.Exec(ctx, ddl+`;INSERT INTO panto_schema VALUES (4)`); err != nil {
		t.Fatal(err)
	}
	if _, err = Open(ctx, pu.String()); err == nil || !strings.Contains(err.Error(), "CREATE EXTENSION pg_trgm") {
		t.Fatalf("a migration without the extension: %v", err)
	}
	var v int
	if err := c.QueryRow(ctx, `SELECT max(version) FROM panto_schema`).Scan(&v); err != nil || v != 4 {
		t.Fatalf("the version after a refused migration: %d %v", v, err)
	}
	if _, err := admin.Exec(ctx, `CREATE EXTENSION pg_trgm`); err != nil {
		t.Fatal(err)
	}
	open(t, pu.String())
}

// TestSearchSameHits: a search through the index (the candidates, each
// session read with its candidates only) gives the hits a search of the
// sessions' files gives, for words, phrases, regexps, letter case,
// exclusions and every filter, before a limit and capped by it.
func TestSearchSameHits(t *testing.T) {
	ctx := context.Background()
	p := open(t, testDB(t))
	dir := t.TempDir()
	var files []search.File
	for _, n := range []int{30, 5} {
		path := sessionFile(t, dir, n)
		if _, err := pushFile(ctx, p, path); err != nil {
			t.Fatal(err)
		}
		fi, _ := os.Stat(path)
		files = append(files, search.File{Path: path, Format: agents.Panto, ModTime: fi.ModTime(), Size: fi.Size()})
	}
	// One more with what a needle can hide in: escapes, non-ASCII, case.
	extra := filepath.Join(dir, "extra.jsonl")
	eid := "01a232e4-4db3-7556-907c-f9d5fda4e0d1"
	src := `{"type":"session","version":1,"id":"` + eid + `","timestamp":"2026-04-25T17:40:15.990Z","cwd":"/home/u/other"}` + "\n" +
		`{"type":"message","id":"u1","parentId":null,"timestamp":"2026-04-26T14:00:01.000Z","provider":"p","model":"m","message":{"role":"user","content":[{"type":"text","text":"Why does Kafka say \"deadline\\nexceeded\"? cr\u00e8me \u212Aelvin"}]}}` + "\n" +
		`{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-04-26T14:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolUse","id":"c1","name":"grep","input":"{\"pattern\":\"KAFKA\"}"}],"provider":"p","model":"other-model","stopReason":"toolUse","usage":{"input":1,"output":1}}}` + "\n" +
		`{"type":"message","id":"u2","parentId":"a1","timestamp":"2026-04-26T14:00:03.000Z","message":{"role":"user","content":[{"type":"toolResult","toolUseId":"c1","content":"kafka.go:1: Kafka"}]}}` + "\n"
	if err := os.WriteFile(extra, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := pushFile(ctx, p, extra); err != nil {
		t.Fatal(err)
	}
	files = append(files, search.File{Path: extra, Format: agents.Panto, ModTime: time.Now(), Size: int64(len(src))})
	// One whose tool result is over TextMax (not indexed: a candidate for
	// every query) and over the 4 MiB a search holds (read as a stream).
	huge := filepath.Join(dir, "huge.jsonl")
	hid := "01a232e4-4db3-7556-907c-f9d5fda4e0d2"
	hsrc := `{"type":"session","version":1,"id":"` + hid + `","timestamp":"2026-04-25T17:40:15.990Z","cwd":"/home/u/huge"}` + "\n" +
		`{"type":"message","id":"u1","parentId":null,"timestamp":"2026-04-27T14:00:01.000Z","provider":"p","model":"m","message":{"role":"user","content":[{"type":"text","text":"dump it"}]}}` + "\n" +
		`{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-04-27T14:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolUse","id":"c9","name":"cat","input":"{\"path\":\"big\"}"}],"provider":"p","model":"m","stopReason":"toolUse","usage":{"input":1,"output":1}}}` + "\n" +
		`{"type":"message","id":"u2","parentId":"a1","timestamp":"2026-04-27T14:00:03.000Z","message":{"role":"user","content":[{"type":"toolResult","toolUseId":"c9","content":"` + strings.Repeat("x", 5<<20) + ` zqhuge Kafka end"}]}}` + "\n"
	if err := os.WriteFile(huge, []byte(hsrc), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := pushFile(ctx, p, huge); err != nil {
		t.Fatal(err)
	}
	files = append([]search.File{{Path: huge, Format: agents.Panto, ModTime: time.Now(), Size: int64(len(hsrc))}}, files...)
	var nulls int
	if err := p.conn.QueryRow(ctx, `SELECT count(*) FROM panto_entries WHERE search_text IS NULL`).Scan(&nulls); err != nil || nulls != 1 {
		t.Fatalf("%d rows not indexed (%v), want the huge one", nulls, err)
	}
	ids := map[string]string{} // path → session id
	for _, f := range files {
		h, _ := os.ReadFile(f.Path)
		ids[f.Path] = session.Classify(bytes.SplitN(h, []byte("\n"), 2)[0]).ID
	}
	since, _ := time.Parse(time.RFC3339, "2026-04-26T00:00:00Z")
	cases := []struct {
		name  string
		words []string
		res   []string
		mode  search.Case
		fl    search.Filter
		limit int
	}{
		{name: "word", words: []string{"round"}},
		{name: "words", words: []string{"round", "café"}},
		{name: "phrase", words: []string{"round 21: café"}},
		{name: "smart case", words: []string{"Kafka"}},
		{name: "smart case lower", words: []string{"kafka"}},
		{name: "kelvin folds", words: []string{"kelvin"}},
		{name: "sensitive", words: []string{"kafka"}, mode: search.Sensitive},
		{name: "insensitive", words: []string{"KAFKA"}, mode: search.Insensitive},
		{name: "escaped", words: []string{`"deadline\nexceeded"`}},
		{name: "exclusion", words: []string{"round", "-21"}},
		{name: "regexp", res: []string{`round 2\d:`}},
		{name: "regexp folded", res: []string{`CRÈME`}, mode: search.Insensitive},
		{name: "regexp no literal", res: []string{`\d{2}:`}},
		{name: "tool result", words: []string{"b.txt"}},
		{name: "tool filter", words: []string{"kafka"}, fl: search.Filter{Tool: "GREP"}},
		{name: "role filter", words: []string{"txt"}, fl: search.Filter{Roles: map[string]bool{"tool": true}}},
		{name: "kind filter", words: []string{"hm"}, fl: search.Filter{Kinds: map[string]bool{"thinking": true}}},
		{name: "model filter", words: []string{"kafka"}, fl: search.Filter{Model: "other"}},
		{name: "project filter", words: []string{"kafka"}, fl: search.Filter{Project: "/home/u/other"}},
		{name: "session filter", words: []string{"round"}, fl: search.Filter{Session: ids[files[1].Path][:8]}},
		{name: "since", words: []string{"kafka"}, fl: search.Filter{Since: since}},
		{name: "limit", words: []string{"round"}, limit: 7},
		{name: "filter before limit", words: []string{"kafka"}, fl: search.Filter{Roles: map[string]bool{"tool": true}}, limit: 1},
		{name: "none", words: []string{"zzqqnothing"}},
		{name: "in a huge result", words: []string{"zqhuge"}},
		{name: "in a huge result, filtered", words: []string{"zqhuge"}, fl: search.Filter{Roles: map[string]bool{"tool": true}}},
		{name: "regexp in a huge result", res: []string{`zq[a-z]+ K`}},
		{name: "regexp folded in a huge result", res: []string{`ZQHUGE kafka`}, mode: search.Insensitive},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q, err := search.Parse(c.words, c.res, c.mode)
			if err != nil {
				t.Fatal(err)
			}
			opt := search.Options{Filter: c.fl, Limit: c.limit}
			want, wsum := collect(ctx, q, files, opt)
			for i := range want {
				want[i].Path = ids[want[i].Path]
				want[i].Resume = search.ResumeOf(want[i].Agent, want[i].Session, want[i].Path, want[i].Cwd)
			}
			var db []search.File
			needles := q.Needles()
			var cands map[string][]int64
			if len(needles) > 0 {
				list, err := p.Candidates(ctx, needles)
				if err != nil {
					t.Fatal(err)
				}
				cands = map[string][]int64{}
				for _, c := range list {
					cands[c.ID] = c.Seqs
				}
			}
			for _, f := range files {
				id := ids[f.Path]
				open := func() (search.Source, error) { return p.Open(ctx, id) }
				if cands != nil {
					seqs, ok := cands[id]
					if !ok {
						continue
					}
					open = func() (search.Source, error) { return p.OpenCandidates(ctx, id, seqs) }
				}
				db = append(db, search.File{Path: id, Format: agents.Panto, Open: open})
			}
			got, gsum := collect(ctx, q, db, opt)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("through the index:\n%s\nthe files:\n%s", show(got), show(want))
			}
			if gsum.Hits != wsum.Hits || gsum.Capped != wsum.Capped || gsum.Sessions != wsum.Sessions {
				t.Fatalf("summary %+v, the files' %+v", gsum, wsum)
			}
			if c.name != "none" && len(got) == 0 {
				t.Fatal("no hit: the case tests nothing")
			}
		})
	}
}

func collect(ctx context.Context, q *search.Query, files []search.File, opt search.Options) ([]search.Hit, search.Summary) {
	var hits []search.Hit
	opt.Workers = 2
	sum := search.Run(ctx, q, files, opt, func(h *search.Hit) bool {
		hits = append(hits, *h)
		return true
	})
	return hits, sum
}

func show(hits []search.Hit) string {
	var b strings.Builder
	for _, h := range hits {
		fmt.Fprintf(&b, "  %s %s %s %s %s %q %q\n", h.Session[:8], h.Entry, h.Role, h.Kind, h.Tool, h.Title, h.Snippet)
	}
	return b.String()
}

// TestOpenCandidates: a session read with its candidates is the session's
// file with every other entry an empty line, but for the first entries
// and the call a candidate's tool result answers.
func TestOpenCandidates(t *testing.T) {
	ctx := context.Background()
	p := open(t, testDB(t))
	path := sessionFile(t, t.TempDir(), 30) // round i: prompt 4i+1, call 4i+2, result 4i+3, reply 4i+4
	res, err := pushFile(ctx, p, path)
	if err != nil {
		t.Fatal(err)
	}
	whole, _ := os.ReadFile(path)
	lines := strings.SplitAfter(string(whole), "\n")
	lines = lines[:len(lines)-1]
	r, err := p.OpenCandidates(ctx, res.ID, []int64{83, 100})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(r); err != nil {
		t.Fatal(err)
	}
	got := strings.SplitAfter(b.String(), "\n")
	got = got[:len(got)-1]
	if len(got) != len(lines) || r.Size() != int64(b.Len()) {
		t.Fatalf("%d lines (size %d of %d), want %d", len(got), r.Size(), b.Len(), len(lines))
	}
	for i := range lines {
		keep := i <= 64 || i == 82 || i == 83 || i == 100 // line i+1 is entry i
		want := "\n"
		if keep {
			want = lines[i]
		}
		if got[i] != want {
			t.Errorf("line %d: %q, want %q", i+1, got[i], want)
		}
	}
}
