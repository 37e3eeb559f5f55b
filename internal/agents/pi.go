package agents

import (
	"errors"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/panto-dev/panto/internal/rawjson"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/tidwall/gjson"
)

// pi's format is panto's nearest relative: a header, then entries linked by
// 8-hex ids (version 1 has none: each follows the one before). pi writes
// its own computed cost into every usage; panto computes costs itself, so
// that field is not read.

func (c *converter) pi() error {
	provider, model := "unknown", "unknown" // until the header or a model_change names them
	lr := c.newLines()
	ids := map[string]string{}     // pi id → entry id
	parents := map[string]string{} // entry id → its parent's, for the path to a compaction
	// The entry ids by the index of their object in the file, the header
	// 0: what a version 1 compaction's firstKeptEntryIndex counts.
	var byIndex []string
	for {
		n, _, raw, err := c.line(lr)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		byIndex = append(byIndex, "")
		l := gjson.Parse(str(raw))
		typ := l.Get("type").Str
		ts := stamp(l.Get("timestamp").Str)
		if c.hdr == nil {
			if typ != "session" {
				return ErrNotALog
			}
			if v := l.Get("provider").Str; v != "" {
				provider = strings.Clone(v)
			}
			if v := l.Get("modelId").Str; v != "" {
				model = strings.Clone(v)
			}
			h := Header{Timestamp: ts, Cwd: strings.Clone(l.Get("cwd").Str),
				Origin: Origin{Agent: "pi", ID: strings.Clone(l.Get("id").Str), Parent: strings.Clone(l.Get("parentSession").Str)}}
			if err := c.begin(h); err != nil {
				return err
			}
			continue
		}
		// Copied: raw is the line reader's, its buffer reused for the
		// next lines; own is kept (ids, taken, parents, byIndex).
		own := strings.Clone(l.Get("id").Str)
		parent := c.last
		if p := l.Get("parentId"); p.Type == gjson.String {
			if id, ok := ids[p.Str]; ok {
				parent = id
			} else { // said: the entry is not where the log put it
				c.stats.add("entries whose parent is not before them (chained to the entry before)", 1)
			}
		}
		id := own
		if _, hex := session.HexID(own); !hex || c.taken[own] {
			if c.taken[own] {
				c.stats.add("entries whose id an earlier one has (given an id of their own)", 1)
			}
			id = c.id("line\x00" + c.at(n))
		} else {
			c.taken[own] = true
		}
		if own != "" {
			ids[own] = id
		}
		byIndex[len(byIndex)-1] = id
		parents[id] = parent
		c.e = Entry{Line: n, ID: id, ParentID: parent, Timestamp: ts}
		e := &c.e
		msg := l.Get("message")
		role := msg.Get("role").Str
		switch {
		case typ == "message" && role == "assistant":
			if v := msg.Get("provider").Str; v != "" {
				provider = strings.Clone(v)
			}
			if v := msg.Get("model").Str; v != "" {
				model = strings.Clone(v)
			}
			e.Role, e.Provider, e.Model, e.Reply = "assistant", provider, model, piReply(msg)
		case typ == "message" && (role == "user" || role == "toolResult" || role == "bashExecution"):
			e.Role, e.Provider, e.Model = "user", provider, model
		case typ == "message" && role == "custom":
			e.Role = "user"
			e.Provider, e.Model = provider, model
		case typ == "compaction":
			// What pi sends after it: its summary, then the entries of the
			// path from firstKeptEntryId (version 1: the entry at
			// firstKeptEntryIndex) up to it, then what follows it. One that
			// names no earlier entry keeps nothing.
			kept := ""
			if k := l.Get("firstKeptEntryId"); k.Type == gjson.String {
				kept = ids[k.Str]
			} else if k := l.Get("firstKeptEntryIndex"); k.Type == gjson.Number && k.Int() > 0 && k.Int() < int64(len(byIndex)) {
				kept = byIndex[k.Int()]
			}
			if !onPath(parents, parent, kept) {
				kept = ""
			}
			tokens := int64(-1)
			if t := l.Get("tokensBefore"); t.Type == gjson.Number {
				tokens = t.Int()
			}
			// pi writes the usage of the request that made the summary
			// (CompactionEntry.usage); the entry names no model: the
			// session's at that point made it.
			if u := l.Get("usage"); u.IsObject() {
				if r := piUsage(u); r.HasUsage {
					e.Provider, e.Model, e.Reply = provider, model, r
				}
			}
			c.compaction(e, "pi", raw, l.Get("summary").Str, kept, tokens)
			if err := c.emit(e); err != nil {
				return err
			}
			continue
		default:
			if p, m := l.Get("provider").Str, l.Get("modelId").Str; typ == "model_change" && p != "" && m != "" {
				provider, model = strings.Clone(p), strings.Clone(m)
			}
			e.Kind = "pi." + typ
			c.stats.add(e.Kind+" entries kept", 1)
			e.Body = c.kept("pi", raw)
			if err := c.emit(e); err != nil {
				return err
			}
			continue
		}
		c.stats.add(role+" messages", 1)
		if c.opt.Content {
			e.Body = c.piBody(e, msg, role)
		}
		if err := c.emit(e); err != nil {
			return err
		}
	}
	if c.hdr == nil {
		return ErrNotALog
	}
	return nil
}

// onPath reports whether entry id is from on the path to entry at,
// by parents. The walk takes at most one step per entry: it ends on any
// map, a cycle too (none is made from a log: a parent is an entry before).
func onPath(parents map[string]string, at, id string) bool {
	for steps := 0; at != "" && id != "" && steps <= len(parents); at, steps = parents[at], steps+1 {
		if at == id {
			return true
		}
	}
	return false
}

// piStops is a pi stopReason as a Reply's StopReason: the map's own
// strings, never a view into the line (a reply outlives it).
var piStops = map[string]string{"stop": "stop", "length": "length", "toolUse": "toolUse", "error": "error", "aborted": "error"}

func piReply(msg gjson.Result) *Reply {
	r := &Reply{StopReason: piStops[msg.Get("stopReason").Str]}
	if u := msg.Get("usage"); u.IsObject() {
		u := piUsage(u)
		r.Usage, r.HasUsage = u.Usage, u.HasUsage
	}
	return r
}

// piUsage reads a pi usage object (a reply's, a compaction's).
func piUsage(u gjson.Result) *Reply {
	r := &Reply{HasUsage: u.Get("input").Type == gjson.Number && u.Get("output").Type == gjson.Number} // unknown is not zero
	r.Usage = session.Usage{Input: u.Get("input").Int(), Output: u.Get("output").Int(), CacheRead: u.Get("cacheRead").Int(), CacheWrite: u.Get("cacheWrite").Int()}
	if r.Usage.Check() != nil {
		r.HasUsage = false
	}
	return r
}

// piBody is the panto message of a pi message.
func (c *converter) piBody(e *Entry, msg gjson.Result, role string) []byte {
	b := append(c.buf[:0], `{"role":`...)
	b = rawjson.AppendString(b, e.Role)
	b = append(b, `,"content":[`...)
	nb := 0
	add := func(block []byte) {
		if nb > 0 {
			b = append(b, ',')
		}
		nb++
		b = append(b, block...)
	}
	content := msg.Get("content")
	switch role {
	case "toolResult":
		var parts []string
		if content.Type == gjson.String {
			parts = append(parts, content.Str)
		} else {
			content.ForEach(func(_, v gjson.Result) bool {
				parts = append(parts, c.piText(v))
				return true
			})
		}
		blk := append([]byte(`{"type":"toolResult","toolUseId":`), strRaw(msg.Get("toolCallId"))...)
		blk = append(blk, `,"content":`...)
		blk = rawjson.AppendString(blk, strings.Join(parts, "\n"))
		if c.src.Images && content.IsArray() {
			n := 0
			content.ForEach(func(_, v gjson.Result) bool {
				if v.Get("type").Str == "image" {
					if n == 0 {
						blk = append(blk, `,"images":[`...)
					} else {
						blk = append(blk, ',')
					}
					blk = append(append(blk, `{"mimeType":`...), strRaw(v.Get("mimeType"))...)
					blk = append(append(append(blk, `,"data":`...), strRaw(v.Get("data"))...), '}')
					n++
				}
				return true
			})
			if n > 0 {
				blk = append(blk, ']')
			}
		}
		if msg.Get("isError").Bool() {
			blk = append(blk, `,"isError":true`...)
		}
		add(append(blk, '}'))
	case "bashExecution":
		text := "[bash] $ " + msg.Get("command").Str + "\n" + msg.Get("output").Str
		add(appendBlock(nil, "text", "text", rawjson.AppendString(nil, text)))
	default:
		if content.Type == gjson.String {
			add(appendBlock(nil, "text", "text", []byte(content.Raw)))
			break
		}
		content.ForEach(func(_, v gjson.Result) bool {
			switch v.Get("type").Str {
			case "text":
				add(appendBlock(nil, "text", "text", strRaw(v.Get("text"))))
			case "thinking":
				blk := appendBlock(nil, "thinking", "thinking", strRaw(v.Get("thinking")))
				if s := v.Get("thinkingSignature"); s.Type == gjson.String {
					blk = append(blk[:len(blk)-1], `,"signature":`...)
					blk = append(append(blk, s.Raw...), '}')
				}
				add(blk)
			case "toolCall":
				add(appendToolUse(nil, strRaw(v.Get("id")), strRaw(v.Get("name")), v.Get("arguments").Raw))
			default:
				blk := appendBlock(nil, "text", "text", rawjson.AppendString(nil, c.piText(v)))
				if v.Get("type").Str == "image" && c.src.Images {
					blk = append(append(blk[:len(blk)-1], `,"image":{"mimeType":`...), strRaw(v.Get("mimeType"))...)
					blk = append(append(append(blk, `,"data":`...), strRaw(v.Get("data"))...), "}}"...)
				}
				add(blk)
			}
			return true
		})
	}
	b = append(b, ']')
	if r := e.Reply; r != nil {
		b = r.appendFields(b, e.Provider, e.Model)
	}
	c.buf = append(b, '}')
	return c.buf
}

// piText is a content part as text: its text, or a line naming an image.
func (c *converter) piText(v gjson.Result) string {
	switch typ := v.Get("type").Str; typ {
	case "text":
		return v.Get("text").Str
	case "image":
		c.stats.add("images named in text", 1)
		return "[image: " + v.Get("mimeType").Str + ", " + strconv.Itoa(base64Size(v.Get("data").Str)) + " bytes]"
	default:
		c.stats.add(typ+" parts kept as text", 1)
		return "[" + typ + "] " + v.Raw
	}
}

// piAgent is pi's row of the registry: a session header that is not
// panto's (Detect tells panto's first).
var piAgent = &Agent{
	Format: Pi, Name: "pi", Title: "pi", Noun: "a pi session",
	Env: []string{"PI_CODING_AGENT_DIR"},
	Looked: func(getenv func(string) string) []string {
		if d := home(getenv, "PI_CODING_AGENT_DIR", filepath.Join(".pi", "agent")); d != "" {
			return []string{filepath.Join(d, "sessions")}
		}
		return nil
	},
	Line:   func(h *Head) bool { return h.Type == "session" },
	Resume: nil, // pi --session takes the file, not an id: the caller has the path
	read:   (*converter).pi,
	mark:   []byte(`"user"`),
	prompt: messagePrompt,
}

// messagePrompt is the prompt of a pi or panto message line.
func messagePrompt(l gjson.Result) string {
	if l.Get("type").Str != "message" || l.Get("message.role").Str != "user" {
		return ""
	}
	return promptText(l.Get("message.content"), "text")
}
