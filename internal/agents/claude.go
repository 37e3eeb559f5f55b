package agents

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/panto-dev/panto/internal/rawjson"
	"github.com/panto-dev/panto/pkg/provider"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/tidwall/gjson"
)

// Claude Code writes one line per content block of a response, each a copy
// of the message so far with a usage snapshot: only the last copy has the
// final usage. A subagent's responses may also be recorded in the parent's
// "progress" lines. So a transcript is read twice: first to find each
// response's copies and final usage, then (for content) to build one
// message per response at its first copy, its blocks joined in order.

// Synthetic is the model Claude Code names on messages it writes itself:
// no request was made, nothing is billed.
const Synthetic = "<synthetic>"

// Unbilled reports whether a reply of model is no request at all.
func Unbilled(model string) bool { return model == Synthetic }

// assistant is in every line that holds a reply.
var assistant = []byte(`"assistant"`)

// usage is in every line of the old shape that holds a reply (no role).
var usage = []byte(`"usage"`)

// toolResult is in the content of a message that holds tool results.
var toolResult = []byte(`"tool_result"`)

// cline is what the readers use of a transcript line: views into the
// line, valid while it is.
type cline struct {
	typ, uuid, parent, ts, sessionID, cwd, agentID, req string
	msg                                                 bool // a message (or a progress line's) was there
	progress                                            bool // it is a subagent's, from a progress line
	compactSummary                                      bool // a user line that is a compaction's summary
	// The message's fields.
	role, id, model, stop string
	usage, content        []byte // raw JSON
}

// view is the text of a raw JSON string without a copy when it holds no
// escape (ids, names and times never do), else unescaped; "" for what is
// not a string.
func view(raw []byte) string {
	if len(raw) < 2 || raw[0] != '"' {
		return ""
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return str(raw[1 : len(raw)-1])
	}
	return rawjson.Str(raw)
}

// readCline validates a transcript line and reads the fields the readers
// use, in one pass over its bytes (rawjson's walker); false when the line
// is not a JSON object.
func readCline(raw []byte) (cline, bool) {
	var l cline
	i := rawjson.SkipWS(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return l, false
	}
	end, ok := rawjson.Object(raw, i, 0, func(k []byte, vs int) int {
		ve, ok := rawjson.Value(raw, vs, 1)
		if !ok {
			return -1
		}
		v := raw[vs:ve]
		switch string(k) {
		case "type":
			l.typ = view(v)
		case "uuid":
			l.uuid = view(v)
		case "parentUuid":
			l.parent = view(v)
		case "timestamp":
			l.ts = view(v)
		case "sessionId":
			l.sessionID = view(v)
		case "cwd":
			l.cwd = view(v)
		case "agentId":
			l.agentID = view(v)
		case "isCompactSummary":
			l.compactSummary = string(v) == "true"
		case "requestId":
			if !l.progress {
				l.req = view(v)
			}
		case "message":
			if !l.progress && v[0] == '{' {
				l.readMessage(v)
			}
		case "data":
			if v[0] == '{' {
				l.readProgress(v)
			}
		}
		return ve
	})
	return l, ok && rawjson.SkipWS(raw, end) == len(raw)
}

// readMessage reads a message object (valid JSON) into l.
func (l *cline) readMessage(v []byte) {
	l.msg = true
	rawjson.Object(v, 0, 0, func(k []byte, vs int) int {
		ve, _ := rawjson.Value(v, vs, 1)
		f := v[vs:ve]
		switch string(k) {
		case "role":
			l.role = view(f)
		case "id":
			l.id = view(f)
		case "model":
			l.model = view(f)
		case "stop_reason":
			l.stop = view(f)
		case "usage":
			l.usage = f
		case "content":
			l.content = f
		}
		return ve
	})
}

// readProgress reads a progress line's data: a subagent's assistant
// message, when it carries one ({"message":{"type":"assistant",
// "requestId":…,"timestamp":…,"message":{…}}}).
func (l *cline) readProgress(v []byte) {
	rawjson.Object(v, 0, 0, func(k []byte, vs int) int {
		ve, _ := rawjson.Value(v, vs, 1)
		if string(k) != "message" || v[vs] != '{' {
			return ve
		}
		m := v[vs:ve]
		var typ, req, ts string
		var inner []byte
		rawjson.Object(m, 0, 0, func(k []byte, vs int) int {
			ve, _ := rawjson.Value(m, vs, 1)
			f := m[vs:ve]
			switch string(k) {
			case "type":
				typ = view(f)
			case "requestId":
				req = view(f)
			case "timestamp":
				ts = view(f)
			case "message":
				if f[0] == '{' {
					inner = f
				}
			}
			return ve
		})
		if typ == "assistant" && inner != nil {
			l.progress, l.req = true, req
			l.role, l.id, l.model, l.stop, l.usage, l.content = "", "", "", "", nil, nil
			l.readMessage(inner)
			if ts != "" {
				l.ts = ts
			}
		}
		return ve
	})
}

// response is one API response of a transcript, over all its copies.
type response struct {
	key      string
	first    int   // line number of its first copy
	off      int64 // and its offset
	copies   []span
	progress bool
	stop     string // the last copy's stop reason and usage, raw
	usage    string
	reply    Reply
	model    string
	ts       string
	id       string // its entry id, once given
}

type span struct {
	off int64
	n   int
}

// isReply reports whether the line is a copy of a response: an assistant
// message, a subagent's in a progress line, or a line of the old shape (no
// "type", a message with usage: Claude Code before 1.0.9, whose role may
// be absent).
func (l *cline) isReply() bool {
	return (l.typ == "assistant" && l.msg || l.progress) && l.role == "assistant" ||
		l.typ == "" && l.msg && l.usage != nil && (l.role == "" || l.role == "assistant")
}

func (c *converter) claude() error {
	c.validates = true // readCline validates as it reads
	c.parents = map[string]string{}
	// Pass 1: the responses, the session's first time, id and cwd.
	var h Header
	h.Origin.Agent = "claude"
	resps := map[string]*response{}
	var order []*response
	old := false // lines of the old shape were met
	lr := c.newLines()
	for {
		n, off, raw, err := c.line(lr)
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return err
		}
		if !c.opt.Content && h.Timestamp != "" && !bytes.Contains(raw, assistant) && !(old && bytes.Contains(raw, usage)) {
			if !isObject(raw) {
				c.bad(n, off, raw)
			}
			continue // no reply on this line, and the header is known
		}
		l, ok := readCline(raw)
		if !ok {
			c.bad(n, off, raw)
			continue
		}
		if l.typ == "" && l.msg && l.usage != nil {
			old = true // the old shape: its replies say no "assistant"
		}
		if h.Timestamp == "" && stamp(l.ts) != "" {
			h.Timestamp = stamp(l.ts) // a copy: l's views go with the read buffer
		}
		if h.Origin.ID == "" && l.sessionID != "" {
			h.Origin.ID = strings.Clone(l.sessionID)
			if l.agentID != "" && !l.progress {
				h.Origin.Parent, h.Origin.ID = h.Origin.ID, "agent-"+l.agentID
			}
		}
		if h.Cwd == "" && l.cwd != "" {
			h.Cwd = strings.Clone(l.cwd)
		}
		if !l.isReply() {
			continue
		}
		key := ""
		if id := l.id; id != "" && l.req != "" {
			key = id + "/" + l.req
		}
		r := resps[key]
		if r == nil || key == "" {
			r = &response{key: strings.Clone(key), first: n, off: off, progress: l.progress, ts: stamp(l.ts)}
			if key != "" {
				resps[r.key] = r
			}
			order = append(order, r)
		}
		if c.opt.Content {
			r.copies = append(r.copies, span{off, len(raw)})
		}
		// The last copy in file order has the final usage and stop reason.
		r.stop, r.usage = strings.Clone(l.stop), string(l.usage)
		if r.model != l.model {
			r.model = strings.Clone(l.model)
		}
	}
	if h.Origin.ID == "" {
		h.Origin.ID = strings.TrimSuffix(filepath.Base(c.src.Path), ".jsonl")
	}
	if c.src.Parent != "" && h.Origin.Parent == "" {
		h.Origin.Parent = c.src.Parent
	}
	if h.Timestamp == "" {
		if len(c.stats.Corrupt) == 0 && len(order) == 0 {
			return ErrNotALog
		}
	}
	if err := c.begin(h); err != nil {
		return err
	}
	for _, r := range order {
		r.reply = claudeReply(r.stop, []byte(r.usage))
		r.reply.Key = r.key
	}
	c.stats.add("replies", len(order))
	if !c.opt.Content {
		for _, r := range order {
			c.e = Entry{Line: r.first, ID: "", Timestamp: r.ts, Role: "assistant", Provider: "anthropic", Model: r.model, Reply: &r.reply}
			if err := c.emit(&c.e); err != nil {
				return err
			}
		}
		return nil
	}
	return c.claudeEntries(resps, order)
}

// claudeReply reads a message's stop reason and usage, by the one reader
// of Anthropic's wire format (package provider), as panto-turn does.
func claudeReply(stop string, usage []byte) Reply {
	var r Reply
	r.StopReason, _ = provider.AnthropicStop(stop) // an unknown reason is ""
	var u provider.Usage
	if !provider.AnthropicUsage(usage, &u) {
		return r
	}
	r.HasUsage, r.Usage = true, session.Usage(u)
	if s := gjson.GetBytes(usage, "speed"); s.Type == gjson.String && s.Str != "standard" && s.Str != "" {
		r.Mode = s.Str // billed apart (fast: six times the price, for Opus 4.6)
	}
	if r.Usage.Check() != nil {
		r.HasUsage = false // negative counts: unknown, not zero
	}
	return r
}

// claudeEntries is the second pass: one entry per message, a response's
// copies joined at its first.
//
// A prompt is stamped with the model of the reply before it: what the log
// says up to its line (the first prompts, "unknown": Claude Code names the
// model only in its replies). An entry is made of the lines up to it and
// never of a later one, so the conversion of a log that grows only grows,
// and a log imported while Claude Code writes it is imported again by
// appending (a response still streaming more copies aside, SPEC §11).
func (c *converter) claudeEntries(resps map[string]*response, order []*response) error {
	byOff := make(map[int64]*response, len(order)) // a line may hold several objects
	for _, r := range order {
		byOff[r.off] = r
	}
	model := "unknown"
	ids := map[string]string{} // source uuid → entry id
	parentOf := func(p string) string {
		if id, ok := ids[p]; ok {
			return id
		}
		return c.last
	}
	// The results of a response's tool calls hang off the copies that hold
	// the calls (parallel calls: different copies); the conversation goes
	// on from the last. They are chained, in file order, each the parent
	// of the next: every answered call is answered on the path.
	results := map[string]string{}            // a response's entry id → its last result's
	respOf := map[string]string{}             // a response's or result's entry id → the response's
	boundary := map[string]*compactBoundary{} // a compact_boundary's uuid → what it says
	lr := c.newLines()
	var copyBuf []byte
	for {
		n, off, raw, err := c.line(lr)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		l, ok := readCline(raw)
		if !ok {
			c.split(n, off, raw) // counted by the first pass
			continue
		}
		ts := stamp(l.ts)
		switch {
		case l.isReply():
			r := byOff[off]
			if r == nil { // a later copy: already joined
				if k := l.id + "/" + l.req; resps[k] != nil && !l.progress {
					ids[strings.Clone(l.uuid)] = resps[k].id
				}
				c.stats.add("copies joined", 1)
				continue
			}
			parent := parentOf(l.parent)
			r.id = c.id(l.uuid + "\x00" + r.key)
			b := append(c.buf[:0], `{"role":"assistant","content":[`...)
			nb := 0
			for _, s := range r.copies {
				copyBuf = slices.Grow(copyBuf[:0], s.n)[:s.n]
				if _, err := c.src.R.ReadAt(copyBuf, s.off); err != nil {
					return err
				}
				cl, _ := readCline(copyBuf)
				gjson.Parse(str(cl.content)).ForEach(func(_, blk gjson.Result) bool {
					b = c.claudeBlock(b, blk, &nb)
					return true
				})
			}
			// The response's identity (r.reply.Key) goes with it: it may be in
			// another session too (a subagent's, in its parent's progress lines).
			b = r.reply.appendFields(append(b, ']'), "anthropic", r.model)
			c.buf = append(b, '}')
			if !Unbilled(r.model) {
				model = r.model
			}
			if r.progress {
				// A subagent's reply recorded in the parent: a side branch
				// off the conversation, which goes on from its parent.
				c.stats.add("subagent replies from progress lines", 1)
				last := c.last
				ids[strings.Clone(l.uuid)] = parent
				c.e = Entry{Line: n, ID: r.id, ParentID: parent, Timestamp: r.ts, Role: "assistant", Provider: "anthropic", Model: r.model, Reply: &r.reply, Body: c.buf}
				if err := c.emit(&c.e); err != nil {
					return err
				}
				c.last = last
				continue
			}
			ids[strings.Clone(l.uuid)] = r.id
			results[r.id], respOf[r.id] = r.id, r.id
			c.e = Entry{Line: n, ID: r.id, ParentID: parent, Timestamp: r.ts, Role: "assistant", Provider: "anthropic", Model: r.model, Reply: &r.reply, Body: c.buf}
			if err := c.emit(&c.e); err != nil {
				return err
			}
		case l.typ == "user" && l.msg && l.compactSummary:
			// Claude Code's compaction: a compact_boundary, then this summary,
			// from which on the model is sent the summary and what follows it.
			// Nothing before the boundary is kept, but a preserved segment
			// the boundary names: its messages, from its head, are sent after
			// the summary, and the conversation goes on from its tail (Claude
			// Code relinks the head to the summary when it loads the log).
			parent := parentOf(l.parent)
			id := c.id(l.uuid + "\x00" + c.at(n))
			ids[strings.Clone(l.uuid)] = id
			b := boundary[l.parent]
			if b == nil {
				b = &compactBoundary{tokens: -1}
			}
			// The head must be on the summary's path (an earlier entry of
			// it): the summary itself, or an entry of another branch,
			// keeps nothing, as pi's does (an import panto-fsck calls
			// damaged otherwise: compactionKeptMissing).
			kept := ids[b.head]
			if !onPath(c.parents, parent, kept) {
				kept = ""
			}
			c.e = Entry{Line: n, ID: id, ParentID: parent, Timestamp: ts}
			c.compaction(&c.e, "claude", raw, c.claudeText(l.content), kept, b.tokens)
			if err := c.emit(&c.e); err != nil {
				return err
			}
			if kept != "" {
				ids[b.tail] = id
			}
		case l.typ == "user" && l.msg:
			parent := parentOf(l.parent)
			id := c.id(l.uuid + "\x00" + c.at(n))
			ids[strings.Clone(l.uuid)] = id
			b := slices.Grow(c.buf[:0], len(l.content)+256) // once, not by doubling: a result may be huge
			b = append(b, `{"role":"user","content":[`...)
			nb := 0
			if rawjson.IsString(l.content) {
				b = append(b, `{"type":"text","text":`...)
				b = append(b, l.content...)
				b = append(b, '}')
			} else {
				gjson.Parse(str(l.content)).ForEach(func(_, blk gjson.Result) bool {
					b = c.claudeBlock(b, blk, &nb)
					return true
				})
			}
			c.buf = append(b, "]}"...)
			if resp, ok := respOf[parent]; ok && bytes.Contains(l.content, toolResult) {
				parent, results[resp], respOf[id] = results[resp], id, resp
			}
			c.stats.add("user messages", 1)
			c.e = Entry{Line: n, ID: id, ParentID: parent, Timestamp: ts, Role: "user", Provider: "anthropic", Model: model, Body: c.buf}
			if err := c.emit(&c.e); err != nil {
				return err
			}
		case l.typ == "progress", l.typ == "file-history-snapshot", l.typ == "queue-operation":
			// The interface's own state, not the conversation: counted.
			if l.uuid != "" {
				ids[strings.Clone(l.uuid)] = parentOf(l.parent)
			}
			c.stats.add(l.typ+" lines not imported", 1)
		default:
			parent := parentOf(l.parent)
			if l.typ == "system" && gjson.GetBytes(raw, "subtype").Str == "compact_boundary" {
				// A new root in Claude Code's tree; its logical parent is where
				// the conversation was.
				if id, ok := ids[gjson.GetBytes(raw, "logicalParentUuid").Str]; ok && l.parent == "" {
					parent = id
				}
				m := gjson.GetBytes(raw, "compactMetadata")
				b := &compactBoundary{tokens: -1, head: m.Get("preservedSegment.headUuid").Str, tail: m.Get("preservedSegment.tailUuid").Str}
				if t := m.Get("preTokens"); t.Type == gjson.Number {
					b.tokens = t.Int()
				}
				if b.tail == "" {
					b.head = "" // a segment with no end: none
				}
				boundary[strings.Clone(l.uuid)] = b
			}
			id := c.id(l.uuid + "\x00" + c.at(n))
			if l.uuid != "" {
				ids[strings.Clone(l.uuid)] = id
			}
			kind := "claude." + l.typ
			if l.typ == "" {
				kind = "claude"
			}
			c.stats.add(kind+" entries kept", 1)
			c.e = Entry{Line: n, ID: id, ParentID: parent, Timestamp: ts, Kind: kind, Body: c.kept("claude", raw)}
			if err := c.emit(&c.e); err != nil {
				return err
			}
		}
	}
}

// claudeBlock appends the panto block of a Claude content block to b; nb
// counts the blocks written (for the commas).
func (c *converter) claudeBlock(b []byte, blk gjson.Result, nb *int) []byte {
	if *nb > 0 {
		b = append(b, ',')
	}
	*nb++
	get := func(k string) gjson.Result { return blk.Get(k) }
	switch typ := get("type").Str; typ {
	case "text":
		return appendBlock(b, "text", "text", strRaw(get("text")))
	case "thinking":
		b = append(b, `{"type":"thinking","thinking":`...)
		b = append(b, strRaw(get("thinking"))...)
		if s := get("signature"); s.Type == gjson.String {
			b = append(b, `,"signature":`...)
			b = append(b, s.Raw...)
		}
		return append(b, '}')
	case "redacted_thinking":
		return appendBlock(b, "redactedThinking", "data", strRaw(get("data")))
	case "tool_use", "server_tool_use":
		b = append(b, `{"type":"toolUse","id":`...)
		b = append(b, strRaw(get("id"))...)
		b = append(b, `,"name":`...)
		b = append(b, strRaw(get("name"))...)
		b = append(b, `,"input":`...)
		in := get("input").Raw
		if in == "" {
			in = "{}"
		}
		b = rawjson.AppendString(b, in)
		return append(b, '}')
	case "tool_result":
		b = append(b, `{"type":"toolResult","toolUseId":`...)
		b = append(b, strRaw(get("tool_use_id"))...)
		b = append(b, `,"content":`...)
		// Found without gjson's Get, which unescapes a string it returns:
		// a result may be hundreds of MB.
		if ct := member(blk.Raw, "content"); len(ct) > 0 && ct[0] == '"' {
			b = append(b, ct...) // a JSON string already: not copied twice more
		} else {
			v := gjson.Parse(str(ct))
			b = rawjson.AppendString(b, c.resultText(v))
			if c.src.Images {
				n := 0
				v.ForEach(func(_, blk gjson.Result) bool {
					if blk.Get("type").Str == "image" {
						sep := ","
						if n == 0 {
							sep = `,"images":[`
						}
						b = appendImage(b, sep, blk.Get("source"))
						n++
					}
					return true
				})
				if n > 0 {
					b = append(b, ']')
				}
			}
		}
		if get("is_error").Bool() {
			b = append(b, `,"isError":true`...)
		}
		return append(b, '}')
	case "image", "document":
		c.stats.add(typ+"s named in text", 1)
		b = appendBlock(b, "text", "text", rawjson.AppendString(nil, mediaText(typ, get("source"))))
		if typ == "image" && c.src.Images {
			b = appendImage(b[:len(b)-1], `,"image":`, get("source"))
			b = append(b, '}')
		}
		return b
	default:
		c.stats.add(typ+" blocks kept as text", 1)
		return appendBlock(b, "text", "text", rawjson.AppendString(nil, "["+typ+"] "+blk.Raw))
	}
}

// compactBoundary is what a compact_boundary line says: the tokens before
// it (-1 unknown) and the segment it preserves (its first and last
// message's uuids; "" for none).
type compactBoundary struct {
	tokens     int64
	head, tail string
}

// claudeText is a message's content as text: the string, or its text
// blocks, a line apart.
func (c *converter) claudeText(content []byte) string {
	if rawjson.IsString(content) {
		return rawjson.Str(content)
	}
	var parts []string
	gjson.ParseBytes(content).ForEach(func(_, blk gjson.Result) bool {
		if blk.Get("type").Str == "text" {
			parts = append(parts, blk.Get("text").Str)
		}
		return true
	})
	return strings.Join(parts, "\n")
}

// resultText is a tool result's content as one string: its text, and a
// line naming each image.
func (c *converter) resultText(v gjson.Result) string {
	if v.Type == gjson.String {
		return v.Str
	}
	var parts []string
	v.ForEach(func(_, blk gjson.Result) bool {
		switch typ := blk.Get("type").Str; typ {
		case "text":
			parts = append(parts, blk.Get("text").Str)
		case "image", "document":
			c.stats.add(typ+"s named in text", 1)
			parts = append(parts, mediaText(typ, blk.Get("source")))
		default:
			parts = append(parts, blk.Raw)
		}
		return true
	})
	return strings.Join(parts, "\n")
}

// mediaText names an image or document: its media type and size.
func mediaText(typ string, src gjson.Result) string {
	media := src.Get("media_type").Str
	if media == "" {
		media = src.Get("type").Str
	}
	data := src.Get("data").Str
	return "[" + typ + ": " + media + ", " + strconv.Itoa(base64Size(data)) + " bytes]"
}

// base64Size is the number of bytes base64 text s decodes to.
func base64Size(s string) int {
	n := len(s) / 4 * 3
	if len(s)%4 != 0 {
		n += len(s) % 4 * 3 / 4
	}
	return n - strings.Count(s[max(0, len(s)-2):], "=")
}

// appendBlock appends {"type":typ,"field":raw}.
func appendBlock(b []byte, typ, field string, raw []byte) []byte {
	b = append(b, `{"type":"`...)
	b = append(b, typ...)
	b = append(b, `","`...)
	b = append(b, field...)
	b = append(b, `":`...)
	b = append(b, raw...)
	return append(b, '}')
}

// appendToolUse appends a toolUse block: id and name are JSON strings as
// the log has them (strRaw), input the call's arguments as JSON text,
// written as the string SPEC §2 keeps them in ("{}" when there are none).
func appendToolUse(b, id, name []byte, input string) []byte {
	if input == "" {
		input = "{}"
	}
	b = append(append(b, `{"type":"toolUse","id":`...), id...)
	b = append(append(b, `,"name":`...), name...)
	b = rawjson.AppendString(append(b, `,"input":`...), input)
	return append(b, '}')
}

// appendImage appends sep and an image of a Claude source
// ({"type":"base64","media_type","data"}) as {"mimeType","data"} (a
// source of a URL: {"mimeType":"","url"}); the page decides what it shows.
func appendImage(b []byte, sep string, src gjson.Result) []byte {
	b = append(b, sep...)
	b = append(b, `{"mimeType":`...)
	b = append(b, strRaw(src.Get("media_type"))...)
	if u := src.Get("url"); u.Type == gjson.String {
		b = append(b, `,"url":`...)
		b = append(b, u.Raw...)
	} else {
		b = append(b, `,"data":`...)
		b = append(b, strRaw(src.Get("data"))...)
	}
	return append(b, '}')
}

// strRaw is v's raw JSON when it is a string, else "" as JSON.
func strRaw(v gjson.Result) []byte {
	if v.Type != gjson.String {
		return []byte(`""`)
	}
	return []byte(v.Raw)
}

// str views raw as a string without a copy, for gjson; what is kept of it
// is cloned.
func str(raw []byte) string { return unsafe.String(unsafe.SliceData(raw), len(raw)) }

// bytesOf views s as bytes without a copy, for rawjson; they are never
// written.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// member returns the raw value of key k of the JSON object obj, without a
// copy; nil when there is none.
func member(obj string, k string) []byte {
	var v []byte
	rawjson.Members(bytesOf(obj), func(key, val []byte) bool {
		if rawjson.KeyIs(key, k) {
			v = val
			return false
		}
		return true
	})
	return v
}

// claudeAgent is Claude Code's row of the registry.
var claudeAgent = &Agent{
	Format: Claude, Name: "claude", Title: "Claude Code", Noun: "a Claude Code transcript",
	Env: []string{"CLAUDE_CONFIG_DIR"},
	Looked: func(getenv func(string) string) []string {
		var dirs []string
		if v := getenv("CLAUDE_CONFIG_DIR"); v != "" {
			for _, d := range strings.Split(v, ",") {
				if d = strings.TrimSpace(d); d != "" {
					dirs = append(dirs, filepath.Join(d, "projects"))
				}
			}
		} else if h := getenv("HOME"); h != "" {
			dirs = append(dirs, filepath.Join(h, ".config", "claude", "projects"), filepath.Join(h, ".claude", "projects"))
		}
		return dirs
	},
	Line: func(h *Head) bool {
		return claudeTypes[h.Type] || h.SessionID.Exists() || h.UUID.Exists() || claudeMessageTypes[h.Type] && h.Message.IsObject() ||
			h.Type == "" && h.Message.IsObject() && h.Message.Get("usage").Exists() // the old shape: Claude Code before 1.0.9
	},
	subagents: true,
	Resume:    func(id string) []string { return []string{"claude", "--resume", id} },
	read:      (*converter).claude,
	mark:      []byte(`"user"`),
	prompt: func(l gjson.Result) string {
		if l.Get("type").Str != "user" || l.Get("isMeta").Bool() || l.Get("isSidechain").Bool() && l.Get("parentUuid").Type == gjson.String {
			return ""
		}
		return promptText(l.Get("message.content"), "text")
	},
}

// claudeTypes are line types only Claude Code writes; claudeMessageTypes
// are names other tools use too (Entire's transcript.jsonl has "user" and
// "assistant" lines): a line of one is Claude Code's when it has Claude
// Code's fields, a uuid or sessionId (every such line of it has both) or
// a message.
var (
	claudeTypes        = map[string]bool{"summary": true, "file-history-snapshot": true, "queue-operation": true}
	claudeMessageTypes = map[string]bool{"user": true, "assistant": true, "system": true, "progress": true}
)
