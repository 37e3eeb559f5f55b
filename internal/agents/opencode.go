package agents

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/panto-dev/panto/internal/rawjson"
	"github.com/panto-dev/panto/pkg/catalog"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/tidwall/gjson"
)

// OpenCode (reference/more-agents.md §2, gemini-opencode.md §2) keeps its
// sessions in three shapes, all read into the same model here: the SQLite
// database opencode.db (1.2.0 on; opencode_db.go), the older storage/ tree
// of JSON files (one file per session, message and part;
// opencode_json.go), and the documents `opencode export` writes
// ({info, messages:[{info, parts}]}); and `opencode run --format json`
// prints a run's parts as JSON Lines. A session is messages (user,
// assistant), each a list of parts (text, reasoning, tool, step-start,
// step-finish, file, …).
//
// Counting (§2.4): one billed call per step-finish part (one per assistant
// message in every real file); a message without one counts its own
// tokens. OpenCode's own cost is not used: 1.2.x counts reasoning twice,
// and subscription providers write 0. Output billed is total - input -
// cache.read - cache.write when total is there (1.2.x counts reasoning
// inside output, 1.18 beside it); without total, output + reasoning, but
// output alone for a session made before 1.16 whose reasoning fits in it.

// openCodeAgent is OpenCode's row of the registry.
var openCodeAgent = &Agent{
	Format: OpenCode, Name: "opencode", Title: "OpenCode", Noun: "an OpenCode database, export or run stream",
	Env: []string{"OPENCODE_DATA_DIR", "XDG_DATA_HOME"},
	Looked: func(getenv func(string) string) []string {
		if d := getenv("OPENCODE_DATA_DIR"); d != "" {
			return []string{d}
		}
		if d := getenv("XDG_DATA_HOME"); d != "" {
			return []string{filepath.Join(d, "opencode")}
		}
		if d := home(getenv, "", filepath.Join(".local", "share")); d != "" {
			return []string{filepath.Join(d, "opencode")}
		}
		return nil
	},
	// `opencode run --format json`: one event per part.
	Line: func(h *Head) bool { return ocRunEvent(gjson.ParseBytes(h.Line)) },
	// An export ({info, messages}); a session of the storage/ tree
	// ({id: "ses_…", projectID, …}), or one of its messages or parts (read
	// through their session: refused, named).
	Doc: func(d *Doc) bool {
		id := d.Get("id").Str
		return d.Has("info") && d.Has("messages") ||
			strings.HasPrefix(id, "ses_") && d.Has("projectID") ||
			(strings.HasPrefix(id, "msg_") || strings.HasPrefix(id, "prt_")) && d.Has("sessionID")
	},
	Magic: IsSQLite, // any SQLite database: one not OpenCode's is refused by name
	// opencode.db, a channel's opencode-<channel>.db, and the sessions of
	// the storage/ tree (its messages and parts are read through them).
	Names: func(path string) bool {
		name := filepath.Base(path)
		if name == "opencode.db" || strings.HasPrefix(name, "opencode-") && strings.HasSuffix(name, ".db") {
			return true
		}
		return strings.HasPrefix(name, "ses_") && strings.HasSuffix(name, ".json") &&
			filepath.Base(filepath.Dir(filepath.Dir(path))) == "session" && filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(path)))) == "storage"
	},
	Resume: func(id string) []string { return []string{"opencode", "--session", id} },
	// A child session (parent_id) is a subagent's: OpenCode links no other
	// session to a parent (a fork names none).
	subagents: true,
	read:      (*converter).opencode,
}

// ocSession is one OpenCode session, from any of the shapes.
type ocSession struct {
	id, parent, dir, title, version string
	created                         int64 // ms
	msgs                            []ocMessage
	strayParts                      int // parts of no message of the session
	path                            string
}

// ocMessage is a message: its info (JSON, without its id in the database)
// and its parts.
type ocMessage struct {
	id      string
	created int64
	data    string
	parts   []ocPart
	steps   *ocSteps // its step-finish parts' sum, read before (allSteps)
	raw     int      // the line of a stream it came from, for stats
	body    []byte   // a user message's Body read for its title (Options.Prompts)
}

type ocPart struct {
	id   string
	data string
}

// ocAgent is the origin's agent name of OpenCode's sessions.
const ocAgent = "opencode"

// ErrSeveralSessions is a log that holds several sessions given where one
// is read (replay): an OpenCode database.
type ErrSeveralSessions struct {
	Path string
	IDs  []string
}

func (e *ErrSeveralSessions) Error() string {
	ids := e.IDs
	more := ""
	if len(ids) > 3 {
		ids, more = ids[:3], ", …"
	}
	return fmt.Sprintf("%s holds %d OpenCode sessions (%s%s): give one as %s#SESSION, or import them all (panto-log import)",
		e.Path, len(e.IDs), strings.Join(ids, ", "), more, e.Path)
}

// opencode reads an OpenCode log of any shape.
func (c *converter) opencode() error {
	head := make([]byte, 16)
	n, _ := c.src.R.ReadAt(head, 0)
	head = head[:n]
	if IsSQLite(head) {
		return c.ocDatabase()
	}
	first, _, err := firstLineEnd(c.src)
	if err != nil {
		return err
	}
	if h := readHeadOC(first); h.stream {
		return c.ocStream()
	}
	return c.ocDocument()
}

// ocHead is what a first line says of an OpenCode stream.
type ocHead struct{ stream bool }

func readHeadOC(line []byte) ocHead {
	if !isObject(line) {
		return ocHead{}
	}
	l := gjson.ParseBytes(line)
	return ocHead{stream: ocRunEvent(l)}
}

// ocRunEvents are the event types of `opencode run --format json`.
var ocRunEvents = map[string]bool{"step_start": true, "step_finish": true, "text": true, "tool_use": true, "reasoning": true, "error": true}

func ocRunEvent(l gjson.Result) bool {
	if l.Get("sessionID").Type != gjson.String || !ocRunEvents[l.Get("type").Str] {
		return false
	}
	// A part, or an error of the session (a run that failed, perhaps
	// before any step: its only event).
	return l.Get("part").IsObject() || l.Get("type").Str == "error" && l.Get("error").Exists()
}

// ocDatabase reads an opencode.db: the session c.src.Session names, else
// every session that has messages, each as a session of its own (a header,
// then its entries).
func (c *converter) ocDatabase() error {
	only, path := c.src.Session, c.src.Path
	if file, id, ok := catalog.SplitSession(path); ok && only == "" {
		// DB#SESSION: the session an id names (SPEC §15, one id)
		only, path = id, file
	}
	label := path // the user's file, the origin's path
	path, cleanup, err := dbPath(path, c.src.R, c.src.Size)
	if err != nil {
		return err
	}
	defer cleanup()
	d, err := openOpenCode(path)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.checkSchema(); err != nil {
		var se *ocSchemaError
		if errors.As(err, &se) {
			return err
		}
		return err
	}
	list, err := d.sessions(only)
	if err != nil {
		return err
	}
	if len(list) == 0 {
		if only != "" {
			return fmt.Errorf("%s: no OpenCode session %s with messages in it", c.src.Path, only)
		}
		return fmt.Errorf("%w: an OpenCode database with no session that has messages", ErrNotALog)
	}
	if c.one && len(list) > 1 {
		ids := make([]string, len(list))
		for i, s := range list {
			ids[i] = s.id
		}
		return &ErrSeveralSessions{Path: c.src.Path, IDs: ids}
	}
	// A cost report of the whole database reads the parts of its sessions
	// after the first all in one pass (allSteps): a reader that stops at
	// the first session (one that wants a header's id) reads no more.
	scanned := false
	steps := func() error {
		if !scanned {
			return nil
		}
		return d.allSteps(list[1:], c.stopped)
	}
	for i, row := range list {
		if err := c.stopped(); err != nil {
			return err
		}
		if i == 1 && only == "" && !c.opt.Content {
			scanned = true
			if err := steps(); err != nil {
				return err
			}
		}
		s, err := c.ocLoad(d, row)
		if err == nil && d.changed() {
			// OpenCode started, or checkpointed, during an immutable read:
			// this session again, and the rest, from a snapshot.
			if err = d.takeSnapshot(); err == nil {
				if err = steps(); err == nil {
					s, err = c.ocLoad(d, row)
				}
			}
		}
		if err != nil {
			return err
		}
		s.path = label
		if err := c.ocEmit(s); err != nil {
			return err
		}
		// What was emitted holds nothing of the array (a body, a reply
		// are their own): the next session's messages go into it.
		clear(s.msgs)
		d.spare = s.msgs[:0]
	}
	return nil
}

// ocLoad reads a session of the database d as the options ask: with
// Prompts but not Content, the parts of its user messages are read too, up
// to the first message that holds a title (ocPrompts).
func (c *converter) ocLoad(d *ocDB, row ocSessionRow) (*ocSession, error) {
	s, err := d.load(row, c.opt.Content)
	if err != nil || c.opt.Content || !c.opt.Prompts {
		return s, err
	}
	return s, c.ocPrompts(s, func(m *ocMessage) (err error) {
		m.parts, err = d.messageParts(s.id, m.id)
		return err
	})
}

// ocPrompts keeps the bodies of s's user messages up to the first that
// holds a title, for ocMessage to give (Options.Prompts); parts, when not
// nil, reads a message's parts first.
func (c *converter) ocPrompts(s *ocSession, parts func(*ocMessage) error) error {
	for i := range s.msgs {
		m := &s.msgs[i]
		if gjson.Get(m.data, "role").Str != "user" {
			continue
		}
		if parts != nil {
			if err := parts(m); err != nil {
				return err
			}
		}
		m.body = slices.Clone(c.ocUserBody(m))
		if ocTitle(m.body) != "" {
			break
		}
	}
	return nil
}

// ocTitle is TitleOf of a user message's body as a panto line (which
// names the registry this is part of).
func ocTitle(body []byte) string {
	return shortTitle(promptText(gjson.GetBytes(body, "content"), "text"))
}

// dbPath returns the file to open as the database r holds: path, when it
// is that file (a regular file of r's size), else a copy of r of panto's
// own (standard input, spooled; a store's file), removed by cleanup.
func dbPath(path string, r io.ReaderAt, size int64) (string, func(), error) {
	if fi, err := os.Stat(path); path != "-" && path != "" && err == nil && fi.Mode().IsRegular() {
		// The file r reads (its size may have changed since: OpenCode
		// writing), or a file of r's size by its name.
		if f, ok := r.(interface{ Stat() (os.FileInfo, error) }); ok {
			if ri, err := f.Stat(); err == nil && os.SameFile(ri, fi) {
				return path, func() {}, nil
			}
		} else if fi.Size() == size {
			return path, func() {}, nil
		}
	}
	dir, err := copyDir()
	if err != nil {
		return "", nil, err
	}
	cleanup := func() { os.RemoveAll(dir) }
	path = filepath.Join(dir, "opencode.db")
	out, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		_, err = io.Copy(out, io.NewSectionReader(r, 0, size))
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		cleanup()
		return "", nil, err
	}
	return path, cleanup, nil
}

// stopped is the context's error when the read is to stop (a signal),
// checked every few thousand messages.
func (c *converter) stopped() error {
	if c.reads++; c.reads%4096 == 0 && c.ctx != nil {
		return c.ctx.Err()
	}
	return nil
}

// ocSessions lists the sessions of an OpenCode database that have
// messages (for an import, one session each).
func ocSessions(path string) ([]string, error) {
	d, err := openOpenCode(path)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	if err := d.checkSchema(); err != nil {
		return nil, err
	}
	list, err := d.sessions("")
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(list))
	for i, s := range list {
		ids[i] = s.id
	}
	return ids, nil
}

// LogSession is one session of a log that holds several.
type LogSession struct {
	ID    string // the agent's own id (an OpenCode "ses_…")
	Panto string // panto's id of it: its conversion's (and import's) header id
}

// SessionsIn lists the sessions of the log at path when it holds several
// (an OpenCode database), with the ids panto gives them; nil for a log of
// one session.
func SessionsIn(path string) ([]LogSession, error) {
	f, err := openRegular(path) // a FIFO is refused, not waited on
	if err != nil {
		return nil, err
	}
	head := make([]byte, 16)
	n, _ := io.ReadFull(f, head)
	f.Close()
	if !IsSQLite(head[:n]) {
		return nil, nil
	}
	d, err := openOpenCode(path)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	if err := d.checkSchema(); err != nil {
		return nil, err
	}
	list, err := d.sessions("")
	if err != nil {
		return nil, err
	}
	out := make([]LogSession, len(list))
	for i, s := range list {
		first := s.created
		if first <= 0 { // as ocEmit: the first message's time
			d.db.QueryRow(`SELECT MIN(time_created) FROM message WHERE session_id = ?`, s.id).Scan(&first)
		}
		ts := msTime(first)
		if ts == "" {
			ts = session.Timestamp(time.Unix(0, 0))
		}
		out[i] = LogSession{ID: s.id, Panto: sessionID(ts, ocAgent+"\x00"+s.id)}
	}
	return out, nil
}

// Sessions returns the ids of the sessions the log at path holds when it
// holds several (an OpenCode database), else nil: a log of one session.
func Sessions(path string) ([]string, error) {
	f, err := openRegular(path) // a FIFO is refused, not waited on
	if err != nil {
		return nil, err
	}
	head := make([]byte, 16)
	n, _ := io.ReadFull(f, head)
	f.Close()
	if !IsSQLite(head[:n]) {
		return nil, nil
	}
	return ocSessions(path)
}

// reset makes the converter ready for the next session of a log that holds
// several.
func (c *converter) reset() {
	c.hdr, c.last, c.lastTS = nil, "", ""
	c.taken = map[string]bool{}
	c.open = map[string]*calls{}
}

// msTime is ms (Unix milliseconds) as SPEC §2 writes times, "" for none.
func msTime(ms int64) string {
	if ms <= 0 {
		return ""
	}
	return session.Timestamp(time.UnixMilli(ms))
}

// ocEmit writes one session: its header, then its messages.
func (c *converter) ocEmit(s *ocSession) error {
	if c.hdr != nil {
		c.reset()
	}
	first := s.created
	if first <= 0 && len(s.msgs) > 0 {
		first = s.msgs[0].created
	}
	h := Header{Timestamp: msTime(first), Cwd: s.dir, Origin: Origin{Agent: ocAgent, ID: s.id, Path: s.path, Parent: s.parent}}
	if err := c.begin(h); err != nil {
		return err
	}
	c.stats.add("opencode sessions", 1)
	if s.strayParts > 0 {
		c.stats.add("opencode parts of no message (not read)", s.strayParts)
		c.stats.Corrupt = append(c.stats.Corrupt, 0)
	}
	older := ocBefore116(s.version)
	for i := range s.msgs {
		if err := c.ocMessage(s, &s.msgs[i], older); err != nil {
			return err
		}
	}
	return nil
}

// ocBefore116 reports whether version (a session's "v1.2.21") is an
// OpenCode before 1.16, whose output counted reasoning inside it.
func ocBefore116(version string) bool {
	v := strings.TrimPrefix(version, "v")
	major, rest, ok := strings.Cut(v, ".")
	if !ok {
		return false
	}
	minor, _, _ := strings.Cut(rest, ".")
	ma, err1 := strconv.Atoi(major)
	mi, err2 := strconv.Atoi(minor)
	if err1 != nil || err2 != nil {
		return false
	}
	return ma < 1 || ma == 1 && mi < 16
}

// ocMessage writes the entries of one message: a user message, or an
// assistant message and the tool results it holds.
func (c *converter) ocMessage(s *ocSession, m *ocMessage, older bool) error {
	if err := c.stopped(); err != nil {
		return err
	}
	info := gjson.Parse(m.data)
	if !info.IsObject() {
		c.stats.add("opencode messages that are no JSON object (not read)", 1)
		c.stats.Corrupt = append(c.stats.Corrupt, m.raw)
		return nil
	}
	in := readOCInfo(info)
	ts := msTime(in.created)
	if ts == "" {
		ts = msTime(m.created)
	}
	role := in.role
	c.e = Entry{Line: m.raw, ID: c.id("message\x00" + m.id), ParentID: c.last, Timestamp: ts}
	e := &c.e
	switch role {
	case "user":
		e.Role = "user"
		e.Provider, e.Model = ocName(in.model.Get("providerID").Str), ocName(in.model.Get("modelID").Str)
		c.stats.add("user messages", 1)
		if c.opt.Content {
			e.Body = c.ocUserBody(m)
		} else if m.body != nil {
			e.Body = m.body
		}
		return c.emit(e)
	case "assistant":
	default:
		e.Kind = "opencode.message"
		c.stats.add("opencode messages of no known role kept", 1)
		if c.opt.Content {
			e.Body = c.kept(ocAgent, []byte(m.data))
		}
		return c.emit(e)
	}
	e.Role = "assistant"
	e.Provider, e.Model = ocName(in.provider), ocName(in.modelID)
	e.Reply = ocReply(&in, m.parts, m.steps, older, m.id)
	c.stats.add("assistant messages", 1)
	if c.opt.Content {
		e.Body = c.ocAssistantBody(e, info, m)
	}
	provider, model, summary := e.Provider, e.Model, in.summary
	if err := c.emit(e); err != nil {
		return err
	}
	if c.opt.Content {
		if err := c.ocResults(m, ts, provider, model); err != nil {
			return err
		}
	}
	if summary {
		// A compaction: this message's text summarises the conversation
		// before it, and OpenCode sends the model that summary and what
		// follows. The summary call itself was billed (above).
		c.e = Entry{Line: m.raw, ID: c.id("compaction\x00" + m.id), ParentID: c.last, Timestamp: ts}
		c.compaction(&c.e, ocAgent, []byte(m.data), ocText(m.parts), "", -1)
		return c.emit(&c.e)
	}
	return nil
}

// ocInfo is what panto reads of a message's info, in one pass over its
// keys (the first of a repeated key, as gjson's Get).
type ocInfo struct {
	role, provider, modelID, finish string
	created                         int64
	summary                         bool
	model, tokens, err              gjson.Result // {providerID, modelID} of a user message; usage; an error
}

func readOCInfo(v gjson.Result) ocInfo {
	var in ocInfo
	var seen uint16
	v.ForEach(func(k, v gjson.Result) bool {
		var bit uint16
		switch k.Str {
		case "role":
			bit = 1
		case "time":
			bit = 2
		case "model":
			bit = 4
		case "providerID":
			bit = 8
		case "modelID":
			bit = 16
		case "finish":
			bit = 32
		case "summary":
			bit = 64
		case "tokens":
			bit = 128
		case "error":
			bit = 256
		default:
			return true
		}
		if seen&bit != 0 {
			return true
		}
		seen |= bit
		switch bit {
		case 1:
			in.role = v.Str
		case 2:
			in.created = v.Get("created").Int()
		case 4:
			in.model = v
		case 8:
			in.provider = v.Str
		case 16:
			in.modelID = v.Str
		case 32:
			in.finish = v.Str
		case 64:
			in.summary = v.Bool()
		case 128:
			in.tokens = v
		case 256:
			in.err = v
		}
		return true
	})
	return in
}

// ocName is a provider or model name, "unknown" for none.
func ocName(s string) string {
	if s == "" {
		return "unknown"
	}
	return strings.Clone(s)
}

// ocText is the text of a message's text parts.
func ocText(parts []ocPart) string {
	var b strings.Builder
	for _, p := range parts {
		v := gjson.Parse(p.data)
		if v.Get("type").Str == "text" {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(v.Get("text").Str)
		}
	}
	return b.String()
}

// ocReply is what an assistant message cost, by §2.4's rules, keyed by its
// message id (the same in the database, the JSON tree and an export).
func ocReply(info *ocInfo, parts []ocPart, pre *ocSteps, older bool, id string) *Reply {
	r := &Reply{Key: "opencode:" + id}
	switch info.finish {
	case "tool-calls":
		r.StopReason = "toolUse"
	case "stop":
		r.StopReason = "stop"
	case "length":
		r.StopReason = "length"
	case "error", "content-filter":
		r.StopReason = "error"
	}
	if info.err.Exists() {
		r.StopReason = "error"
	}
	var st ocSteps
	if pre != nil {
		st = *pre
	}
	for _, p := range parts {
		st.add(p.data, older)
	}
	steps, sum := st.steps, st.sum
	if steps == 0 {
		if u, ok := ocUsage(info.tokens, older); ok {
			sum, steps = u, 1
		}
	}
	// A call in flight (no step-finish yet, no tokens) has cost nothing
	// recorded so far: zero, so that the session's known cost stays known;
	// the next read counts it as it ends.
	r.Usage, r.HasUsage = sum, true
	if r.Usage.Check() != nil {
		r.HasUsage = false
	}
	return r
}

// add counts a part (its data) of a message: a step-finish's usage.
func (st *ocSteps) add(data string, older bool) {
	var typ, tokens gjson.Result
	gjson.Parse(data).ForEach(func(k, v gjson.Result) bool {
		switch {
		case k.Str == "type" && !typ.Exists():
			typ = v
		case k.Str == "tokens" && !tokens.Exists():
			tokens = v
		}
		return true
	})
	if typ.Str != "step-finish" {
		return
	}
	if u, ok := ocUsage(tokens, older); ok {
		st.steps++
		st.sum = addUsage(st.sum, u)
	}
}

func addUsage(a, b session.Usage) session.Usage {
	return session.Usage{Input: a.Input + b.Input, Output: a.Output + b.Output, CacheRead: a.CacheRead + b.CacheRead,
		CacheWrite: a.CacheWrite + b.CacheWrite, Reasoning: a.Reasoning + b.Reasoning, CacheWrite1h: a.CacheWrite1h + b.CacheWrite1h}
}

// ocUsage reads one call's tokens; false when it has none (all zero, or
// absent).
func ocUsage(t gjson.Result, older bool) (session.Usage, bool) {
	if !t.IsObject() {
		return session.Usage{}, false
	}
	var in, out, reason, cr, cw int64
	var total gjson.Result
	var seen uint8 // the first of a key repeated counts, as gjson's Get reads it
	t.ForEach(func(k, v gjson.Result) bool {
		var bit uint8
		switch k.Str {
		case "input":
			bit = 1
		case "output":
			bit = 2
		case "reasoning":
			bit = 4
		case "cache":
			bit = 8
		case "total":
			bit = 16
		default:
			return true
		}
		if seen&bit != 0 { // a repeated key: the first one stands
			return true
		}
		seen |= bit
		switch bit {
		case 1:
			in = v.Int()
		case 2:
			out = v.Int()
		case 4:
			reason = v.Int()
		case 8:
			cr, cw = v.Get("read").Int(), v.Get("write").Int()
		case 16:
			total = v
		}
		return true
	})
	if in == 0 && out == 0 && reason == 0 && cr == 0 && cw == 0 {
		return session.Usage{}, false
	}
	billed := out + reason // 1.18: reasoning beside output
	if total.Type == gjson.Number {
		if b := total.Int() - in - cr - cw; b == out {
			billed = out // 1.2.x: reasoning inside output
		}
	} else if older && reason <= out {
		billed = out
	}
	u := session.Usage{Input: in, Output: billed, CacheRead: cr, CacheWrite: cw, Reasoning: min(reason, billed)}
	return u, true
}

// ocUserBody is the panto message of a user message: its parts as text.
func (c *converter) ocUserBody(m *ocMessage) []byte {
	b := append(c.buf[:0], `{"role":"user","content":[`...)
	nb := 0
	for _, p := range m.parts {
		v := gjson.Parse(p.data)
		var blk []byte
		switch typ := v.Get("type").Str; typ {
		case "text":
			if v.Get("ignored").Bool() {
				c.stats.add("opencode text parts marked ignored, kept", 1)
			}
			blk = appendBlock(nil, "text", "text", strRaw(v.Get("text")))
		default:
			blk = appendBlock(nil, "text", "text", rawjson.AppendString(nil, c.ocPartText(v)))
		}
		if nb > 0 {
			b = append(b, ',')
		}
		nb++
		b = append(b, blk...)
	}
	if nb == 0 {
		b = append(b, `{"type":"text","text":""}`...)
	}
	c.buf = append(b, "]}"...)
	return c.buf
}

// ocPartText names, as text, a part panto has no block for.
func (c *converter) ocPartText(v gjson.Result) string {
	typ := v.Get("type").Str
	switch typ {
	case "file":
		c.stats.add("opencode files named in text", 1)
		name := v.Get("filename").Str
		if name == "" {
			name = v.Get("source.path").Str
		}
		u := v.Get("url").Str
		if strings.HasPrefix(u, "data:") {
			_, data, _ := strings.Cut(u, ",")
			u = strconv.Itoa(base64Size(data)) + " bytes"
		}
		return "[file: " + name + ", " + v.Get("mime").Str + ", " + u + "]"
	case "agent":
		c.stats.add("opencode agent parts as text", 1)
		return "[agent: " + v.Get("name").Str + "]"
	case "subtask":
		c.stats.add("opencode subtask parts as text", 1)
		return "[subtask for agent " + v.Get("agent").Str + ": " + v.Get("description").Str + "]\n" + v.Get("prompt").Str
	case "compaction":
		c.stats.add("opencode compaction requests as text", 1)
		if v.Get("auto").Bool() {
			return "[compaction requested: automatic]"
		}
		return "[compaction requested]"
	case "retry":
		c.stats.add("opencode retries as text", 1)
		return "[retry " + v.Get("attempt").Raw + ": " + ocError(v.Get("error")) + "]"
	case "patch":
		c.stats.add("opencode patches named in text", 1)
		var files []string
		v.Get("files").ForEach(func(_, f gjson.Result) bool { files = append(files, f.Str); return true })
		return "[patch " + v.Get("hash").Str + ": " + strings.Join(files, ", ") + "]"
	}
	c.stats.add("opencode "+typ+" parts kept as text", 1)
	return "[" + typ + "] " + v.Raw
}

// ocError is an OpenCode error object as text: "Name: message".
func ocError(v gjson.Result) string {
	if v.Type == gjson.String {
		return v.Str
	}
	name, msg := v.Get("name").Str, v.Get("data.message").Str
	if msg == "" {
		msg = v.Get("message").Str
	}
	switch {
	case name != "" && msg != "":
		return name + ": " + msg
	case name != "":
		return name
	}
	return v.Raw
}

// ocAssistantBody is the panto message of an assistant message: its
// reasoning, text and tool calls, in order.
func (c *converter) ocAssistantBody(e *Entry, info gjson.Result, m *ocMessage) []byte {
	b := append(c.buf[:0], `{"role":"assistant","content":[`...)
	nb := 0
	add := func(blk []byte) {
		if nb > 0 {
			b = append(b, ',')
		}
		nb++
		b = append(b, blk...)
	}
	for _, p := range m.parts {
		v := gjson.Parse(p.data)
		switch typ := v.Get("type").Str; typ {
		case "text":
			add(appendBlock(nil, "text", "text", strRaw(v.Get("text"))))
		case "reasoning":
			if v.Get("text").Str == "" {
				c.stats.add("opencode empty reasoning parts (nothing to keep)", 1)
				continue
			}
			blk := appendBlock(nil, "thinking", "thinking", strRaw(v.Get("text")))
			// A signature is kept for Anthropic's models only: it is what
			// lets the thinking be sent back; other providers' (OpenCode
			// writes ids there) would be refused.
			if s := v.Get("metadata.anthropic.signature"); e.Provider == "anthropic" && s.Type == gjson.String && s.Str != "" {
				blk = append(blk[:len(blk)-1], `,"signature":`...)
				blk = append(append(blk, s.Raw...), '}')
			}
			add(blk)
		case "tool":
			add(appendToolUse(nil, rawjson.AppendString(nil, ocCallID(v, p.id)), strRaw(v.Get("tool")), v.Get("state.input").Raw))
			c.stats.add("tool calls", 1)
		case "step-start", "step-finish", "snapshot":
			// Bookkeeping: a call's start, its usage (read above), the
			// worktree's state. Nothing the conversation says.
		default:
			add(appendBlock(nil, "text", "text", rawjson.AppendString(nil, c.ocPartText(v))))
		}
	}
	if err := info.Get("error"); err.Exists() {
		c.stats.add("opencode errors as text", 1)
		add(appendBlock(nil, "text", "text", rawjson.AppendString(nil, "[error] "+ocError(err))))
	}
	b = append(b, ']')
	b = e.Reply.appendFields(b, e.Provider, e.Model)
	c.buf = append(b, '}')
	return c.buf
}

// ocCallID is a tool part's call id: its callID, else its part id.
func ocCallID(v gjson.Result, part string) string {
	if id := v.Get("callID").Str; id != "" {
		return id
	}
	return part
}

// ocResults writes, after an assistant message, the entry that holds the
// results of its tool calls that ended (completed, or failed): OpenCode
// keeps a call and its result in one part. A call still pending or running
// has none: the converter answers it as interrupted if the conversation
// goes on.
func (c *converter) ocResults(m *ocMessage, ts, provider, model string) error {
	b := []byte(`{"role":"user","content":[`)
	nb := 0
	for _, p := range m.parts {
		v := gjson.Parse(p.data)
		if v.Get("type").Str != "tool" {
			continue
		}
		var content string
		isErr := false
		switch v.Get("state.status").Str {
		case "completed":
			content = v.Get("state.output").Str
			if att := v.Get("state.attachments"); att.IsArray() && len(att.Array()) > 0 {
				for _, a := range att.Array() {
					content += "\n" + c.ocPartText(a)
				}
			}
		case "error":
			content, isErr = v.Get("state.error").Str, true
		default:
			c.stats.add("tool calls without a result yet (pending or running)", 1)
			continue
		}
		if nb > 0 {
			b = append(b, ',')
		}
		nb++
		b = append(b, `{"type":"toolResult","toolUseId":`...)
		b = rawjson.AppendString(b, ocCallID(v, p.id))
		b = append(b, `,"content":`...)
		b = rawjson.AppendString(b, content)
		if isErr {
			b = append(b, `,"isError":true`...)
		}
		b = append(b, '}')
	}
	if nb == 0 {
		return nil
	}
	c.stats.add("tool results", nb)
	b = append(b, "]}"...)
	c.e = Entry{Line: m.raw, ID: c.id("results\x00" + m.id), ParentID: c.last, Timestamp: ts, Role: "user", Provider: provider, Model: model, Body: b}
	return c.emit(&c.e)
}

// Span is one session of a log that holds several, converted: its bytes
// in the file ConvertAll returns.
type Span struct {
	ID        string // the source's session id
	Off, Size int64
}

// ConvertAll is Convert for a log that may hold several sessions (an
// OpenCode database): every session's panto session, one after the other
// in one temporary file (already unlinked), each a Span of it; the log is
// read once.
func ConvertAll(src Source, f Format) (*os.File, []Span, *Stats, error) {
	tmp, err := os.CreateTemp("", "panto-*")
	if err != nil {
		return nil, nil, nil, err
	}
	os.Remove(tmp.Name())
	w := bufio.NewWriterSize(tmp, 256<<10)
	var spans []Span
	var off int64
	var line []byte
	count := func(n int, err error) error { off += int64(n); return err }
	_, st, err := Read(src, f, Options{Content: true},
		func(h *Header) error {
			if len(spans) > 0 {
				spans[len(spans)-1].Size = off - spans[len(spans)-1].Off
			}
			spans = append(spans, Span{ID: h.Origin.ID, Off: off})
			return count(w.Write(h.Line()))
		},
		func(e *Entry) (err error) {
			cw := countingWriter{w: w}
			line, err = e.WriteLine(&cw, line)
			off += cw.n
			return err
		})
	if len(spans) > 0 {
		spans[len(spans)-1].Size = off - spans[len(spans)-1].Off
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		tmp.Close()
		return nil, nil, st, err
	}
	return tmp, spans, st, nil
}

type countingWriter struct {
	w *bufio.Writer
	n int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// Describe says what a log of format f is, more exactly than its Noun
// where the format tells (an OpenCode database: how many sessions; a
// SQLite database that is not OpenCode's: the error that refuses it);
// "" when the Noun says it all.
func Describe(r io.ReaderAt, size int64, f Format) (string, error) {
	if f != OpenCode {
		return "", nil
	}
	head := make([]byte, 16)
	n, _ := r.ReadAt(head, 0)
	if !IsSQLite(head[:n]) {
		first, _, err := firstLineEnd(Source{R: r, Size: size})
		if err == nil && readHeadOC(first).stream {
			return "an OpenCode run stream (opencode run --format json)", nil
		}
		if kind, _ := ocDocKind(Source{R: r, Size: size}); kind == "storage" {
			return "a session of OpenCode's storage/ tree", nil
		}
		return "an OpenCode export", nil
	}
	path := ""
	if named, ok := r.(interface{ Name() string }); ok {
		path = named.Name()
	}
	only := ""
	if file, id, ok := catalog.SplitSession(path); ok {
		path, only = file, id
	}
	label := path
	path, cleanup, err := dbPath(path, r, size)
	if err != nil {
		return "", err
	}
	defer cleanup()
	ids, err := ocSessions(path)
	if err != nil {
		if path != label && label != "" { // a copy of panto's own: the error names the user's file
			msg := strings.ReplaceAll(err.Error(), path, label)
			if errors.Is(err, ErrDamaged) {
				return "", &damagedError{msg}
			}
			return "", errors.New(msg)
		}
		return "", err
	}
	if only != "" {
		if !slices.Contains(ids, only) {
			return "", fmt.Errorf("%s: no OpenCode session %s with messages in it", label, only)
		}
		return fmt.Sprintf("OpenCode session %s of an OpenCode database of %d sessions", only, len(ids)), nil
	}
	return fmt.Sprintf("an OpenCode database of %d sessions", len(ids)), nil
}
