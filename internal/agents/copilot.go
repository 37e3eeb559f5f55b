package agents

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/panto-dev/panto/internal/rawjson"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/tidwall/gjson"
)

// GitHub Copilot CLI keeps a session in
// ${COPILOT_CONFIG_DIR:-~/.copilot}/session-state/<id>/events.jsonl: one
// event a line, {type, data, id, timestamp, parentId} (and agentId inside
// a sub-agent), in order; parentId may name an event never written, so
// the file's order is the conversation's (reference/more-agents.md §3).
//
// user.message is a prompt; assistant.message a reply (its reasoningText
// thinking, its toolRequests tool calls); tool.execution_complete a tool's
// result; session.compaction_complete a compaction (its summary); a
// sub-agent's events (agentId) a branch of their own beside the call that
// started it; every other event a kept entry.
//
// Counting (reference §3.2): a 1.0.x file holds per-call output tokens
// (assistant.message outputTokens, keyed by its apiCallId); newer ones
// (1.0.9x) also a model.model_call_success event for each call the
// process made (the title's and the classifier's too, which no
// assistant.message shows), its responseUsage the call's whole usage in
// the OpenAI form (prompt_tokens holding the cached tokens and the cache
// writes); each session.shutdown holds the process run's totals by model
// (modelMetrics usage: inputTokens includes the cache reads and writes).
// So a call told whole costs its usage once, an assistant entry of its
// own where it is told (a session read as it is written is never told
// again: what a part of the file gives is a part of what the whole gives),
// the reply of that call then adding nothing (its usage zero, not
// unknown), or only what its reply did not tell when the reply came first;
// a reply with no such call costs its own output; and each shutdown adds, by model, what its totals hold
// beyond what the calls since the run began told: fresh input, cache
// reads and writes, output. A compaction's call (compactionTokensUsed) is
// one of its own. A run cut before its shutdown has what its calls told.

var copilotAgent = &Agent{
	Format: Copilot, Name: "copilot", Title: "Copilot CLI", Noun: "a GitHub Copilot CLI events.jsonl",
	Env: []string{"COPILOT_CONFIG_DIR"},
	Looked: func(getenv func(string) string) []string {
		if d := home(getenv, "COPILOT_CONFIG_DIR", ".copilot"); d != "" {
			return []string{filepath.Join(d, "session-state")}
		}
		return nil
	},
	Line: func(h *Head) bool {
		return copilotType.MatchString(h.Type) && h.Data.IsObject() && h.ID != "" && h.Get("timestamp").Exists()
	},
	Resume: func(id string) []string { return []string{"copilot", "--resume", id} },
	read:   (*converter).copilot,
	mark:   []byte(`"user.message"`),
	prompt: func(l gjson.Result) string {
		if l.Get("type").Str != "user.message" || l.Get("agentId").Exists() {
			return ""
		}
		return l.Get("data.content").Str
	},
}

// copilotModel is a model as Copilot names it, as priced: Claude's
// versions written with a dot (claude-sonnet-4.5) are the providers'
// claude-sonnet-4-5. A copy: m may be a view into the line.
func copilotModel(m string) string {
	if strings.HasPrefix(m, "claude-") && strings.Contains(m, ".") {
		return strings.ReplaceAll(m, ".", "-") // a new string
	}
	return strings.Clone(m)
}

// copilotBilled are the events a cost reads: replies, usage, models.
var copilotBilled = map[string]bool{"assistant.message": true, "session.compaction_complete": true, "session.shutdown": true,
	"session.model_change": true, "session.resume": true, "session.auto_mode_resolved": true, "model.model_call_success": true}

var copilotType = regexp.MustCompile(`^(session|user|assistant|tool|subagent|hook|system|permission|skill|abort|model)\.[a-z_.]+$`)

// copilotProvider is the provider Copilot's replies are priced under: the
// table finds the model by its name (SPEC §11).
const copilotProvider = "github-copilot"

type copilotState struct {
	model  string
	last   map[string]string // agentId ("" the main agent) → its last entry
	callAt map[string]string // toolCallId → the entry before the reply that made the call (a sub-agent's branch starts there)
	// told is the usage the calls since the run began told one by one, by
	// model: what a shutdown's totals hold beyond it is the rest.
	told map[string]session.Usage
	// called is the calls (api ids) whose whole usage a
	// model.model_call_success told; msgOut the output a reply told of a
	// call before its model_call_success came.
	called map[string]bool
	msgOut map[string]int64
}

func (c *converter) copilot() error {
	s := copilotState{model: "unknown", last: map[string]string{}, callAt: map[string]string{}, told: map[string]session.Usage{}, called: map[string]bool{}, msgOut: map[string]int64{}}
	lr := c.newLines()
	for {
		n, _, raw, err := c.line(lr)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if c.hdr != nil && !c.opt.Content {
			// Copilot writes the type first: a cost passes over the
			// events it does not read without parsing them.
			if t, ok := bytes.CutPrefix(raw, []byte(`{"type":"`)); ok {
				if i := bytes.IndexByte(t, '"'); i > 0 && !copilotBilled[string(t[:i])] {
					continue
				}
			}
		}
		var typ, ts string
		var d gjson.Result
		var top copilotTop
		// The walker: values skipped, not parsed; the first of a repeated
		// key counts, as gjson's Get reads it.
		var seen uint8
		rawjson.Members(raw, func(k, v []byte) bool {
			var bit uint8
			switch string(k) {
			case "type":
				bit = 1
			case "data":
				bit = 2
			case "timestamp":
				bit = 4
			case "agentId":
				bit = 8
			case "id":
				bit = 16
			}
			if bit == 0 || seen&bit != 0 {
				return true
			}
			seen |= bit
			switch bit {
			case 1:
				typ = rawjson.Str(v)
			case 2:
				d = gjson.Parse(str(v))
			case 4:
				ts = rawjson.Str(v)
			case 8:
				top.agent = gjson.Parse(str(v)).Str
			case 16:
				top.id = gjson.Parse(str(v)).Str
			}
			return true
		})
		if c.hdr != nil && !c.opt.Content && !copilotBilled[typ] {
			continue // a cost reads the replies, the totals and the models only
		}
		ts = stamp(ts)
		if c.hdr == nil {
			h := Header{Timestamp: ts}
			if typ == "session.start" {
				h.Origin.ID = strings.Clone(d.Get("sessionId").Str)
				h.Cwd = strings.Clone(d.Get("context.cwd").Str)
				if t := stamp(d.Get("startTime").Str); t != "" {
					h.Timestamp = t
				}
			}
			if h.Origin.ID == "" { // the directory is named by the session's id
				h.Origin.ID = filepath.Base(filepath.Dir(c.src.Path))
			}
			h.Origin.Agent = "copilot"
			if err := c.begin(h); err != nil {
				return err
			}
		}
		if err := c.copilotEvent(&s, n, typ, d, ts, top, raw); err != nil {
			return err
		}
	}
	if c.hdr == nil {
		return ErrNotALog
	}
	return nil
}

// copilotTop is what an event's line says beside its type, data and time:
// the sub-agent it is of, its id.
type copilotTop struct{ agent, id string }

func (c *converter) copilotEvent(s *copilotState, n int, typ string, d gjson.Result, ts string, top copilotTop, raw []byte) error {
	agent := top.agent
	if agent == "" {
		agent = gjson.Parse(str(member(d.Raw, "parentToolCallId"))).Str
	}
	parent, ok := s.last[agent]
	if !ok && agent != "" {
		// A sub-agent's first event: its branch starts beside the call
		// that started it, never under it (the call is open there).
		parent = s.callAt[agent]
		if parent == "" {
			parent = s.last[""]
		}
	} else if !ok {
		parent = c.last
	}
	id := c.id("line\x00" + c.at(n))
	c.e = Entry{Line: n, ID: id, ParentID: parent, Timestamp: ts}
	e := &c.e
	emit := func() error {
		if err := c.emit(e); err != nil {
			return err
		}
		s.last[agent] = c.last
		return nil
	}
	switch typ {
	case "session.model_change":
		if m := d.Get("newModel").Str; m != "" {
			s.model = copilotModel(m)
		}
	case "session.auto_mode_resolved":
		// Auto mode: the model it chose is the one the turns are sent to.
		if m := d.Get("chosenModel").Str; m != "" {
			s.model = copilotModel(m)
		}
	case "session.resume":
		if m := d.Get("selectedModel").Str; m != "" {
			s.model = copilotModel(m)
		}
	case "user.message":
		e.Role, e.Provider, e.Model = "user", copilotProvider, s.model
		c.stats.add("user messages", 1)
		if c.opt.Content {
			b, add := c.blocks("user")
			add(appendBlock(nil, "text", "text", strRaw(d.Get("content"))))
			*b = append(*b, "]}"...)
			c.buf = *b
			e.Body = c.buf
		}
		return emit()
	case "system.message":
		e.Role = "system"
		if c.opt.Content {
			b, add := c.blocks("system")
			add(appendBlock(nil, "text", "text", strRaw(d.Get("content"))))
			*b = append(*b, "]}"...)
			c.buf = *b
			e.Body = c.buf
		}
		return emit()
	case "assistant.message":
		var m, apiCall, msgID, reasoning, content, requests, outTokens gjson.Result
		rawjson.Members(bytesOf(d.Raw), func(k, v []byte) bool { // one pass over a reply that may be long
			r := func() gjson.Result { return gjson.Parse(str(v)) }
			switch string(k) {
			case "model":
				m = r()
			case "apiCallId":
				apiCall = r()
			case "messageId":
				msgID = r()
			case "reasoningText":
				if c.opt.Content { // a cost does not read the texts
					reasoning = r()
				}
			case "content":
				if c.opt.Content {
					content = r()
				}
			case "toolRequests":
				requests = r()
			case "outputTokens":
				outTokens = r()
			}
			return true
		})
		model := s.model
		if m.Str != "" {
			model = copilotModel(m.Str)
		}
		e.Role, e.Provider, e.Model = "assistant", copilotProvider, model
		key := apiCall.Str
		if key == "" {
			key = msgID.Str
		}
		if key == "" {
			key = top.id
		}
		r := &Reply{Key: "copilot:" + c.hdr.Origin.ID + ":" + key, StopReason: "stop"}
		if requests.IsArray() && len(requests.Raw) > 2 && requests.Get("#").Int() > 0 {
			r.StopReason = "toolUse"
		}
		if apiCall.Str != "" && s.called[apiCall.Str] {
			// Its call's usage was told whole, by the entry before it:
			// counted there, once; this reply adds nothing.
			r.HasUsage = true
		} else if outTokens.Type == gjson.Number {
			r.Usage, r.HasUsage = session.Usage{Output: outTokens.Int()}, true
			t := s.told[model]
			t.Output += outTokens.Int()
			s.told[model] = t
			if apiCall.Str != "" {
				s.msgOut[strings.Clone(apiCall.Str)] += outTokens.Int()
			}
		}
		e.Reply = r
		c.stats.add("copilot replies", 1)
		if c.opt.Content {
			requests.ForEach(func(_, t gjson.Result) bool {
				s.callAt[strings.Clone(t.Get("toolCallId").Str)] = parent
				return true
			})
		}
		if c.opt.Content {
			b, add := c.blocks("assistant")
			if t := reasoning; t.Type == gjson.String && t.Str != "" {
				add(appendBlock(nil, "thinking", "thinking", []byte(t.Raw)))
			}
			if t := content; t.Type == gjson.String && t.Str != "" {
				add(appendBlock(nil, "text", "text", []byte(t.Raw)))
			}
			requests.ForEach(func(_, t gjson.Result) bool {
				args := t.Get("arguments")
				in := args.Raw
				if args.Type == gjson.String {
					in = args.Str
				}
				add(appendToolUse(nil, strRaw(t.Get("toolCallId")), strRaw(t.Get("name")), in))
				return true
			})
			*b = append(*b, ']')
			*b = r.appendFields(*b, e.Provider, e.Model)
			c.buf = append(*b, '}')
			e.Body = c.buf
		}
		return emit()
	case "tool.execution_complete":
		e.Role, e.Provider, e.Model = "user", copilotProvider, s.model
		c.stats.add("copilot tool results", 1)
		if c.opt.Content {
			text := d.Get("result.content").Str
			if !d.Get("result.content").Exists() {
				text = d.Get("result").Raw
			}
			if er := d.Get("error"); er.Exists() && er.Type != gjson.Null {
				msg := er.Get("message").Str
				if er.Type == gjson.String {
					msg = er.Str
				}
				if msg == "" {
					msg = er.Raw
				}
				if text != "" {
					text += "\n"
				}
				text += msg
			}
			b, add := c.blocks("user")
			blk := append([]byte(`{"type":"toolResult","toolUseId":`), strRaw(d.Get("toolCallId"))...)
			blk = append(blk, `,"content":`...)
			blk = rawjson.AppendString(blk, text)
			if d.Get("success").Type == gjson.False {
				blk = append(blk, `,"isError":true`...)
			}
			add(append(blk, '}'))
			*b = append(*b, "]}"...)
			c.buf = *b
			e.Body = c.buf
		}
		return emit()
	case "session.compaction_complete":
		if d.Get("summaryContent").Type == gjson.String {
			tokens := int64(-1)
			if t := d.Get("preCompactionTokens"); t.Type == gjson.Number {
				tokens = t.Int()
			}
			c.compaction(e, "copilot", raw, d.Get("summaryContent").Str, "", tokens)
			if err := emit(); err != nil {
				return err
			}
		}
		if u := d.Get("compactionTokensUsed"); u.IsObject() {
			// The compaction's own call.
			model := copilotModel(u.Get("model").Str)
			if model == "" {
				model = s.model
			}
			c.stats.add("copilot usage totals not told per call (a reply each)", 1)
			return c.copilotUsage(s, agent, n, ts, "compaction:"+top.id, model, copilotTotals(u))
		}
		if d.Get("summaryContent").Type == gjson.String {
			return nil
		}
	case "session.shutdown":
		e.Kind = "copilot." + typ
		c.stats.add(e.Kind+" entries kept", 1)
		e.Body = c.kept("copilot", raw)
		if err := emit(); err != nil {
			return err
		}
		var models []string
		d.Get("modelMetrics").ForEach(func(k, _ gjson.Result) bool {
			models = append(models, strings.Clone(k.Str))
			return true
		})
		sort.Strings(models)
		for _, m := range models {
			u := d.Get("modelMetrics." + gjson.Escape(m) + ".usage")
			if !u.IsObject() {
				continue
			}
			t, told := copilotTotals(u), s.told[copilotModel(m)]
			t = session.Usage{Input: max(0, t.Input-told.Input), Output: max(0, t.Output-told.Output),
				CacheRead: max(0, t.CacheRead-told.CacheRead), CacheWrite: max(0, t.CacheWrite-told.CacheWrite)}
			if t != (session.Usage{}) {
				c.stats.add("copilot usage totals not told per call (a reply each)", 1)
			}
			if err := c.copilotUsage(s, "", n, ts, "shutdown:"+top.id+":"+m, copilotModel(m), t); err != nil {
				return err
			}
		}
		clear(s.told) // the next run's totals start again
		return nil
	case "model.model_call_success":
		u := d.Get("responseUsage")
		if !u.IsObject() {
			u = d.Get("responseChunk.usage")
		}
		call := d.Get("modelCall.api_id").Str
		if call == "" {
			call = d.Get("callId").Str
		}
		if u.IsObject() && call != "" && !s.called[call] {
			// The event is kept as it is; its call's usage is an entry
			// of its own after it.
			e.Kind = "copilot." + typ
			c.stats.add("copilot events kept", 1)
			e.Body = c.kept("copilot", raw)
			if err := emit(); err != nil {
				return err
			}
			model := d.Get("modelCall.model").Str
			if model == "" {
				model = d.Get("model").Str
			}
			model = copilotModel(model)
			if model == "" {
				model = s.model
			}
			call = strings.Clone(call)
			us := copilotCallUsage(u)
			s.called[call] = true
			t := s.told[model]
			t.Input += us.Input
			t.CacheRead += us.CacheRead
			t.CacheWrite += us.CacheWrite
			c.stats.add("copilot calls told whole", 1)
			if out, ok := s.msgOut[call]; ok {
				// Its reply came first and told its output: the rest
				// is what this adds.
				us.Output = max(0, us.Output-out)
			}
			t.Output += us.Output
			s.told[model] = t
			return c.copilotUsage(s, agent, n, ts, "call:"+call, model, us)
		}
	}
	e.Kind = "copilot." + typ
	c.stats.add("copilot events kept", 1)
	e.Body = c.kept("copilot", raw)
	return emit()
}

// copilotTotals is the usage of Copilot's totals u (a shutdown's by
// model, a compaction's call): inputTokens holds the cache reads and
// writes.
func copilotTotals(u gjson.Result) session.Usage {
	in, out, cr, cw := u.Get("inputTokens").Int(), u.Get("outputTokens").Int(), u.Get("cacheReadTokens").Int(), u.Get("cacheWriteTokens").Int()
	return session.Usage{Input: max(0, in-cr-cw), Output: out, CacheRead: cr, CacheWrite: cw}
}

// copilotCallUsage is the usage of one call's responseUsage, in the
// OpenAI form: prompt_tokens holds the cached tokens and the cache
// writes (cache_write_tokens, or cache_creation_tokens), completion_tokens
// the reasoning. The Responses API's names are read where those are
// absent.
func copilotCallUsage(u gjson.Result) session.Usage {
	num := func(names ...string) int64 {
		for _, k := range names {
			if v := u.Get(k); v.Type == gjson.Number {
				return v.Int()
			}
		}
		return 0
	}
	in := num("prompt_tokens", "input_tokens")
	out := num("completion_tokens", "output_tokens")
	cr := num("prompt_tokens_details.cached_tokens", "input_tokens_details.cached_tokens")
	cw := num("prompt_tokens_details.cache_write_tokens", "prompt_tokens_details.cache_creation_tokens")
	return session.Usage{Input: max(0, in-cr-cw), Output: max(0, out), CacheRead: max(0, cr), CacheWrite: max(0, cw)}
}

// copilotUsage writes a reply that holds us (a call's usage, or what a
// run's totals hold beyond the calls told one by one): an assistant entry
// with no content, its key the call's or the event's.
func (c *converter) copilotUsage(s *copilotState, agent string, n int, ts, key, model string, us session.Usage) error {
	if us == (session.Usage{}) {
		return nil
	}
	parent := s.last[agent]
	if parent == "" {
		parent = c.last
	}
	c.e = Entry{Line: n, ID: c.id("usage\x00" + key), ParentID: parent, Timestamp: ts, Role: "assistant", Provider: copilotProvider, Model: model}
	e := &c.e
	e.Reply = &Reply{Key: "copilot:" + c.hdr.Origin.ID + ":" + key, Usage: us, HasUsage: true, StopReason: "stop"}
	if c.opt.Content {
		b := append(c.buf[:0], `{"role":"assistant","content":[]`...)
		b = e.Reply.appendFields(b, e.Provider, e.Model)
		c.buf = append(b, '}')
		e.Body = c.buf
	}
	if err := c.emit(e); err != nil {
		return err
	}
	s.last[agent] = c.last
	return nil
}
