package costcmd

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/panto-dev/panto/internal/agents"
	"github.com/panto-dev/panto/internal/pricing"
	"github.com/panto-dev/panto/internal/rawjson"
	"github.com/panto-dev/panto/pkg/scan"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/tidwall/gjson"
)

// turn is one assistant reply found in the input.
type turn struct {
	session, project, entry string
	agent                   string    // the agent that wrote it: panto, claude, codex, pi
	origin, parent          string    // the source's own session id, and its parent's for a subagent (SPEC §11)
	title                   string    // the session's first prompt (agents.Title)
	time                    time.Time // zero for message lines, which carry none
	key                     pricing.Key
	mode                    string // a billed mode other than the standard one: Claude's speed "fast", a service tier
	usage                   pricing.Usage
	hasUsage                bool
	invalid                 bool   // an invalid entry (SPEC §2): its cost is unknown
	line                    int    // where it is in its input
	dupID                   string // its entry id: counted once per session
	response                string // the response it was: counted once wherever recorded
	foreign                 bool   // read from another agent's log (recorded twice by design)
	invalidWarn             string // for an invalid entry: the warning, given once it counts
}

// skipped counts what was not priced, by reason.
type skipped struct {
	corrupt, torn, invalid, duplicate, noTime int
	foreign                                   int // files in no format panto reads
	badSessions                               int // sessions of --all whose database rows are no session
}

// counted is the set of replies counted so far, over every input: a
// session given twice (a directory and a file in it, or a copy) counts
// once. Each reply remembers the input it was counted from. Sessions are
// numbered, so that the key of a reply with a hex id is eight bytes.
type counted struct {
	sessions map[string]int32
	last     string // the session of the last reply, and its number
	lastN    int32
	hex      map[hexReply]int32
	other    map[strReply]int32
}

func newCounted() *counted {
	return &counted{sessions: map[string]int32{}, lastN: -1, hex: map[hexReply]int32{}, other: map[strReply]int32{}}
}

type hexReply struct{ session, id uint32 }

type strReply struct{ session, id string }

// add records the reply (session, id) of input in; it returns the input
// that counted it first, or -1.
func (c *counted) add(sess, id string, in int) int {
	if v, ok := session.HexID(id); ok {
		if c.lastN < 0 || sess != c.last {
			n, ok := c.sessions[sess]
			if !ok {
				n = int32(len(c.sessions))
				c.sessions[sess] = n
			}
			c.last, c.lastN = sess, n
		}
		k := hexReply{uint32(c.lastN), v}
		if first, ok := c.hex[k]; ok {
			return int(first)
		}
		c.hex[k] = int32(in)
		return -1
	}
	k := strReply{sess, id}
	if first, ok := c.other[k]; ok {
		return int(first)
	}
	c.other[k] = int32(in)
	return -1
}

// reader reads one input and hands each reply to emit.
type reader struct {
	label      string // the file name, or "-"
	session    string // session id: the header's, else the label
	project    string
	agent      string
	origin     string // the source's session id, and its parent's (a subagent's)
	parent     string
	title      string // the first prompt, once read
	titleTries int    // the user messages read for it
	skip       *skipped
	warn       func(format string, args ...any)
	needTime   bool              // the report uses timestamps: parse them (else skip the cost)
	needTitle  bool              // the report shows sessions' titles: read them
	names      map[string]string // provider and model names, interned
	cur        turn              // the turn being emitted: emit copies what it keeps
}

// read reads a log: another agent's through package agents, else session
// lines, entry lines or message lines through the one scanner and
// validator of the format, up to the first corrupt line (SPEC §5). A reply
// that is an invalid entry counts with an unknown cost. The turn emit is
// given is valid only during the call.
func (r *reader) read(in io.Reader, emit func(*turn) error) error {
	var f agents.Format
	var err error
	ra, seekable := in.(interface {
		io.ReaderAt
		Size() int64
	})
	if seekable {
		f, err = agents.Sniff(ra, ra.Size())
	} else {
		f, in, err = agents.SniffStream(in)
	}
	if err != nil {
		return err
	}
	switch f {
	case agents.Panto:
		return r.readPanto(in, emit)
	case agents.Unknown:
		r.skip.foreign++
		r.warn("%s: %v: not read", r.label, agents.ErrNotALog)
		return nil
	}
	src := agents.Source{Path: r.label}
	if seekable {
		src.R, src.Size = ra, ra.Size()
	} else {
		tmp, n, err := agents.Spool(in)
		if err != nil {
			return err
		}
		defer tmp.Close()
		src.R, src.Size = tmp, n
	}
	return r.readAgent(src, f, emit)
}

// readAgent reads another agent's log: each billed reply once, by the
// agents' rules, a reply recorded in several places (a Claude Code
// subagent's, in its file and its parent's) counted where it is met first.
func (r *reader) readAgent(src agents.Source, f agents.Format, emit func(*turn) error) error {
	// A database (OpenCode's) has no first line to take a title from: each
	// of its sessions is titled by its first prompt, read as it comes.
	var head [16]byte
	n, _ := src.R.ReadAt(head[:], 0)
	dbTitles := r.needTitle && agents.IsSQLite(head[:n])
	_, st, err := agents.Read(src, f, agents.Options{Prompts: dbTitles},
		func(h *agents.Header) error {
			r.session, r.project, r.agent = h.ID, h.Cwd, h.Origin.Agent
			r.origin, r.parent = h.Origin.ID, h.Origin.SubagentOf()
			switch {
			case dbTitles:
				r.title = "" // its first prompt, read below: the file has no first line to read it from
			case r.needTitle:
				r.title = agents.Title(src, f)
			}
			return nil
		},
		func(e *agents.Entry) error {
			if dbTitles && r.title == "" && e.Role == "user" && len(e.Body) > 0 {
				r.title = agents.TitleOf(append(append([]byte(`{"type":"message","message":`), e.Body...), '}'), agents.Unknown)
			}
			if e.Reply == nil || agents.Unbilled(e.Model) {
				return nil
			}
			t := &r.cur
			// A reply's key is its entry id in the session it becomes, the
			// same when read directly and imported (SPEC §11): a log and its
			// import read together count once. Claude Code's replies have no
			// entry id here: their response key does that.
			entry := e.ID
			if entry == "" {
				entry = "line " + strconv.Itoa(e.Line)
			}
			*t = turn{session: r.session, project: r.project, agent: r.agent, origin: r.origin, parent: r.parent, title: r.title, entry: entry, dupID: e.ID, hasUsage: e.Reply.HasUsage,
				response: e.Reply.Key, line: e.Line, foreign: true, mode: e.Reply.Mode,
				key: pricing.Key{Provider: r.intern(e.Provider), Model: r.intern(e.Model)}, usage: usageOf(e.Reply.Usage)}
			if r.needTime {
				if tm, err := time.Parse(time.RFC3339Nano, e.Timestamp); err == nil {
					t.time = tm
				}
			}
			return emit(t)
		})
	if errors.Is(err, agents.ErrNotALog) {
		r.skip.foreign++
		r.warn("%s: %v: not read", r.label, err)
		return nil
	}
	if err != nil {
		return err
	}
	if n := len(st.Corrupt); n > 0 {
		r.skip.corrupt++
		r.warn("%s: %d lines are not JSON objects (line %d first): not read, the rest counted", r.label, n, st.Corrupt[0])
	}
	if st.Torn > 0 {
		r.skip.torn++
		r.warn("%s: line %d: incomplete final line (a writer may be mid-append): not counted", r.label, st.Torn)
	}
	return nil
}

func (r *reader) intern(s string) string {
	if v, ok := r.names[s]; ok {
		return v
	}
	r.names[s] = s
	return s
}

func usageOf(u session.Usage) pricing.Usage {
	return pricing.Usage{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite, CacheWrite1h: u.CacheWrite1h, Reasoning: u.Reasoning}
}

// readPanto reads panto's own lines.
func (r *reader) readPanto(in io.Reader, emit func(*turn) error) error {
	var emitErr error
	opt := scan.ScanOptions{StopAtCorrupt: true, NoIndex: true}
	opt.OnLine = func(n int, _ int64, raw []byte, term bool, c *session.Line) {
		if emitErr != nil || !term {
			return
		}
		switch {
		case c.Kind == session.KindHeader:
			r.session, r.project = c.ID, c.Cwd
			if o := gjson.GetBytes(raw, "origin"); o.IsObject() { // an imported session
				if a := o.Get("agent"); a.Type == gjson.String {
					r.agent = a.Str
				}
				r.origin = o.Get("id").Str
				r.parent = agents.Origin{Agent: r.agent, Parent: o.Get("parent").Str, Subagent: o.Get("subagent").Bool()}.SubagentOf()
			}
			if c.Version > session.Version {
				r.warn("%s is format version %d, newer than %d: reading what it understands", r.label, c.Version, session.Version)
			}
		case c.Type == "" && c.Kind == session.KindInvalid:
			emitErr = r.messageLine(n, raw, emit)
		case c.Type == "message" && c.Role == "assistant":
			emitErr = r.reply(n, raw, c, emit)
		case c.IsCompaction():
			emitErr = r.compaction(n, raw, c, emit)
		case c.Type == "message" && c.Role == "user" && r.needTitle && r.title == "" && r.titleTries < 8: // the first prompt, or none
			r.titleTries++
			r.title = agents.TitleOf(raw, agents.Panto)
		case c.Kind == session.KindInvalid && c.Type != "session":
			r.skip.invalid++
			r.warn("%s: line %d: %s: skipped (run panto-fsck %s)", r.label, n, what(c), r.label)
		}
	}
	l, err := scan.Scan(in, opt)
	if err != nil {
		return err
	}
	if emitErr != nil {
		return emitErr
	}
	if p := l.Stopped; p != nil {
		if len(l.Corrupt) > 0 {
			r.skip.corrupt++
			r.warn("%s: line %d: not a complete JSON object: read up to line %d (run panto-fsck %s)", r.label, p.Line, p.Line-1, r.label)
		} else {
			r.skip.torn++
			r.warn("%s: line %d: incomplete final line (a writer may be mid-append): not counted", r.label, p.Line)
		}
	}
	return nil
}

// what names an invalid line for a warning.
func what(c *session.Line) string {
	if c.ID != "" {
		return "entry " + c.ID + " is invalid: " + c.Problem
	}
	return "invalid entry: " + c.Problem
}

// reply emits the assistant entry c (valid or not) at line n. Whether it
// was counted already (a session read twice, a repeated id) is the
// emitter's to say, in input order.
func (r *reader) reply(n int, raw []byte, c *session.Line, emit func(*turn) error) error {
	if _, model := c.Reply.Stamp(raw); bytes.Equal(model, synthetic) {
		return nil // no request was made
	}
	t := r.turn(raw, &c.Reply)
	t.entry, t.line, t.dupID = c.ID, n, c.ID
	if r.agent != "panto" && bytes.Contains(raw, responseID) { // imported: the response may be in another session too
		if k := gjson.GetBytes(session.MessageOf(raw), "responseId"); k.Type == gjson.String {
			t.response = k.Str
		}
	}
	if bytes.Contains(raw, billedMode) {
		t.mode = r.name([]byte(gjson.GetBytes(session.MessageOf(raw), "billedMode").Raw))
	}
	if c.Kind == session.KindInvalid {
		t.hasUsage, t.invalid = false, true
		t.invalidWarn = fmt.Sprintf("%s: line %d: %s: its cost is unknown (run panto-fsck %s)", r.label, n, what(c), r.label)
	}
	if r.needTime {
		if tm, err := time.Parse(time.RFC3339Nano, c.Timestamp); err == nil {
			t.time = tm
		}
	}
	return emit(t)
}

// compaction emits the request a compaction entry made for its summary,
// when the entry says what it cost (provider, model, usage: panto writes
// them); one that does not (another agent's) made no request panto knows.
func (r *reader) compaction(n int, raw []byte, c *session.Line, emit func(*turn) error) error {
	req := session.CompactionRequest(raw)
	if req == nil {
		return nil
	}
	msg := append(append([]byte(`{"role":"assistant","content":[],`), req...), '}')
	_, rep, err := session.ReadMessage(msg)
	t := r.turn(msg, &rep)
	t.entry, t.line, t.dupID = c.ID, n, c.ID
	if err != nil {
		t.hasUsage, t.invalid = false, true
		t.invalidWarn = fmt.Sprintf("%s: line %d: compaction %s: %v: its cost is unknown", r.label, n, c.ID, err)
	}
	if r.needTime {
		if tm, err := time.Parse(time.RFC3339Nano, rawjson.Str(session.Field(raw, "timestamp"))); err == nil {
			t.time = tm
		}
	}
	return emit(t)
}

// messageLine reads a line with no type: a message line, as panto-turn
// writes and panto-replay prints.
func (r *reader) messageLine(n int, raw []byte, emit func(*turn) error) error {
	role, rep, err := session.ReadMessage(raw)
	switch {
	case role == "" && err != nil:
		r.skip.invalid++
		r.warn("%s: line %d: neither an entry nor a message (%v): skipped", r.label, n, err)
		return nil
	case role != "assistant":
		return nil
	}
	t := r.turn(raw, &rep)
	if bytes.Contains(raw, billedMode) {
		t.mode = r.name([]byte(gjson.GetBytes(raw, "billedMode").Raw))
	}
	if err != nil {
		t.hasUsage, t.invalid = false, true
		r.skip.invalid++
		r.warn("%s: line %d: %v: its cost is unknown", r.label, n, err)
	}
	return emit(t)
}

// responseID marks a reply imported from another agent, which names the
// response it was (SPEC §11).
var responseID = []byte(`"responseId"`)

// billedMode marks a reply billed in a mode of its own (agents.Reply.Mode).
var billedMode = []byte(`"billedMode"`)

// synthetic is the model of a reply an agent wrote itself, as JSON.
var synthetic = []byte(`"` + agents.Synthetic + `"`)

func (r *reader) turn(raw []byte, rep *session.Reply) *turn {
	provider, model := rep.Stamp(raw)
	r.cur = turn{session: r.session, project: r.project, agent: r.agent, origin: r.origin, parent: r.parent, title: r.title, hasUsage: rep.HasUsage,
		key: pricing.Key{Provider: r.name(provider), Model: r.name(model)}, usage: usageOf(rep.Usage)}
	return &r.cur
}

// name returns the string a raw JSON value holds, one copy per name.
func (r *reader) name(raw []byte) string {
	if s, ok := r.names[string(raw)]; ok {
		return s
	}
	s := rawjson.Str(raw)
	r.names[string(raw)] = s
	return s
}
