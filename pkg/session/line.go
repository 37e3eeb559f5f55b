package session

import (
	"bytes"
	"fmt"
	"unicode/utf8"
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
	Version   int64     // headers
	Cwd       string    // headers
	Problem   string    // why the line is corrupt or invalid
	NotObject bool      // corrupt because it is valid JSON but not an object
	BadUTF8   bool      // holds bytes that are not UTF-8 (only with ScanOptions.CheckUTF8)
	MsgOff    int       // where the "message" value of a message entry starts in the line
	MsgLen    int       // and its length
	Tools     []ToolRef // the tool blocks of a message (only with ScanOptions.Tools)
}

// ToolRef is a toolUse block (its id) or a toolResult block (the id it answers).
type ToolRef struct {
	Result bool
	ID     string
}

// Classify reads one line (without its "\n"; a trailing "\r" is allowed, as
// JSON whitespace). It validates the line once, then walks it once.
func Classify(raw []byte) Line { return classifyLine(raw, false, false) }

// classifyLine is Classify; with tools it also lists the tool blocks, with
// checkUTF8 it sets BadUTF8 (in the validating pass).
func classifyLine(raw []byte, tools, checkUTF8 bool) Line {
	var ok, utf8OK bool
	if checkUTF8 {
		ok, utf8OK = ValidJSONUTF8(raw)
	} else {
		ok, utf8OK = ValidJSON(raw), true
	}
	if !ok {
		return Line{Kind: KindCorrupt, Problem: "not valid JSON", BadUTF8: checkUTF8 && !utf8.Valid(raw)}
	}
	if t := bytes.TrimLeft(raw, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return Line{Kind: KindCorrupt, Problem: "not a JSON object", NotObject: true}
	}
	var typ, id, parent, ts, provider, model, msg, version, cwd []byte
	var role string
	var msgErr error
	var refs *[]ToolRef
	l := Line{BadUTF8: !utf8OK}
	if tools {
		refs = &l.Tools
	}
	eachMember(raw, 0, func(k []byte, vs int) int {
		if msg == nil && vs < len(raw) && raw[vs] == '{' && KeyIs(k, "message") {
			// Checked as it is walked: one pass over the message.
			var end int
			end, role, msgErr = checkMessageAt(raw, vs, refs)
			msg = raw[vs:end]
			return end
		}
		ve := skipValue(raw, vs)
		var dst *[]byte
		switch {
		case KeyIs(k, "type"):
			dst = &typ
		case KeyIs(k, "id"):
			dst = &id
		case KeyIs(k, "parentId"):
			dst = &parent
		case KeyIs(k, "timestamp"):
			dst = &ts
		case KeyIs(k, "provider"):
			dst = &provider
		case KeyIs(k, "model"):
			dst = &model
		case KeyIs(k, "message"):
			dst = &msg
		case KeyIs(k, "version"):
			dst = &version
		case KeyIs(k, "cwd"):
			dst = &cwd
		default:
			return ve
		}
		if *dst == nil { // the first of a repeated key wins, as gjson.Get does
			*dst = raw[vs:ve]
		}
		return ve
	})
	if !IsString(typ) {
		return Line{Kind: KindInvalid, Type: string(typ), Problem: "no string \"type\"", BadUTF8: l.BadUTF8}
	}
	l.Type = Str(typ)
	switch l.Type {
	case "session":
		l.Kind = KindHeader
		l.ID, l.Timestamp, l.Cwd = Str(id), Str(ts), Str(cwd)
		v, ok := Int(version)
		switch {
		case !ok || v < 1:
			l.Kind, l.Problem = KindInvalid, "header has no integer \"version\""
		case l.ID == "":
			l.Kind, l.Problem = KindInvalid, "header has no \"id\""
		default:
			l.Version = v
		}
		return l
	case "message":
		l.Kind = KindMessage
		l.ID, l.ParentID, l.Timestamp = Str(id), Str(parent), Str(ts)
		l.Provider, l.Model = Str(provider), Str(model)
		switch {
		case l.ID == "":
			l.Problem = "entry has no \"id\""
		case !IsString(parent) && string(parent) != "null":
			l.Problem = "entry has no \"parentId\" (a string or null)"
		case IsString(parent) && l.ParentID == "":
			l.Problem = "entry has an empty \"parentId\""
		case !IsString(ts):
			l.Problem = "entry has no \"timestamp\""
		case len(msg) == 0 || msg[0] != '{':
			l.Problem = "entry has no \"message\" object"
		default:
			l.MsgOff, l.MsgLen = cap(raw)-cap(msg), len(msg)
			l.Role = role
			if msgErr != nil {
				l.Problem = msgErr.Error()
			} else if role == "user" && (!IsString(provider) || !IsString(model)) {
				l.Problem = "user entry has no \"provider\" and \"model\" stamp"
			}
		}
		if l.Problem != "" {
			l.Kind = KindInvalid
		}
		return l
	default:
		l.Kind = KindUnknown
		l.ID, l.ParentID = Str(id), Str(parent)
		return l
	}
}

// Roles and stop reasons of SPEC §2.
var stopReasons = map[string]bool{"stop": true, "length": true, "toolUse": true, "error": true}

// CheckMessage validates a message object (the "message" value of an entry,
// or a message line on a pipe) and returns its role. Unknown fields are
// allowed; unknown block types are not.
func CheckMessage(raw []byte) (role string, err error) {
	if !ValidJSON(raw) {
		return "", fmt.Errorf("%w: not valid JSON", ErrInvalidMsg)
	}
	i := skipWS(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return "", fmt.Errorf("%w: not a JSON object", ErrInvalidMsg)
	}
	_, role, err = checkMessageAt(raw, i, nil)
	return role, err
}

// checkMessageAt validates the message object (valid JSON) at b[i], in one
// walk, and returns the index after it; refs, when not nil, gets its tool
// blocks.
func checkMessageAt(b []byte, i int, refs *[]ToolRef) (end int, role string, err error) {
	var r, provider, model, stop, usage []byte
	content, isArray := false, false
	var blockErr error
	end = eachMember(b, i, func(k []byte, vs int) int {
		if !content && KeyIs(k, "content") {
			content = true
			if b[vs] != '[' {
				return skipValue(b, vs)
			}
			isArray = true
			n := 0
			return eachElement(b, vs, func(es int) int {
				n++
				be, err := checkBlockAt(b, es, n, refs)
				if blockErr == nil {
					blockErr = err
				}
				return be
			})
		}
		ve := skipValue(b, vs)
		var dst *[]byte
		switch {
		case KeyIs(k, "role"):
			dst = &r
		case KeyIs(k, "provider"):
			dst = &provider
		case KeyIs(k, "model"):
			dst = &model
		case KeyIs(k, "stopReason"):
			dst = &stop
		case KeyIs(k, "usage"):
			dst = &usage
		default:
			return ve
		}
		if *dst == nil {
			*dst = b[vs:ve]
		}
		return ve
	})
	if end < 0 {
		end = skipValue(b, i)
	}
	role = Str(r)
	switch {
	case role != "system" && role != "user" && role != "assistant":
		return end, "", fmt.Errorf("%w: \"role\" must be system, user or assistant", ErrInvalidMsg)
	case !isArray:
		return end, role, fmt.Errorf("%w: \"content\" must be an array of blocks", ErrInvalidMsg)
	case blockErr != nil:
		return end, role, blockErr
	case role != "assistant":
		return end, role, nil
	case !IsString(provider) || !IsString(model):
		return end, role, fmt.Errorf("%w: an assistant message needs \"provider\" and \"model\"", ErrInvalidMsg)
	case stop != nil && !stopReasons[Str(stop)]:
		return end, role, fmt.Errorf("%w: \"stopReason\" must be stop, length, toolUse or error", ErrInvalidMsg)
	case usage != nil:
		return end, role, checkUsage(usage)
	}
	return end, role, nil
}

var usageKeys = []string{"input", "output", "cacheRead", "cacheWrite", "reasoning", "cacheWrite1h"}

func checkUsage(u []byte) error {
	if u[0] != '{' {
		return fmt.Errorf("%w: \"usage\" must be an object", ErrInvalidMsg)
	}
	var err error
	Members(u, func(k, v []byte) bool {
		for _, name := range usageKeys {
			if KeyIs(k, name) {
				if _, ok := Int(v); !ok {
					err = fmt.Errorf("%w: usage.%s must be a non-negative integer", ErrInvalidMsg, name)
				}
			}
		}
		return err == nil
	})
	return err
}

// blockFields lists the string fields each block type requires.
var blockFields = map[string][]string{
	"text":             {"text"},
	"thinking":         {"thinking"},
	"redactedThinking": {"data"},
	"toolUse":          {"id", "name", "input"},
	"toolResult":       {"toolUseId", "content"},
}

// checkBlockAt validates the content block at b[i], numbered n, and returns
// the index after it.
func checkBlockAt(b []byte, i, n int, refs *[]ToolRef) (int, error) {
	if b[i] != '{' {
		return skipValue(b, i), fmt.Errorf("%w: content block %d is not an object", ErrInvalidMsg, n)
	}
	var t, sig []byte
	names := [...]string{"text", "thinking", "data", "id", "name", "input", "toolUseId", "content"}
	var vals [len(names)][]byte
	end := eachMember(b, i, func(k []byte, vs int) int {
		ve := skipValue(b, vs)
		switch {
		case KeyIs(k, "type"):
			if t == nil {
				t = b[vs:ve]
			}
		case KeyIs(k, "signature"):
			if sig == nil {
				sig = b[vs:ve]
			}
		default:
			for j, name := range names {
				if vals[j] == nil && KeyIs(k, name) {
					vals[j] = b[vs:ve]
				}
			}
		}
		return ve
	})
	if end < 0 {
		end = skipValue(b, i)
	}
	typ := Str(t)
	required, ok := blockFields[typ]
	if !IsString(t) || !ok {
		return end, fmt.Errorf("%w: content block %d has unknown type %s", ErrInvalidMsg, n, t)
	}
	var input []byte
	for _, name := range required {
		var v []byte
		for j, nm := range names {
			if nm == name {
				v = vals[j]
			}
		}
		if !IsString(v) {
			return end, fmt.Errorf("%w: %s block %d needs a string %q", ErrInvalidMsg, typ, n, name)
		}
		if name == "input" {
			input = v
		}
	}
	if typ == "thinking" && sig != nil && !IsString(sig) {
		return end, fmt.Errorf("%w: thinking block %d has a non-string \"signature\"", ErrInvalidMsg, n)
	}
	if typ == "toolUse" && !ValidJSON([]byte(Str(input))) {
		return end, fmt.Errorf("%w: toolUse block %d: \"input\" is not JSON text", ErrInvalidMsg, n)
	}
	if refs != nil && (typ == "toolUse" || typ == "toolResult") {
		ref := ToolRef{Result: typ == "toolResult", ID: Str(vals[3])} // id
		if ref.Result {
			ref.ID = Str(vals[6]) // toolUseId
		}
		*refs = append(*refs, ref)
	}
	return end, nil
}
