package session

import (
	"strconv"
	"time"

	"github.com/panto-dev/panto/internal/rawjson"
)

// TimeFormat is the timestamp layout of every line: UTC, milliseconds, Z.
const TimeFormat = "2006-01-02T15:04:05.000Z"

// Timestamp formats t as SPEC §2 requires.
func Timestamp(t time.Time) string { return t.UTC().Format(TimeFormat) }

// Header is the first line of a session file.
type Header struct {
	ID        string // UUIDv7
	Timestamp string
	Cwd       string
	Origin    []byte // optional: the raw JSON object of "origin" (SPEC §11)
}

// AppendLine appends the header line, with its "\n", to dst.
func (h Header) AppendLine(dst []byte) []byte {
	dst = append(dst, `{"type":"session","version":1,"id":`...)
	dst = rawjson.AppendString(dst, h.ID)
	dst = append(dst, `,"timestamp":`...)
	dst = rawjson.AppendString(dst, h.Timestamp)
	dst = append(dst, `,"cwd":`...)
	dst = rawjson.AppendString(dst, h.Cwd)
	if h.Origin != nil {
		dst = append(dst, `,"origin":`...)
		dst = append(dst, h.Origin...)
	}
	return append(dst, "}\n"...)
}

// Entry is a message entry to be written. Message holds the message object's
// JSON as it will be stored, byte for byte.
type Entry struct {
	ID        string
	ParentID  string // "" writes null
	Timestamp string
	Provider  string // stamp; written only for user entries
	Model     string
	Message   []byte
}

// AppendLine appends the entry line, with its "\n", to dst, in the field
// order of SPEC §2.
func (e Entry) AppendLine(dst []byte) []byte {
	dst = appendHead(dst, `{"type":"message","id":`, e.ID, e.ParentID, e.Timestamp)
	if e.Provider != "" || e.Model != "" {
		dst = append(dst, `,"provider":`...)
		dst = rawjson.AppendString(dst, e.Provider)
		dst = append(dst, `,"model":`...)
		dst = rawjson.AppendString(dst, e.Model)
	}
	dst = append(dst, `,"message":`...)
	dst = append(dst, e.Message...)
	return append(dst, "}\n"...)
}

// appendHead appends an entry's first fields: start (its type), id,
// parentId (null for "") and timestamp.
func appendHead(dst []byte, start, id, parentID, ts string) []byte {
	dst = append(dst, start...)
	dst = rawjson.AppendString(dst, id)
	dst = append(dst, `,"parentId":`...)
	if parentID == "" {
		dst = append(dst, "null"...)
	} else {
		dst = rawjson.AppendString(dst, parentID)
	}
	dst = append(dst, `,"timestamp":`...)
	return rawjson.AppendString(dst, ts)
}

// Kept is an entry of a type panto keeps without reading it (SPEC §2): an
// imported log's line that has no panto equivalent, say.
type Kept struct {
	Type      string
	ID        string
	ParentID  string // "" writes null
	Timestamp string
	Fields    []byte // the members after "timestamp", as JSON: `"a":1,"b":2`
}

// AppendLine appends the entry line, with its "\n", to dst.
func (k Kept) AppendLine(dst []byte) []byte {
	dst = append(dst, `{"type":`...)
	dst = rawjson.AppendString(dst, k.Type)
	dst = appendHead(dst, `,"id":`, k.ID, k.ParentID, k.Timestamp)
	dst = append(dst, ',')
	dst = append(dst, k.Fields...)
	return append(dst, "}\n"...)
}

// TextMessage returns the message JSON of a plain-text message of role.
func TextMessage(role, text string) []byte {
	b := append([]byte(`{"role":`), rawjson.AppendString(nil, role)...)
	b = append(b, `,"content":[{"type":"text","text":`...)
	b = rawjson.AppendString(b, text)
	return append(b, "}]}"...)
}

// AppendJSON appends the usage object of SPEC §2 to dst: input and output,
// then the optional counters that are not zero.
func (u Usage) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"input":`...)
	dst = strconv.AppendInt(dst, u.Input, 10)
	dst = append(dst, `,"output":`...)
	dst = strconv.AppendInt(dst, u.Output, 10)
	for _, f := range [...]struct {
		k string
		v int64
	}{{`,"cacheRead":`, u.CacheRead}, {`,"cacheWrite":`, u.CacheWrite}, {`,"reasoning":`, u.Reasoning}, {`,"cacheWrite1h":`, u.CacheWrite1h}} {
		if f.v != 0 {
			dst = append(dst, f.k...)
			dst = strconv.AppendInt(dst, f.v, 10)
		}
	}
	return append(dst, '}')
}
