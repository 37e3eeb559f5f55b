package agents

import (
	"bufio"
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/panto-dev/panto/internal/memtest"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/tidwall/gjson"
)

// ocMakeDB creates an OpenCode database at path from the SQL files given
// (testdata/opencode/schema.sql first), closed cleanly: no -wal beside it,
// as OpenCode leaves it when it is not running.
func ocMakeDB(t testing.TB, path string, sqlFiles ...string) {
	t.Helper()
	db := ocOpenRW(t, path)
	for _, f := range sqlFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(string(b)); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

func ocOpenRW(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+uriPath(path)+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	return db
}

var (
	ocSchema = filepath.Join("..", "..", "testdata", "opencode", "schema.sql")
	ocShapes = filepath.Join("..", "..", "testdata", "opencode", "shapes.sql")
)

// ocRead reads src with content, and returns the headers and each
// session's entry lines.
func ocRead(t *testing.T, src Source, opt Options) ([]Header, [][]string, *Stats, error) {
	t.Helper()
	var hs []Header
	var es [][]string
	_, st, err := Read(src, OpenCode, opt, func(h *Header) error {
		hs = append(hs, *h)
		es = append(es, nil)
		return nil
	}, func(e *Entry) error {
		es[len(es)-1] = append(es[len(es)-1], string(e.AppendLine(nil)))
		return nil
	})
	return hs, es, st, err
}

func fileSource(t testing.TB, path string) Source {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return Source{Path: path, R: f, Size: fi.Size()}
}

func TestOpenCodeShapes(t *testing.T) {
	db := filepath.Join(t.TempDir(), "opencode.db")
	ocMakeDB(t, db, ocSchema, ocShapes)
	hs, es, st, err := ocRead(t, fileSource(t, db), Options{Content: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != 3 || hs[0].Origin.ID != "ses_A" || hs[1].Origin.ID != "ses_B" || hs[1].Origin.Parent != "ses_A" || hs[2].Origin.ID != "ses_C" {
		t.Fatalf("headers %+v", hs)
	}
	if hs[0].Timestamp != "2026-05-28T20:26:40.000Z" || hs[0].Cwd != "/proj" || hs[0].Origin.Agent != "opencode" {
		t.Errorf("header %+v", hs[0])
	}
	a := es[0]
	want := []string{
		`"role":"user","content":[{"type":"text","text":"List the files here"},{"type":"text","text":"[file: shot.png, image/png, 5 bytes]"}]`,
		`{"type":"thinking","thinking":"The user wants a listing.","signature":"sig-1"},{"type":"text","text":"I will look."},{"type":"toolUse","id":"call_1","name":"bash","input":"{\"command\":\"ls\"}"},{"type":"toolUse","id":"call_2","name":"read","input":"{\"filePath\":\"/proj/c.txt\"}"}],"provider":"anthropic","model":"claude-sonnet-4-5","stopReason":"toolUse","usage":{"input":1000,"output":250,"cacheRead":3000,"cacheWrite":400,"reasoning":50},"responseId":"opencode:msg_a2"}`,
		`[{"type":"toolResult","toolUseId":"call_1","content":"a.txt\nb.txt"},{"type":"toolResult","toolUseId":"call_2","content":"no such file","isError":true}]`,
		`"text":"Done: a.txt and b.txt."}],"provider":"anthropic","model":"claude-sonnet-4-5","stopReason":"stop","usage":{"input":10,"output":10,"reasoning":5}`,
		`"text":"[compaction requested: automatic]"`,
		`"text":"Summary: the files are a.txt and b.txt."}],"provider":"anthropic","model":"claude-sonnet-4-5","stopReason":"stop","usage":{"input":500,"output":100,"reasoning":20}`,
		`{"type":"compaction",`,
		`"text":"Go on"`,
		`[{"type":"text","text":"[error] APIError: Overloaded"}],"provider":"anthropic","model":"claude-sonnet-4-5","stopReason":"error","usage":{"input":0,"output":0}`,
		`"text":"Count the lines"`,
		`[{"type":"toolUse","id":"call_3","name":"bash","input":"{\"command\":\"wc -l a.txt\"}"}],"provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":0,"output":0}`,
	}
	if len(a) != len(want) {
		t.Fatalf("ses_A: %d entries, want %d:\n%s", len(a), len(want), strings.Join(a, ""))
	}
	for i, w := range want {
		if !strings.Contains(a[i], w) {
			t.Errorf("ses_A entry %d:\n%s\nwant it to hold\n%s", i, a[i], w)
		}
	}
	if c := gjson.Get(a[6], "summary").Str; c != "Summary: the files are a.txt and b.txt." || gjson.Get(a[6], "firstKeptEntryId").Exists() {
		t.Errorf("compaction %s", a[6])
	}
	// ses_B (1.2.21): output already holds reasoning; OpenCode's own cost
	// (0.0155, reasoning twice) is not read.
	if len(es[1]) != 2 || !strings.Contains(es[1][1], `"usage":{"input":10000,"output":200,"reasoning":100}`) {
		t.Errorf("ses_B %q", es[1])
	}
	// ses_C (1.2.21, no total): output holds its reasoning.
	if len(es[2]) != 2 || !strings.Contains(es[2][1], `"usage":{"input":100,"output":80,"reasoning":30}`) {
		t.Errorf("ses_C %q", es[2])
	}
	if st.Counts["tool results"] != 2 || st.Counts["opencode sessions"] != 3 || len(st.Corrupt) != 0 {
		t.Errorf("stats %+v", st)
	}
	// Every session converted alone is fsck-clean.
	for _, id := range []string{"ses_A", "ses_B", "ses_C"} {
		src := fileSource(t, db)
		src.Session = id
		tmp, _, _, err := Convert(src, OpenCode)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(tmp.Name())
		tmp.Close()
		_ = b
	}
}

func TestOpenCodeOneSession(t *testing.T) {
	db := filepath.Join(t.TempDir(), "opencode.db")
	ocMakeDB(t, db, ocSchema, ocShapes)
	_, _, _, err := Convert(fileSource(t, db), OpenCode)
	var several *ErrSeveralSessions
	if !errors.As(err, &several) || len(several.IDs) != 3 {
		t.Fatalf("Convert of a database of 3 sessions: %v", err)
	}
	src := fileSource(t, db)
	src.Session = "ses_B"
	tmp, _, _, err := Convert(src, OpenCode)
	if err != nil {
		t.Fatal(err)
	}
	defer tmp.Close()
	var lines []string
	b := make([]byte, 1<<16)
	n, _ := tmp.ReadAt(b, 0)
	lines = strings.Split(strings.TrimSpace(string(b[:n])), "\n")
	if len(lines) != 3 || session.Classify([]byte(lines[0])).Kind != session.KindHeader || !strings.Contains(lines[0], `"origin":{"agent":"opencode","id":"ses_B"`) || !strings.Contains(lines[0], `"parent":"ses_A"`) {
		t.Fatalf("ses_B alone:\n%s", b[:n])
	}
	ids, err := Sessions(db)
	if err != nil || strings.Join(ids, ",") != "ses_A,ses_B,ses_C" {
		t.Fatalf("Sessions: %v %v", ids, err)
	}
}

// ocDirState is what a directory holds: names, sizes, times and bytes.
func ocDirState(t testing.TB, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		b.WriteString(e.Name() + " " + fi.ModTime().String() + " " + fi.Mode().String() + " " + string(rune(len(data))) + "\n")
		b.Write(data)
	}
	return b.String()
}

// A database OpenCode is not running on (no -wal) is read in place and
// left as it was: no -wal or -shm created, not a byte or a time changed;
// in a directory that is read-only too.
func TestOpenCodeUnchanged(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "opencode.db")
	ocMakeDB(t, db, ocSchema, ocShapes)
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o700) })
	before := ocDirState(t, dir)
	for _, opt := range []Options{{}, {Content: true}} {
		if _, _, _, err := ocRead(t, fileSource(t, db), opt); err != nil {
			t.Fatal(err)
		}
	}
	if after := ocDirState(t, dir); after != before {
		t.Fatalf("the directory changed:\n%.300q\nwas\n%.300q", after, before)
	}
}

func TestOpenCodeNotOurs(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "other.db")
	db := ocOpenRW(t, other)
	if _, err := db.Exec(`CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES ('x')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, _, _, err := ocRead(t, fileSource(t, other), Options{})
	if !errors.Is(err, ErrNotALog) || !strings.Contains(err.Error(), "a SQLite database that is not OpenCode's") {
		t.Errorf("another SQLite database: %v", err)
	}
	// A newer OpenCode whose message table no longer has "data": refused,
	// naming its last migration.
	newer := filepath.Join(dir, "newer.db")
	db = ocOpenRW(t, newer)
	if _, err := db.Exec(`CREATE TABLE migration (id TEXT PRIMARY KEY, time_completed INTEGER NOT NULL);
		INSERT INTO migration VALUES ('20270101000000_message_columns', 1);
		CREATE TABLE session (id TEXT PRIMARY KEY, parent_id TEXT, directory TEXT, title TEXT, version TEXT, time_created INTEGER);
		CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER, role TEXT, body TEXT);
		CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT, data TEXT);`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, _, _, err = ocRead(t, fileSource(t, newer), Options{})
	if !errors.Is(err, ErrNotALog) || !strings.Contains(err.Error(), "at migration 20270101000000_message_columns whose schema panto does not read (no message.data)") {
		t.Errorf("a newer schema: %v", err)
	}
	// A file that begins as SQLite and is cut short.
	b, _ := os.ReadFile(other)
	torn := filepath.Join(dir, "torn.db")
	os.WriteFile(torn, b[:100], 0o600)
	_, _, _, err = ocRead(t, fileSource(t, torn), Options{})
	if err == nil {
		t.Errorf("a torn database read without error")
	}
	_ = bytes.MinRead
}

// TestOpenCodeWriterProcess is the OpenCode stand-in the writer tests
// start as a process of its own (SQLite's locks are per process): it
// writes the database named by PANTO_OC_WRITER as PANTO_OC_MODE says,
// prints "ready" when it has begun, and ends when its stdin closes.
//
//	hold   holds a write transaction (rows written, not committed) until
//	       stdin closes; then commits and checkpoints, waiting on no one
//	       (busy_timeout 0): a reader that held a lock would fail it.
//	write  commits, over and over, an assistant message and the
//	       step-finish part that holds its usage, in one transaction each,
//	       checkpointing every few pages (so the WAL restarts often).
func TestOpenCodeWriterProcess(t *testing.T) {
	path := os.Getenv("PANTO_OC_WRITER")
	if path == "" {
		t.Skip("the writer of the OpenCode writer tests")
	}
	db, err := sql.Open("sqlite", "file:"+uriPath(path)+"?_pragma=busy_timeout(0)&_pragma=wal_autocheckpoint(16)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	defer db.Close()
	stop := make(chan struct{})
	go func() {
		b := make([]byte, 1)
		for {
			if _, err := os.Stdin.Read(b); err != nil {
				close(stop)
				return
			}
		}
	}()
	step := func(i int, pad string) string {
		return `{"type":"step-finish","reason":"stop","tokens":{"total":3,"input":1,"output":2,"reasoning":0,"cache":{"read":0,"write":0}},"pad":"` + pad + `"}`
	}
	insert := func(x execer, i int) {
		id := ocWriterID(i)
		if _, err := x.Exec(`INSERT INTO message VALUES (?, 'ses_A', ?, ?, ?)`, id, 1780000050000+i, 1780000050000+i,
			`{"role":"assistant","providerID":"anthropic","modelID":"claude-sonnet-4-5","time":{"created":`+itoa(1780000050000+i)+`},"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"finish":"stop"}`); err != nil {
			t.Fatal(err)
		}
		pad := strings.Repeat("x", 3000) // pages: the WAL grows and is checkpointed
		if _, err := x.Exec(`INSERT INTO part VALUES (?, ?, 'ses_A', 0, 0, ?)`, "prt_w"+id, id, step(i, pad)); err != nil {
			t.Fatal(err)
		}
	}
	switch os.Getenv("PANTO_OC_MODE") {
	case "hold":
		tx, err := db.Begin()
		if err != nil {
			t.Fatal(err)
		}
		for i := range 50 {
			insert(tx, i)
		}
		os.Stdout.WriteString("ready\n")
		<-stop
		if err := tx.Commit(); err != nil {
			t.Fatalf("commit: %v", err)
		}
		if _, err := db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
			t.Fatalf("checkpoint: %v", err)
		}
		var busy, logged, done int
		if err := db.QueryRow(`PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logged, &done); err != nil || busy != 0 {
			t.Fatalf("checkpoint: busy %d, %v", busy, err)
		}
	case "write":
		// It never pauses. Past its first 2,000 messages it rewrites
		// their parts in turn instead of adding more: the WAL still grows
		// and is checkpointed under the reads, but the database stops
		// growing, so a read costs the same at the end as at the start
		// (each read of a database that grew for ever took longer, and
		// the test minutes under -race on a busy machine).
		const grown = 2000
		for i := 0; ; i++ {
			tx, err := db.Begin()
			if err != nil {
				t.Fatal(err)
			}
			if i < grown {
				insert(tx, i)
			} else if _, err := tx.Exec(`UPDATE part SET data = ? WHERE id = ?`, step(i, strings.Repeat(string(rune('a'+i%26)), 3000)), "prt_w"+ocWriterID(i%grown)); err != nil {
				t.Fatal(err)
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				os.Stdout.WriteString("ready\n")
			}
			select {
			case <-stop:
				return
			default:
			}
		}
	}
}

type execer interface {
	Exec(string, ...any) (sql.Result, error)
}

func itoa(i int) string { return strconv.Itoa(i) }

func ocWriterID(i int) string { return fmt.Sprintf("msg_w%08d", i) }

// ocWriter starts the writer process on db and waits until it has begun.
func ocWriter(t *testing.T, db, mode string) (stop func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestOpenCodeWriterProcess$", "-test.v")
	cmd.Env = append(os.Environ(), "PANTO_OC_WRITER="+db, "PANTO_OC_MODE="+mode)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errs bytes.Buffer
	cmd.Stderr = &errs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(out)
	var log strings.Builder
	for {
		line, err := r.ReadString('\n')
		log.WriteString(line)
		if line == "ready\n" {
			break
		}
		if err != nil {
			cmd.Wait()
			t.Fatalf("the writer did not begin: %s%s", log.String(), errs.String())
		}
	}
	done := make(chan struct{})
	go func() { io.Copy(&log, r); close(done) }()
	return func() {
		in.Close()
		<-done
		if err := cmd.Wait(); err != nil {
			t.Fatalf("the writer: %v\n%s%s", err, log.String(), errs.String())
		}
	}
}

// While OpenCode holds a write transaction, panto reads what is committed
// (not the rows in the transaction), without waiting and without taking a
// lock: the writer then commits and checkpoints with no busy timeout. The
// database file and its directory are as they were, but for what the
// writer itself did.
func TestOpenCodeWriterHolds(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", t.TempDir())
	db := filepath.Join(dir, "opencode.db")
	ocMakeDB(t, db, ocSchema, ocShapes)
	stop := ocWriter(t, db, "hold")
	before := ocDirState(t, dir)
	for _, opt := range []Options{{}, {Content: true}} {
		hs, es, _, err := ocRead(t, fileSource(t, db), opt)
		if err != nil {
			t.Fatal(err)
		}
		if len(hs) != 3 || len(es[0]) != 11 && opt.Content {
			t.Fatalf("read %d sessions, %d entries of ses_A, while a write transaction is open", len(hs), len(es[0]))
		}
	}
	if after := ocDirState(t, dir); after != before {
		t.Fatalf("the directory changed under the reader:\n%.400q\nwas\n%.400q", after, before)
	}
	if left, _ := os.ReadDir(os.Getenv("TMPDIR")); len(left) != 0 {
		t.Errorf("left in TMPDIR: %v", left)
	}
	stop()
	// The commit is read now.
	_, es, _, err := ocRead(t, fileSource(t, db), Options{Content: true})
	if err != nil || len(es[0]) != 11+1+50 { // and the running call, answered as interrupted
		t.Fatalf("after the commit: %d entries of ses_A, %v", len(es[0]), err)
	}
}

// While OpenCode commits continuously (and checkpoints every few pages, so
// the WAL restarts under the reader), every read is a consistent state: no
// error, and every message it holds has the step-finish part committed
// with it.
func TestOpenCodeWriterWrites(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", t.TempDir())
	db := filepath.Join(dir, "opencode.db")
	ocMakeDB(t, db, ocSchema, ocShapes)
	stop := ocWriter(t, db, "write")
	last, whole, again := 0, 0, 0
	// Under the race detector, which has no goroutines of the reader's to
	// watch here, a quarter of the reads (scripts/test runs all 60 in the
	// plain poison build).
	reads := 60
	if raceBuild {
		reads = 15
	}
	for read := 0; read < reads; read++ {
		src := fileSource(t, db)
		src.Session = "ses_A"
		n := 0
		_, _, err := Read(src, OpenCode, Options{}, func(*Header) error { return nil }, func(e *Entry) error {
			if e.Reply != nil && strings.Contains(e.Reply.Key, "msg_w") {
				n++
				if u := e.Reply.Usage; u.Input != 1 || u.Output != 2 {
					return fmt.Errorf("%s read without its step-finish part: usage %+v", e.Reply.Key, u)
				}
			}
			return nil
		})
		if err != nil && strings.Contains(err.Error(), "kept restarting its write-ahead log") {
			// A writer that never pauses can restart its WAL under every
			// copy: the read says so ("run again") and reads nothing,
			// which is no inconsistent read.
			again++
			continue
		}
		if err != nil {
			t.Fatalf("read %d: %v", read, err)
		}
		if n < last {
			t.Fatalf("read %d: %d messages of the writer, %d before", read, n, last)
		}
		last = n
		whole++
	}
	if whole == 0 {
		t.Fatalf("no read of %d got a consistent snapshot (%d said run again)", reads, again)
	}
	names := func() string {
		ents, _ := os.ReadDir(dir)
		var s []string
		for _, e := range ents {
			s = append(s, e.Name())
		}
		return strings.Join(s, " ")
	}()
	stop()
	if names != "opencode.db opencode.db-shm opencode.db-wal" {
		t.Errorf("beside the database while it was written: %s", names)
	}
	if left, _ := os.ReadDir(os.Getenv("TMPDIR")); len(left) != 0 {
		t.Errorf("left in TMPDIR: %v", left)
	}
	t.Logf("the last read saw %d of the writer's messages; %d reads whole, %d said run again", last, whole, again)
}

// ocExportDoc is an `opencode export` document of the shapes' ses_B, with
// n extra assistant messages of pad bytes of text each.
func ocExportDoc(n, pad int) []byte {
	var b bytes.Buffer
	b.WriteString(`{
  "info": {
    "id": "ses_X",
    "slug": "calm-owl",
    "projectID": "prj1",
    "directory": "/proj",
    "parentID": "REDACTED",
    "title": "Exported",
    "version": "1.2.21",
    "time": {"created": 1780000300000, "updated": 1780000400000}
  },
  "messages": [
    {
      "info": {"id": "msg_x1", "sessionID": "ses_X", "role": "user", "time": {"created": 1780000301000}, "model": {"providerID": "openai", "modelID": "gpt-5"}},
      "parts": [{"id": "prt_x1", "sessionID": "ses_X", "messageID": "msg_x1", "type": "text", "text": "Explain"}]
    },
    {
      "info": {"id": "REDACTED", "sessionID": "ses_X", "role": "assistant", "parentID": "msg_x1", "modelID": "gpt-5", "providerID": "openai", "cost": 0.0217, "tokens": {"total": 10200, "input": 10000, "output": 200, "reasoning": 100, "cache": {"read": 0, "write": 0}}, "time": {"created": 1780000302000, "completed": 1780000303000}, "finish": "stop"},
      "parts": [{"id": "prt_x2", "sessionID": "ses_X", "messageID": "REDACTED", "type": "text", "text": "It works."}]
    }`)
	text := strings.Repeat("all work and no play ", pad/21+1)[:pad]
	for i := range n {
		fmt.Fprintf(&b, `,
    {
      "info": {"id": "msg_y%08d", "sessionID": "ses_X", "role": "assistant", "modelID": "gpt-5", "providerID": "openai", "tokens": {"total": 12, "input": 10, "output": 2, "reasoning": 0, "cache": {"read": 0, "write": 0}}, "time": {"created": %d}, "finish": "stop"},
      "parts": [{"id": "prt_y%08d", "type": "text", "text": %q}]
    }`, i, 1780000304000+i, i, text)
	}
	b.WriteString("\n  ]\n}\n")
	return b.Bytes()
}

// An export is read as the database is: the same message and part
// objects. Entire's redaction gives several messages the id REDACTED:
// each still counts. A document cut short is read up to its last whole
// message and said (Torn), never taken whole.
func TestOpenCodeExport(t *testing.T) {
	doc := ocExportDoc(2, 10)
	src := Source{Path: "x.json", R: bytes.NewReader(doc), Size: int64(len(doc))}
	if f, err := Identify(src.R, src.Size); err != nil || f != OpenCode {
		t.Fatalf("an export told %v, %v", f, err)
	}
	hs, es, st, err := ocRead(t, src, Options{Content: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != 1 || hs[0].Origin.ID != "ses_X" || hs[0].Origin.Parent != "" || hs[0].Timestamp != "2026-05-28T20:31:40.000Z" {
		t.Fatalf("header %+v", hs)
	}
	if len(es[0]) != 4 || !strings.Contains(es[0][1], `"usage":{"input":10000,"output":200,"reasoning":100}`) || st.Torn != 0 {
		t.Fatalf("entries %q, stats %+v", es[0], st)
	}
	for cut := len(doc) - 3; cut > len(doc)-400; cut -= 37 { // "}\n" and more cut off
		src := Source{Path: "x.json", R: bytes.NewReader(doc[:cut]), Size: int64(cut)}
		_, es, st, err := ocRead(t, src, Options{Content: true})
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		if st.Torn == 0 || len(es[0]) < 2 || len(es[0]) > 4 {
			t.Fatalf("cut at %d: %d entries, torn %d", cut, len(es[0]), st.Torn)
		}
	}
	// Cut before its session: refused, named.
	_, _, _, err = ocRead(t, Source{Path: "x.json", R: bytes.NewReader(doc[:40]), Size: 40}, Options{})
	if !errors.Is(err, ErrNotALog) || !strings.Contains(err.Error(), "OpenCode export") {
		t.Errorf("an export cut in its info: %v", err)
	}
}

// A 200 MB export is read in memory of one message, not of the document.
// Under the race detector the export is 16 MB, read through the same code,
// and the heap is not measured: 200 MB took over a minute there; the plain
// build measures it (scripts/test runs this package without -race too).
func TestOpenCodeExportMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 200 MB file")
	}
	messages := 200 << 10
	if raceBuild {
		messages = 16 << 10
	}
	path := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(path, ocExportDoc(messages, 1000), 0o600); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	n := 0
	var err error
	peak := memtest.PeakHeap(func() {
		_, _, err = Read(fileSource(t, path), OpenCode, Options{}, func(*Header) error { return nil }, func(e *Entry) error {
			if e.Reply != nil {
				n++
			}
			return nil
		})
	})
	if err != nil || n != messages+1 {
		t.Fatalf("%d replies, %v", n, err)
	}
	t.Logf("%d MB export: heap in use at most %d MB (%d MB before)", fi.Size()>>20, peak>>20, base.HeapInuse>>20)
	if !raceBuild && peak > base.HeapInuse+48<<20 {
		t.Errorf("reading a %d MB export took %d MB of heap", fi.Size()>>20, (peak-base.HeapInuse)>>20)
	}
}

// The storage/ tree of OpenCode up to 1.1: a session file, its messages'
// and their parts' files; ids from the file names.
func TestOpenCodeStorage(t *testing.T) {
	root := filepath.Join(t.TempDir(), "storage")
	write := func(rel, body string) {
		p := filepath.Join(root, rel)
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("session/prj1/ses_S.json", `{
  "id": "ses_S",
  "projectID": "prj1",
  "directory": "/old",
  "title": "Old",
  "version": "1.0.5",
  "time": {"created": 1760000000000, "updated": 1760000100000}
}`)
	write("message/ses_S/msg_s1.json", `{"id": "msg_s1", "sessionID": "ses_S", "role": "user", "time": {"created": 1760000001000}, "model": {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"}}`)
	write("part/msg_s1/prt_s1.json", `{"id": "prt_s1", "messageID": "msg_s1", "sessionID": "ses_S", "type": "text", "text": "Hi"}`)
	write("message/ses_S/msg_s2.json", `{"id": "msg_s2", "sessionID": "ses_S", "role": "assistant", "modelID": "claude-sonnet-4-5", "providerID": "anthropic", "tokens": {"input": 5, "output": 7, "reasoning": 0, "cache": {"read": 1, "write": 2}}, "time": {"created": 1760000002000}}`)
	write("part/msg_s2/prt_s3.json", `{"id": "prt_s3", "type": "text", "text": "second"}`)
	write("part/msg_s2/prt_s2.json", `{"id": "prt_s2", "type": "text", "text": "first"}`)
	path := filepath.Join(root, "session", "prj1", "ses_S.json")
	if !IsLogPath(path) || IsLogPath(filepath.Join(root, "message", "ses_S", "msg_s1.json")) {
		t.Errorf("a walk takes the session, not its messages")
	}
	hs, es, _, err := ocRead(t, fileSource(t, path), Options{Content: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != 1 || hs[0].Origin.ID != "ses_S" || len(es[0]) != 2 || !strings.Contains(es[0][1], `[{"type":"text","text":"first"},{"type":"text","text":"second"}]`) ||
		!strings.Contains(es[0][1], `"usage":{"input":5,"output":7,"cacheRead":1,"cacheWrite":2}`) {
		t.Fatalf("%+v %q", hs, es)
	}
	// Its title is its first prompt, in its message files (the session's
	// own file holds none): list --all, cost and search titled it "".
	if got := Title(fileSource(t, path), OpenCode); got != "Hi" {
		t.Errorf("Title %q, want Hi", got)
	}
	// One of its messages, given: refused, named.
	_, _, _, err = ocRead(t, fileSource(t, filepath.Join(root, "message", "ses_S", "msg_s1.json")), Options{})
	if !errors.Is(err, ErrNotALog) || !strings.Contains(err.Error(), "storage/ tree, not a session") {
		t.Errorf("a message file: %v", err)
	}
}

// `opencode run --format json`: parts by message, a part sent again
// replaces itself; a cut-off last line is torn, not read; the model is
// unknown (its cost too, never $0).
func TestOpenCodeStream(t *testing.T) {
	log := `{"type":"step_start","timestamp":1771390898659,"sessionID":"ses_R","part":{"id":"prt_1","sessionID":"ses_R","messageID":"msg_1","type":"step-start"}}
{"type":"tool_use","timestamp":1771390898700,"sessionID":"ses_R","part":{"id":"prt_2","sessionID":"ses_R","messageID":"msg_1","type":"tool","tool":"bash","callID":"c1","state":{"status":"completed","input":{"command":"ls"},"output":"x"}}}
{"type":"step_finish","timestamp":1771390898800,"sessionID":"ses_R","part":{"id":"prt_3","sessionID":"ses_R","messageID":"msg_1","type":"step-finish","reason":"tool-calls","tokens":{"total":30,"input":10,"output":20,"reasoning":0,"cache":{"read":0,"write":0}}}}
{"type":"text","timestamp":1771390899000,"sessionID":"ses_R","part":{"id":"prt_4","sessionID":"ses_R","messageID":"msg_2","type":"text","text":"Don"}}
{"type":"text","timestamp":1771390899100,"sessionID":"ses_R","part":{"id":"prt_4","sessionID":"ses_R","messageID":"msg_2","type":"text","text":"Done."}}
{"type":"step_finish","timestamp":1771390899200,"sessionID":"ses_R","part":{"id":"prt_5","sessionID":"ses_R","messageID":"msg_2","type":"step-fin`
	src := Source{Path: "run.jsonl", R: strings.NewReader(log), Size: int64(len(log))}
	if f, err := Identify(src.R, src.Size); err != nil || f != OpenCode {
		t.Fatalf("a run stream told %v, %v", f, err)
	}
	hs, es, st, err := ocRead(t, src, Options{Content: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != 1 || hs[0].Origin.ID != "ses_R" || hs[0].Timestamp != "2026-02-18T05:01:38.659Z" || st.Torn != 6 {
		t.Fatalf("%+v torn %d", hs, st.Torn)
	}
	want := []string{`"toolUse","id":"c1"`, `"toolResult","toolUseId":"c1","content":"x"`, `[{"type":"text","text":"Done."}],"provider":"unknown","model":"unknown","usage":{"input":0,"output":0}`}
	if len(es[0]) != 3 {
		t.Fatalf("%q", es[0])
	}
	for i, w := range want {
		if !strings.Contains(es[0][i], w) {
			t.Errorf("entry %d %s, want %s", i, es[0][i], w)
		}
	}
}

// FuzzOpenCode feeds the OpenCode reader hostile exports and run streams:
// it ends, without a panic, and what it converts of one session has a
// header and entries only.
func FuzzOpenCode(f *testing.F) {
	f.Add(ocExportDoc(1, 10))
	f.Add([]byte(`{"type":"text","timestamp":1,"sessionID":"ses_R","part":{"id":"p","messageID":"m","type":"text","text":"x"}}` + "\n"))
	f.Add([]byte(`{"info":{"id":"ses_Z"},"messages":[{"info":{"role":"assistant","tokens":{"total":-5,"input":7}},"parts":[{"type":"tool","state":{"status":"error"}}]}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		headers := 0
		Read(Source{Path: "f.json", R: bytes.NewReader(b), Size: int64(len(b))}, OpenCode, Options{Content: true},
			func(*Header) error { headers++; return nil },
			func(e *Entry) error {
				if headers != 1 {
					t.Fatalf("an entry under %d headers", headers)
				}
				if e.Role != "" && !json.Valid(e.Body) {
					t.Fatalf("entry body is no JSON: %s", e.Body)
				}
				return nil
			})
	})
}

// TestOpenCodeInDatabase: a session of the storage/ tree is found in the
// database beside the tree (opencode.db, a channel's opencode-*.db) when
// that holds it with messages; nothing else is.
func TestOpenCodeInDatabase(t *testing.T) {
	data := t.TempDir()
	ocMakeDB(t, filepath.Join(data, "opencode-beta.db"), "../../testdata/opencode/schema.sql", "../../testdata/opencode/shapes.sql")
	tree := func(id string) string {
		p := filepath.Join(data, "storage", "session", "prj1", id+".json")
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, []byte(`{"id":"`+id+`","projectID":"prj1"}`), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct{ path, want string }{
		{tree("ses_C"), filepath.Join(data, "opencode-beta.db")},
		{tree("ses_Z"), ""}, // only in the tree
		{filepath.Join(data, "opencode-beta.db"), ""},
		{filepath.Join(data, "ses_C.json"), ""}, // not in a storage/ tree
	} {
		if got := InDatabase(c.path); got != c.want {
			t.Errorf("InDatabase(%s) = %q, want %q", c.path, got, c.want)
		}
	}
	if entries, _ := os.ReadDir(data); len(entries) != 2 {
		t.Errorf("the data directory holds %d files after, want the database and storage/ (no -wal, -shm)", len(entries))
	}
}

// TestOpenCodePrompts: a database read for costs with titles (Options
// Prompts, as panto-cost --by session reads it) gives each session's user
// messages' bodies up to the first that holds a title, the same as a read
// with content, and reads nothing else of the parts: no tool result, no
// assistant body. A first prompt with no title (a command wrapper, no
// part) passes to the next one. panto-cost read every part's text for
// titles (Content), 3 times the CPU of a read for costs alone.
func TestOpenCodePrompts(t *testing.T) {
	db := filepath.Join(t.TempDir(), "opencode.db")
	ocMakeDB(t, db, ocSchema, ocShapes)
	w := ocOpenRW(t, db)
	for _, q := range []string{
		`INSERT INTO session (id, project_id, directory, title, version, time_created, time_updated) VALUES ('ses_P', 'prj1', '/proj', 'P', 'v1.18.4', 1780000300000, 1780000300000)`,
		`INSERT INTO message VALUES ('msg_p1', 'ses_P', 1780000301000, 1780000301000, '{"role":"user","time":{"created":1780000301000}}'),
			('msg_p2', 'ses_P', 1780000302000, 1780000302000, '{"role":"user","time":{"created":1780000302000}}'),
			('msg_p3', 'ses_P', 1780000303000, 1780000303000, '{"role":"assistant","providerID":"anthropic","modelID":"claude-sonnet-4-5","tokens":{"input":5,"output":6,"reasoning":0,"cache":{"read":0,"write":0}},"time":{"created":1780000303000},"finish":"stop"}'),
			('msg_p4', 'ses_P', 1780000304000, 1780000304000, '{"role":"user","time":{"created":1780000304000}}'),
			('msg_p5', 'ses_P', 1780000305000, 1780000305000, '{"role":"user","time":{"created":1780000305000}}')`,
		`INSERT INTO part VALUES ('prt_p2a', 'msg_p2', 'ses_P', 0, 0, '{"type":"text","text":"<command-name>/init</command-name>"}'),
			('prt_p4a', 'msg_p4', 'ses_P', 0, 0, '{"type":"text","text":"The real prompt\nand more"}'),
			('prt_p3a', 'msg_p3', 'ses_P', 0, 0, '{"type":"text","text":"a reply"}'),
			('prt_p5a', 'msg_p5', 'ses_P', 0, 0, '{"type":"text","text":"after the title"}')`,
	} {
		if _, err := w.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	title := func(es []string) string {
		for _, e := range es {
			if body := gjson.Get(e, "message"); body.Get("role").Str == "user" && body.Exists() {
				if t := TitleOf([]byte(`{"type":"message","message":`+body.Raw+`}`), Unknown); t != "" {
					return t
				}
			}
		}
		return ""
	}
	_, full, _, err := ocRead(t, fileSource(t, db), Options{Content: true})
	if err != nil {
		t.Fatal(err)
	}
	hs, es, st, err := ocRead(t, fileSource(t, db), Options{Prompts: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"List the files here", "Find the tests", "Hello", "The real prompt"}
	if len(es) != len(want) || len(full) != len(want) {
		t.Fatalf("%d and %d sessions, want %d", len(es), len(full), len(want))
	}
	for i := range es {
		if got, all := title(es[i]), title(full[i]); got != all || got != want[i] {
			t.Errorf("%s: title %q, with content %q, want %q", hs[i].Origin.ID, got, all, want[i])
		}
		for _, e := range es[i] {
			if gjson.Get(e, "message.role").Str == "assistant" && gjson.Get(e, "message.content").Exists() {
				t.Errorf("%s: an assistant body read: %s", hs[i].Origin.ID, e)
			}
		}
	}
	// ses_P: its first prompt has no part, its second only a command; the
	// fourth (after the title) is not read.
	var bodies []string
	for _, e := range es[3] {
		if b := gjson.Get(e, "message.content"); gjson.Get(e, "message.role").Str == "user" && b.Exists() {
			bodies = append(bodies, b.Raw)
		}
	}
	if len(bodies) != 3 || !strings.Contains(bodies[2], "The real prompt") {
		t.Errorf("ses_P user bodies %q", bodies)
	}
	if st.Counts["tool results"] != 0 || st.Counts["tool calls"] != 0 {
		t.Errorf("the parts of replies read: %v", st.Counts)
	}
}

// TestOpenCodeCostScan: a cost read of a whole database (its step-finish
// parts read in one pass over the part table, allSteps) gives what the
// same sessions read one at a time through the indexes give: each entry
// and reply, and the parts of no message of their session counted as
// strays (a step-finish naming a message of another session, one naming
// no message), the versions' rules (ses_B, ses_C: 1.2.21) kept.
func TestOpenCodeCostScan(t *testing.T) {
	db := filepath.Join(t.TempDir(), "opencode.db")
	ocMakeDB(t, db, ocSchema, ocShapes)
	w := ocOpenRW(t, db)
	for _, q := range []string{
		`INSERT INTO part VALUES ('prt_x1', 'msg_none', 'ses_A', 0, 0, '{"type":"step-finish","tokens":{"input":7,"output":7,"reasoning":0,"cache":{"read":0,"write":0}}}'),
			('prt_x2', 'msg_a2', 'ses_B', 0, 0, '{"reason":"stop","type":"step-finish","tokens":{"input":9,"output":9,"reasoning":0,"cache":{"read":0,"write":0}}}'),
			('prt_x3', 'msg_a2', 'ses_Z', 0, 0, '{"reason":"stop","type":"step-finish","tokens":{"input":9,"output":9,"reasoning":0,"cache":{"read":0,"write":0}}}'),
			('prt_x4', 'msg_a3', 'ses_A', 0, 0, '{"reason":"stop","type":"step-finish","tokens":{"input":1,"output":2,"reasoning":3,"cache":{"read":4,"write":5}}}')`,
	} {
		if _, err := w.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	// each entry as a cost report reads it
	costRead := func(src Source) ([]Header, [][]string, *Stats, error) {
		var hs []Header
		var es [][]string
		_, st, err := Read(src, OpenCode, Options{}, func(h *Header) error {
			hs = append(hs, *h)
			es = append(es, nil)
			return nil
		}, func(e *Entry) error {
			s := fmt.Sprintf("%s %s %s %s %s %s", e.ID, e.ParentID, e.Timestamp, e.Role, e.Provider, e.Model)
			if e.Reply != nil {
				s += fmt.Sprintf(" %+v", *e.Reply)
			}
			es[len(es)-1] = append(es[len(es)-1], s+"\n")
			return nil
		})
		return hs, es, st, err
	}
	hs, es, st, err := costRead(fileSource(t, db))
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != 3 {
		t.Fatalf("%d sessions", len(hs))
	}
	strays := 0
	for i, h := range hs {
		src := fileSource(t, db)
		src.Session = h.Origin.ID
		_, one, st1, err := costRead(src)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(one[0], "") != strings.Join(es[i], "") {
			t.Errorf("%s read alone:\n%s\nin the whole database:\n%s", h.Origin.ID, strings.Join(one[0], ""), strings.Join(es[i], ""))
		}
		strays += st1.Counts["opencode parts of no message (not read)"]
	}
	if got := st.Counts["opencode parts of no message (not read)"]; got != 2 || strays != 2 {
		t.Errorf("strays %d in the whole database, %d read alone: want 2", got, strays)
	}
	// msg_a3 has two step-finish parts now: both calls, summed.
	if !strings.Contains(strings.Join(es[0], ""), `{Key:opencode:msg_a3 Usage:{Input:11 Output:15 CacheRead:4 CacheWrite:5 Reasoning:8 CacheWrite1h:0} HasUsage:true`) {
		t.Errorf("msg_a3: %s", strings.Join(es[0], "\n"))
	}
}

// TestOpenCodeOrphans: messages whose session has no row (a database cut
// between writes) are sessions all the same, after those with rows, by
// their first message's time then id, as a GROUP BY over every message
// lists them (the query sessions used, the oracle here): ses_C's row
// removed, two sessions of messages only (the first message of each the
// earliest, the same time: by id), one named by a number.
func TestOpenCodeOrphans(t *testing.T) {
	db := filepath.Join(t.TempDir(), "opencode.db")
	ocMakeDB(t, db, ocSchema, ocShapes)
	w := ocOpenRW(t, db)
	for _, q := range []string{
		`DELETE FROM session WHERE id = 'ses_C'`,
		`INSERT INTO message VALUES ('msg_q2', 'ses_Q', 1780000500000, 0, '{"role":"user"}'),
			('msg_q1', 'ses_Q', 1770000000000, 0, '{"role":"user"}'),
			('msg_r1', 'ses_R', 1770000000000, 0, '{"role":"user"}'),
			('msg_n1', 7, 1780000600000, 0, '{"role":"user"}')`,
	} {
		if _, err := w.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	var want []string
	rows, err := w.Query(`SELECT session_id, MIN(time_created) FROM message
		WHERE session_id NOT IN (SELECT id FROM session) GROUP BY session_id ORDER BY 2, 1`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		var ms int64
		if err := rows.Scan(&id, &ms); err != nil {
			t.Fatal(err)
		}
		want = append(want, fmt.Sprint(id, " ", ms))
	}
	rows.Close()
	w.Close()
	d, err := openOpenCode(db)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	list, err := d.sessions("")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range list[2:] {
		got = append(got, fmt.Sprint(s.id, " ", s.created))
	}
	if len(list) < 2 || list[0].id != "ses_A" || list[1].id != "ses_B" || strings.Join(got, ",") != strings.Join(want, ",") || len(want) != 4 {
		t.Errorf("sessions %v: orphans %q, want %q", list, got, want)
	}
}
