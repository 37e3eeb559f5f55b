// Package agents reads the session logs of other coding agents (Claude
// Code, Codex, pi) and turns each into panto entries (SPEC §11). It is the
// one place for their formats and for the rules real logs impose
// (reference/other-agents.md §6): panto-cost, panto-replay and
// panto-log import all consume what it produces.
package agents

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/panto-dev/panto/internal/rawjson"
	"github.com/panto-dev/panto/pkg/scan"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/tidwall/gjson"
)

// ambiguous reports whether line, a first line Detect takes for panto's,
// is a session header of a version above 1 with a UUIDv7 id: a later
// panto's, or pi's (version 2 or 3) from pi 0.80 on. The lines after it
// tell them apart (piFollows).
func ambiguous(line []byte) bool {
	line = bytes.TrimSpace(line)
	if !isObject(line) {
		return false
	}
	r := gjson.GetManyBytes(line, "type", "version", "id")
	return r[0].Str == "session" && r[1].Type == gjson.Number && r[1].Int() > 1 && isV7(r[2].Str)
}

// headLook is how much of a log after its first line piFollows looks at,
// and headLines how many lines: pi writes its model_change right after
// the header, and every message of it carries pi's own fields.
const (
	headLook  = 64 << 10
	headLines = 8
)

// piEntryTypes are entry types pi writes and panto does not.
var piEntryTypes = map[string]bool{"model_change": true, "thinking_level_change": true, "session_info": true,
	"custom": true, "custom_message": true, "branch_summary": true}

// piFollows reports whether rest, the start of what follows an ambiguous
// header, holds pi's entries: one of a type only pi writes, or a message
// whose role panto has not (toolResult, bashExecution), with an "api",
// with a time in milliseconds (every pi message has one; panto's have
// none), or a user message with no provider stamp. The last line of rest
// may be cut: its first fields still tell.
func piFollows(rest []byte) bool {
	for n := 0; len(rest) > 0 && n < headLines; {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		n++
		r := gjson.GetManyBytes(line, "type", "message.role", "message.api", "message.timestamp", "provider")
		if piEntryTypes[r[0].Str] {
			return true
		}
		if r[0].Str == "message" && (r[1].Str == "toolResult" || r[1].Str == "bashExecution" ||
			r[2].Exists() || r[3].Type == gjson.Number) {
			return true
		}
		// A panto user entry carries its provider before its message
		// (SPEC §2); a long prompt's own time may be past the cut.
		if r[0].Str == "message" && r[1].Str == "user" && !r[4].Exists() {
			return true
		}
	}
	return false
}

// headFormat is Detect of first, a log's first line, told by the lines
// after it too when first alone cannot say (ambiguous); rest reads up to
// headLook bytes of what follows first.
func headFormat(first []byte, rest func() ([]byte, error)) (Format, error) {
	return headFormatAs(Detect(first), first, rest)
}

// headFormatAs is headFormat of a line Detect took for f.
func headFormatAs(f Format, first []byte, rest func() ([]byte, error)) (Format, error) {
	if f != Panto || !ambiguous(first) {
		return f, nil
	}
	b, err := rest()
	if err != nil {
		return f, err
	}
	if piFollows(b) {
		return Pi, nil
	}
	return f, nil
}

// after returns a reader of up to headLook bytes of r from off.
func after(r io.ReaderAt, size, off int64) func() ([]byte, error) {
	return func() ([]byte, error) {
		if off >= size {
			return nil, nil
		}
		b := make([]byte, min(headLook, size-off))
		n, err := r.ReadAt(b, off)
		if err == io.EOF {
			err = nil
		}
		return b[:n], err
	}
}

// panto reports whether id is an entry id panto writes (SPEC §2: 8 hex
// characters, else a UUIDv7); another tool's events with random ids (a
// Copilot CLI events.jsonl) are no panto entries.
func panto(id string) bool {
	_, hex := session.HexID(id)
	return hex || isV7(id)
}

// isV7 reports whether s is a UUID of version 7.
func isV7(s string) bool {
	u, err := uuid.Parse(s)
	return err == nil && u.Version() == 7
}

// ErrNotALog is the error for a file in none of the formats.
var ErrNotALog error = notALog{}

// notALog is ErrNotALog: its words name the registry's formats when said.
type notALog struct{}

func (notALog) Error() string { return "not a session log: expected " + expected() }

// NotReadError is the error for a log of a format panto knows and does
// not read (yet): an Amp thread, a Cursor transcript. It names it, and is
// ErrNotALog to errors.Is.
type NotReadError struct{ Agent *Agent }

func (e *NotReadError) Error() string {
	return "not a session log: " + e.Agent.Noun + ", which panto does not read: expected " + expected()
}

func (e *NotReadError) Is(target error) bool { return target == ErrNotALog }

// refuse returns the error for a log in format f, which panto does not
// read: ErrNotALog, naming f when it is known.
func refuse(f Format) error {
	if a := Of(f); a != nil && !a.Reads() {
		return &NotReadError{a}
	}
	return ErrNotALog
}

// Source is one log to convert.
type Source struct {
	Path string      // as given; "-" for stdin
	R    io.ReaderAt // its bytes
	Size int64
	// Parent is the session id of the session whose subagent this log is
	// (a Claude Code subagents/ file); found from the path when empty.
	Parent string
	// Session is the one session to read of a log that holds several (an
	// OpenCode database); "" reads them all, each a header and its entries.
	Session string
	// Images keeps the images of the log (for a page to show): a text
	// block that names an image gets its data as an "image" member
	// ({"mimeType","data"}: base64), a tool result the images of its
	// content as "images" ([…] of the same). Every other reader of the
	// session sees the text naming each image, as without it; an import
	// never sets it, so the sessions it writes do not change.
	Images bool
}

// Origin is where an imported session came from: its header's "origin".
type Origin struct {
	Agent  string // claude, codex, pi
	ID     string // the source's session id
	Path   string
	Parent string // the parent session's id, for a subagent or a fork
	// Subagent says that Parent names the session that spawned this one
	// (a Codex sub-agent thread), where the agent's other sessions with a
	// Parent are forks: its cost is its parent's unless --subagents.
	Subagent bool
}

// SubagentOf is the parent of the session o is the origin of when the
// session is a sub-agent's (the agent's sub-agents, or o marked one), ""
// else (a fork: a session of its own).
func (o Origin) SubagentOf() string {
	if o.Subagent {
		return o.Parent
	}
	return SubagentOf(o.Agent, o.Parent)
}

func (o Origin) appendJSON(b []byte) []byte {
	b = append(b, `{"agent":`...)
	b = rawjson.AppendString(b, o.Agent)
	b = append(b, `,"id":`...)
	b = rawjson.AppendString(b, o.ID)
	b = append(b, `,"path":`...)
	b = rawjson.AppendString(b, o.Path)
	if o.Parent != "" {
		b = append(b, `,"parent":`...)
		b = rawjson.AppendString(b, o.Parent)
	}
	if o.Subagent {
		b = append(b, `,"subagent":true`...)
	}
	return append(b, '}')
}

// Header is the header of the panto session a log becomes.
type Header struct {
	ID        string // UUIDv7 made from the source's first time and its id
	Timestamp string
	Cwd       string
	Origin    Origin
}

// Line returns the header line, with its "\n".
func (h *Header) Line() []byte {
	return session.Header{ID: h.ID, Timestamp: h.Timestamp, Cwd: h.Cwd, Origin: h.Origin.appendJSON(nil)}.AppendLine(nil)
}

// Entry is one panto entry made from a log.
type Entry struct {
	Line      int    // the source line it comes from (its first, for several)
	ID        string // 8 hex characters, the same for the same source
	ParentID  string // "" for the first entry
	Timestamp string
	Role      string // user, assistant or system; "" for a kept entry
	Provider  string
	Model     string
	Reply     *Reply // for an assistant message: what it cost
	// Body is the message object (Role set) or, for a kept entry, the
	// fields after "timestamp" (`"agent":…,"line":{…}`); nil when the
	// reader was asked for replies only.
	Body []byte
	Kind string // a kept entry's type
	// keepsNothing says that a compaction entry keeps no entry before it
	// (no firstKeptEntryId): the tool calls open at it are answered before
	// it, not after, since the model is never sent them again.
	keepsNothing bool
}

// Reply is a billed response, counted by the agents' rules: one per
// response, with its final usage.
type Reply struct {
	Key        string // the response's identity across files ("" when it has none)
	Usage      session.Usage
	HasUsage   bool
	StopReason string // panto's: stop, length, toolUse, error; "" unknown
	Mode       string // a billed mode other than the standard one (Claude's usage.speed "fast", Codex's service tier), for pricing; imported as "billedMode"
}

// appendFields appends what an assistant message says of itself after its
// content: its stamp, stop reason, usage, and the response it was (when it
// has an identity across files, a Claude Code reply's: SPEC §11).
func (r *Reply) appendFields(b []byte, provider, model string) []byte {
	b = append(b, `,"provider":`...)
	b = rawjson.AppendString(b, provider)
	b = append(b, `,"model":`...)
	b = rawjson.AppendString(b, model)
	if r.StopReason != "" {
		b = append(b, `,"stopReason":`...)
		b = rawjson.AppendString(b, r.StopReason)
	}
	if r.HasUsage {
		b = append(b, `,"usage":`...)
		b = r.Usage.AppendJSON(b)
	}
	if r.Mode != "" {
		b = append(b, `,"billedMode":`...) // so that an import costs what the log does
		b = rawjson.AppendString(b, r.Mode)
	}
	if r.Key != "" {
		b = append(b, `,"responseId":`...)
		b = rawjson.AppendString(b, r.Key)
	}
	return b
}

// AppendLine appends the panto entry line of e, with its "\n".
func (e *Entry) AppendLine(b []byte) []byte {
	if e.Role != "" {
		stamp := e.Role == "user"
		en := session.Entry{ID: e.ID, ParentID: e.ParentID, Timestamp: e.Timestamp, Message: e.Body}
		if stamp {
			en.Provider, en.Model = e.Provider, e.Model
		}
		return en.AppendLine(b)
	}
	return session.Kept{Type: e.Kind, ID: e.ID, ParentID: e.ParentID, Timestamp: e.Timestamp, Fields: e.Body}.AppendLine(b)
}

// WriteLine writes the panto entry line of e, with its "\n", to w: its
// head built in scratch (returned, for the next call), its body written
// as it is, not copied again (a tool result may be hundreds of MB).
func (e *Entry) WriteLine(w io.Writer, scratch []byte) ([]byte, error) {
	body := e.Body
	e.Body = nil
	scratch = e.AppendLine(scratch[:0])
	e.Body = body
	scratch = scratch[:len(scratch)-len("}\n")] // where the body goes
	if _, err := w.Write(scratch); err != nil {
		return scratch, err
	}
	if _, err := w.Write(body); err != nil {
		return scratch, err
	}
	_, err := io.WriteString(w, "}\n")
	return scratch, err
}

// Options says what a reader produces.
type Options struct {
	// Content builds each entry's Body; without it only replies, times and
	// stamps are read (what a cost report needs), faster.
	Content bool
	// Prompts, without Content, still gives the Body of a session's user
	// messages up to the first that holds a title (TitleOf), where a log
	// has no first line to title each session by (an OpenCode database):
	// what a report of sessions' titles needs, without reading every
	// part's text.
	Prompts bool
	// One says one session is wanted (a conversion): a log that holds
	// several (an OpenCode database) is refused with ErrSeveralSessions.
	One bool
}

// Stats counts what was converted how, for the summary an import prints
// and for the warnings of a reader. Corrupt lines are the source's, not
// panto's to repair: they are counted and read around.
type Stats struct {
	Counts  map[string]int
	Corrupt []int // line numbers of lines that are not JSON objects
	Torn    int   // the line number of an unterminated last line, or 0
	longest int   // the longest line read, in bytes
}

func (s *Stats) add(what string, n int) {
	if s.Counts == nil {
		s.Counts = map[string]int{}
	}
	s.Counts[what] += n
}

// Summary is the counts as "n what, …", sorted by what.
func (s *Stats) Summary() string {
	keys := make([]string, 0, len(s.Counts))
	for k := range s.Counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%d %s", s.Counts[k], k)
	}
	return b.String()
}

// Merge adds o's counts into s (not its line numbers).
func (s *Stats) Merge(o *Stats) {
	for k, v := range o.Counts {
		s.add(k, v)
	}
}

// Read converts src, in format f (Unknown: detect it), calling header once
// and then entry for each entry in order. The Entry is valid only during
// the call. A log with no line of its format is ErrNotALog.
func Read(src Source, f Format, opt Options, header func(*Header) error, entry func(*Entry) error) (Format, *Stats, error) {
	return ReadContext(context.Background(), src, f, opt, header, entry)
}

// ReadContext is Read that stops when ctx is done (a signal), with its
// error, within a few thousand lines: a long log is no reason to ignore
// SIGTERM.
func ReadContext(ctx context.Context, src Source, f Format, opt Options, header func(*Header) error, entry func(*Entry) error) (Format, *Stats, error) {
	st := &Stats{}
	if f == Unknown {
		var err error
		if f, err = readFormat(src); err != nil {
			return f, st, err
		}
		if f == Unknown || f == Panto {
			return f, st, ErrNotALog
		}
	}
	c := &converter{ctx: ctx, src: src, opt: opt, stats: st, header: header, entry: entry, taken: map[string]bool{}, open: map[string]*calls{}, one: opt.One}
	defer func() {
		if c.lines != nil {
			c.lines.Reset(strings.NewReader(""), 0) // let the source go
			readers.Put(c.lines)
		}
	}()
	a := Of(f)
	if a == nil {
		return f, st, ErrNotALog
	}
	if a.read == nil {
		return f, st, &NotReadError{a}
	}
	return f, st, a.read(c)
}

// readFormat tells the format Read reads src in, told by its first line
// (one longer than sniffLook by its start when that starts an agent's
// document), else as a whole file: Unknown or Panto when none.
func readFormat(src Source) (Format, error) {
	first, end, err := firstLineLook(src)
	if err != nil {
		return Unknown, err
	}
	if end < 0 { // a first line longer than the look
		if f := DocFormat(first); f != Unknown {
			return f, nil
		}
		if first, end, err = firstLineEnd(src); err != nil {
			return Unknown, err
		}
	}
	f, err := headFormat(first, after(src.R, src.Size, end))
	if err != nil {
		return f, err
	}
	if f == Unknown && !isObject(bytes.TrimSpace(first)) {
		return whole(src.R, src.Size)
	}
	return f, nil
}

// firstLine returns the first line of src that is not blank (without
// its "\n"), read in small steps: most first lines are short, and telling
// a format must not cost reading a file.
func firstLine(src Source) ([]byte, error) {
	line, _, err := firstLineEnd(src)
	return line, err
}

// firstLineIn is firstLine of a log whose start is in memory, when start
// holds that line whole (its newline too).
func firstLineIn(start []byte) ([]byte, bool) {
	for i := 0; ; {
		nl := bytes.IndexByte(start[i:], '\n')
		if nl < 0 {
			return nil, false
		}
		if line := start[i : i+nl]; len(bytes.TrimSpace(line)) > 0 {
			return line, true
		}
		i += nl + 1
	}
}

// firstLineEnd is firstLine, with the offset just after the line.
func firstLineEnd(src Source) ([]byte, int64, error) {
	var buf []byte
	start := 0 // where the current line begins in buf
	for off := int64(0); ; {
		if len(buf) == cap(buf) {
			buf = append(buf, make([]byte, max(4<<10, len(buf)))...)[:len(buf)]
		}
		n, err := src.R.ReadAt(buf[len(buf):cap(buf)], off)
		off += int64(n)
		buf = buf[:len(buf)+n]
		for {
			i := bytes.IndexByte(buf[start:], '\n')
			if i < 0 {
				break
			}
			if line := buf[start : start+i]; len(bytes.TrimSpace(line)) > 0 {
				return line, int64(start + i + 1), nil
			}
			start += i + 1
		}
		if err != nil || off >= src.Size {
			if err != nil && err != io.EOF {
				return nil, 0, err
			}
			if line := buf[start:]; len(bytes.TrimSpace(line)) > 0 {
				return line, int64(len(buf)), nil // an unterminated first line
			}
			return nil, int64(len(buf)), nil
		}
	}
}

// converter holds what every reader shares: the source, where entries go,
// and the ids given so far.
type converter struct {
	ctx    context.Context // checked every few thousand lines
	reads  int             // lines read, for when ctx is checked
	src    Source
	opt    Options
	stats  *Stats
	header func(*Header) error
	entry  func(*Entry) error
	hdr    *Header // nil until written
	taken  map[string]bool
	seed   []byte            // id's, reused
	open   map[string]*calls // entry id → the tool calls open on the path to it
	last   string            // the id of the last entry, the default parent
	lastTS string
	e      Entry // reused
	buf    []byte
	lines  *scan.Reader // reused
	// validates says the reader validates each line itself: line leaves
	// it to it.
	validates bool
	rest      []byte // what is left to read of a line holding several objects
	restN     int    // its line number
	restOff   int64  // and the offset of rest
	splitSeen int    // the last such line counted
	piece     int    // which object of its line the last one read is (0: the first)
	// parents, when a reader sets it, records each entry's parent as it
	// is emitted (entry id → parent id), for a compaction's kept entry to
	// be checked on its path.
	parents map[string]string
	// geminiModel is the model of a Gemini CLI chat's last reply (a
	// prompt's stamp).
	geminiModel string
	// one says one session is wanted (a conversion): a log of several is
	// refused.
	one bool
}

// begin writes the header, once.
func (c *converter) begin(h Header) error {
	if c.hdr != nil {
		return nil
	}
	if h.Origin.Path == "" {
		h.Origin.Path = c.src.Path
	}
	if h.Timestamp == "" {
		h.Timestamp = session.Timestamp(time.Unix(0, 0)) // a log with no time at all
	}
	h.ID = sessionID(h.Timestamp, h.Origin.Agent+"\x00"+h.Origin.ID)
	c.hdr = &h
	c.lastTS = h.Timestamp // for entries with no time of their own
	return c.header(&h)
}

// sessionID is the UUIDv7 a source session becomes: its time from ts, its
// random bits from a hash of key, so the same source always gives the
// same id (SPEC §11).
func sessionID(ts, key string) string {
	var u uuid.UUID
	sum := sha256.Sum256([]byte(key))
	copy(u[:], sum[:16])
	ms := uint64(0)
	if t, err := time.Parse(time.RFC3339Nano, ts); err == nil && t.UnixMilli() > 0 {
		ms = uint64(t.UnixMilli())
	}
	var be [8]byte
	binary.BigEndian.PutUint64(be[:], ms<<16)
	copy(u[:6], be[:6])
	u[6] = 0x70 | u[6]&0x0f
	u[8] = 0x80 | u[8]&0x3f
	return u.String()
}

// at names where the object last read is, for ids: its line number, and
// which object of the line for all but a line's first (a line that holds
// several: their ids must differ, or each draw would collide with all the
// others'; a line's first keeps the id it had when such lines were not read).
func (c *converter) at(n int) string {
	if c.piece == 0 {
		return strconv.Itoa(n)
	}
	return strconv.Itoa(n) + "\x00piece\x00" + strconv.Itoa(c.piece)
}

// id returns the entry id for the source key: 8 hex characters of a hash
// of the session and the key, drawn again while taken in this file.
func (c *converter) id(key string) string {
	c.seed = append(append(append(c.seed[:0], c.hdr.Origin.ID...), 0), key...)
	for i := 0; ; i++ {
		sum := sha256.Sum256(c.seed)
		id := hex.EncodeToString(sum[:4])
		if !c.taken[id] {
			c.taken[id] = true
			return id
		}
		c.seed = fmt.Appendf(c.seed, "\x00%d", i)
	}
}

// emit hands e to the caller, after the header, and makes it the default
// parent of the next entry.
func (c *converter) emit(e *Entry) error {
	if c.hdr == nil {
		return fmt.Errorf("%s: an entry before the session's first line", c.src.Path)
	}
	if e.Timestamp == "" {
		e.Timestamp = c.lastTS
	}
	if c.opt.Content {
		if err := c.answer(e); err != nil {
			return err
		}
	}
	c.last, c.lastTS = e.ID, e.Timestamp
	if c.parents != nil {
		c.parents[strings.Clone(e.ID)] = strings.Clone(e.ParentID)
	}
	return c.entry(e)
}

// calls are the tool calls made on the path to an entry and not answered
// on it yet, with the stamp of the reply that made them.
type calls struct {
	ids             []string
	provider, model string
}

// Interrupted is the text of the result that answers, in a conversion, a
// tool call the log never answered in a conversation that went on after it
// (SPEC §11): the block is marked "synthetic":true.
const Interrupted = "[no result recorded: the call was interrupted]"

// Orphaned begins the text a tool result becomes when its call is not in
// the log (a log that begins after it: Entire's trimmed captures, a copied
// tail): the call's id, then the result's own words. A result no call
// precedes is refused by the providers and by panto-fsck; what it said is
// kept. OrphanedCount is the line of the stats that counts them.
const (
	Orphaned      = "[the result of a call that is not in the log: "
	OrphanedCount = "tool results kept as text (no call in the log)"
)

var (
	toolUseBlock    = []byte(`"toolUse"`)
	toolResultBlock = []byte(`"toolResult"`)
)

// answer keeps the tool calls open on the path to e and, when e goes on
// from calls it does not answer (a new reply, a prompt), writes before it
// an entry that answers them with Interrupted results and hangs e off it:
// so a conversion is fsck-clean and can be sent to a provider.
func (c *converter) answer(e *Entry) error {
	open := c.open[e.ParentID]
	if e.Role == "" && e.keepsNothing && open != nil {
		return c.interrupted(e, open)
	}
	if e.Role == "" { // a kept entry: the calls stay open past it
		if open != nil {
			c.open[e.ID] = open
		}
		return nil
	}
	if e.Role == "user" && bytes.Contains(e.Body, toolResultBlock) {
		c.orphaned(e, open)
	}
	if open != nil && e.Role == "user" && bytes.Contains(e.Body, toolResultBlock) {
		answered := map[string]bool{}
		gjson.Get(str(e.Body), "content").ForEach(func(_, b gjson.Result) bool {
			if b.Get("type").Str == "toolResult" {
				answered[b.Get("toolUseId").Str] = true
			}
			return true
		})
		left := &calls{provider: open.provider, model: open.model}
		for _, id := range open.ids {
			if !answered[id] {
				left.ids = append(left.ids, id)
			}
		}
		if len(left.ids) > 0 {
			c.open[e.ID] = left
		}
		return nil
	}
	if open != nil {
		if err := c.interrupted(e, open); err != nil {
			return err
		}
	}
	if e.Role == "assistant" && bytes.Contains(e.Body, toolUseBlock) {
		var made calls
		gjson.Get(str(e.Body), "content").ForEach(func(_, b gjson.Result) bool {
			if b.Get("type").Str == "toolUse" {
				made.ids = append(made.ids, strings.Clone(b.Get("id").Str))
			}
			return true
		})
		if len(made.ids) > 0 {
			made.provider, made.model = strings.Clone(e.Provider), strings.Clone(e.Model)
			c.open[e.ID] = &made
		}
	}
	return nil
}

// orphaned turns each tool result of e (a user entry) whose call is not
// open on its path into a text block: Orphaned, the call's id, the result.
func (c *converter) orphaned(e *Entry, open *calls) {
	var ids []string // a round's calls: a few
	if open != nil {
		ids = open.ids
	}
	content := gjson.Get(str(e.Body), "content")
	orphan := func(b gjson.Result) bool {
		return b.Get("type").Str == "toolResult" && !slices.Contains(ids, b.Get("toolUseId").Str)
	}
	found := false
	content.ForEach(func(_, b gjson.Result) bool {
		found = orphan(b)
		return !found
	})
	if !found || content.Index <= 0 {
		return
	}
	n := 0
	body := append([]byte{}, e.Body[:content.Index]...)
	body = append(body, '[')
	i := 0
	content.ForEach(func(_, b gjson.Result) bool {
		if i > 0 {
			body = append(body, ',')
		}
		i++
		if !orphan(b) {
			body = append(body, b.Raw...)
			return true
		}
		n++
		text := Orphaned + b.Get("toolUseId").Str + "]"
		if b.Get("isError").Bool() {
			text += " (an error)"
		}
		body = append(body, `{"type":"text","text":`...)
		body = rawjson.AppendString(body, text+"\n"+b.Get("content").Str)
		body = append(body, '}')
		return true
	})
	body = append(body, ']')
	body = append(body, e.Body[content.Index+len(content.Raw):]...)
	e.Body = body
	c.stats.add(OrphanedCount, n)
}

// interrupted writes, before e, an entry that answers the open calls with
// Interrupted results, and hangs e off it.
func (c *converter) interrupted(e *Entry, open *calls) error {
	b := []byte(`{"role":"user","content":[`)
	for i, id := range open.ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"type":"toolResult","toolUseId":`...)
		b = rawjson.AppendString(b, id)
		b = append(b, `,"content":`...)
		b = rawjson.AppendString(b, Interrupted)
		b = append(b, `,"synthetic":true}`...)
	}
	b = append(b, "]}"...)
	syn := Entry{Line: e.Line, ID: c.id("interrupted\x00" + e.ParentID), ParentID: e.ParentID, Timestamp: e.Timestamp,
		Role: "user", Provider: open.provider, Model: open.model, Body: b}
	c.stats.add("interrupted tool calls answered", len(open.ids))
	if err := c.entry(&syn); err != nil {
		return err
	}
	e.ParentID = syn.ID
	return nil
}

// stamp returns ts as SPEC §2 writes times, or "" when it is not a time.
func stamp(ts string) string {
	if ts == "" {
		return ""
	}
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return ""
	}
	return session.Timestamp(t)
}

// kept returns the body of a kept entry: the source line, whole.
func (c *converter) kept(agent string, raw []byte) []byte {
	if !c.opt.Content {
		return nil
	}
	b := append(c.buf[:0], `"agent":`...)
	b = rawjson.AppendString(b, agent)
	b = append(b, `,"line":`...)
	b = append(b, raw...)
	c.buf = b
	return b
}

// compaction makes e the compaction entry (SPEC §13) of an agent's
// compaction (e.Reply, when set with usage, the request that made its
// summary, by e.Provider and e.Model): its summary, the entry it keeps from ("" none: the summary
// starts the conversation the model is sent), the tokens its context held
// before (<0: unknown), and the source line, whole, as a kept entry keeps it.
func (c *converter) compaction(e *Entry, agent string, raw []byte, summary, kept string, tokens int64) {
	e.Role, e.Kind, e.keepsNothing = "", "compaction", kept == ""
	c.stats.add(agent+" compactions", 1)
	if !c.opt.Content {
		return
	}
	b := append(c.buf[:0], `"summary":`...)
	b = rawjson.AppendString(b, summary)
	if kept != "" {
		b = append(b, `,"firstKeptEntryId":`...)
		b = rawjson.AppendString(b, kept)
	}
	if tokens >= 0 {
		b = append(b, `,"tokensBefore":`...)
		b = strconv.AppendInt(b, tokens, 10)
	}
	if r := e.Reply; r != nil && r.HasUsage {
		// The request that made the summary, as panto's own compaction
		// says it (SPEC §13): an import costs what the log does.
		b = append(b, `,"provider":`...)
		b = rawjson.AppendString(b, e.Provider)
		b = append(b, `,"model":`...)
		b = rawjson.AppendString(b, e.Model)
		b = append(b, `,"usage":`...)
		b = r.Usage.AppendJSON(b)
	}
	b = append(b, `,"agent":`...)
	b = rawjson.AppendString(b, agent)
	b = append(b, `,"line":`...)
	b = append(b, raw...)
	c.buf = b
	e.Body = b
}

// newLines reads a source's lines from its start, with a buffer of the
// converter's own (a cost report reads thousands of files).
func (c *converter) newLines() *scan.Reader {
	if c.lines == nil {
		c.lines = readers.Get().(*scan.Reader)
		c.lines.Reset(io.NewSectionReader(c.src.R, 0, c.src.Size), 0)
	} else {
		c.lines.Again(io.NewSectionReader(c.src.R, 0, c.src.Size), 0) // a second pass: its long lines again
	}
	c.rest = nil
	return c.lines
}

// readers keeps line readers, whose buffers are large, for the next file.
var readers = sync.Pool{New: func() any { return scan.NewReader(io.MultiReader(), 0) }} // no Size: a full buffer

// line reads the source's next JSON object and sorts out what is not one
// (SPEC §11): blank lines are skipped; a line holding several objects
// written without a newline between them gives them one by one; a final
// line without "\n" is read when it is complete, else counted as torn; a
// corrupt line is counted. It returns io.EOF at the end.
func (c *converter) line(lr *scan.Reader) (n int, off int64, raw []byte, err error) {
	for {
		if len(c.rest) > 0 {
			return c.next()
		}
		c.piece = 0
		if c.reads++; c.reads%4096 == 0 && c.ctx != nil {
			if err := c.ctx.Err(); err != nil {
				return 0, 0, nil, err
			}
		}
		raw, off, term, err := lr.Next()
		if err != nil {
			return 0, 0, nil, err
		}
		n = lr.LineNo()
		c.stats.longest = max(c.stats.longest, len(raw))
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		if !term {
			if isObject(raw) {
				return n, off, raw, nil // the agent wrote it whole: a copy lost the "\n"
			}
			if !c.split(n, off, raw) {
				c.stats.Torn = n
				return 0, 0, nil, io.EOF
			}
			continue
		}
		if !c.validates && !isObject(raw) {
			c.bad(n, off, raw)
			continue
		}
		return n, off, raw, nil
	}
}

// bad takes a line that is not one JSON object: the objects it holds when
// it is several written with no newline between them (real pi and Claude
// Code files have such lines), else a corrupt line, counted.
func (c *converter) bad(n int, off int64, raw []byte) {
	if !c.split(n, off, raw) {
		c.stats.Corrupt = append(c.stats.Corrupt, n)
	}
}

// split makes raw the rest of the line for line to return object by
// object, when raw is two or more JSON objects and nothing else. raw is
// the line reader's: it stays valid until line reads the next line.
func (c *converter) split(n int, off int64, raw []byte) bool {
	if firstOfSeveral(raw) == nil {
		return false
	}
	c.rest, c.restN, c.restOff, c.piece = raw, n, off, -1
	if n > c.splitSeen { // a reader's second pass does not count them again
		c.splitSeen = n
		c.stats.add("lines holding several objects, read as each", 1)
	}
	return true
}

// firstOfSeveral returns the first object of raw when raw is two or more
// JSON objects and nothing else (a line split reads object by object),
// else nil.
func firstOfSeveral(raw []byte) []byte {
	var first []byte
	parts := 0
	for i := rawjson.SkipWS(raw, 0); i < len(raw); i = rawjson.SkipWS(raw, i) {
		if raw[i] != '{' {
			return nil
		}
		end, ok := rawjson.Value(raw, i, 0)
		if !ok {
			return nil
		}
		if parts == 0 {
			first = raw[i:end]
		}
		parts++
		i = end
	}
	if parts < 2 {
		return nil
	}
	return first
}

// next returns the next object of the line split holds.
func (c *converter) next() (int, int64, []byte, error) {
	i := rawjson.SkipWS(c.rest, 0)
	end, _ := rawjson.Value(c.rest, i, 0) // valid: split checked it
	raw, off := c.rest[i:end], c.restOff+int64(i)
	c.piece++
	c.rest, c.restOff = c.rest[end:], c.restOff+int64(end)
	if rawjson.SkipWS(c.rest, 0) == len(c.rest) {
		c.rest = nil
	}
	return c.restN, off, raw, nil
}

// Sniff tells the format of the log r holds from its first line that is
// not blank. What is not a JSON object there is left to panto's reader to
// report (a corrupt line); an empty log is panto's too.
func Sniff(r io.ReaderAt, size int64) (Format, error) {
	first, end, err := firstLineLook(Source{R: r, Size: size})
	if err != nil || first == nil {
		return Panto, err // nothing: panto's reader reports it
	}
	if end < 0 {
		return longFirst(r, size, first) // a document on one line, most likely
	}
	return sniffFirst(r, size, first, end)
}

// sniffLook is how much of a log's first line the format is first told
// from: a longer line is held whole only when it starts no agent's JSON
// document (a line of a JSON Lines log with a long prompt). A variable
// for the tests, which tell every log with a small look too.
var sniffLook int64 = 1 << 20

// firstLineLook is firstLineEnd of src reading at most sniffLook bytes
// for a first line that goes on past them: then it returns the line's
// start read so far, and end -1. A chat of 200 MB on one line (jq -c,
// json.dump) is not held whole to tell its format; its reader streams it.
func firstLineLook(src Source) ([]byte, int64, error) {
	if src.Size <= sniffLook {
		return firstLineEnd(src)
	}
	first, end, err := firstLineEnd(Source{R: src.R, Size: sniffLook})
	switch {
	case err != nil:
		return nil, 0, err
	case first == nil: // a MiB of blank lines first
		return firstLineEnd(src)
	case end >= sniffLook && !endsLine(src, end): // (the reads may pass the look)
		return first, -1, nil
	}
	return first, end, nil
}

// longFirst tells the format of r, whose first line that is not blank is
// longer than sniffLook and begins with first: an agent's JSON document
// when its start says so (DocFormat, what search tells such a file by),
// else by the whole line, as any other.
func longFirst(r io.ReaderAt, size int64, first []byte) (Format, error) {
	if f := DocFormat(first); f != Unknown {
		return f, nil
	}
	first, end, err := firstLineEnd(Source{R: r, Size: size})
	if err != nil || first == nil {
		return Panto, err
	}
	return sniffFirst(r, size, first, end)
}

// SniffStart is Sniff for a log whose start is in memory already (start,
// read from offset 0): a first line it holds whole is looked at where it
// is, not read again into a buffer of its own (search tells the format
// of every file it reads).
func SniffStart(r io.ReaderAt, size int64, start []byte) (Format, error) {
	for i := 0; ; {
		nl := bytes.IndexByte(start[i:], '\n')
		if nl < 0 {
			if int64(len(start)) != size {
				return Sniff(r, size) // the first line goes on past start
			}
			if line := start[i:]; len(bytes.TrimSpace(line)) > 0 {
				return sniffFirst(r, size, line, size) // an unterminated first line
			}
			return Panto, nil // nothing: panto's reader reports it
		}
		if line := start[i : i+nl]; len(bytes.TrimSpace(line)) > 0 {
			return sniffFirst(r, size, line, int64(i+nl+1))
		}
		i += nl + 1
	}
}

// sniffFirst tells the format from the first line that is not blank,
// which ends at end (what follows is read from r when needed).
func sniffFirst(r io.ReaderAt, size int64, first []byte, end int64) (Format, error) {
	if i := rawjson.SkipWS(first, 0); i < len(first) && first[i] == '{' {
		if j, ok := rawjson.Value(first, i, 0); ok && rawjson.SkipWS(first, j) == len(first) {
			// One whole object, as nearly every first line: validated
			// once here, where firstOfSeveral, Valid and Detect's
			// isObject each read it again.
			f, err := headFormatAs(detectHead(headOf(first[i:j])), first, after(r, size, end))
			if err != nil || f != Unknown {
				return f, err
			}
			return whole(r, size) // one JSON document on one line
		}
	}
	return sniffAny(r, size, first, end)
}

// sniffAny is sniffFirst of any first line: several objects, a torn one.
func sniffAny(r io.ReaderAt, size int64, first []byte, end int64) (Format, error) {
	if o := firstOfSeveral(first); o != nil {
		// Two or more objects with no newline between them: the readers
		// take them one by one, as on any other line.
		return headFormat(o, after(r, size, end))
	}
	if !rawjson.Valid(first) {
		// A torn first line: another agent's log when the next lines say
		// so, else panto's reader reports it.
		if f, err := Identify(r, size); err != nil || f != Unknown {
			return f, err
		}
		if t := bytes.TrimSpace(first); len(t) == 1 && (t[0] == '{' || t[0] == '[') {
			return Unknown, nil // a pretty-printed JSON document, no agent's
		}
		return Panto, nil // a torn line: panto's reader reports it
	}
	f, err := headFormat(first, after(r, size, end))
	if err != nil || f != Unknown {
		return f, err
	}
	return whole(r, size) // one JSON document on one line
}

// Identify tells the format of a file as a whole log, strictly: Panto only
// for a file that begins with a panto session header, an agent's format
// when one of its first lines that is JSON says so (a torn first line is
// looked past), else Unknown: a text, binary or empty file, or JSON of
// another tool. For import and fsck, which must not take what is no
// session for one.
func Identify(r io.ReaderAt, size int64) (Format, error) {
	if first, end, err := firstLineLook(Source{R: r, Size: size}); err != nil {
		return Unknown, err
	} else if end < 0 {
		if f := DocFormat(first); f != Unknown {
			return f, nil // a document on one line: not read as a line
		}
	}
	f, err := identifyLines(r, size)
	if err != nil || f != Unknown {
		return f, err
	}
	return whole(r, size) // one JSON document, a database
}

func identifyLines(r io.ReaderAt, size int64) (Format, error) {
	lr := scan.NewReader(io.NewSectionReader(r, 0, size), 0)
	for tries := 0; tries < 8; {
		line, off, _, err := lr.Next()
		if err == io.EOF {
			return Unknown, nil
		}
		if err != nil {
			return Unknown, err
		}
		t := bytes.TrimSpace(line)
		if len(t) == 0 {
			continue
		}
		tries++
		if o := firstOfSeveral(t); o != nil {
			t = o
		}
		if !isObject(t) {
			if lr.LineNo() == 1 && len(t) > 0 && t[0] == '{' {
				continue // a torn first line: the next may say
			}
			return Unknown, nil
		}
		f, err := headFormat(t, after(r, size, off+int64(len(line))+1))
		if err != nil {
			return Unknown, err
		}
		if f == Panto && session.Classify(t).Kind != session.KindHeader {
			return Unknown, nil // entry lines with no header: no session file
		}
		return f, nil
	}
	return Unknown, nil
}

// SniffStream is Sniff for a stream: it reads up to the first line that is
// not blank and returns a reader that gives r's bytes from the start.
func SniffStream(r io.Reader) (Format, io.Reader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var head []byte
	for {
		line, err := br.ReadSlice('\n')
		head = append(head, line...)
		if err == bufio.ErrBufferFull {
			continue
		}
		rest := io.MultiReader(bytes.NewReader(head), br)
		if err != nil && err != io.EOF {
			return Unknown, rest, err
		}
		if t := bytes.TrimSpace(line); len(t) > 0 || err == io.EOF {
			f := Panto
			if o := firstOfSeveral(t); o != nil {
				t = o
			}
			if rawjson.Valid(t) && len(t) > 0 {
				// What follows is looked at in place: Peek reads no
				// further than the buffer, and rest still gives it.
				f, _ = headFormat(t, func() ([]byte, error) {
					b, _ := br.Peek(min(headLook, br.Size()))
					return b, nil
				})
			}
			if f == Unknown || !isObject(t) {
				// One JSON document, a database: told by its start.
				b, _ := br.Peek(min(headLook, br.Size()))
				if w := wholeFormat(append(head[:len(head):len(head)], b...)); w != Unknown {
					f = w
				}
			}
			return f, rest, nil
		}
	}
}

// Spool copies r into a temporary file that is already unlinked, for the
// readers that need to read a stream twice. The caller closes it.
func Spool(r io.Reader) (*os.File, int64, error) {
	f, err := os.CreateTemp("", "panto-*")
	if err != nil {
		return nil, 0, err
	}
	os.Remove(f.Name())
	n, err := io.Copy(f, r)
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, n, nil
}

// Convert writes the panto session src becomes (header and entries) to a
// temporary file, already unlinked, and returns it with its size.
func Convert(src Source, f Format) (*os.File, int64, *Stats, error) {
	return ConvertContext(context.Background(), src, f)
}

// ConvertContext is Convert that stops when ctx is done (ReadContext).
func ConvertContext(ctx context.Context, src Source, f Format) (*os.File, int64, *Stats, error) {
	tmp, err := os.CreateTemp("", "panto-*")
	if err != nil {
		return nil, 0, nil, err
	}
	os.Remove(tmp.Name())
	w := bufio.NewWriterSize(tmp, 256<<10)
	var line []byte
	_, st, err := ReadContext(ctx, src, f, Options{Content: true, One: true},
		func(h *Header) error { _, err := w.Write(h.Line()); return err },
		func(e *Entry) (err error) {
			line, err = e.WriteLine(w, line)
			return err
		})
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		tmp.Close()
		return nil, 0, st, err
	}
	size, err := tmp.Seek(0, io.SeekCurrent)
	if err != nil {
		tmp.Close()
		return nil, 0, st, err
	}
	if cap(line) > 32<<20 || st.longest > 32<<20 {
		// A huge line's buffers are garbage now: given back before the
		// session is read, not kept as the reader's.
		line = nil
		debug.FreeOSMemory()
	}
	return tmp, size, st, nil
}

// isObject reports whether raw is one JSON object.
func isObject(raw []byte) bool {
	return rawjson.Valid(raw) && raw[rawjson.SkipWS(raw, 0)] == '{'
}
