package pgstore

import (
	"bufio"
	"os"
	"time"

	"github.com/panto-dev/panto/pkg/rawjson"
	"github.com/panto-dev/panto/pkg/session"
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
	valid                                                         bool
	crc                                                           int32
	line                                                          []byte
}

// entryColumns are the columns of panto_entries a row fills, in order.
var entryColumns = []string{"session", "seq", "id", "parent", "type", "role", "ts", "provider", "model",
	"input", "output", "cache_read", "cache_write", "cache_write_1h", "reasoning", "valid", "crc", "line"}

func (r *row) values(sessionID string) []any {
	return []any{sessionID, r.seq, r.id, r.parent, r.typ, r.role, r.ts, r.provider, r.model,
		r.input, r.output, r.cacheRead, r.cacheWrite, r.cacheWrite1h, r.reasoning, r.valid, r.crc, r.line}
}

func opt(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// rowOf reads one entry line (without its "\n") as the format classifies it.
func rowOf(seq int64, line []byte) (row, session.Line) {
	c := session.Classify(line)
	r := row{seq: seq, valid: c.Kind == session.KindMessage || c.Kind == session.KindUnknown, crc: crc(line), line: line}
	r.id, r.parent, r.typ, r.role = opt(c.ID), opt(c.ParentID), opt(c.Type), opt(c.Role)
	if t, err := time.Parse(time.RFC3339Nano, c.Timestamp); err == nil {
		r.ts = &t
	}
	switch c.Role {
	case "user":
		r.provider, r.model = opt(c.Provider), opt(c.Model)
	case "assistant":
		p, m := c.Reply.Stamp(line)
		r.provider, r.model = opt(rawjson.Str(p)), opt(rawjson.Str(m))
		if c.Reply.HasUsage {
			u := c.Reply.Usage
			r.input, r.output, r.cacheRead, r.cacheWrite, r.cacheWrite1h, r.reasoning = &u.Input, &u.Output, &u.CacheRead, &u.CacheWrite, &u.CacheWrite1h, &u.Reasoning
		}
	}
	return r, c
}
