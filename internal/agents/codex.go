package agents

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/panto-dev/panto/internal/rawjson"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/tidwall/gjson"
)

// A Codex rollout has no usage per message: "token_count" events carry the
// session's cumulative total, re-emitted unchanged on every refresh. The
// usage is the advance of that total; a total that goes down (a resumed or
// compacted session) starts a new baseline, its event's own last usage
// counting. An advance goes on the last reply it covers (the others since
// the previous advance carry zero), so replies wait in a queue until their
// advance comes. A forked rollout first replays its parent's history,
// token counts included: that prefix sets the baseline and is no usage;
// its first count of its own is its request's (last_token_usage): a
// spawned sub-agent's counter starts again at zero, an ordinary fork's
// total carries its parent's.

// tokens is Codex's TokenUsage: input includes cached input, output
// includes reasoning.
type tokens struct{ input, cached, output, reasoning int64 }

func readTokens(v gjson.Result) tokens {
	return tokens{v.Get("input_tokens").Int(), v.Get("cached_input_tokens").Int(), v.Get("output_tokens").Int(), v.Get("reasoning_output_tokens").Int()}
}

func (t tokens) covers(b tokens) bool {
	return t.input >= b.input && t.cached >= b.cached && t.output >= b.output && t.reasoning >= b.reasoning
}

func (t tokens) minus(b tokens) tokens {
	return tokens{t.input - b.input, t.cached - b.cached, t.output - b.output, t.reasoning - b.reasoning}
}

// usage is t as panto counts it: fresh input apart from cached.
func (t tokens) usage() session.Usage {
	cached := min(max(t.cached, 0), max(t.input, 0))
	out := max(t.output, 0)
	return session.Usage{Input: max(t.input, 0) - cached, CacheRead: cached, Output: out, Reasoning: min(max(t.reasoning, 0), out)}
}

// pending is an entry waiting in the queue.
// reviewOutput is the id Codex gives the assistant message that carries a
// review's findings into the thread that asked for the review.
const reviewOutput = "review_rollout_assistant"

type pending struct {
	at     string // where it began (converter.at), for its id
	e      Entry
	blocks []byte // the content blocks so far
	n      int    // how many
	tool   bool   // a reply with a tool call
	copy   bool   // a message of a compaction's replacement history
	review bool   // a review's output, copied from the reviewer's thread
}

type codexState struct {
	provider, model string
	tier            string // the turn's service_tier: billed apart unless the default (Reply.Mode)
	base            tokens
	queue           []*pending
	replaying       bool
	forkTime        time.Time
	// inherits says the log's counters may carry another's usage: a fork
	// (its first total holds its parent's), a page read alone; counted
	// says a token count with usage has been read (a replayed one too).
	inherits, counted bool
	at                string // where the line being read is (converter.at)
	context           int64  // the tokens of the last request and its reply: a compaction's tokensBefore (-1 unknown)
	root              string // a paged rollout's first page, its origin's path ("" for a rollout of one file)
	// copying says that the items read are a compaction's replacement
	// history: no new turn, no usage of their own.
	copying bool
	systems map[[32]byte]bool // the system messages written, by a hash of their content blocks
}

func (c *converter) codex() error {
	s := codexState{provider: "openai", model: "unknown", context: -1, systems: map[[32]byte]bool{}}
	pages, err := codexPages(c.src)
	if err != nil {
		return err
	}
	if pages != nil {
		defer pages.close()
		c.src.R, c.src.Size = pages, pages.size
		s.root = pages.root
	}
	lr := c.newLines()
	for {
		n, _, raw, err := c.line(lr)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		var ts, typ string
		var p gjson.Result
		gjson.Parse(str(raw)).ForEach(func(k, v gjson.Result) bool {
			switch k.Str {
			case "timestamp":
				ts = v.Str
			case "type":
				typ = v.Str
			case "payload":
				p = v
			}
			return true
		})
		ts = stamp(ts)
		s.at = c.at(n)
		if typ == "session_meta" && c.hdr == nil {
			if err := c.codexMeta(&s, p, ts); err != nil {
				return err
			}
			continue
		}
		if c.hdr == nil {
			id := codexFileID(c.src.Path)
			if err := c.begin(Header{Timestamp: ts, Origin: Origin{Agent: "codex", ID: id}}); err != nil {
				return err
			}
		}
		if err := c.codexLine(&s, n, ts, typ, p, raw); err != nil {
			return err
		}
	}
	if c.hdr == nil {
		return ErrNotALog
	}
	return c.flush(&s, nil)
}

// codexFileID is the session id a rollout's file name ends with
// (rollout-<time>-<uuid>.jsonl), else the name without ".jsonl": for a
// rollout with no session_meta first.
func codexFileID(path string) string {
	if thread, _, ok := codexPageName(filepath.Base(path)); ok {
		return thread
	}
	id := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	if len(id) > 36 {
		if _, err := uuid.Parse(id[len(id)-36:]); err == nil {
			return id[len(id)-36:]
		}
	}
	return id
}

func (c *converter) codexMeta(s *codexState, p gjson.Result, ts string) error {
	if v := p.Get("model_provider").Str; v != "" {
		s.provider = strings.Clone(v)
	}
	h := Header{Timestamp: ts, Cwd: strings.Clone(p.Get("cwd").Str), Origin: Origin{Agent: "codex", ID: strings.Clone(p.Get("id").Str), Path: s.root}}
	if t := stamp(p.Get("timestamp").Str); t != "" {
		h.Timestamp = t
	}
	if by := codexSpawner(p); by != "" {
		// A sub-agent thread (thread_spawn, a review): its cost is its
		// parent's unless --subagents.
		h.Origin.Parent, h.Origin.Subagent = strings.Clone(by), true
	}
	if s.root == "" && p.Get("history_base").IsObject() {
		s.inherits = true // a page whose pages before it were not read with it
		c.stats.add("pages read without the pages before them", 1)
	}
	if f := p.Get("forked_from_id").Str; f != "" {
		if h.Origin.Parent == "" {
			h.Origin.Parent = strings.Clone(f)
		}
		s.inherits = true
		s.replaying = true
		s.forkTime = v7Time(h.Origin.ID)
		if s.forkTime.IsZero() {
			s.forkTime, _ = time.Parse(time.RFC3339Nano, h.Timestamp)
		}
	}
	return c.begin(h)
}

// v7Time is the time of a UUIDv7, or zero.
func v7Time(s string) time.Time {
	u, err := uuid.Parse(s)
	if err != nil || u.Version() != 7 {
		return time.Time{}
	}
	sec, nsec := u.Time().UnixTime()
	return time.Unix(sec, nsec)
}

// replayEnds reports whether a turn context is the fork's own first turn:
// its turn id (a UUIDv7 minted when the turn ran) is not older than the
// fork, or, without one, its line is more than a second after the fork
// (a replay is written in one go when the fork is made).
func (s *codexState) replayEnds(p gjson.Result, ts string) bool {
	if t := v7Time(p.Get("turn_id").Str); !t.IsZero() {
		return !t.Before(s.forkTime)
	}
	t, err := time.Parse(time.RFC3339Nano, ts)
	return err == nil && t.Sub(s.forkTime) > time.Second
}

func (c *converter) codexLine(s *codexState, n int, ts, typ string, p gjson.Result, raw []byte) error {
	switch typ {
	case "session_meta":
		if s.root != "" && p.Get("history_base").IsObject() && p.Get("id").Str == c.hdr.Origin.ID {
			c.stats.add("pages after the first", 1)
		} else {
			c.stats.add("replayed session_meta lines not imported", 1)
		}
	case "turn_context":
		if s.replaying && s.replayEnds(p, ts) {
			if err := c.flush(s, nil); err != nil {
				return err
			}
			s.replaying = false
		}
		if m := p.Get("model").Str; m != "" && m != s.model {
			s.model = strings.Clone(m)
		}
		if t := billed(p.Get("service_tier").Str); t != s.tier && p.Get("service_tier").Exists() {
			s.tier = strings.Clone(t)
		}
		c.stats.add("turn_context lines not imported", 1)
	case "event_msg":
		switch et := p.Get("type").Str; et {
		case "token_count":
			return c.tokenCount(s, p.Get("info"))
		case "user_message", "agent_message", "agent_reasoning":
			c.stats.add(et+" events not imported (the response items hold them)", 1)
		default:
			if et == "thread_settings_applied" { // the service tier the turns after it are billed at
				if t := billed(p.Get("thread_settings.service_tier").Str); t != s.tier {
					s.tier = strings.Clone(t)
				}
			}
			c.stats.add("event_msg "+et+" lines not imported", 1)
		}
	case "response_item":
		return c.responseItem(s, n, ts, p, raw)
	case "compacted":
		return c.compacted(s, n, ts, p, raw)
	default:
		c.stats.add("codex."+typ+" entries kept", 1)
		return c.queueKept(s, n, ts, "codex."+typ, raw)
	}
	return nil
}

func (c *converter) queueKept(s *codexState, n int, ts, kind string, raw []byte) error {
	e := Entry{Line: n, Timestamp: ts, Kind: kind, Body: bytes.Clone(c.kept("codex", raw))}
	s.queue = append(s.queue, &pending{at: s.at, e: e})
	return nil
}

// tokenCount takes a token_count event's usage: the advance of the total.
func (c *converter) tokenCount(s *codexState, info gjson.Result) error {
	if !info.IsObject() {
		return nil
	}
	total := readTokens(info.Get("total_token_usage"))
	if last := info.Get("last_token_usage"); last.IsObject() {
		s.context = last.Get("input_tokens").Int() + last.Get("output_tokens").Int()
	}
	if s.replaying {
		s.base = total
		c.stats.add("replayed token counts (the parent's usage)", 1)
		return nil
	}
	var d tokens
	first := !s.counted
	s.counted = true
	switch {
	case first && s.inherits:
		// A fork's first count of its own: a sub-agent's counter starts
		// again at zero, an ordinary fork's total carries its parent's
		// (a page's read alone, the pages' before it), maybe above the
		// replayed baseline either way: its usage is its request's.
		last := info.Get("last_token_usage")
		switch d = readTokens(last); {
		case last.IsObject() && total.covers(d):
			if d != total {
				c.stats.add("token totals carrying the parent's (a baseline, not counted)", 1)
			}
		case total.covers(s.base):
			d = total.minus(s.base)
		default:
			d = total
		}
	case total.covers(s.base):
		d = total.minus(s.base)
	default: // the total went down: a new baseline
		d = readTokens(info.Get("last_token_usage"))
		c.stats.add("token totals that went down", 1)
	}
	s.base = total
	if d == (tokens{}) {
		c.stats.add("token counts re-emitted", 1)
		return nil
	}
	u := d.usage()
	return c.flush(s, &u)
}

// reply returns the reply the queue ends with, starting one when it ends
// with something else.
func (s *codexState) reply(n int, ts string) *pending {
	if k := len(s.queue); k > 0 && s.queue[k-1].e.Role == "assistant" {
		return s.queue[k-1]
	}
	p := &pending{at: s.at, e: Entry{Line: n, Timestamp: ts, Role: "assistant", Provider: s.provider, Model: s.model, Reply: &Reply{Mode: s.tier}}}
	s.queue = append(s.queue, p)
	return p
}

// user returns the user entry the queue ends with (tool results gather
// in one), or a new one.
func (s *codexState) user(n int, ts string, join bool) *pending {
	if k := len(s.queue); join && k > 0 && s.queue[k-1].e.Role == "user" && s.queue[k-1].tool {
		return s.queue[k-1]
	}
	p := &pending{at: s.at, e: Entry{Line: n, Timestamp: ts, Role: "user", Provider: s.provider, Model: s.model}, tool: join}
	s.queue = append(s.queue, p)
	return p
}

func (p *pending) add(block []byte) {
	if p.n > 0 {
		p.blocks = append(p.blocks, ',')
	}
	p.n++
	p.blocks = append(p.blocks, block...)
}

func (c *converter) responseItem(s *codexState, n int, ts string, p gjson.Result, raw []byte) error {
	b := c.buf[:0]
	defer func() { c.buf = b }()
	switch it := p.Get("type").Str; it {
	case "message":
		role := p.Get("role").Str
		var parts []gjson.Result
		p.Get("content").ForEach(func(_, v gjson.Result) bool { parts = append(parts, v); return true })
		var e *pending
		switch role {
		case "assistant":
			if p.Get("id").Str == reviewOutput {
				// The reviewer's findings, which Codex copies into
				// the thread that asked for them: that request was
				// the reviewer's, billed in its own rollout (a
				// sub-agent), and no token count of this thread
				// follows. A reply of its own, with no usage here.
				e = &pending{at: s.at, e: Entry{Line: n, Timestamp: ts, Role: "assistant", Provider: s.provider, Model: s.model, Reply: &Reply{Mode: s.tier}}, review: true}
				s.queue = append(s.queue, e)
				c.stats.add("review outputs (billed in the reviewer's thread)", 1)
				break
			}
			e = s.reply(n, ts)
		case "user":
			if !s.copying {
				if err := c.flush(s, nil); err != nil { // a new turn: what waits has no usage coming
					return err
				}
			}
			e = s.user(n, ts, false)
		default: // developer, system
			e = &pending{at: s.at, e: Entry{Line: n, Timestamp: ts, Role: "system"}}
			s.queue = append(s.queue, e)
		}
		defer func() {
			if role != "user" && role != "assistant" {
				sum := sha256.Sum256(e.blocks)
				if s.copying && s.systems[sum] {
					s.queue = s.queue[:len(s.queue)-1] // on the path already: kept
					c.stats.add("replacement history system messages on the path already", 1)
					return
				}
				s.systems[sum] = true
			}
		}()
		for _, v := range parts {
			b = b[:0]
			switch v.Get("type").Str {
			case "input_text", "output_text", "text":
				b = appendBlock(b, "text", "text", strRaw(v.Get("text")))
			case "refusal":
				b = appendBlock(b, "text", "text", strRaw(v.Get("refusal")))
			case "input_image":
				c.stats.add("images named in text", 1)
				b = appendBlock(b, "text", "text", rawjson.AppendString(nil, dataURLText(v.Get("image_url").Str)))
				if rest, ok := strings.CutPrefix(v.Get("image_url").Str, "data:"); ok && c.src.Images {
					media, data, _ := strings.Cut(rest, ",")
					media, _ = strings.CutSuffix(media, ";base64")
					b = append(rawjson.AppendString(append(b[:len(b)-1], `,"image":{"mimeType":`...), media), `,"data":`...)
					b = append(rawjson.AppendString(b, data), "}}"...)
				}
			default:
				c.stats.add("content parts kept as text", 1)
				b = appendBlock(b, "text", "text", rawjson.AppendString(nil, v.Raw))
			}
			e.add(b)
		}
		if s.copying {
			c.stats.add(role+" messages of a replacement history", 1)
		} else {
			c.stats.add(role+" messages", 1)
		}
	case "reasoning":
		e := s.reply(n, ts)
		var text []string
		p.Get("summary").ForEach(func(_, v gjson.Result) bool { text = append(text, v.Get("text").Str); return true })
		if len(text) == 0 {
			p.Get("content").ForEach(func(_, v gjson.Result) bool { text = append(text, v.Get("text").Str); return true })
		}
		if len(text) > 0 {
			e.add(appendBlock(b[:0], "thinking", "thinking", rawjson.AppendString(nil, strings.Join(text, "\n\n"))))
		}
		if enc := p.Get("encrypted_content"); enc.Type == gjson.String {
			e.add(appendBlock(b[:0], "redactedThinking", "data", []byte(enc.Raw)))
		}
		c.stats.add("reasoning items", 1)
	case "function_call", "custom_tool_call", "local_shell_call":
		e := s.reply(n, ts)
		e.tool = true
		name, input := p.Get("name").Str, ""
		switch it {
		case "function_call":
			input = p.Get("arguments").Str
			if !rawjson.Valid([]byte(input)) {
				input = string(rawjson.AppendString(nil, input))
			}
		case "custom_tool_call": // freeform: its input is text, kept as a JSON string
			input = string(rawjson.AppendString(nil, p.Get("input").Str))
		default:
			name, input = "local_shell", p.Get("action").Raw
		}
		if input == "" {
			input = "{}"
		}
		id := p.Get("call_id").Str
		if id == "" {
			id = p.Get("id").Str
		}
		b = appendToolUse(b[:0], rawjson.AppendString(nil, id), rawjson.AppendString(nil, name), input)
		e.add(b)
		c.stats.add(it+" items", 1)
	case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
		e := s.user(n, ts, true)
		out := p.Get("output")
		text := out.Str
		if out.Type != gjson.String {
			if ct := out.Get("content"); ct.Type == gjson.String {
				text = ct.Str
			} else {
				text = out.Raw
			}
		}
		b = append(b[:0], `{"type":"toolResult","toolUseId":`...)
		b = rawjson.AppendString(b, p.Get("call_id").Str)
		b = append(b, `,"content":`...)
		b = rawjson.AppendString(b, text)
		e.add(append(b, '}'))
		c.stats.add(it+" items", 1)
	default:
		c.stats.add("codex."+it+" entries kept", 1)
		return c.queueKept(s, n, ts, "codex."+it, raw)
	}
	return nil
}

// compacted is a Codex compaction. What Codex sends after it is its
// replacement history when it has one (the system and user messages it
// keeps, and the summary: a message, or an encrypted item of OpenAI's),
// else its initial context, the user's recent prompts and the summary.
// It becomes a compaction entry that keeps nothing (the system messages
// before it are sent still), followed by the messages of the replacement
// history the path does not hold: its user messages but the summary, its
// system messages that differ from those already written. Other items
// (the encrypted summary, a reply) are in the entry's line only.
func (c *converter) compacted(s *codexState, n int, ts string, p gjson.Result, raw []byte) error {
	summary := p.Get("message").Str
	history := p.Get("replacement_history")
	if summary == "" {
		history.ForEach(func(_, it gjson.Result) bool {
			if it.Get("type").Str == "compaction" {
				summary = CodexEncrypted
			}
			return summary == ""
		})
	}
	e := Entry{Line: n, Timestamp: ts}
	c.compaction(&e, "codex", raw, summary, "", s.context)
	e.Body = bytes.Clone(e.Body)
	s.queue = append(s.queue, &pending{at: s.at, e: e})
	at, k := s.at, 0
	s.copying = true
	defer func() { s.at, s.copying = at, false }()
	var err error
	history.ForEach(func(_, it gjson.Result) bool {
		k++
		role := it.Get("role").Str
		if it.Get("type").Str != "message" || role == "assistant" {
			c.stats.add("replacement history items kept in their compaction", 1)
			return true
		}
		if role == "user" && summary != "" {
			var text []string
			it.Get("content").ForEach(func(_, v gjson.Result) bool { text = append(text, v.Get("text").Str); return true })
			if strings.HasSuffix(strings.TrimSpace(strings.Join(text, "\n")), strings.TrimSpace(summary)) {
				return true // the summary itself: the compaction entry's
			}
		}
		s.at = at + "\x00replacement\x00" + strconv.Itoa(k)
		from := len(s.queue)
		err = c.responseItem(s, n, ts, it, nil)
		for _, p := range s.queue[from:] {
			p.copy = true
		}
		return err == nil
	})
	return err
}

// dataURLText names an image given as a data: URL (or a link).
func dataURLText(u string) string {
	if rest, ok := strings.CutPrefix(u, "data:"); ok {
		media, data, _ := strings.Cut(rest, ",")
		media = strings.TrimSuffix(media, ";base64")
		return "[image: " + media + ", " + strconv.Itoa(base64Size(data)) + " bytes]"
	}
	return "[image: " + u + "]"
}

// flush writes the queue out. With u, the last reply in it gets u and the
// others zero (one advance covers them); without, replies get no usage
// (none came: unknown), or zero while the fork's replay is read.
func (c *converter) flush(s *codexState, u *session.Usage) error {
	last := -1
	for i, p := range s.queue {
		if p.e.Role == "assistant" && !p.review {
			last = i
		}
	}
	if u != nil && last < 0 {
		// Usage with no reply recorded: a reply of its own, empty.
		p := &pending{at: "0", e: Entry{Timestamp: c.lastTS, Role: "assistant", Provider: s.provider, Model: s.model, Reply: &Reply{Mode: s.tier}}}
		s.queue = append(s.queue, p)
		last = len(s.queue) - 1
		c.stats.add("usage with no reply recorded", 1)
	}
	i := 0 // the index of an entry in the queue, the copies apart: the ids it had before copies were written
	for k, p := range s.queue {
		e := &p.e
		if p.copy {
			e.ID = c.id("line\x00" + p.at + "\x00copy")
		} else {
			e.ID = c.id("line\x00" + p.at + "\x00" + strconv.Itoa(i))
			i++
		}
		e.ParentID = c.last
		if r := e.Reply; r != nil {
			switch {
			case u != nil && k == last:
				r.Usage, r.HasUsage = *u, true
			case u != nil || s.replaying || p.review:
				r.Usage, r.HasUsage = session.Usage{}, true
			}
			if p.tool {
				r.StopReason = "toolUse"
			} else {
				r.StopReason = "stop"
			}
		}
		if c.opt.Content {
			e.Body = c.codexBody(e, p)
		}
		if err := c.emit(e); err != nil {
			return err
		}
	}
	clear(s.queue)
	s.queue = s.queue[:0]
	return nil
}

func (c *converter) codexBody(e *Entry, p *pending) []byte {
	if e.Role == "" {
		return e.Body
	}
	b := append(c.buf[:0], `{"role":`...)
	b = rawjson.AppendString(b, e.Role)
	b = append(b, `,"content":[`...)
	b = append(b, p.blocks...)
	b = append(b, ']')
	if r := e.Reply; r != nil {
		b = r.appendFields(b, e.Provider, e.Model)
	}
	c.buf = append(b, '}')
	return c.buf
}

// billed is a service tier as a Reply's Mode: "" for the standard one;
// "fast", OpenAI's new name for priority processing (a request may say
// either), is billed at the priority prices.
func billed(tier string) string {
	switch tier {
	case "default", "auto", "standard":
		return ""
	case "fast":
		return "priority"
	}
	return tier
}

// CodexEncrypted is the summary of a Codex compaction made on OpenAI's
// side: its summary is an encrypted item of the replacement history, which
// only OpenAI reads (the entry's line keeps it).
const CodexEncrypted = "[Codex compacted the conversation on OpenAI's side: its summary is encrypted, readable by OpenAI alone]"

// codexAgent is Codex's row of the registry.
var codexAgent = &Agent{
	Format: Codex, Name: "codex", Title: "Codex", Noun: "a Codex rollout",
	Env: []string{"CODEX_HOME"},
	Looked: func(getenv func(string) string) []string {
		if d := home(getenv, "CODEX_HOME", ".codex"); d != "" {
			return []string{filepath.Join(d, "sessions"), filepath.Join(d, "archived_sessions")}
		}
		return nil
	},
	Line:   func(h *Head) bool { return h.Payload.Exists() && codexTypes[h.Type] },
	Resume: func(id string) []string { return []string{"codex", "resume", id} },
	read:   (*converter).codex,
	part:   codexPassedOver,
	mark:   []byte(`"user_message"`),
	prompt: func(l gjson.Result) string {
		if l.Get("type").Str != "event_msg" || l.Get("payload.type").Str != "user_message" {
			return ""
		}
		return l.Get("payload.message").Str
	},
}

var codexTypes = map[string]bool{"session_meta": true, "response_item": true, "event_msg": true, "turn_context": true, "compacted": true}

// codexSpawner is the thread that spawned the one a session_meta is of,
// when it is a sub-agent's: its thread_spawn's parent_thread_id, else the
// meta's own parent_thread_id; for another sub-agent source (a review)
// the thread it was forked from, else the tree's session_id. "" for a
// thread of the user's own (a fork of one too).
func codexSpawner(p gjson.Result) string {
	if by := p.Get("source.subagent.thread_spawn.parent_thread_id").Str; by != "" {
		return by
	}
	if by := p.Get("parent_thread_id").Str; by != "" {
		return by
	}
	if !p.Get("source.subagent").Exists() && p.Get("thread_source").Str != "subagent" {
		return ""
	}
	if by := p.Get("forked_from_id").Str; by != "" {
		return by
	}
	if by := p.Get("session_id").Str; by != p.Get("id").Str {
		return by
	}
	return ""
}

// Paged rollouts. Codex with history_mode "paginated" writes a thread in
// pages, rollout-<time>-<thread>_<page>.jsonl, each beginning with a
// session_meta of the thread's id whose history_base names the page it
// continues (thread_id: that page's id) and the ordinal it starts at
// (end_ordinal_exclusive); the token counters run on across pages. A
// thread's pages are one session: read in order as one log (the first
// page's lines keep the numbers, so the ids, they had when it was the
// only one), from whichever page is named; a directory walk takes the
// last page alone (codexPassedOver).

// codexPageName splits the name of a rollout file,
// rollout-<time>-<thread>[_<page>].jsonl, into its thread id (lower case)
// and its page ("" for none); ok is false for another name.
func codexPageName(name string) (thread, page string, ok bool) {
	stem, found := strings.CutSuffix(name, ".jsonl")
	if !found || !strings.HasPrefix(stem, "rollout-") {
		return "", "", false
	}
	isThread := func(end int) bool {
		if end < len("rollout-")+37 || stem[end-37] != '-' {
			return false
		}
		_, err := uuid.Parse(stem[end-36 : end])
		return err == nil
	}
	if i := strings.LastIndexByte(stem, '_'); i > 0 && i < len(stem)-1 && isThread(i) {
		return strings.ToLower(stem[i-36 : i]), stem[i+1:], true
	}
	if isThread(len(stem)) {
		return strings.ToLower(stem[len(stem)-36:]), "", true
	}
	return "", "", false
}

// codexPage is one page of a paged thread.
type codexPage struct {
	path  string // the file
	id    string // the page's id: its name's page, else the thread's
	base  string // the page it continues (history_base.thread_id), "" for the first
	start int64  // the ordinal it starts at
}

// PageMissingError is a paged Codex rollout one of whose pages is not
// beside the others: the thread is not read (its pages would join in the
// wrong place, and its import change when the page came back). It is
// ErrNotALog to errors.Is: the file is passed by, said, exit 1.
type PageMissingError struct {
	Path, Thread, Page, Base string
}

func (e *PageMissingError) Error() string {
	if e.Page == "" {
		return fmt.Sprintf("a paged Codex rollout missing its first pages (thread %s: the first page here continues page %s, which is not beside it; put it back beside the others)", e.Thread, e.Base)
	}
	return fmt.Sprintf("a paged Codex rollout missing a page (thread %s: page %s continues page %s, which is not beside it; put it back beside the others)", e.Thread, e.Page, e.Base)
}

func (e *PageMissingError) Is(target error) bool { return target == ErrNotALog }

// codexPages finds the pages of the thread src is a page of (beside it,
// or in the other day directories of the sessions tree it is in) and
// returns them as one log; nil for a rollout of one file (or read from
// stdin).
func codexPages(src Source) (*pagesReader, error) {
	if src.Path == "" || src.Path == "-" {
		return nil, nil
	}
	self := filepath.Clean(src.Path)
	thread, _, ok := codexPageName(filepath.Base(self))
	if !ok {
		return nil, nil
	}
	// A rollout no other file of its thread is beside (the listing of
	// the last seconds says) is read alone: most are; else only a page
	// says it is one.
	if len(codexThreadFiles(self, thread, false)) < 2 {
		return nil, nil
	}
	first, _ := firstLine(src)
	if meta := gjson.ParseBytes(first); meta.Get("type").Str != "session_meta" ||
		meta.Get("payload.history_mode").Str != "paginated" && !meta.Get("payload.history_base").Exists() {
		return nil, nil
	}
	r, err := codexJoin(src, self, thread, false)
	var pm *PageMissingError
	if errors.As(err, &pm) {
		r, err = codexJoin(src, self, thread, true) // a page written since the listing
	}
	return r, err
}

// codexJoin joins the pages of thread, src the one at self, found by a
// listing (fresh: made now).
func codexJoin(src Source, self, thread string, fresh bool) (*pagesReader, error) {
	paths := codexThreadFiles(self, thread, fresh)
	if len(paths) < 2 {
		return nil, nil
	}
	var pages []codexPage
	for _, path := range paths {
		_, page, _ := codexPageName(filepath.Base(path))
		var first []byte
		if samePath(path, self) {
			first, _ = firstLine(src)
		} else if f, err := openRegular(path); err == nil {
			if fi, err := f.Stat(); err == nil {
				first, _ = firstLine(Source{R: f, Size: fi.Size()})
			}
			f.Close()
		}
		meta := gjson.ParseBytes(first)
		p := meta.Get("payload")
		if meta.Get("type").Str != "session_meta" || !strings.EqualFold(p.Get("id").Str, thread) {
			continue // not a page of the thread (another's, a fork's, no rollout)
		}
		pg := codexPage{path: path, id: strings.ToLower(page), base: strings.ToLower(p.Get("history_base.thread_id").Str), start: p.Get("history_base.end_ordinal_exclusive").Int()}
		if pg.id == "" {
			pg.id = thread
		}
		pages = append(pages, pg)
	}
	if len(pages) < 2 {
		return nil, nil
	}
	slices.SortStableFunc(pages, func(a, b codexPage) int {
		if a.start != b.start {
			return cmp.Compare(a.start, b.start)
		}
		return strings.Compare(filepath.Base(a.path), filepath.Base(b.path))
	})
	if pages[0].base != "" {
		return nil, &PageMissingError{Path: src.Path, Thread: thread, Base: pages[0].base}
	}
	for i := 1; i < len(pages); i++ {
		// The page before, by its page id; the first by the thread's too.
		if b := pages[i].base; b != pages[i-1].id && !(i == 1 && b == thread) {
			return nil, &PageMissingError{Path: src.Path, Thread: thread, Page: pages[i].id, Base: b}
		}
	}
	r := &pagesReader{root: pages[0].path}
	for i, pg := range pages {
		var part pagePart
		if samePath(pg.path, self) {
			part.r, part.size = src.R, src.Size
		} else {
			f, err := openRegular(pg.path)
			if err != nil {
				r.close()
				return nil, err
			}
			fi, err := f.Stat()
			if err != nil {
				f.Close()
				r.close()
				return nil, err
			}
			r.files = append(r.files, f)
			part.r, part.size = f, fi.Size()
		}
		r.add(part)
		if last := make([]byte, 1); part.size > 0 && i < len(pages)-1 {
			if _, err := part.r.ReadAt(last, part.size-1); err == nil && last[0] != '\n' {
				r.add(pagePart{r: bytes.NewReader([]byte{'\n'}), size: 1}) // a page's last line ends with it
			}
		}
	}
	return r, nil
}

// codexThreadFiles lists the paths of the rollout files of thread where
// the file at path may have pages: its directory, or, when that is a day
// directory of a sessions tree (…/YYYY/MM/DD: Codex files a page under
// the day it is written), every day directory of the tree. fresh lists
// them now; else a listing of the last few seconds does (a walk asks of
// each file in turn).
func codexThreadFiles(path, thread string, fresh bool) []string {
	dir := filepath.Dir(path)
	if root := codexDayRoot(dir); root != "" {
		return codexTree(root, fresh)[thread]
	}
	// A day directory named relatively ("." or "01" from within it), or
	// by a symbolic link to it: its path says it only once made absolute,
	// the link resolved.
	if abs, err := filepath.Abs(dir); err == nil {
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
		}
		if abs == dir {
			return codexDir(dir)[thread]
		}
		if root := codexDayRoot(abs); root != "" {
			return codexTree(root, fresh)[thread]
		}
	}
	return codexDir(dir)[thread]
}

// samePath reports whether a and b name the same path, one relative and
// the other absolute included.
func samePath(a, b string) bool {
	if a == b {
		return true
	}
	aa, err1 := filepath.Abs(a)
	ab, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == ab
}

// codexDayRoot is the sessions tree a day directory (…/YYYY/MM/DD) is in,
// "" for another directory.
func codexDayRoot(dir string) string {
	digits := func(s string, n int) bool {
		if len(s) != n {
			return false
		}
		for _, c := range s {
			if c < '0' || c > '9' {
				return false
			}
		}
		return true
	}
	d, m := filepath.Dir(dir), filepath.Dir(filepath.Dir(dir))
	if digits(filepath.Base(dir), 2) && digits(filepath.Base(d), 2) && digits(filepath.Base(m), 4) {
		return filepath.Dir(m)
	}
	return ""
}

// codexListings keeps the last listings made, rollout paths by thread: of
// a directory (while it does not change), of a sessions tree (for a few
// seconds).
var codexListings struct {
	sync.Mutex
	dir   string
	mod   time.Time
	files map[string][]string
	root  string
	at    time.Time
	tree  map[string][]string
}

// codexList adds the rollout files of dir to byThread.
func codexList(dir string, byThread map[string][]string) {
	des, _ := os.ReadDir(dir)
	for _, de := range des {
		if t, _, ok := codexPageName(de.Name()); ok {
			byThread[t] = append(byThread[t], filepath.Join(dir, de.Name()))
		}
	}
}

// codexDir returns the paths of the rollout files in dir, by thread.
func codexDir(dir string) map[string][]string {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil
	}
	l := &codexListings
	l.Lock()
	defer l.Unlock()
	if l.dir == dir && l.mod.Equal(fi.ModTime()) && l.files != nil {
		return l.files
	}
	files := map[string][]string{}
	codexList(dir, files)
	l.dir, l.mod, l.files = dir, fi.ModTime(), files
	return files
}

// codexTree returns the paths of the rollout files in the day directories
// of the sessions tree at root, by thread.
func codexTree(root string, fresh bool) map[string][]string {
	l := &codexListings
	l.Lock()
	defer l.Unlock()
	if !fresh && l.root == root && time.Since(l.at) < 5*time.Second {
		return l.tree
	}
	tree := map[string][]string{}
	days, _ := filepath.Glob(filepath.Join(root, "[0-9][0-9][0-9][0-9]", "[0-9][0-9]", "[0-9][0-9]"))
	for _, d := range days {
		codexList(d, tree)
	}
	l.root, l.at, l.tree = root, time.Now(), tree
	return tree
}

// codexPassedOver reports whether a walk of root passes the file at path
// by: a page of a paged rollout with a later page below root (read with
// that one, the thread's last there; root "": anywhere).
func codexPassedOver(path, root string) bool {
	name := filepath.Base(path)
	thread, page, ok := codexPageName(name)
	if !ok {
		return false
	}
	for _, other := range codexThreadFiles(path, thread, false) {
		if _, p, _ := codexPageName(filepath.Base(other)); filepath.Base(other) > name && (p != "" || page != "") && below(other, root) && codexContinues(other, thread) {
			return true
		}
	}
	return false
}

// below reports whether path is root or below it ("" holds everything).
func below(path, root string) bool {
	if root == "" {
		return true
	}
	ap, err1 := filepath.Abs(path)
	ar, err2 := filepath.Abs(root)
	if err1 != nil || err2 != nil {
		return true
	}
	rel, err := filepath.Rel(ar, ap)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// codexContinues reports whether the file at path is a later page of
// thread: its first line a session_meta of the thread naming the page it
// continues (history_base). A file only named as one (empty, as a page
// is the moment Codex makes it; another's; not a rollout) passes nothing
// by: the thread's pages before it are read as they are.
func codexContinues(path, thread string) bool {
	f, err := openRegular(path)
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	first, _ := firstLine(Source{R: f, Size: fi.Size()})
	meta := gjson.ParseBytes(first)
	return meta.Get("type").Str == "session_meta" && strings.EqualFold(meta.Get("payload.id").Str, thread) &&
		meta.Get("payload.history_base").Exists()
}

// openRegular opens a regular file without waiting (a FIFO is refused).
func openRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	return f, nil
}

// pagesReader reads a thread's pages as one log.
type pagesReader struct {
	parts []pagePart
	size  int64
	files []*os.File
	root  string // the first page's path
}

type pagePart struct {
	r    io.ReaderAt
	off  int64 // where it begins in the log
	size int64
}

func (r *pagesReader) add(p pagePart) {
	p.off = r.size
	r.parts = append(r.parts, p)
	r.size += p.size
}

func (r *pagesReader) close() {
	for _, f := range r.files {
		f.Close()
	}
}

// ReadAt reads the log's bytes at off, across pages.
func (r *pagesReader) ReadAt(b []byte, off int64) (int, error) {
	n := 0
	for _, p := range r.parts {
		if n == len(b) {
			break
		}
		if off+int64(n) >= p.off+p.size {
			continue
		}
		at := off + int64(n) - p.off
		k, err := p.r.ReadAt(b[n:min(len(b), n+int(p.size-at))], at)
		n += k
		if err != nil && !(errors.Is(err, io.EOF) && at+int64(k) == p.size) {
			return n, err
		}
	}
	if n < len(b) {
		return n, io.EOF
	}
	return n, nil
}

// Paged reports whether the file at path is a page of a paged Codex
// rollout with other pages beside it: read through Read, which joins
// them, never line by line alone (a search's raw scan of one page would
// miss the others).
func Paged(path string) bool {
	name := filepath.Base(path)
	thread, page, ok := codexPageName(name)
	if !ok {
		return false
	}
	for _, other := range codexThreadFiles(path, thread, false) {
		if _, p, _ := codexPageName(filepath.Base(other)); filepath.Base(other) != name && (p != "" || page != "") {
			return true
		}
	}
	return false
}

// codexForkTitle is the title of a forked rollout (a sub-agent's too):
// its own first prompt, after the parent's history it replays, which
// the reader's rule tells (replayEnds); ok is false for a rollout that
// is no fork.
func codexForkTitle(src Source, start []byte) (title string, ok bool) {
	first, held := firstLineIn(start)
	if !held {
		first, _ = firstLine(src)
	}
	if !bytes.Contains(first, []byte(`"forked_from_id"`)) {
		return "", false // no fork (a key no writer escapes): the line is not parsed
	}
	m := gjson.ParseBytes(first)
	if m.Get("type").Str != "session_meta" || m.Get("payload.forked_from_id").Str == "" {
		return "", false
	}
	s := codexState{replaying: true, forkTime: v7Time(m.Get("payload.id").Str)}
	if s.forkTime.IsZero() {
		s.forkTime, _ = time.Parse(time.RFC3339Nano, stamp(m.Get("payload.timestamp").Str))
	}
	br := bufio.NewReaderSize(io.NewSectionReader(src.R, 0, min(src.Size, titleBytes)), 64<<10)
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			for err == bufio.ErrBufferFull { // a line longer than the buffer: no prompt worth a title
				_, err = br.ReadSlice('\n')
			}
		} else if s.replaying {
			if l := gjson.ParseBytes(line); l.Get("type").Str == "turn_context" && s.replayEnds(l.Get("payload"), stamp(l.Get("timestamp").Str)) {
				s.replaying = false
			}
		} else if t := titleOf(bytes.TrimSpace(line), Codex); t != "" {
			return t, true
		}
		if err != nil {
			return "", true
		}
	}
}
