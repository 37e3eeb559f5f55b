package session

import (
	"fmt"

	"github.com/panto-dev/panto/internal/rawjson"
)

// Version is the format version this package reads and writes.
const Version = 1

// TypeToolRound is the type of a tool round's mark (SPEC §13): an entry
// written, as a child of a reply that asks for tools, before the tools
// run, with the ids of the calls it runs ("toolUseIds"). A call it names
// that has no result started and may have run.
const TypeToolRound = "toolRound"

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
	BadUTF8   bool      // holds bytes that are not UTF-8 (only with ClassifyOptions.CheckUTF8)
	CR        bool      // ends in "\r"
	MsgOff    int       // where the "message" value of a message entry starts in the line
	MsgLen    int       // and its length
	Tools     []ToolRef // the tool blocks of a message (only with ClassifyOptions.Tools)
	ToolKinds ToolKinds // whether a message has toolUse or toolResult blocks (always)
	Reply     Reply     // an assistant message's own stamp and usage
	Lint      Lint      // rules of SPEC §2 a reader can live without
}

// ToolKinds says which kinds of tool blocks a message holds.
type ToolKinds uint8

// The bits of ToolKinds.
const (
	HasToolUse ToolKinds = 1 << iota
	HasToolResult
)

// toolSink collects what a walk learns of tool blocks.
type toolSink struct {
	kinds ToolKinds
	refs  *[]ToolRef // when not nil, gets every tool block
	text  *[]byte    // when not nil, a buffer for the text of a tool's input
}

// ToolRef is a toolUse block (its id) or a toolResult block (the id it answers).
type ToolRef struct {
	Result bool
	ID     string
}

// Classify reads one line (without its "\n"; a trailing "\r" is allowed, as
// JSON whitespace). It validates the line and walks it in one pass.
func Classify(raw []byte) Line { return ClassifyWith(raw, ClassifyOptions{}) }

// ClassifyOptions say what more a classification learns.
type ClassifyOptions struct {
	Tools     bool    // list the tool blocks of a message (Line.Tools)
	CheckUTF8 bool    // set Line.BadUTF8
	Text      *[]byte // when not nil, a buffer to reuse for the text of tool inputs
}

// ClassifyWith is Classify, learning what o asks.
func ClassifyWith(raw []byte, o ClassifyOptions) Line {
	var l Line
	ClassifyInto(&l, raw, o)
	return l
}

// ClassifyInto is ClassifyWith into *dst: a scan classifies millions of
// lines, each into its place.
func ClassifyInto(dst *Line, raw []byte, o ClassifyOptions) {
	*dst = classifyObject(raw, o.Tools, o.CheckUTF8, o.Text)
	dst.CR = len(raw) > 0 && raw[len(raw)-1] == '\r'
}

// classifyObject classifies raw; with tools it also lists the tool blocks,
// with checkUTF8 it sets BadUTF8. text, when not nil, is a buffer to reuse
// for the text of tool inputs.
func classifyObject(raw []byte, tools, checkUTF8 bool, text *[]byte) Line {
	i := rawjson.SkipWS(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		c := Line{Kind: KindCorrupt, Problem: "not valid JSON", BadUTF8: checkUTF8 && !rawjson.ValidUTF8(raw)}
		if rawjson.Valid(raw) {
			c.Problem, c.NotObject = "not a JSON object", true
		}
		return c
	}
	var typ, id, parent, ts, provider, model, msg, version, cwd []byte
	var role string
	var msgErr error
	var reply Reply
	var l Line
	sink := toolSink{text: text}
	if tools {
		sink.refs = &l.Tools
	}
	end, ok := rawjson.Object(raw, i, 0, func(k []byte, vs int) int {
		if msg == nil && raw[vs] == '{' && string(k) == "message" {
			var end int
			end, role, msgErr = checkMessageAt(raw, vs, 1, &sink, &reply)
			if end >= 0 {
				msg = raw[vs:end]
			}
			return end
		}
		ve := skip(raw, vs, 1)
		var dst *[]byte
		switch string(k) {
		case "type":
			dst = &typ
		case "id":
			dst = &id
		case "parentId":
			dst = &parent
		case "timestamp":
			dst = &ts
		case "provider":
			dst = &provider
		case "model":
			dst = &model
		case "message":
			dst = &msg
		case "version":
			dst = &version
		case "cwd":
			dst = &cwd
		default:
			return ve
		}
		if *dst == nil && ve >= 0 { // the first of a repeated key wins, as gjson.Get does
			*dst = raw[vs:ve]
		}
		return ve
	})
	if !ok || rawjson.SkipWS(raw, end) != len(raw) {
		return Line{Kind: KindCorrupt, Problem: "not valid JSON", BadUTF8: checkUTF8 && !rawjson.ValidUTF8(raw)}
	}
	// Outside its strings valid JSON is ASCII: the line's bytes are its strings'.
	l.BadUTF8 = checkUTF8 && !rawjson.ValidUTF8(raw)
	if !rawjson.IsString(typ) {
		return Line{Kind: KindInvalid, Type: string(typ), Problem: "no string \"type\"", BadUTF8: l.BadUTF8}
	}
	l.Type = strOf(typ)
	switch l.Type {
	case "session":
		l.Kind = KindHeader
		l.ID, l.Timestamp, l.Cwd = rawjson.Str(id), rawjson.Str(ts), rawjson.Str(cwd)
		l.Lint = lintHeader(l.ID, l.Timestamp)
		v, ok := rawjson.Int(version)
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
		l.ID, l.ParentID, l.Timestamp = rawjson.Str(id), rawjson.Str(parent), rawjson.Str(ts)
		l.Provider, l.Model = rawjson.Str(provider), rawjson.Str(model)
		switch {
		case l.ID == "":
			l.Problem = "entry has no \"id\""
		case !rawjson.IsString(parent) && string(parent) != "null":
			l.Problem = "entry has no \"parentId\" (a string or null)"
		case rawjson.IsString(parent) && l.ParentID == "":
			l.Problem = "entry has an empty \"parentId\""
		case !rawjson.IsString(ts):
			l.Problem = "entry has no \"timestamp\""
		case len(msg) == 0 || msg[0] != '{':
			l.Problem = "entry has no \"message\" object"
		default:
			l.MsgOff, l.MsgLen = cap(raw)-cap(msg), len(msg)
			l.ToolKinds = sink.kinds
			l.Role, l.Reply = role, reply
			if msgErr != nil {
				l.Problem = msgErr.Error()
			} else if role == "user" && (!rawjson.IsString(provider) || !rawjson.IsString(model)) {
				l.Problem = "user entry has no \"provider\" and \"model\" stamp"
			}
		}
		if l.Problem != "" {
			l.Kind = KindInvalid
		}
		l.Lint = lintEntry(l.ID, l.Timestamp, true)
		return l
	default:
		l.Kind = KindUnknown
		l.ID, l.ParentID = rawjson.Str(id), rawjson.Str(parent)
		if l.ID != "" {
			l.Lint = lintEntry(l.ID, rawjson.Str(ts), rawjson.IsString(ts))
		}
		return l
	}
}

// The stop reasons of SPEC §2.
var stopReasons = map[string]bool{"stop": true, "length": true, "toolUse": true, "error": true}

// CheckMessage validates a message object (the "message" value of an entry,
// or a message line on a pipe) and returns its role. Unknown fields are
// allowed; unknown block types are not.
func CheckMessage(raw []byte) (role string, err error) {
	role, _, err = ReadMessage(raw)
	return role, err
}

// ReadMessage is CheckMessage that also returns what an assistant message
// says of itself (its Reply, with raw values of raw).
func ReadMessage(raw []byte) (role string, r Reply, err error) {
	i := rawjson.SkipWS(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		if rawjson.Valid(raw) {
			return "", r, fmt.Errorf("%w: not a JSON object", ErrInvalidMsg)
		}
		return "", r, fmt.Errorf("%w: not valid JSON", ErrInvalidMsg)
	}
	end, role, err := checkMessageAt(raw, i, 0, nil, &r)
	if end < 0 || rawjson.SkipWS(raw, end) != len(raw) {
		return "", Reply{}, fmt.Errorf("%w: not valid JSON", ErrInvalidMsg)
	}
	return role, r, err
}

// checkMessageAt validates the message object at b[i] == '{', nested depth
// deep, as JSON and as a message, in one pass. It returns the index after
// the object (-1 when it is not valid JSON) and the role; sink, when not
// nil, learns of its tool blocks, and rep of an assistant's stamp and usage.
func checkMessageAt(b []byte, i, depth int, sink *toolSink, rep *Reply) (end int, role string, err error) {
	var r, provider, model, stop []byte
	content, isArray, hasUsage := false, false, false
	var usage Usage
	var blockErr, usageErr error
	end, ok := rawjson.Object(b, i, depth, func(k []byte, vs int) int {
		if !content && string(k) == "content" {
			content = true
			if b[vs] != '[' {
				return skip(b, vs, depth+1)
			}
			isArray = true
			n := 0
			end, ok := rawjson.Array(b, vs, depth+1, func(es int) int {
				n++
				be, err := checkBlockAt(b, es, n, depth+2, sink)
				if blockErr == nil {
					blockErr = err
				}
				return be
			})
			if !ok {
				return -1
			}
			return end
		}
		if !hasUsage && string(k) == "usage" {
			hasUsage = true
			var end int
			end, usage, usageErr = usageAt(b, vs, depth+1)
			return end
		}
		ve := skip(b, vs, depth+1)
		var dst *[]byte
		switch string(k) {
		case "role":
			dst = &r
		case "provider":
			dst = &provider
		case "model":
			dst = &model
		case "stopReason":
			dst = &stop
		default:
			return ve
		}
		if *dst == nil && ve >= 0 {
			*dst = b[vs:ve]
		}
		return ve
	})
	if !ok {
		return -1, "", nil
	}
	role = strOf(r)
	if role == "assistant" {
		rep.provider, rep.model = spanOf(b, provider), spanOf(b, model)
		rep.Usage, rep.HasUsage = usage, hasUsage && usageErr == nil
	}
	switch {
	case role != "system" && role != "user" && role != "assistant":
		return end, "", fmt.Errorf("%w: \"role\" must be system, user or assistant", ErrInvalidMsg)
	case !isArray:
		return end, role, fmt.Errorf("%w: \"content\" must be an array of blocks", ErrInvalidMsg)
	case blockErr != nil:
		return end, role, blockErr
	case role != "assistant":
		return end, role, nil
	case !rawjson.IsString(provider) || !rawjson.IsString(model):
		return end, role, fmt.Errorf("%w: an assistant message needs \"provider\" and \"model\"", ErrInvalidMsg)
	case stop != nil && !stopReasons[rawjson.Str(stop)]:
		return end, role, fmt.Errorf("%w: \"stopReason\" must be stop, length, toolUse or error", ErrInvalidMsg)
	case usageErr != nil:
		return end, role, usageErr
	}
	return end, role, nil
}

// skip validates the value at b[i], nested depth deep, and returns the
// index after it, or -1 when it is not valid JSON.
func skip(b []byte, i, depth int) int {
	end, ok := rawjson.Value(b, i, depth)
	if !ok {
		return -1
	}
	return end
}

// strOf is Str for the values every line repeats: the common ones cost no
// allocation.
func strOf(val []byte) string {
	switch string(val) {
	case `"message"`:
		return "message"
	case `"session"`:
		return "session"
	case `"user"`:
		return "user"
	case `"assistant"`:
		return "assistant"
	case `"system"`:
		return "system"
	case `"text"`:
		return "text"
	case `"thinking"`:
		return "thinking"
	case `"toolUse"`:
		return "toolUse"
	case `"toolResult"`:
		return "toolResult"
	}
	return rawjson.Str(val)
}

// blockFields returns the string fields (indexes in blockKeys) a block of
// type typ requires, and false for an unknown type.
func blockFields(typ string) ([]int, bool) {
	switch typ {
	case "text":
		return required[0:1], true
	case "thinking":
		return required[1:2], true
	case "redactedThinking":
		return required[2:3], true
	case "toolUse":
		return required[3:6], true
	case "toolResult":
		return required[6:8], true
	}
	return nil, false
}

// required holds the runs of indexes blockFields returns.
var required = [...]int{0, 1, 2, 3, 4, 5, 6, 7}

// checkBlockAt validates the content block at b[i], numbered n, nested depth
// deep, and returns the index after it (-1 when it is not valid JSON).
func checkBlockAt(b []byte, i, n, depth int, sink *toolSink) (int, error) {
	if b[i] != '{' {
		return skip(b, i, depth), fmt.Errorf("%w: content block %d is not an object", ErrInvalidMsg, n)
	}
	var t, sig []byte
	var vals [len(blockKeys)][]byte
	end, ok := rawjson.Object(b, i, depth, func(k []byte, vs int) int {
		ve := skip(b, vs, depth+1)
		if ve < 0 {
			return -1
		}
		switch string(k) {
		case "type":
			if t == nil {
				t = b[vs:ve]
			}
		case "signature":
			if sig == nil {
				sig = b[vs:ve]
			}
		default:
			if j := blockKey(k); j >= 0 && vals[j] == nil {
				vals[j] = b[vs:ve]
			}
		}
		return ve
	})
	if !ok {
		return -1, nil
	}
	typ := strOf(t)
	fields, known := blockFields(typ)
	if !rawjson.IsString(t) || !known {
		return end, fmt.Errorf("%w: content block %d has unknown type %s", ErrInvalidMsg, n, t)
	}
	for _, j := range fields {
		if !rawjson.IsString(vals[j]) {
			return end, fmt.Errorf("%w: %s block %d needs a string %q", ErrInvalidMsg, typ, n, blockKeys[j])
		}
	}
	input := vals[5]
	if typ == "thinking" && sig != nil && !rawjson.IsString(sig) {
		return end, fmt.Errorf("%w: thinking block %d has a non-string \"signature\"", ErrInvalidMsg, n)
	}
	if typ == "toolUse" && !validText(input, sink) {
		return end, fmt.Errorf("%w: toolUse block %d: \"input\" is not JSON text", ErrInvalidMsg, n)
	}
	if sink != nil && (typ == "toolUse" || typ == "toolResult") {
		if typ == "toolUse" {
			sink.kinds |= HasToolUse
		} else {
			sink.kinds |= HasToolResult
		}
		if sink.refs != nil {
			ref := ToolRef{Result: typ == "toolResult", ID: rawjson.Str(vals[3])} // id
			if ref.Result {
				ref.ID = rawjson.Str(vals[6]) // toolUseId
			}
			*sink.refs = append(*sink.refs, ref)
		}
	}
	return end, nil
}

// validText reports whether the JSON string s holds JSON text, unescaping
// it into the sink's buffer when there is one.
func validText(s []byte, sink *toolSink) bool {
	if sink == nil || sink.text == nil {
		return rawjson.Valid(rawjson.AppendText(nil, s))
	}
	*sink.text = rawjson.AppendText((*sink.text)[:0], s)
	return rawjson.Valid(*sink.text)
}

// blockKeys are the fields of a block checkBlockAt keeps, besides type and
// signature.
var blockKeys = [...]string{"text", "thinking", "data", "id", "name", "input", "toolUseId", "content"}

// blockKey returns the index of k in blockKeys, or -1 (a switch is faster
// than a loop over the names; TestBlockKey keeps the two in step).
func blockKey(k []byte) int {
	switch string(k) {
	case "text":
		return 0
	case "thinking":
		return 1
	case "data":
		return 2
	case "id":
		return 3
	case "name":
		return 4
	case "input":
		return 5
	case "toolUseId":
		return 6
	case "content":
		return 7
	}
	return -1
}

// The rules of the tree (SPEC §2), in one place for every reader that
// follows it (the scan's index, the append checkpoints).

// IsNode reports whether the line is a node of the tree (given that its id
// is not taken yet): a valid message entry, or an entry of an unknown type
// that has an id.
func (c *Line) IsNode() bool {
	return c.ID != "" && (c.Kind == KindMessage || c.Kind == KindUnknown)
}

// Counted reports whether the line counts as a message of the
// conversation: a user or assistant entry.
func (c *Line) Counted() bool {
	return c.Kind == KindMessage && (c.Role == "user" || c.Role == "assistant")
}

// UserStamp returns the provider/model a user entry was sent to; false
// for every other line.
func (c *Line) UserStamp() (Stamp, bool) {
	if c.Kind != KindMessage || c.Role != "user" {
		return Stamp{}, false
	}
	return Stamp{Provider: c.Provider, Model: c.Model}, true
}

// Activity is the time a line marks as the session's last activity (a
// message entry's timestamp), or "".
func (c *Line) Activity() string {
	if c.Kind != KindMessage {
		return ""
	}
	return c.Timestamp
}
