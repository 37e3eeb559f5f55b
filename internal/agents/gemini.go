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
	"github.com/panto-dev/panto/pkg/session"
	"github.com/tidwall/gjson"
)

// Gemini CLI keeps a chat per session under
// ~/.gemini/tmp/<project>/chats/ (GEMINI_CLI_HOME replaces the home
// directory): session-<time>-<id8>.json, one JSON object rewritten whole
// (v0.4 – v0.38), and from v0.39 session-<time>-<id8>.jsonl, a first line
// {sessionId, projectHash, startTime, lastUpdated, kind} then message
// records appended, a record re-appended with the same id each time its
// message changes: the last one wins, in the place of the first; a
// {"$rewindTo":id} drops that message and those after it, a {"$set":…}
// merges metadata (its "messages" a checkpoint that replaces the list), a
// {"$patch":…} updates messages in place (reference/more-agents.md §1).
//
// A message of type "user" is a prompt; "gemini" a reply, with its tool
// calls and their results in the same record (a reply entry, then a user
// entry of the results); "info", "error" and "warning" are kept entries.
// A message the log rewound or checkpointed away was billed: it stays, on
// a branch the conversation left.
//
// Counting (reference §1.4): one "gemini" message (by id: the last record
// with tokens) is one request; its tokens.input holds the cached part, so
// fresh input = input − cached + tool (prompt side), cache read = cached,
// output = output + thoughts (thinking billed as output). Each reply's
// key is the session and message id, so a .json and the .jsonl a resume
// writes beside it, and a checkpoint's copy of a message, count once.

var geminiAgent = &Agent{
	Format: Gemini, Name: "gemini", Title: "Gemini CLI", Noun: "a Gemini CLI chat",
	Env: []string{"GEMINI_CLI_HOME"},
	Looked: func(getenv func(string) string) []string {
		if d := home(getenv, "GEMINI_CLI_HOME", ""); d != "" {
			return []string{filepath.Join(d, ".gemini", "tmp")}
		}
		return nil
	},
	// Its JSON Lines first line has Claude Code's "sessionId" too: told
	// by its "projectHash" first.
	early: true,
	Line: func(h *Head) bool {
		return h.SessionID.Type == gjson.String && h.Get("projectHash").Type == gjson.String
	},
	Doc: func(d *Doc) bool {
		if d.Get("sessionId").Type == gjson.String && (d.Has("messages") || d.Has("projectHash")) {
			return true
		}
		// Its members written in another order (sorted: messages before
		// sessionId) and a list longer than the look: told by its first
		// message.
		m := d.First("messages")
		return m.Get("id").Type == gjson.String && m.Get("timestamp").Exists() && geminiTypes[m.Get("type").Str]
	},
	Names: func(path string) bool {
		// chats/session-*.json, and a sub-agent's chats/<parent>/<id>.json
		dir := filepath.Dir(path)
		return strings.HasSuffix(path, ".json") && (filepath.Base(dir) == "chats" || filepath.Base(filepath.Dir(dir)) == "chats")
	},
	subagents: true,
	Resume:    func(id string) []string { return []string{"gemini", "--resume", id} },
	read:      (*converter).gemini,
	mark:      []byte(`"user"`),
	docList:   "messages",
	prompt: func(l gjson.Result) string {
		if l.Get("type").Str != "user" {
			return ""
		}
		return geminiText(l.Get("content"))
	},
}

// geminiTypes are the types of Gemini CLI's message records.
var geminiTypes = map[string]bool{"user": true, "gemini": true, "info": true, "error": true, "warning": true}

// geminiProvider is the provider Gemini CLI's replies are priced under
// (the table finds the model by its name: SPEC §11).
const geminiProvider = "google"

// geminiLoc is where a message's last record is: its line, and for a
// message inside a checkpoint ($set.messages), its index there.
type geminiLoc struct {
	n    int
	off  int64
	size int
	elem int // -1: the line is the record
}

// geminiMsg is one message of a JSON Lines chat, in the order of first
// appearance.
type geminiMsg struct {
	id      string
	loc     geminiLoc
	parent  int   // the index of the message before it when it was appended; -1 none
	patches []int // indexes in the chat's patches
	copies  []int // checkpoints that list it after another message than its parent (a copy each)
}

func (c *converter) gemini() error {
	doc, err := oneDocument(c.src)
	if err != nil {
		return err
	}
	if doc {
		return c.geminiDoc()
	}
	return c.geminiLines()
}

// oneDocument reports whether src holds one JSON document rather than
// JSON Lines: its first line that is not blank is no whole JSON object (a
// document written over several lines, as Gemini CLI writes a chat), or
// nothing but white space follows that line (a document on one line,
// however long: a chat re-serialised by jq -c or json.dump). Such a
// document is read as a stream; read as a line, a chat of 200 MB on one
// line took 1.4 GB. A first line is held whole only when it is short.
func oneDocument(src Source) (bool, error) {
	const look = 1 << 20
	first, end, err := firstLineEnd(Source{R: src.R, Size: min(src.Size, look)})
	if err != nil {
		return false, err
	}
	switch {
	case first == nil && src.Size > look: // a MiB of blank lines first
		if first, _, err = firstLineEnd(src); err != nil {
			return false, err
		}
		return !isObject(bytes.TrimSpace(first)), nil
	case first == nil:
		return true, nil // nothing: the document reader says so
	case end < look || src.Size <= look || endsLine(src, end):
		// the line is held whole
		if !isObject(bytes.TrimSpace(first)) {
			return true, nil
		}
	default: // longer than the look: where it ends is looked for
		if end, err = lineEndFrom(src, end); err != nil {
			return false, err
		}
	}
	return blankFrom(src, end)
}

// endsLine reports whether the byte before off is a newline.
func endsLine(src Source, off int64) bool {
	var b [1]byte
	_, err := src.R.ReadAt(b[:], off-1)
	return err == nil && b[0] == '\n'
}

// lineEndFrom is the offset after the first newline of src at or after
// off (its size when there is none), read a chunk at a time.
func lineEndFrom(src Source, off int64) (int64, error) {
	buf := make([]byte, 64<<10)
	for off < src.Size {
		n, err := src.R.ReadAt(buf[:min(int64(len(buf)), src.Size-off)], off)
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			return off + int64(i) + 1, nil
		}
		off += int64(n)
		if err != nil && !errors.Is(err, io.EOF) || n == 0 {
			return off, err
		}
	}
	return src.Size, nil
}

// blankFrom reports whether src holds only white space from off on.
func blankFrom(src Source, off int64) (bool, error) {
	buf := make([]byte, 64<<10)
	for off < src.Size {
		n, err := src.R.ReadAt(buf[:min(int64(len(buf)), src.Size-off)], off)
		if rawjson.SkipWS(buf[:n], 0) < n {
			return false, nil
		}
		off += int64(n)
		if err != nil && !errors.Is(err, io.EOF) || n == 0 {
			return true, err
		}
	}
	return true, nil
}

// geminiHeader writes the header from the chat's metadata.
func (c *converter) geminiHeader(meta gjson.Result, firstTS string) error {
	ts := stamp(meta.Get("startTime").Str)
	if ts == "" {
		ts = firstTS
	}
	h := Header{Timestamp: ts, Origin: Origin{Agent: "gemini", ID: strings.Clone(meta.Get("sessionId").Str)}}
	if d := meta.Get("directories.0"); d.Type == gjson.String {
		h.Cwd = strings.Clone(d.Str)
	}
	if meta.Get("kind").Str == "subagent" {
		// chats/<parent session id>/<id>.json[l]
		h.Origin.Parent = filepath.Base(filepath.Dir(c.src.Path))
	}
	return c.begin(h)
}

// geminiDoc reads the whole-file form as it streams: its messages are in
// order, each whole, none repeated. The chat's other members are read
// first, its messages passed over: the header needs them all, and some
// come after the messages (directories and kind, in ConversationRecord's
// order; every one, members sorted by a re-serialising tool), so a header
// made at the first message had no cwd and no kind.
func (c *converter) geminiDoc() error {
	meta := []byte{'{'} // the members but the messages, as an object
	d := newDocStream(io.NewSectionReader(c.src.R, 0, c.src.Size))
	d.object("messages", func(key string, val []byte) error {
		if len(meta) > 1 {
			meta = append(meta, ',')
		}
		meta = rawjson.AppendString(meta, key)
		meta = append(append(meta, ':'), val...)
		return nil
	}, nil) // the messages passed over, not validated: the read below does
	d = newDocStream(io.NewSectionReader(c.src.R, 0, c.src.Size))
	prev := ""
	err := d.object("messages", func(string, []byte) error { return nil },
		func(off int64, val []byte) error {
			m := gjson.Parse(str(val))
			if c.hdr == nil {
				if err := c.geminiHeader(gjson.ParseBytes(append(meta, '}')), stamp(m.Get("timestamp").Str)); err != nil {
					return err
				}
			}
			// Walked by rawjson, which skips a long content fast (gjson's Get
			// reads it a byte at a time); the first "id", as Get.
			id := gjson.Parse(str(member(m.Raw, "id"))).Str
			if id == "" {
				id = "at " + strconv.FormatInt(off, 10)
			}
			parent := ""
			if prev != "" {
				parent = c.last
			}
			prev = id
			return c.geminiMessage(d.Line(), m, c.geminiKey(id), parent, true)
		})
	if errors.Is(err, errDocCut) {
		c.stats.Torn = max(d.Line(), 1) // a copy cut short, or no JSON: what was whole is read
		err = nil
	}
	if err != nil {
		return err
	}
	if c.hdr == nil {
		m := gjson.ParseBytes(append(meta, '}'))
		if m.Get("sessionId").Type != gjson.String {
			return ErrNotALog
		}
		return c.geminiHeader(m, "")
	}
	return nil
}

// geminiKey is the entry key of message id.
func (c *converter) geminiKey(id string) string { return "msg\x00" + id }

// geminiLines reads the JSON Lines form in two passes: the first finds
// each message's last record and the tree the rewinds and checkpoints
// make, the second reads those records, one at a time, and writes them.
func (c *converter) geminiLines() error {
	lr := c.newLines()
	var (
		msgs    []*geminiMsg
		byID    = map[string]int{}
		live    []int // the conversation as it stands: indexes in msgs
		patches []geminiLoc
		meta    []byte // the first line
		firstTS string
	)
	put := func(id string, loc geminiLoc, checkpoint bool) {
		i, ok := byID[id]
		if !ok {
			i = len(msgs)
			p := -1
			if len(live) > 0 {
				p = live[len(live)-1]
			}
			msgs = append(msgs, &geminiMsg{id: strings.Clone(id), loc: loc, parent: p})
			byID[msgs[i].id] = i
			live = append(live, i)
			return
		}
		m := msgs[i]
		m.loc = loc
		if checkpoint {
			p := -1
			if len(live) > 0 {
				p = live[len(live)-1]
			}
			if p != m.parent && p != i {
				m.copies = append(m.copies, p)
			}
			live = append(live, i)
			return
		}
		if !slices.Contains(live, i) { // appended again after a rewind dropped it
			live = append(live, i)
		}
	}
	for {
		n, off, raw, err := c.line(lr)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		loc := geminiLoc{n: n, off: off, size: len(raw), elem: -1}
		var rewind, patch, id, set, sid, ts gjson.Result
		rawjson.Members(raw, func(k, v []byte) bool { // one walk: a record's content is skipped
			switch string(k) {
			case "$rewindTo":
				rewind = gjson.Parse(str(v))
			case "$patch":
				patch = gjson.Parse(str(v))
			case "id":
				id = gjson.Parse(str(v))
			case "$set":
				set = gjson.Parse(str(v))
			case "sessionId":
				sid = gjson.Parse(str(v))
			case "timestamp":
				ts = gjson.Parse(str(v))
			}
			return true
		})
		l := gjson.Parse(str(raw))
		switch {
		case rewind.Type == gjson.String:
			to, ok := byID[rewind.Str]
			cut := 0
			if ok {
				for k, i := range live {
					if i == to {
						cut = k
						break
					}
				}
			}
			live = live[:cut]
			c.stats.add("gemini rewinds (what they dropped kept on a branch)", 1)
		case patch.IsObject():
			p := patch
			patches = append(patches, loc)
			for _, u := range append([]gjson.Result{p}, p.Get("updates").Array()...) {
				if i, ok := byID[u.Get("id").Str]; ok {
					msgs[i].patches = append(msgs[i].patches, len(patches)-1)
				}
			}
			p.Get("removeIds").ForEach(func(_, v gjson.Result) bool {
				if i, ok := byID[v.Str]; ok {
					live = slicesDelete(live, i)
				}
				return true
			})
			if p.Get("orderIds").Exists() {
				c.stats.add("gemini reorderings not applied", 1)
			}
		case id.Type == gjson.String:
			put(id.Str, loc, false)
			if firstTS == "" {
				firstTS = stamp(ts.Str)
			}
		case set.IsObject():
			if ms := set.Get("messages"); ms.IsArray() {
				live = live[:0]
				k := 0
				ms.ForEach(func(_, m gjson.Result) bool {
					if id := m.Get("id"); id.Type == gjson.String {
						put(id.Str, geminiLoc{n: n, off: off, size: len(raw), elem: k}, true)
					}
					k++
					return true
				})
				c.stats.add("gemini checkpoints", 1)
			}
		case sid.Type == gjson.String && meta == nil:
			meta = append([]byte{}, raw...)
			if ms := l.Get("messages"); ms.IsArray() { // a whole chat on one line
				k := 0
				ms.ForEach(func(_, m gjson.Result) bool {
					if id := m.Get("id"); id.Type == gjson.String {
						put(id.Str, geminiLoc{n: n, off: off, size: len(raw), elem: k}, false)
					}
					k++
					return true
				})
			}
		default:
			c.stats.add("gemini records of no known kind (not read)", 1)
		}
	}
	if meta == nil {
		return ErrNotALog
	}
	mt := gjson.ParseBytes(meta)
	if firstTS == "" {
		firstTS = stamp(mt.Get("messages.0.timestamp").Str)
	}
	if err := c.geminiHeader(mt, firstTS); err != nil {
		return err
	}
	// The second pass: the records, from where the first found them.
	ids := make([]string, len(msgs)) // the entry each message became (its last, a reply's results)
	var buf []byte
	// A record holding a whole chat (a chat on one line, a $set) is read
	// and split into its messages once, not once for each of them: that
	// was a read and a parse of the whole line per message, hours for a
	// chat of 200 MB written on one line.
	var (
		chatBuf   []byte
		chatOff   int64 = -1
		chatElems []gjson.Result
	)
	ahead := readAhead{r: c.src.R}
	read := func(loc geminiLoc) (gjson.Result, error) {
		if loc.elem >= 0 && loc.off == chatOff && len(chatBuf) == loc.size {
			if loc.elem < len(chatElems) {
				return chatElems[loc.elem], nil
			}
			return gjson.Result{}, nil
		}
		b := buf
		if loc.elem >= 0 {
			b = chatBuf
		}
		if cap(b) < loc.size {
			b = make([]byte, loc.size)
		}
		b = b[:loc.size]
		if err := ahead.readAt(b, loc.off); err != nil && !errors.Is(err, io.EOF) {
			return gjson.Result{}, err
		}
		l := gjson.Parse(str(b))
		if loc.elem < 0 {
			buf = b
			return l, nil
		}
		chatBuf, chatOff, chatElems = b, loc.off, chatElems[:0]
		ms := l.Get("messages")
		if set := l.Get("$set"); set.Exists() {
			ms = set.Get("messages")
		}
		ms.ForEach(func(_, m gjson.Result) bool {
			chatElems = append(chatElems, m)
			return true
		})
		if loc.elem < len(chatElems) {
			return chatElems[loc.elem], nil
		}
		return gjson.Result{}, nil
	}
	for i, m := range msgs {
		rec, err := read(m.loc)
		if err != nil {
			return err
		}
		if len(m.patches) > 0 {
			rec, err = c.geminiPatch(rec, m, patches, read)
			if err != nil {
				return err
			}
		}
		parent := ""
		if m.parent >= 0 {
			parent = ids[m.parent]
		}
		if err := c.geminiMessage(m.loc.n, rec, c.geminiKey(m.id), parent, m.parent >= 0 || i == 0); err != nil {
			return err
		}
		ids[i] = c.last
		for k, p := range m.copies {
			// A checkpoint put the message after another: a copy there,
			// counted once (its reply's key is the message's).
			if err := c.geminiMessage(m.loc.n, rec, c.geminiKey(m.id)+"\x00copy\x00"+strconv.Itoa(k), ids[p], true); err != nil {
				return err
			}
			ids[i] = c.last
		}
	}
	return nil
}

// readAhead reads a file's records where they are, mostly in the file's
// order: a window of it at a time, copied out of, not a pread for each.
type readAhead struct {
	r   io.ReaderAt
	win []byte // the file's bytes from off
	off int64
	buf []byte
}

// aheadSize is a window's size; a record over half of it is read alone.
const aheadSize = 16 << 10

// readAt fills b with the file's bytes from off, as io.ReaderAt.
func (a *readAhead) readAt(b []byte, off int64) error {
	if len(b) > aheadSize/2 {
		_, err := a.r.ReadAt(b, off)
		return err
	}
	if a.win == nil || off < a.off || off+int64(len(b)) > a.off+int64(len(a.win)) {
		if a.buf == nil {
			a.buf = make([]byte, aheadSize)
		}
		n, err := a.r.ReadAt(a.buf, off)
		a.win, a.off = a.buf[:n], off
		if n < len(b) {
			copy(b, a.win)
			a.win = nil // what was read stays unknown: the next read goes to the file
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
	}
	copy(b, a.win[off-a.off:])
	return nil
}

// geminiPatch applies a message's $patch records to it: a new content,
// tool call results.
func (c *converter) geminiPatch(rec gjson.Result, m *geminiMsg, patches []geminiLoc, read func(geminiLoc) (gjson.Result, error)) (gjson.Result, error) {
	b := []byte(rec.Raw)
	for _, k := range m.patches {
		p, err := read(patches[k])
		if err != nil {
			return rec, err
		}
		p = p.Get("$patch")
		for _, u := range append([]gjson.Result{p}, p.Get("updates").Array()...) {
			if u.Get("id").Str != m.id {
				continue
			}
			if ct := u.Get("content"); ct.Exists() && ct.Type != gjson.Null {
				b = setRaw(b, "content", ct.Raw)
			}
			u.Get("toolCalls").ForEach(func(_, cp gjson.Result) bool {
				if !cp.Get("result").Exists() {
					return true
				}
				gjson.GetBytes(b, "toolCalls").ForEach(func(k, call gjson.Result) bool {
					if call.Get("id").Str == cp.Get("id").Str {
						b = setRaw(b, "toolCalls."+k.String()+".result", cp.Get("result").Raw)
					}
					return true
				})
				return true
			})
		}
	}
	c.stats.add("gemini patches applied", len(m.patches))
	return gjson.ParseBytes(b), nil
}

// setRaw sets the member at path (an existing object's) of obj to raw.
func setRaw(obj []byte, path, raw string) []byte {
	r := gjson.GetBytes(obj, path)
	if r.Exists() && r.Index > 0 {
		out := append([]byte{}, obj[:r.Index]...)
		out = append(out, raw...)
		return append(out, obj[r.Index+len(r.Raw):]...)
	}
	// absent: added at the end of its object
	parent, key := "", path
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		parent, key = path[:i], path[i+1:]
	}
	o := gjson.ParseBytes(obj)
	if parent != "" {
		o = gjson.GetBytes(obj, parent)
	}
	if !o.IsObject() || o.Index < 0 || parent != "" && o.Index == 0 {
		return obj
	}
	end := o.Index + len(o.Raw) - 1 // its '}'
	out := append([]byte{}, obj[:end]...)
	if len(bytes.TrimSpace(obj[o.Index+1:end])) > 0 {
		out = append(out, ',')
	}
	out = rawjson.AppendString(out, key)
	out = append(out, ':')
	out = append(out, raw...)
	return append(out, obj[end:]...)
}

func slicesDelete(s []int, v int) []int {
	out := s[:0]
	for _, x := range s {
		if x != v {
			out = append(out, x)
		}
	}
	return out
}

// geminiMessage writes the entries of one message (m, valid during the
// call): key its entry key, parent the entry it follows ("" for the
// first; chain false: the first of a branch with no parent known, hung
// off the last entry).
func (c *converter) geminiMessage(n int, m gjson.Result, key, parent string, chain bool) error {
	if !chain || parent == "" && c.last != "" {
		parent = c.last
	}
	f := geminiFieldsOf(m)
	if !c.opt.Content && f.typ != "gemini" {
		return nil // a cost reads the replies only
	}
	ts := stamp(f.ts)
	c.e = Entry{Line: n, ID: c.id(key), ParentID: parent, Timestamp: ts}
	e := &c.e
	switch typ := f.typ; typ {
	case "user":
		e.Role, e.Provider, e.Model = "user", geminiProvider, c.geminiModel
		c.stats.add("user messages", 1)
		if c.opt.Content {
			e.Body = c.geminiUser(m)
		}
		return c.emit(e)
	case "gemini":
		if v := f.model; v != "" && v != c.geminiModel {
			c.geminiModel = strings.Clone(v)
		}
		model := c.geminiModel
		if model == "" {
			model = "unknown"
		}
		e.Role, e.Provider, e.Model = "assistant", geminiProvider, model
		e.Reply = geminiReply(f, c.hdr.Origin.ID)
		c.stats.add("gemini replies", 1)
		if c.opt.Content {
			e.Body = c.geminiReplyBody(e, m)
		}
		if err := c.emit(e); err != nil || !c.opt.Content {
			return err
		}
		results := 0
		m.Get("toolCalls").ForEach(func(_, call gjson.Result) bool {
			if r := call.Get("result"); r.Exists() && r.Type != gjson.Null {
				results++
			}
			return true
		})
		if results == 0 {
			return nil
		}
		c.e = Entry{Line: n, ID: c.id(key + "\x00results"), ParentID: c.last, Timestamp: ts, Role: "user", Provider: geminiProvider, Model: model}
		if t := stamp(m.Get("toolCalls.0.timestamp").Str); t != "" {
			c.e.Timestamp = t
		}
		c.stats.add("gemini tool results", results)
		if c.opt.Content {
			c.e.Body = c.geminiResults(m)
		}
		return c.emit(&c.e)
	default:
		if typ == "" {
			typ = "record"
		}
		e.Kind = "gemini." + typ
		c.stats.add(e.Kind+" entries kept", 1)
		raw := []byte(m.Raw)
		if bytes.ContainsAny(raw, "\r\n") { // pretty-printed: one line of the session
			if b, err := rawjson.Compact(raw); err == nil {
				raw = b
			}
		}
		e.Body = c.kept("gemini", raw)
		return c.emit(e)
	}
}

// geminiFields are the members of a message record a reader asks for
// first, found in one walk over it (its content, which may be long, skipped).
type geminiFields struct {
	typ, ts, model, id string
	tokens             gjson.Result
	calls              bool // it has tool calls
}

func geminiFieldsOf(m gjson.Result) geminiFields {
	var f geminiFields
	rawjson.Members(unsafe.Slice(unsafe.StringData(m.Raw), len(m.Raw)), func(k, v []byte) bool {
		switch string(k) {
		case "type":
			f.typ = rawjson.Str(v)
		case "timestamp":
			f.ts = rawjson.Str(v)
		case "model":
			f.model = rawjson.Str(v)
		case "id":
			f.id = rawjson.Str(v)
		case "tokens":
			f.tokens = gjson.Parse(str(v))
		case "toolCalls":
			f.calls = len(v) > 0 && v[0] == '[' && rawjson.SkipWS(v, 1) < len(v) && v[rawjson.SkipWS(v, 1)] != ']'
		}
		return true
	})
	return f
}

// geminiReply is what a reply cost: its tokens, by Gemini's rules.
func geminiReply(f geminiFields, session string) *Reply {
	r := &Reply{Key: "gemini:" + session + ":" + f.id, StopReason: "stop"}
	if f.calls {
		r.StopReason = "toolUse"
	}
	t := f.tokens
	if !t.IsObject() {
		return r
	}
	var in, cached, out, thoughts, tool int64
	t.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "input":
			in = v.Int()
		case "cached":
			cached = v.Int()
		case "output":
			out = v.Int()
		case "thoughts":
			thoughts = v.Int()
		case "tool":
			tool = v.Int()
		}
		return true
	})
	if cached > in { // not the rule: said, as it is
		in = cached
	}
	r.Usage = sessionUsage(in-cached+tool, out+thoughts, cached, thoughts)
	r.HasUsage = r.Usage.Check() == nil
	return r
}

func sessionUsage(in, out, cacheRead, reasoning int64) session.Usage {
	return session.Usage{Input: in, Output: out, CacheRead: cacheRead, Reasoning: reasoning}
}

// geminiText is the text of a content (a string, a part, or parts): its
// text parts, thoughts left out.
func geminiText(ct gjson.Result) string {
	if ct.Type == gjson.String {
		return ct.Str
	}
	if ct.IsObject() {
		if ct.Get("thought").Bool() {
			return ""
		}
		return ct.Get("text").Str
	}
	var parts []string
	ct.ForEach(func(_, p gjson.Result) bool {
		if t := p.Get("text"); t.Type == gjson.String && !p.Get("thought").Bool() {
			parts = append(parts, t.Str)
		}
		return true
	})
	return strings.Join(parts, "\n")
}

// geminiParts appends the blocks of a content: text parts as text,
// thought parts as thinking, what else as a text that names it.
func (c *converter) geminiParts(add func([]byte), ct gjson.Result) {
	if ct.Type == gjson.String {
		if ct.Str != "" {
			add(appendBlock(nil, "text", "text", []byte(ct.Raw)))
		}
		return
	}
	part := func(p gjson.Result) {
		switch {
		case p.Get("text").Type == gjson.String && p.Get("thought").Bool():
			add(appendBlock(nil, "thinking", "thinking", []byte(p.Get("text").Raw)))
		case p.Get("text").Type == gjson.String:
			add(appendBlock(nil, "text", "text", []byte(p.Get("text").Raw)))
		case p.Get("inlineData").Exists():
			c.stats.add("images named in text", 1)
			add(appendBlock(nil, "text", "text", rawjson.AppendString(nil, "[image: "+p.Get("inlineData.mimeType").Str+", "+
				strconv.Itoa(base64Size(p.Get("inlineData.data").Str))+" bytes]")))
		default:
			c.stats.add("gemini parts kept as text", 1)
			add(appendBlock(nil, "text", "text", rawjson.AppendString(nil, "[part] "+p.Raw)))
		}
	}
	if ct.IsObject() {
		part(ct)
		return
	}
	ct.ForEach(func(_, p gjson.Result) bool { part(p); return true })
}

// blocks starts a message body; add appends a block to it.
func (c *converter) blocks(role string) (*[]byte, func([]byte)) {
	b := append(c.buf[:0], `{"role":`...)
	b = rawjson.AppendString(b, role)
	b = append(b, `,"content":[`...)
	nb := 0
	return &b, func(block []byte) {
		if nb > 0 {
			b = append(b, ',')
		}
		nb++
		b = append(b, block...)
	}
}

func (c *converter) geminiUser(m gjson.Result) []byte {
	b, add := c.blocks("user")
	c.geminiParts(add, m.Get("content"))
	*b = append(*b, "]}"...)
	c.buf = *b
	return c.buf
}

func (c *converter) geminiReplyBody(e *Entry, m gjson.Result) []byte {
	b, add := c.blocks("assistant")
	m.Get("thoughts").ForEach(func(_, t gjson.Result) bool {
		text := t.Get("subject").Str
		if d := t.Get("description").Str; d != "" {
			if text != "" {
				text += "\n"
			}
			text += d
		}
		add(appendBlock(nil, "thinking", "thinking", rawjson.AppendString(nil, text)))
		return true
	})
	c.geminiParts(add, m.Get("content"))
	m.Get("toolCalls").ForEach(func(_, call gjson.Result) bool {
		add(appendToolUse(nil, strRaw(call.Get("id")), strRaw(call.Get("name")), call.Get("args").Raw))
		return true
	})
	*b = append(*b, ']')
	*b = e.Reply.appendFields(*b, e.Provider, e.Model)
	c.buf = append(*b, '}')
	return c.buf
}

// geminiResults is the user message that answers a reply's tool calls
// that hold a result: a functionResponse's output (or its response as
// JSON), an error's words, marked isError.
func (c *converter) geminiResults(m gjson.Result) []byte {
	b, add := c.blocks("user")
	m.Get("toolCalls").ForEach(func(_, call gjson.Result) bool {
		r := call.Get("result")
		if !r.Exists() || r.Type == gjson.Null {
			return true
		}
		var parts []string
		each := func(p gjson.Result) {
			switch {
			case p.Get("functionResponse").Exists():
				resp := p.Get("functionResponse.response")
				switch {
				case resp.Get("output").Type == gjson.String:
					parts = append(parts, resp.Get("output").Str)
				case resp.Get("error").Type == gjson.String:
					parts = append(parts, resp.Get("error").Str)
				default:
					parts = append(parts, resp.Raw)
				}
			case p.Get("text").Type == gjson.String:
				parts = append(parts, p.Get("text").Str)
			case p.Get("inlineData").Exists():
				c.stats.add("images named in text", 1)
				parts = append(parts, "[image: "+p.Get("inlineData.mimeType").Str+", "+strconv.Itoa(base64Size(p.Get("inlineData.data").Str))+" bytes]")
			default:
				parts = append(parts, p.Raw)
			}
		}
		switch {
		case r.IsArray():
			r.ForEach(func(_, p gjson.Result) bool { each(p); return true })
		case r.IsObject():
			each(r)
		case r.Type == gjson.String:
			parts = append(parts, r.Str)
		}
		blk := append([]byte(`{"type":"toolResult","toolUseId":`), strRaw(call.Get("id"))...)
		blk = append(blk, `,"content":`...)
		blk = rawjson.AppendString(blk, strings.Join(parts, "\n"))
		if s := call.Get("status").Str; s == "error" || s == "cancelled" {
			blk = append(blk, `,"isError":true`...)
		}
		add(append(blk, '}'))
		return true
	})
	*b = append(*b, "]}"...)
	c.buf = *b
	return c.buf
}
