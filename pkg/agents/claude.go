package agents

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"unsafe"

	"github.com/panto-dev/panto/pkg/rawjson"
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

// cline is what the first pass reads of a transcript line.
type cline struct {
	typ, uuid, parent, ts, sessionID, cwd, agentID, req string
	msg                                                 gjson.Result // the message, or a progress line's message
	progress                                            bool         // msg is a subagent's, from a progress line
}

// str views raw as a string without a copy, for gjson; what is kept of it
// is cloned.
func str(raw []byte) string { return unsafe.String(unsafe.SliceData(raw), len(raw)) }

// readCline reads the fields of a transcript line the readers use.
func readCline(raw []byte) cline {
	var l cline
	gjson.Parse(str(raw)).ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "type":
			l.typ = v.Str
		case "uuid":
			l.uuid = v.Str
		case "parentUuid":
			l.parent = v.Str
		case "timestamp":
			l.ts = v.Str
		case "sessionId":
			l.sessionID = v.Str
		case "cwd":
			l.cwd = v.Str
		case "agentId":
			l.agentID = v.Str
		case "requestId":
			l.req = v.Str
		case "message":
			l.msg = v
		case "data":
			if m := v.Get("message"); m.Get("type").Str == "assistant" {
				l.msg, l.req, l.progress = m.Get("message"), m.Get("requestId").Str, true
				if ts := m.Get("timestamp").Str; ts != "" {
					l.ts = ts
				}
			}
		}
		return true
	})
	return l
}

// response is one API response of a transcript, over all its copies.
type response struct {
	key      string
	first    int // line number of its first copy
	copies   []span
	progress bool
	reply    Reply
	model    string
	ts       string
	id       string // its entry id, once given
}

type span struct {
	off int64
	n   int
}

// reply reads the response a line is a copy of, or false.
func (l *cline) isReply() bool {
	return (l.typ == "assistant" || l.progress) && l.msg.Get("role").Str == "assistant"
}

func (c *converter) claude() error {
	// Pass 1: the responses, the session's first time, id and cwd.
	var h Header
	h.Origin.Agent = "claude"
	resps := map[string]*response{}
	var order []*response
	firstModel := ""
	lr := newLines(c.src)
	for {
		n, off, raw, err := c.line(lr)
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return err
		}
		if !c.opt.Content && h.Timestamp != "" && !bytes.Contains(raw, assistant) {
			continue // no reply on this line, and the header is known
		}
		l := readCline(raw)
		if h.Timestamp == "" && l.ts != "" {
			h.Timestamp = l.ts
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
		if id := l.msg.Get("id").Str; id != "" && l.req != "" {
			key = id + "/" + l.req
		}
		r := resps[key]
		if r == nil || key == "" {
			r = &response{key: strings.Clone(key), first: n, progress: l.progress, ts: stamp(l.ts)}
			if key != "" {
				resps[r.key] = r
			}
			order = append(order, r)
		}
		if c.opt.Content {
			r.copies = append(r.copies, span{off, len(raw)})
		}
		// The last copy in file order has the final usage and stop reason.
		r.reply = claudeReply(l.msg)
		r.reply.Key = r.key
		r.model = strings.Clone(l.msg.Get("model").Str)
		if firstModel == "" && !Unbilled(r.model) {
			firstModel = r.model
		}
	}
	if h.Origin.ID == "" {
		h.Origin.ID = strings.TrimSuffix(filepath.Base(c.src.Path), ".jsonl")
	}
	if c.src.Parent != "" && h.Origin.Parent == "" {
		h.Origin.Parent = c.src.Parent
	}
	h.Timestamp = stamp(h.Timestamp)
	if h.Timestamp == "" {
		if len(c.stats.Corrupt) == 0 && len(order) == 0 {
			return ErrNotALog
		}
	}
	if err := c.begin(h); err != nil {
		return err
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
	return c.claudeEntries(resps, order, firstModel)
}

// claudeReply reads a message's usage and stop reason.
func claudeReply(msg gjson.Result) Reply {
	var r Reply
	switch msg.Get("stop_reason").Str {
	case "end_turn", "stop_sequence", "pause_turn", "refusal":
		r.StopReason = "stop"
	case "tool_use":
		r.StopReason = "toolUse"
	case "max_tokens", "model_context_window_exceeded":
		r.StopReason = "length"
	}
	u := msg.Get("usage")
	if !u.IsObject() {
		return r
	}
	r.HasUsage = true
	var w5, w1 int64
	u.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "input_tokens":
			r.Usage.Input = v.Int()
		case "output_tokens":
			r.Usage.Output = v.Int()
		case "cache_read_input_tokens":
			r.Usage.CacheRead = v.Int()
		case "cache_creation_input_tokens":
			r.Usage.CacheWrite = v.Int()
		case "cache_creation":
			w5 = v.Get("ephemeral_5m_input_tokens").Int()
			w1 = v.Get("ephemeral_1h_input_tokens").Int()
		}
		return true
	})
	if r.Usage.CacheWrite < w5+w1 {
		r.Usage.CacheWrite = w5 + w1 // the split says more than the total
	}
	r.Usage.CacheWrite1h = w1
	if r.Usage.Check() != nil {
		r.HasUsage = false // negative counts: unknown, not zero
	}
	return r
}

// claudeEntries is the second pass: one entry per message, a response's
// copies joined at its first.
func (c *converter) claudeEntries(resps map[string]*response, order []*response, model string) error {
	byLine := make(map[int]*response, len(order))
	for _, r := range order {
		byLine[r.first] = r
	}
	if model == "" {
		model = "unknown"
	}
	ids := map[string]string{} // source uuid → entry id
	parentOf := func(p string) string {
		if id, ok := ids[p]; ok {
			return id
		}
		return c.last
	}
	lr := newLines(c.src)
	var copyBuf []byte
	for {
		n, _, raw, err := c.line(lr)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		l := readCline(raw)
		ts := stamp(l.ts)
		switch {
		case l.isReply():
			r := byLine[n]
			if r == nil { // a later copy: already joined
				if k := l.msg.Get("id").Str + "/" + l.req; resps[k] != nil && !l.progress {
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
				copyBuf = grow(copyBuf, s.n)
				if _, err := c.src.R.ReadAt(copyBuf, s.off); err != nil {
					return err
				}
				cl := readCline(copyBuf)
				cl.msg.Get("content").ForEach(func(_, blk gjson.Result) bool {
					b = c.claudeBlock(b, blk, &nb)
					return true
				})
			}
			b = append(b, `],"provider":"anthropic","model":`...)
			b = rawjson.AppendString(b, r.model)
			if r.reply.StopReason != "" {
				b = append(b, `,"stopReason":`...)
				b = rawjson.AppendString(b, r.reply.StopReason)
			}
			if r.reply.HasUsage {
				b = append(b, `,"usage":`...)
				b = r.reply.Usage.AppendJSON(b)
			}
			if r.key != "" {
				// The response's identity: it may be in another session
				// too (a subagent's, in its parent's progress lines).
				b = append(b, `,"responseId":`...)
				b = rawjson.AppendString(b, r.key)
			}
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
			c.e = Entry{Line: n, ID: r.id, ParentID: parent, Timestamp: r.ts, Role: "assistant", Provider: "anthropic", Model: r.model, Reply: &r.reply, Body: c.buf}
			if err := c.emit(&c.e); err != nil {
				return err
			}
		case l.typ == "user" && l.msg.Exists():
			parent := parentOf(l.parent)
			id := c.id(l.uuid + "\x00" + itoa(n))
			ids[strings.Clone(l.uuid)] = id
			b := append(c.buf[:0], `{"role":"user","content":[`...)
			nb := 0
			if content := l.msg.Get("content"); content.Type == gjson.String {
				b = append(b, `{"type":"text","text":`...)
				b = append(b, content.Raw...)
				b = append(b, '}')
			} else {
				content.ForEach(func(_, blk gjson.Result) bool {
					b = c.claudeBlock(b, blk, &nb)
					return true
				})
			}
			c.buf = append(b, "]}"...)
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
			id := c.id(l.uuid + "\x00" + itoa(n))
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
		b = rawjson.AppendString(b, c.resultText(get("content")))
		if get("is_error").Bool() {
			b = append(b, `,"isError":true`...)
		}
		return append(b, '}')
	case "image", "document":
		c.stats.add(typ+"s named in text", 1)
		return appendBlock(b, "text", "text", rawjson.AppendString(nil, mediaText(typ, get("source"))))
	default:
		c.stats.add(typ+" blocks kept as text", 1)
		return appendBlock(b, "text", "text", rawjson.AppendString(nil, "["+typ+"] "+blk.Raw))
	}
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
	return "[" + typ + ": " + media + ", " + itoa(base64Size(data)) + " bytes]"
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

// strRaw is v's raw JSON when it is a string, else "" as JSON.
func strRaw(v gjson.Result) []byte {
	if v.Type != gjson.String {
		return []byte(`""`)
	}
	return []byte(v.Raw)
}

func grow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}

func itoa(n int) string { return strconv.Itoa(n) }
