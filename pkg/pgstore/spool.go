package pgstore

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/panto-dev/panto/internal/agents"
	"github.com/panto-dev/panto/internal/rawjson"
	"github.com/panto-dev/panto/internal/search"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/tidwall/gjson"
)

// spool is a session read out of the database into an unlinked temporary
// file: a store.Reader.
type spool struct {
	*os.File
	size int64
}

// Size is the size of the session as a file.
func (s *spool) Size() int64 { return s.size }

// writer writes to the spool, counting what it writes.
func (s *spool) writer() *bufio.Writer { return bufio.NewWriterSize(counter{s}, 1<<20) }

type counter struct{ s *spool }

func (c counter) Write(p []byte) (int, error) {
	n, err := c.s.File.Write(p)
	c.s.size += int64(n)
	return n, err
}

// row is what panto_entries keeps of one entry line.
type row struct {
	seq                                                           int64
	id, parent, typ, role, provider, model                        *string
	ts                                                            *time.Time
	input, output, cacheRead, cacheWrite, cacheWrite1h, reasoning *int64
	response                                                      *string
	idBytes, parentBytes, responseBytes                           []byte // exactly: the store reads these
	valid                                                         bool
	crc                                                           int32
	line                                                          []byte
	text                                                          *string // searchable, folded (searchText)
}

// entryColumns are the columns of panto_entries a row fills, in order.
var entryColumns = []string{"session", "seq", "id", "parent", "type", "role", "ts", "provider", "model",
	"input", "output", "cache_read", "cache_write", "cache_write_1h", "reasoning", "valid", "crc", "line", "response",
	"id_bytes", "parent_bytes", "response_bytes", "search_text"}

func (r *row) values(sessionID string) []any {
	return []any{sessionID, r.seq, r.id, r.parent, r.typ, r.role, r.ts, r.provider, r.model,
		r.input, r.output, r.cacheRead, r.cacheWrite, r.cacheWrite1h, r.reasoning, r.valid, r.crc, r.line, r.response,
		r.idBytes, r.parentBytes, r.responseBytes, r.text}
}

// insertEntry adds one row of entryColumns.
var insertEntry = func() string {
	var b strings.Builder
	b.WriteString("INSERT INTO panto_entries (" + strings.Join(entryColumns, ", ") + ") VALUES (")
	for i := range entryColumns {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "$%d", i+1)
	}
	b.WriteString(")")
	return b.String()
}()

// updateSession moves a session's row on to st; sessionState gives its
// values: the leaf readable and exactly, the stamp at it exactly.
const updateSession = `UPDATE panto_sessions SET leaf = $2, leaf_bytes = $3, leaf_provider = $4, leaf_model = $5,
	entries = $6, messages = $7, bytes = $8, last_activity = $9 WHERE id = $1`

func sessionState(id string, st *state) []any {
	return []any{id, optText(st.leaf), optBytes(st.leaf), optBytes(st.stamp.Provider), optBytes(st.stamp.Model),
		st.entries, st.messages, st.bytes, st.last}
}

func opt(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// optText is s for a text column a team reads: NULL for "", else
// readable (the exact bytes are in the line).
func optText(s string) *string { return opt(readable(s)) }

// optBytes is s for a bytea column: NULL for "".
func optBytes(s string) []byte {
	if s == "" {
		return nil
	}
	return []byte(s)
}

// TextMax is the longest searchable text an entry's row holds (before
// folding), and LineMax the longest line whose text is looked for: an
// entry with more is NULL, and a search reads it whatever it looks for (a
// trigram index of hundreds of MB of one value is more than a server
// should be asked to build, and decoding a line of a GB more memory than
// a writer should take).
const (
	TextMax = 1 << 20
	LineMax = 64 << 20
)

// searchText is the searchable text of an entry line (SPEC §15: what a
// search of its file matches, decoded, folded to one letter case), for
// search_text; nil when over TextMax.
func searchText(line []byte) *string {
	if len(line) > LineMax {
		return nil
	}
	t := search.Text(agents.Panto, line)
	if len(t) > TextMax {
		return nil
	}
	t = search.Fold(t)
	return &t
}

// responseID is the key of the response an imported reply was (SPEC §11).
var responseID = []byte(`"responseId"`)

// insertSession adds a session's row; sessionRow gives its values.
const insertSession = `INSERT INTO panto_sessions (id, cwd, cwd_bytes, created, origin, origin_agent, origin_id, header, bytes)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`

// sessionRow is the values of insertSession for session id of header
// (the line, without its newline): the cwd readable and exact, the origin
// as jsonb when jsonb can hold it (valid UTF-8, no \u0000) with its agent
// and id beside.
func sessionRow(id string, header []byte) []any {
	h := session.Classify(header)
	var created *time.Time
	if t, err := time.Parse(time.RFC3339Nano, h.Timestamp); err == nil {
		created = &t
	}
	var origin any
	var agent, oid *string
	if o := session.Field(header, "origin"); len(o) > 0 && o[0] == '{' {
		if utf8.Valid(o) && !bytes.Contains(o, []byte(`\u0000`)) {
			origin = string(o)
		}
		r := gjson.GetManyBytes(o, "agent", "id")
		agent, oid = optText(r[0].Str), optText(r[1].Str)
	}
	return []any{id, readable(h.Cwd), []byte(h.Cwd), created, origin, agent, oid, header, int64(len(header)) + 1}
}

// rowOf reads one entry line (without its "\n") as the format classifies it.
func rowOf(seq int64, line []byte) (row, session.Line) {
	c := session.Classify(line)
	r := row{seq: seq, valid: c.Kind == session.KindMessage || c.Kind == session.KindUnknown, crc: crc(line), line: line, text: searchText(line)}
	r.id, r.parent, r.typ, r.role = optText(c.ID), optText(c.ParentID), optText(c.Type), optText(c.Role)
	r.idBytes, r.parentBytes = optBytes(c.ID), optBytes(c.ParentID)
	if t, err := time.Parse(time.RFC3339Nano, c.Timestamp); err == nil {
		r.ts = &t
	}
	switch c.Role {
	case "user":
		r.provider, r.model = optText(c.Provider), optText(c.Model)
	case "assistant":
		p, m := c.Reply.Stamp(line)
		r.provider, r.model = optText(rawjson.Str(p)), optText(rawjson.Str(m))
		if bytes.Contains(line, responseID) {
			if k := gjson.GetBytes(session.MessageOf(line), "responseId"); k.Type == gjson.String {
				r.response, r.responseBytes = optText(k.Str), optBytes(k.Str)
			}
		}
		if c.Reply.HasUsage {
			u := c.Reply.Usage
			r.input, r.output, r.cacheRead, r.cacheWrite, r.cacheWrite1h, r.reasoning = &u.Input, &u.Output, &u.CacheRead, &u.CacheWrite, &u.CacheWrite1h, &u.Reasoning
		}
	}
	return r, c
}
