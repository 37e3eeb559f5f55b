package agents

import (
	"bytes"
	"cmp"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/panto-dev/panto/pkg/session"
	_ "modernc.org/sqlite" // a pure-Go SQLite: the binaries stay static, no cgo (README, dependencies)
)

// OpenCode's database (1.2.0 on) is a SQLite file in WAL mode that OpenCode
// may be writing while panto reads it. SPEC §16: it is read without ever
// being changed, and panto takes no lock OpenCode could wait on. So panto
// never opens the user's file through SQLite's locking:
//
//   - With no "-wal" beside it (OpenCode is not running), it is opened
//     immutable (?immutable=1): no lock, no -wal or -shm created (a plain
//     read-only open creates both). Whether it changed during the read (the
//     size, mtime and inode of the file, and no -wal appearing) is checked
//     after each session is read; if it did, the session is read again from
//     a snapshot, as below.
//   - With a "-wal" beside it (OpenCode running, or stopped uncleanly), the
//     newest writes are in the WAL, which an immutable reader ignores. The
//     two files are copied into a private temporary directory as one
//     consistent snapshot, and the copy is read: the WAL's header (its
//     checkpoint sequence and salts, which change whenever SQLite restarts
//     the WAL) is read before the database is copied and again after the WAL
//     is; when they are the same, every page a checkpoint wrote into the
//     database meanwhile came from a frame the copied WAL holds, which SQLite
//     applies over it when it opens the copy (frames after the last commit,
//     or torn by a write in progress, fail their checksums and are not used).
//     When the header changed, the copy is made again.

// sqliteMagic begins every SQLite database file.
var sqliteMagic = []byte("SQLite format 3\x00")

// IsSQLite reports whether b, a file's first bytes, begin a SQLite database.
func IsSQLite(b []byte) bool { return bytes.HasPrefix(b, sqliteMagic) }

// ocDB is an open OpenCode database: the user's file immutable, or a
// snapshot of it.
type ocDB struct {
	path     string // the user's file
	db       *sql.DB
	snapshot string // the temporary directory of the snapshot, "" for the file itself
	state    fileState
	stmts    map[string]*sql.Stmt           // load's queries, prepared once for every session
	steps    map[string]map[string]*ocSteps // allSteps' sums, by session and message
	spare    []ocMessage                    // a session's messages, emitted: load's next array
}

// fileState is what says the database file did not change under an
// immutable reader.
type fileState struct {
	size, mtime int64
	ino         uint64
	wal         bool
}

func stateOfDB(path string) (fileState, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileState{}, err
	}
	s := fileState{size: fi.Size(), mtime: fi.ModTime().UnixNano(), ino: inode(fi)}
	if _, err := os.Lstat(path + "-wal"); err == nil {
		s.wal = true
	}
	return s, nil
}

// WALOf is the write-ahead log SQLite keeps for the database at path:
// beside the file itself, a symbolic link to it resolved (a WAL looked for
// beside the link is never there, and the database's newest commits, in
// it, were missed).
func WALOf(path string) string {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	return path + "-wal"
}

// openOpenCode opens the OpenCode database at path for reading (see
// above). The caller closes it.
func openOpenCode(path string) (*ocDB, error) {
	// Its -wal is beside the file itself, not beside a symbolic link to
	// it (SQLite names the WAL after the file it resolves).
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	st, err := stateOfDB(path)
	if err != nil {
		return nil, err
	}
	d := &ocDB{path: path, state: st}
	if st.wal {
		return d, d.takeSnapshot()
	}
	db, err := sql.Open("sqlite", "file:"+uriPath(path)+"?mode=ro&immutable=1")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	d.db = db
	return d, nil
}

// uriPath escapes path for a SQLite file: URI.
func uriPath(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return (&url.URL{Path: path}).EscapedPath()
}

// changed reports whether the file an immutable reader reads changed since
// it was opened (a snapshot never does).
func (d *ocDB) changed() bool {
	if d.snapshot != "" {
		return false
	}
	st, err := stateOfDB(d.path)
	return err != nil || st != d.state
}

// walHeader is the first 32 bytes of the WAL beside path: nil when there
// is none.
func walHeader(path string) ([]byte, error) {
	f, err := os.Open(path + "-wal")
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, 32)
	n, err := io.ReadFull(f, b)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		return b[:n], nil // an empty WAL: no frame to apply
	}
	return b, err
}

// snapshotTries is how often a snapshot is taken again when the WAL was
// restarted during the copy.
const snapshotTries = 50

// takeSnapshot copies the database and its WAL into a temporary directory
// of panto's own as one consistent state, and opens the copy.
func (d *ocDB) takeSnapshot() (err error) {
	defer func() {
		if err != nil && d.snapshot != "" { // no copy of the user's database is left behind
			os.RemoveAll(d.snapshot)
			d.snapshot = ""
		}
	}()
	if d.db != nil {
		d.db.Close() // and its statements
		d.db, d.stmts, d.steps = nil, nil, nil
	}
	dir, err := copyDir()
	if err != nil {
		return err
	}
	if d.snapshot != "" {
		os.RemoveAll(d.snapshot)
	}
	d.snapshot = dir
	copyDB := filepath.Join(dir, "opencode.db")
	for try := 0; ; try++ {
		before, err := walHeader(d.path)
		if err != nil {
			return err
		}
		if err := copyFile(d.path, copyDB); err != nil {
			return err
		}
		os.Remove(copyDB + "-wal")
		if before != nil {
			if err := copyFile(d.path+"-wal", copyDB+"-wal"); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
		after, err := walHeader(d.path)
		if err != nil {
			return err
		}
		copied, _ := walHeader(copyDB)
		if before != nil && bytes.Equal(before, after) && bytes.Equal(before, copied) || before == nil && after == nil {
			break
		}
		if try == snapshotTries {
			return fmt.Errorf("%s: OpenCode kept restarting its write-ahead log while panto copied it: no consistent snapshot after %d tries (run again)", d.path, try+1)
		}
		time.Sleep(min(time.Duration(try+1)*5*time.Millisecond, 100*time.Millisecond)) // let the checkpoint end
	}
	db, err := sql.Open("sqlite", "file:"+uriPath(copyDB)+"?_pragma=query_only(1)")
	if err != nil {
		return err
	}
	db.SetMaxOpenConns(1)
	d.db = db
	return nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// Close closes the database and removes the snapshot.
func (d *ocDB) Close() error {
	var err error
	if d.db != nil {
		err = d.db.Close()
	}
	if d.snapshot != "" {
		os.RemoveAll(d.snapshot)
	}
	return err
}

// ocSchemaError is a SQLite database panto does not read as OpenCode's.
type ocSchemaError struct{ msg string }

func (e *ocSchemaError) Error() string { return e.msg }
func (e *ocSchemaError) Unwrap() error { return ErrNotALog }

// checkSchema says whether the database is OpenCode's, in a schema panto
// reads: tables session, message and part with the columns read.
func (d *ocDB) checkSchema() error {
	need := map[string][]string{
		"session": {"id", "parent_id", "directory", "title", "version", "time_created"},
		"message": {"id", "session_id", "time_created", "data"},
		"part":    {"id", "message_id", "session_id", "data"},
	}
	var missing []string
	found := 0
	for _, t := range []string{"session", "message", "part"} {
		cols := map[string]bool{}
		rows, err := d.db.Query("SELECT name FROM pragma_table_info(?)", t)
		if err != nil {
			return d.sqlErr(err)
		}
		for rows.Next() {
			var c string
			if err := rows.Scan(&c); err != nil {
				rows.Close()
				return d.sqlErr(err)
			}
			cols[c] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return d.sqlErr(err)
		}
		if len(cols) == 0 {
			missing = append(missing, "table "+t)
			continue
		}
		found++
		for _, c := range need[t] {
			if !cols[c] {
				missing = append(missing, t+"."+c)
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	var migration string
	d.db.QueryRow("SELECT id FROM migration ORDER BY id DESC LIMIT 1").Scan(&migration)
	if found == 0 && migration == "" {
		return &ocSchemaError{"not a session log: a SQLite database that is not OpenCode's (no tables session, message, part)"}
	}
	what := "an OpenCode database"
	if migration != "" {
		what += " at migration " + migration
	}
	return &ocSchemaError{fmt.Sprintf("not a session log: %s whose schema panto does not read (no %s): a newer OpenCode? read it with `opencode export`, or update panto", what, strings.Join(missing, ", "))}
}

// sqlErr names the database in a driver's error; a file SQLite cannot read
// as a database (a torn copy) is said so.
func (d *ocDB) sqlErr(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if strings.Contains(msg, "malformed") || strings.Contains(msg, "not a database") || strings.Contains(msg, "file is encrypted") {
		return &damagedError{fmt.Sprintf("%s: the SQLite database is damaged (%v): read a consistent copy (OpenCode's own `opencode export`)", d.path, err)}
	}
	return fmt.Errorf("%s: reading the OpenCode database: %w", d.path, err)
}

// ErrDamaged is a log of a format panto reads whose bytes its reader
// cannot read (a torn or damaged database): real damage, which panto-fsck
// reports (bit 4) but does not repair, the log not being panto's.
var ErrDamaged = errors.New("the log is damaged")

type damagedError struct{ msg string }

func (e *damagedError) Error() string { return e.msg }
func (e *damagedError) Unwrap() error { return ErrDamaged }

// ocSessionRow is a session as its table lists it.
type ocSessionRow struct {
	id, parent, dir, title, version string
	created                         int64
}

// sessions lists the sessions that have messages, oldest first.
func (d *ocDB) sessions(only string) ([]ocSessionRow, error) {
	q := `SELECT id, COALESCE(parent_id,''), COALESCE(directory,''), COALESCE(title,''), COALESCE(version,''), COALESCE(time_created,0)
		FROM session WHERE EXISTS (SELECT 1 FROM message WHERE message.session_id = session.id)`
	var args []any
	if only != "" {
		q += " AND id = ?"
		args = append(args, only)
	}
	rows, err := d.db.Query(q+" ORDER BY time_created, id", args...)
	if err != nil {
		return nil, d.sqlErr(err)
	}
	defer rows.Close()
	var out []ocSessionRow
	for rows.Next() {
		var s ocSessionRow
		if err := rows.Scan(&s.id, &s.parent, &s.dir, &s.title, &s.version, &s.created); err != nil {
			return nil, d.sqlErr(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, d.sqlErr(err)
	}
	// Messages whose session has no row (a database cut between writes)
	// are a session all the same: nothing is dropped.
	if only == "" {
		orphans, err := d.orphans(out)
		if err != nil {
			return nil, err
		}
		out = append(out, orphans...)
	}
	return out, nil
}

// orphans lists the sessions of messages that no session row names, by
// their first message's time (then id), found by a seek in the message
// index from each session id to the next, not by reading every entry of
// the index (the whole of it for each read of the database).
func (d *ocDB) orphans(have []ocSessionRow) ([]ocSessionRow, error) {
	known := make(map[string]bool, len(have))
	for _, s := range have {
		known[s.id] = true
	}
	first, err := d.db.Prepare(`SELECT session_id FROM message WHERE session_id IS NOT NULL ORDER BY session_id LIMIT 1`)
	if err != nil {
		return nil, d.sqlErr(err)
	}
	defer first.Close()
	next, err := d.db.Prepare(`SELECT session_id FROM message WHERE session_id > ? ORDER BY session_id LIMIT 1`)
	if err != nil {
		return nil, d.sqlErr(err)
	}
	defer next.Close()
	var out []ocSessionRow
	var id any // of the column's own type, so that the next seek orders as the index does
	err = first.QueryRow().Scan(&id)
	for err == nil && id != nil {
		var sid string
		switch v := id.(type) {
		case []byte:
			sid = string(v)
		case string:
			sid = v
		default:
			sid = fmt.Sprint(v)
		}
		if !known[sid] {
			s := ocSessionRow{id: sid}
			// In an orphan's rows are its first message's time.
			if err := d.db.QueryRow(`SELECT MIN(time_created) FROM message WHERE session_id = ?`, id).Scan(&s.created); err != nil {
				return nil, d.sqlErr(err)
			}
			out = append(out, s)
		}
		err = next.QueryRow(id).Scan(&id)
	}
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, d.sqlErr(err)
	}
	slices.SortFunc(out, func(a, b ocSessionRow) int {
		if c := cmp.Compare(a.created, b.created); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	return out, nil
}

// load reads a session's messages and their parts, in OpenCode's order:
// messages by (time_created, id), parts by id. With content false, only
// what a cost report needs is read of each part. No transaction is needed
// for the two queries to read one state: the file is immutable (checked
// after the session is read: ocDatabase), or a snapshot of panto's own.
func (d *ocDB) load(s ocSessionRow, content bool) (*ocSession, error) {
	out := &ocSession{id: s.id, parent: s.parent, dir: s.dir, title: s.title, version: s.version, created: s.created}
	msgs, err := d.stmt(`SELECT id, time_created, data FROM message WHERE session_id = ? ORDER BY time_created, id`)
	if err != nil {
		return nil, d.sqlErr(err)
	}
	rows, err := msgs.Query(s.id)
	if err != nil {
		return nil, d.sqlErr(err)
	}
	out.msgs = d.spare[:0] // the last session's, emitted (ocDatabase)
	d.spare = nil
	var id, data string
	var created int64
	for rows.Next() {
		if err := rows.Scan(&id, &created, &data); err != nil {
			rows.Close()
			return nil, d.sqlErr(err)
		}
		out.msgs = append(out.msgs, ocMessage{id: id, created: created, data: data})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, d.sqlErr(err)
	}
	if !content && d.steps != nil {
		// The parts read already (allSteps): each message takes its sum,
		// and the parts of no message of the session are strays.
		byMsg := d.steps[s.id]
		for i := range out.msgs {
			if st := byMsg[out.msgs[i].id]; st != nil {
				out.msgs[i].steps = st
				delete(byMsg, out.msgs[i].id)
			}
		}
		for _, st := range byMsg {
			out.strayParts += st.parts
		}
		delete(d.steps, s.id)
		return out, nil
	}
	index := make(map[string]int, len(out.msgs))
	for i, m := range out.msgs {
		index[m.id] = i
	}
	q := `SELECT id, message_id, data FROM part WHERE session_id = ? ORDER BY message_id, id`
	if !content {
		// A cost report needs the step-finish parts' usage only. OpenCode
		// writes most parts with their type first ({"type":"text",…}): the
		// part's first 21 characters say whether it is one, and its text
		// (a tool's output, a long reply) is not searched. The others
		// (a step-finish begins {"reason":…}) are searched for
		// "step-finish"; ocReply checks the type.
		q = `SELECT id, message_id, data FROM part WHERE session_id = ? AND ` + ocStepFinish + ` ORDER BY message_id, id`
	}
	parts, err := d.stmt(q)
	if err != nil {
		return nil, d.sqlErr(err)
	}
	prows, err := parts.Query(s.id)
	if err != nil {
		return nil, d.sqlErr(err)
	}
	defer prows.Close()
	var raw sql.RawBytes
	for prows.Next() {
		var p ocPart
		var mid string
		if err := prows.Scan(&p.id, &mid, &raw); err != nil {
			return nil, d.sqlErr(err)
		}
		p.data = string(raw)
		if i, ok := index[mid]; ok {
			out.msgs[i].parts = append(out.msgs[i].parts, p)
		} else {
			out.strayParts++
		}
	}
	return out, d.sqlErr(prows.Err())
}

// messageParts reads all the parts of one message of session sid, by id
// (as load reads them with content).
func (d *ocDB) messageParts(sid, mid string) ([]ocPart, error) {
	st, err := d.stmt(`SELECT id, data FROM part WHERE message_id = ? AND session_id = ? ORDER BY id`)
	if err != nil {
		return nil, d.sqlErr(err)
	}
	rows, err := st.Query(mid, sid)
	if err != nil {
		return nil, d.sqlErr(err)
	}
	defer rows.Close()
	var out []ocPart
	for rows.Next() {
		var p ocPart
		if err := rows.Scan(&p.id, &p.data); err != nil {
			return nil, d.sqlErr(err)
		}
		out = append(out, p)
	}
	return out, d.sqlErr(rows.Err())
}

// ocStepFinish is the condition on a part's data that a cost report reads
// it by: a step-finish (ocReply checks the type).
const ocStepFinish = `CASE substr(data, 1, 9)
	WHEN '{"type":"' THEN substr(data, 10, 12) = 'step-finish"'
	ELSE instr(data, '"step-finish"') > 0 END`

// ocSteps is what a message's step-finish parts add up to (ocSum): what a
// cost report reads of its parts.
type ocSteps struct {
	parts, steps int // the parts read (ocStepFinish), the calls with usage among them
	sum          session.Usage
}

// allSteps reads the step-finish parts of every session of list, for a
// cost report of the whole database (no content), in one pass over the
// part table in its rows' order, not session by session through its
// index: each page is read once, in order, and no row is found again from
// an index entry (a B-tree descent each). What is kept is each message's
// sum (ocSum, by its session's version), by session and message id; load
// takes it instead of reading the parts again.
func (d *ocDB) allSteps(list []ocSessionRow, stop func() error) error {
	older := make(map[string]bool, len(list))
	for _, s := range list {
		older[s.id] = ocBefore116(s.version)
	}
	keep := func(mid, sid, data []byte) {
		old, ok := older[string(sid)]
		if !ok { // a part of no session read
			return
		}
		byMsg := d.steps[string(sid)]
		if byMsg == nil {
			byMsg = map[string]*ocSteps{}
			d.steps[string(sid)] = byMsg
		}
		st := byMsg[string(mid)]
		if st == nil {
			st = &ocSteps{}
			byMsg[string(mid)] = st
		}
		st.parts++
		st.add(str(data), old) // read, not kept: ints and a comparison
	}
	// The file itself, where it can be read so (opencode_scan.go); else,
	// or if that gave up part of the way, through SQL from the start.
	d.steps = map[string]map[string]*ocSteps{}
	err := d.scanParts(stop, keep)
	if !errors.Is(err, errNoScan) {
		return err
	}
	d.steps = map[string]map[string]*ocSteps{}
	return d.selectParts(stop, keep)
}

// selectParts calls fn with the message id, session id and data of every
// part ocStepFinish selects, through SQL, in the rows' order; the three
// are the driver's, valid until fn returns.
func (d *ocDB) selectParts(stop func() error, fn func(mid, sid, data []byte)) error {
	rows, err := d.db.Query(`SELECT message_id, session_id, data FROM part WHERE ` + ocStepFinish)
	if err != nil {
		return d.sqlErr(err)
	}
	defer rows.Close()
	var mid, sid, data sql.RawBytes
	for rows.Next() {
		if err := stop(); err != nil {
			return err
		}
		if err := rows.Scan(&mid, &sid, &data); err != nil {
			return d.sqlErr(err)
		}
		fn(mid, sid, data)
	}
	return d.sqlErr(rows.Err())
}

// stmt is the query q, prepared on the open database once.
func (d *ocDB) stmt(q string) (*sql.Stmt, error) {
	if st, ok := d.stmts[q]; ok {
		return st, nil
	}
	st, err := d.db.Prepare(q)
	if err != nil {
		return nil, err
	}
	if d.stmts == nil {
		d.stmts = map[string]*sql.Stmt{}
	}
	d.stmts[q] = st
	return st, nil
}

// inode is fi's inode number, 0 where the system has none.
func inode(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}

// InDatabase is, of a session of OpenCode's storage/ tree
// (DATA/storage/session/PROJECT/ses_….json), the database beside the tree
// (DATA/opencode.db, or a channel's DATA/opencode-*.db) that holds the same
// session with its messages; "" for none, and for any other file. OpenCode
// 1.2 copied the tree into its database and left it on disk, and went on
// writing the database only (reference/more-agents.md §2.1): the
// database's copy is the one to read, the tree's read once is the same
// session twice.
func InDatabase(path string) string {
	name := filepath.Base(path)
	session := filepath.Dir(filepath.Dir(path))
	if !strings.HasPrefix(name, "ses_") || !strings.HasSuffix(name, ".json") ||
		filepath.Base(session) != "session" || filepath.Base(filepath.Dir(session)) != "storage" {
		return ""
	}
	id := strings.TrimSuffix(name, ".json")
	data := filepath.Dir(filepath.Dir(session))
	dbs, _ := filepath.Glob(filepath.Join(data, "opencode*.db"))
	for _, db := range dbs {
		if base := filepath.Base(db); base != "opencode.db" && !strings.HasPrefix(base, "opencode-") {
			continue
		}
		if slices.Contains(dbSessionIDs(db), id) {
			return db
		}
	}
	return ""
}

// dbSessionIDs lists the sessions with messages of the OpenCode database
// at path, remembered while the file is as it was (the commands ask it of
// every session file of a tree).
func dbSessionIDs(path string) []string {
	st, err := stateOfDB(path)
	if err != nil {
		return nil
	}
	dbIDs.Lock()
	c, ok := dbIDs.m[path]
	dbIDs.Unlock()
	if ok && c.state == st {
		return c.ids
	}
	ids, _ := ocSessions(path)
	dbIDs.Lock()
	if dbIDs.m == nil {
		dbIDs.m = map[string]cachedIDs{}
	}
	dbIDs.m[path] = cachedIDs{st, ids}
	dbIDs.Unlock()
	return ids
}

type cachedIDs struct {
	state fileState
	ids   []string
}

var dbIDs struct {
	sync.Mutex
	m map[string]cachedIDs
}
