package agents

import (
	"bytes"
	"io"

	"github.com/panto-dev/panto/internal/rawjson"
	"github.com/tidwall/gjson"
)

// Head is what the registry's Line detectors see of a JSON Lines log: its
// first object and that object's most telling members (a member absent is
// a gjson.Result that does not Exist).
type Head struct {
	Line                                  []byte // the first object, without "\n"
	Type, ID                              string
	Version, Payload, Role, Message, Data gjson.Result
	SessionID, UUID                       gjson.Result // Claude Code's, Gemini's "sessionId"; Claude Code's "uuid"
}

// Get returns a member of the first object by a gjson path.
func (h *Head) Get(path string) gjson.Result { return gjson.GetBytes(h.Line, path) }

// readHead parses line, a log's first line, for the detectors; nil when it
// is no JSON object.
func readHead(line []byte) *Head {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || !isObject(line) {
		return nil
	}
	return headOf(line)
}

// headOf reads the head of line, a JSON object (validated already).
func headOf(line []byte) *Head {
	h := &Head{Line: line}
	gjson.Parse(str(line)).ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "type":
			h.Type = v.Str
		case "id":
			h.ID = v.Str
		case "version":
			h.Version = v
		case "payload":
			h.Payload = v
		case "role":
			h.Role = v
		case "sessionId":
			h.SessionID = v
		case "uuid":
			h.UUID = v
		case "message":
			h.Message = v
		case "data":
			h.Data = v
		}
		return true
	})
	return h
}

// Detect tells the format of a log from its first line (without "\n"):
// panto's header, else the first row of the registry whose Line detector
// takes it, else panto's entry and message lines. Blank lines are not
// given to it.
func Detect(line []byte) Format { return detectHead(readHead(line)) }

// detectHead is Detect of a line's head (nil: the line is no object).
func detectHead(h *Head) Format {
	if h == nil {
		return Unknown
	}
	if pantoHeader(h) {
		return Panto
	}
	for _, early := range []bool{true, false} {
		for _, a := range registry {
			if a.early == early && a.Line != nil && a.Line(h) {
				return a.Format
			}
		}
	}
	switch {
	case h.Type == "message" || h.Type == "" && h.Role.Exists():
		return Panto // an entry line, or a message line
	case h.Type != "" && panto(h.ID):
		return Panto // an entry of a type this version does not know
	}
	return Unknown
}

// pantoHeader reports whether h is a panto session header. panto's says
// version 1 and has a UUIDv7 id; pi's v1 header has no version, its v2 and
// v3 headers say 2 and 3. A later panto version keeps v7, but so do pi's
// ids from pi 0.80 on: that header alone is taken for panto's, and the
// readers look at the lines after it (ambiguous, piFollows).
func pantoHeader(h *Head) bool {
	v := h.Version.Int()
	return h.Type == "session" && h.Version.Exists() && (v == 1 || v > 1 && isV7(h.ID))
}

// Doc is what the registry's Doc detectors see of a log that is one JSON
// document, not JSON Lines (a pretty-printed object: its first line is no
// complete object): the members of its top-level object found in its
// first bytes, in order.
type Doc struct {
	Keys   []string
	values map[string][]byte // a member's raw value; nil when the look ends inside it
	cut    []byte            // the start of the member the look ends in (the last of Keys)
}

// First returns the first element of member key, an array the look ends
// in (a long list of messages), when that element is whole in the look.
func (d *Doc) First(key string) gjson.Result {
	if len(d.Keys) == 0 || d.Keys[len(d.Keys)-1] != key || len(d.cut) == 0 || d.cut[0] != '[' {
		return gjson.Result{}
	}
	i := rawjson.SkipWS(d.cut, 1)
	end, ok := rawjson.Value(d.cut, i, 1)
	if !ok {
		return gjson.Result{}
	}
	return gjson.ParseBytes(d.cut[i:end])
}

// Has reports whether the document has member key.
func (d *Doc) Has(key string) bool { _, ok := d.values[key]; return ok }

// Get returns member key's value, when whole in the look (else a result
// that does not Exist, as for a member absent).
func (d *Doc) Get(key string) gjson.Result {
	v := d.values[key]
	if v == nil {
		return gjson.Result{}
	}
	return gjson.ParseBytes(v)
}

// readDoc reads the top-level members of the JSON object b begins (b may
// end anywhere in it); nil when b begins no object.
func readDoc(b []byte) *Doc {
	i := rawjson.SkipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil
	}
	d := &Doc{values: map[string][]byte{}}
	for i = rawjson.SkipWS(b, i+1); i < len(b) && b[i] == '"'; {
		end, ok := rawjson.Value(b, i, 1)
		if !ok {
			break
		}
		key := rawjson.Str(b[i:end])
		i = rawjson.SkipWS(b, end)
		if i >= len(b) || b[i] != ':' {
			break
		}
		i = rawjson.SkipWS(b, i+1)
		d.Keys = append(d.Keys, key)
		end, ok = rawjson.Value(b, i, 1)
		if !ok || end >= len(b) {
			d.values[key] = nil
			d.cut = b[i:]
			break
		}
		d.values[key] = b[i:end]
		if i = rawjson.SkipWS(b, end); i < len(b) && b[i] == ',' {
			i = rawjson.SkipWS(b, i+1)
		}
	}
	if len(d.Keys) == 0 {
		return nil
	}
	return d
}

// magicLen is how many first bytes the Magic detectors see.
const magicLen = 16

// wholeFormat tells the format of a log that is no JSON Lines from its
// first headLook bytes: a file an agent's Magic detector takes (a
// database), or one JSON document a Doc detector takes; Unknown else.
func wholeFormat(b []byte) Format {
	for _, a := range registry {
		if a.Magic != nil && a.Magic(b[:min(len(b), magicLen)]) {
			return a.Format
		}
	}
	d := readDoc(b)
	if d == nil {
		return Unknown
	}
	for _, a := range registry {
		if a.Doc != nil && a.Doc(d) {
			return a.Format
		}
	}
	return Unknown
}

// DocFormat tells the format of a log that is one JSON document from its
// start, b, which may be cut anywhere (a chat of hundreds of MB on one
// line): Unknown when no agent's document starts so.
func DocFormat(b []byte) Format { return wholeFormat(b) }

// whole is wholeFormat of the start of r.
func whole(r io.ReaderAt, size int64) (Format, error) {
	b, err := after(r, size, 0)()
	if err != nil {
		return Unknown, err
	}
	return wholeFormat(b), nil
}
