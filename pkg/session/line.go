package session

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/tidwall/gjson"
)

// Version is the format version this package reads and writes.
const Version = 1

// Kind is what a line of a session file is.
type Kind uint8

const (
	KindCorrupt Kind = iota // not a complete JSON object
	KindHeader              // {"type":"session",…}
	KindMessage             // a valid message entry
	KindInvalid             // a complete object that breaks the rules
	KindUnknown             // a complete object of another type: kept, ignored
)

func (k Kind) String() string {
	return [...]string{"corrupt", "header", "message", "invalid", "unknown"}[k]
}

// Line is what Classify learns of one line. Strings are copies: a Line stays
// valid after the buffer it came from is reused.
type Line struct {
	Kind      Kind
	Type      string
	ID        string // entry id, or the header's session id
	ParentID  string // "" when null or absent
	Timestamp string
	Role      string // message entries
	Provider  string // top-level stamp of a user entry
	Model     string
	Version   int64  // headers
	Cwd       string // headers
	Problem   string // why the line is corrupt or invalid
	NotObject bool   // corrupt because it is valid JSON but not an object
}

var lineKeys = []string{"type", "id", "parentId", "timestamp", "provider", "model", "message", "version", "cwd"}

// ValidJSON reports whether b is one complete JSON value. Invalid UTF-8
// inside strings is allowed (SPEC §2 keeps such bytes as written): gjson's
// fast validator rejects it, so a failure is confirmed by encoding/json,
// which accepts it.
func ValidJSON(b []byte) bool { return gjson.ValidBytes(b) || json.Valid(b) }

// Classify reads one line (without its "\n"; a trailing "\r" is allowed, as
// JSON whitespace). It validates the line once and then reads its fields.
func Classify(raw []byte) Line {
	if !ValidJSON(raw) {
		return Line{Kind: KindCorrupt, Problem: "not valid JSON"}
	}
	if t := bytes.TrimLeft(raw, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return Line{Kind: KindCorrupt, Problem: "not a JSON object", NotObject: true}
	}
	r := gjson.GetManyBytes(raw, lineKeys...)
	l := Line{Type: r[0].String()}
	if r[0].Type != gjson.String {
		l.Kind, l.Problem = KindInvalid, "no string \"type\""
		return l
	}
	switch l.Type {
	case "session":
		l.Kind = KindHeader
		l.ID, l.Timestamp, l.Cwd = r[1].String(), r[3].String(), r[8].String()
		switch {
		case r[7].Type != gjson.Number || r[7].Num != float64(int64(r[7].Num)) || r[7].Num < 1:
			l.Kind, l.Problem = KindInvalid, "header has no integer \"version\""
		case r[1].Type != gjson.String || r[1].Str == "":
			l.Kind, l.Problem = KindInvalid, "header has no \"id\""
		default:
			l.Version = int64(r[7].Num)
		}
		return l
	case "message":
		l.Kind = KindMessage
		l.ID, l.ParentID, l.Timestamp = r[1].String(), r[2].String(), r[3].String()
		l.Provider, l.Model = r[4].String(), r[5].String()
		switch {
		case r[1].Type != gjson.String || r[1].Str == "":
			l.Problem = "entry has no \"id\""
		case r[2].Type != gjson.String && r[2].Type != gjson.Null:
			l.Problem = "entry has no \"parentId\" (a string or null)"
		case r[2].Type == gjson.String && r[2].Str == "":
			l.Problem = "entry has an empty \"parentId\""
		case r[3].Type != gjson.String:
			l.Problem = "entry has no \"timestamp\""
		case !r[6].IsObject():
			l.Problem = "entry has no \"message\" object"
		default:
			role, err := CheckMessage([]byte(r[6].Raw))
			l.Role = role
			if err != nil {
				l.Problem = err.Error()
			} else if role == "user" && (r[4].Type != gjson.String || r[5].Type != gjson.String) {
				l.Problem = "user entry has no \"provider\" and \"model\" stamp"
			}
		}
		if l.Problem != "" {
			l.Kind = KindInvalid
		}
		return l
	default:
		l.Kind = KindUnknown
		if r[1].Type == gjson.String {
			l.ID = r[1].Str
		}
		if r[2].Type == gjson.String {
			l.ParentID = r[2].Str
		}
		return l
	}
}

var msgKeys = []string{"role", "content", "provider", "model", "stopReason", "usage"}

// Roles and stop reasons of SPEC §2.
var (
	roles       = map[string]bool{"system": true, "user": true, "assistant": true}
	stopReasons = map[string]bool{"stop": true, "length": true, "toolUse": true, "error": true}
	usageKeys   = []string{"input", "output", "cacheRead", "cacheWrite", "reasoning", "cacheWrite1h"}
)

// CheckMessage validates a message object (the "message" value of an entry,
// or a message line on a pipe) and returns its role. Unknown fields are
// allowed; unknown block types are not.
func CheckMessage(raw []byte) (role string, err error) {
	if !ValidJSON(raw) {
		return "", fmt.Errorf("%w: not valid JSON", ErrInvalidMsg)
	}
	m := gjson.ParseBytes(raw)
	if !m.IsObject() {
		return "", fmt.Errorf("%w: not a JSON object", ErrInvalidMsg)
	}
	r := m.Get("role")
	if r.Type != gjson.String || !roles[r.Str] {
		return "", fmt.Errorf("%w: \"role\" must be system, user or assistant", ErrInvalidMsg)
	}
	role = r.Str
	f := make([]gjson.Result, 0, len(msgKeys))
	for _, k := range msgKeys {
		f = append(f, m.Get(k))
	}
	if !f[1].IsArray() {
		return role, fmt.Errorf("%w: \"content\" must be an array of blocks", ErrInvalidMsg)
	}
	n := 0
	f[1].ForEach(func(_, b gjson.Result) bool {
		n++
		err = checkBlock(b, n)
		return err == nil
	})
	if err != nil {
		return role, err
	}
	if role == "assistant" {
		if f[2].Type != gjson.String || f[3].Type != gjson.String {
			return role, fmt.Errorf("%w: an assistant message needs \"provider\" and \"model\"", ErrInvalidMsg)
		}
		if f[4].Exists() && (f[4].Type != gjson.String || !stopReasons[f[4].Str]) {
			return role, fmt.Errorf("%w: \"stopReason\" must be stop, length, toolUse or error", ErrInvalidMsg)
		}
		if f[5].Exists() {
			if err := checkUsage(f[5]); err != nil {
				return role, err
			}
		}
	}
	return role, nil
}

func checkUsage(u gjson.Result) error {
	if !u.IsObject() {
		return fmt.Errorf("%w: \"usage\" must be an object", ErrInvalidMsg)
	}
	for _, k := range usageKeys {
		v := u.Get(k)
		if !v.Exists() {
			continue
		}
		if v.Type != gjson.Number || v.Num < 0 || v.Num != float64(int64(v.Num)) || v.Raw[0] == '-' {
			return fmt.Errorf("%w: usage.%s must be a non-negative integer", ErrInvalidMsg, k)
		}
	}
	return nil
}

// blockFields lists the string fields each block type requires.
var blockFields = map[string][]string{
	"text":             {"text"},
	"thinking":         {"thinking"},
	"redactedThinking": {"data"},
	"toolUse":          {"id", "name", "input"},
	"toolResult":       {"toolUseId", "content"},
}

func checkBlock(b gjson.Result, n int) error {
	if !b.IsObject() {
		return fmt.Errorf("%w: content block %d is not an object", ErrInvalidMsg, n)
	}
	t := b.Get("type")
	fields, ok := blockFields[t.Str]
	if t.Type != gjson.String || !ok {
		return fmt.Errorf("%w: content block %d has unknown type %s", ErrInvalidMsg, n, t.Raw)
	}
	for _, k := range fields {
		if b.Get(k).Type != gjson.String {
			return fmt.Errorf("%w: %s block %d needs a string %q", ErrInvalidMsg, t.Str, n, k)
		}
	}
	switch t.Str {
	case "thinking":
		if s := b.Get("signature"); s.Exists() && s.Type != gjson.String {
			return fmt.Errorf("%w: thinking block %d has a non-string \"signature\"", ErrInvalidMsg, n)
		}
	case "toolUse":
		if !ValidJSON([]byte(b.Get("input").Str)) {
			return fmt.Errorf("%w: toolUse block %d: \"input\" is not JSON text", ErrInvalidMsg, n)
		}
	}
	return nil
}
