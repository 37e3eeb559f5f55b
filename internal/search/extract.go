package search

import (
	"strconv"
	"strings"

	"github.com/panto-dev/panto/internal/agents"
	"github.com/tidwall/gjson"
)

// Piece is one searchable text of an entry: a text, a thinking, a tool
// call's input, a tool's result.
type Piece struct {
	Role string // user, assistant, system, tool (a tool's result, wherever the format files it)
	Kind string // text, thinking, tool-input, tool-result
	Tool string // the tool's name, for a tool's input or result ("" when the log does not say it here)
	Call string // a tool result's call id, to find the tool's name by
	Text string // decoded
}

// Entry is what one line of a log says: its pieces of text, and what
// the line tells of the session (Session, Cwd, Model: "" when it does
// not say).
type Entry struct {
	ID        string
	Timestamp string
	Model     string
	Cwd       string
	Session   string
	Pieces    []Piece
}

// Kinds of piece.
const (
	KindText       = "text"
	KindThinking   = "thinking"
	KindToolInput  = "tool-input"
	KindToolResult = "tool-result"
)

// Extract reads one line of a log in format f into e (reset first). The
// strings of e are the line's, copied: the line may be reused after.
func Extract(f agents.Format, line []byte, e *Entry) {
	*e = Entry{Pieces: e.Pieces[:0]}
	s := string(line) // one copy: every string below points into it
	v := gjson.Parse(s)
	switch f {
	case agents.Claude:
		claudeLine(v, e)
	case agents.Codex:
		codexLine(v, e)
	case agents.Pi:
		piLine(v, e)
	case agents.Panto:
		pantoLine(v, e)
	}
}

func (e *Entry) add(role, kind, tool, call, text string) {
	if text == "" {
		return
	}
	e.Pieces = append(e.Pieces, Piece{Role: role, Kind: kind, Tool: tool, Call: call, Text: text})
}

// values is the text of a tool's input: its string values (and numbers),
// one a line, never its keys.
func values(v gjson.Result) string {
	switch {
	case v.Type == gjson.String:
		return v.Str
	case v.Type == gjson.Number:
		return v.Raw
	case v.IsObject() || v.IsArray():
		var b strings.Builder
		v.ForEach(func(_, x gjson.Result) bool {
			if t := values(x); t != "" {
				if b.Len() > 0 {
					b.WriteByte('\n')
				}
				b.WriteString(t)
			}
			return true
		})
		return b.String()
	}
	return ""
}

// jsonValues is values of a string holding JSON (a tool input kept as
// text), or the string itself when it is no JSON object or array.
func jsonValues(s string) string {
	t := strings.TrimSpace(s)
	if t != "" && (t[0] == '{' || t[0] == '[') && gjson.Valid(t) {
		return values(gjson.Parse(t))
	}
	return s
}

// texts joins the text of a content that is a string or blocks.
func texts(c gjson.Result, types ...string) string {
	if c.Type == gjson.String {
		return c.Str
	}
	var b strings.Builder
	c.ForEach(func(_, x gjson.Result) bool {
		t := x.Get("type").Str
		for _, want := range types {
			if t == want {
				if b.Len() > 0 {
					b.WriteByte('\n')
				}
				b.WriteString(x.Get("text").Str)
			}
		}
		return true
	})
	return b.String()
}

// fields puts in out the values of keys in the object v, read in one
// pass over it (the first of a key said twice, as Get takes): each Get
// reads the object from its start again, and passes over every value
// before its key, or all of them for a key that is not there (a Claude
// Code tool result's line holds its output twice, in message and in
// toolUseResult).
func fields(v gjson.Result, keys []string, out []gjson.Result) {
	fieldsUntil(v, keys, out, nil)
}

// fieldsUntil is fields that stops once enough says the fields it needs
// are read (nil: every key found).
func fieldsUntil(v gjson.Result, keys []string, out []gjson.Result, enough func() bool) {
	clear(out)
	left := len(keys)
	v.ForEach(func(k, x gjson.Result) bool {
		for i, key := range keys {
			if k.Str == key && k.Type == gjson.String && !out[i].Exists() {
				out[i] = x
				left--
				return left > 0 && (enough == nil || !enough())
			}
		}
		return true
	})
}

// claudeKeys are the fields of a Claude Code line a search reads.
var claudeKeys = []string{"uuid", "timestamp", "cwd", "sessionId", "type", "message", "isCompactSummary", "data", "summary", "content"}

// Claude Code: a line per message (an assistant reply a line per block);
// tool results in user lines; a subagent's messages inside progress
// lines; the summary of a compaction a user line marked isCompactSummary.
func claudeLine(v gjson.Result, e *Entry) {
	var f [10]gjson.Result
	// The line is read up to the fields its type needs, not past them: a
	// tool result's output is written again after them (toolUseResult).
	// isCompactSummary, on few lines, is looked for where the line holds
	// its name (a key no writer escapes; looked for from its capital C,
	// a rarer byte than its quote).
	compact := strings.Contains(v.Raw, `CompactSummary"`)
	fieldsUntil(v, claudeKeys, f[:], func() bool {
		for _, x := range f[:5] { // uuid, timestamp, cwd, sessionId, type
			if !x.Exists() {
				return false
			}
		}
		if compact && !f[6].Exists() {
			return false
		}
		switch f[4].Str {
		case "user", "assistant":
			return f[5].Exists()
		case "progress":
			return f[7].Exists()
		case "summary":
			return f[8].Exists()
		case "system":
			return f[9].Exists()
		}
		return true
	})
	e.ID, e.Timestamp, e.Cwd, e.Session = f[0].Str, f[1].Str, f[2].Str, f[3].Str
	switch f[4].Str {
	case "user", "assistant":
		claudeMessage(f[5], f[4].Str, f[6].Bool(), e)
	case "progress":
		if m := f[7].Get("message"); m.IsObject() {
			var sub Entry
			var g [3]gjson.Result
			fields(m, claudeKeys[4:7], g[:])
			claudeMessage(g[1], g[0].Str, g[2].Bool(), &sub)
			e.Pieces = append(e.Pieces, sub.Pieces...)
			e.Model = sub.Model
		}
	case "summary":
		e.add("system", KindText, "", "", f[8].Str)
	case "system":
		e.add("system", KindText, "", "", f[9].Str)
	}
}

var messageKeys = []string{"role", "model", "content"}

// claudeMessage reads a message m of a line of type typ (compact: the
// line is a compaction's summary).
func claudeMessage(m gjson.Result, typ string, compact bool, e *Entry) {
	var f [3]gjson.Result
	fields(m, messageKeys, f[:])
	role, c := f[0].Str, f[2]
	if role == "" {
		role = typ
	}
	if role == "assistant" {
		e.Model = f[1].Str
	}
	if compact {
		e.add("system", KindText, "", "", texts(c, "text"))
		return
	}
	if c.Type == gjson.String {
		e.add(role, KindText, "", "", c.Str)
		return
	}
	c.ForEach(func(_, b gjson.Result) bool {
		switch b.Get("type").Str {
		case "text":
			e.add(role, KindText, "", "", b.Get("text").Str)
		case "thinking":
			e.add(role, KindThinking, "", "", b.Get("thinking").Str)
		case "tool_use", "server_tool_use":
			e.add(role, KindToolInput, b.Get("name").Str, "", values(b.Get("input")))
		case "tool_result":
			e.add("tool", KindToolResult, "", b.Get("tool_use_id").Str, texts(b.Get("content"), "text"))
		}
		return true
	})
}

// Codex: response_item lines hold the conversation (event_msg lines say
// it again, and are not searched: a hit would be told twice); a tool
// call's arguments are JSON kept as a string; a compaction's summary is a
// compacted line's message.
func codexLine(v gjson.Result, e *Entry) {
	e.Timestamp = v.Get("timestamp").Str
	p := v.Get("payload")
	switch v.Get("type").Str {
	case "session_meta":
		e.Session, e.Cwd = p.Get("id").Str, p.Get("cwd").Str
		return
	case "turn_context":
		e.Cwd, e.Model = p.Get("cwd").Str, p.Get("model").Str
		return
	case "compacted":
		e.add("system", KindText, "", "", p.Get("message").Str)
		return
	case "response_item":
	default:
		return
	}
	e.ID = p.Get("id").Str
	switch p.Get("type").Str {
	case "message":
		role := p.Get("role").Str
		if role == "developer" {
			role = "system"
		}
		e.add(role, KindText, "", "", texts(p.Get("content"), "input_text", "output_text", "text"))
	case "agent_message":
		e.add("assistant", KindText, "", "", texts(p.Get("content"), "input_text", "output_text", "text"))
	case "reasoning":
		e.add("assistant", KindThinking, "", "", joinNonEmpty(texts(p.Get("summary"), "summary_text"), texts(p.Get("content"), "reasoning_text", "text")))
	case "function_call":
		e.add("assistant", KindToolInput, p.Get("name").Str, "", jsonValues(p.Get("arguments").Str))
	case "custom_tool_call":
		e.add("assistant", KindToolInput, p.Get("name").Str, "", p.Get("input").Str)
	case "local_shell_call":
		e.add("assistant", KindToolInput, "shell", "", values(p.Get("action.command")))
	case "web_search_call":
		e.add("assistant", KindToolInput, "web_search", "", p.Get("action.query").Str)
	case "function_call_output", "custom_tool_call_output":
		out := p.Get("output")
		t := out.Str
		if out.IsArray() {
			t = texts(out, "input_text", "output_text", "text")
		} else if o := gjson.Parse(strings.TrimSpace(t)); strings.HasPrefix(strings.TrimSpace(t), "{") && o.Get("output").Type == gjson.String {
			t = o.Get("output").Str // an older Codex: {"output":…,"metadata":…}
		}
		e.add("tool", KindToolResult, "", p.Get("call_id").Str, t)
	}
}

func joinNonEmpty(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + "\n" + b
}

// pi: a line per message; tool results are messages of role toolResult
// (with their tool's name), a bash command the user ran a bashExecution;
// compactions and branch summaries their own lines.
func piLine(v gjson.Result, e *Entry) {
	e.ID, e.Timestamp = v.Get("id").Str, v.Get("timestamp").Str
	switch v.Get("type").Str {
	case "session":
		e.Session, e.Cwd = e.ID, v.Get("cwd").Str
		e.ID = ""
	case "model_change":
		e.Model = v.Get("modelId").Str
	case "compaction", "branch_summary":
		e.add("system", KindText, "", "", v.Get("summary").Str)
	case "custom_message":
		e.add("system", KindText, "", "", texts(v.Get("content"), "text"))
	case "message":
		m := v.Get("message")
		role := m.Get("role").Str
		if role == "assistant" {
			e.Model = m.Get("model").Str
		}
		switch role {
		case "toolResult":
			e.add("tool", KindToolResult, m.Get("toolName").Str, m.Get("toolCallId").Str, texts(m.Get("content"), "text"))
			return
		case "bashExecution":
			e.add("user", KindToolInput, "bash", "", m.Get("command").Str)
			e.add("tool", KindToolResult, "bash", "", m.Get("output").Str)
			return
		}
		c := m.Get("content")
		if c.Type == gjson.String {
			e.add(role, KindText, "", "", c.Str)
			return
		}
		c.ForEach(func(_, b gjson.Result) bool {
			switch b.Get("type").Str {
			case "text":
				e.add(role, KindText, "", "", b.Get("text").Str)
			case "thinking":
				e.add(role, KindThinking, "", "", b.Get("thinking").Str)
			case "toolCall":
				e.add(role, KindToolInput, b.Get("name").Str, "", values(b.Get("arguments")))
			}
			return true
		})
	}
}

// panto (SPEC §2): message entries, compactions, and the entries an import
// kept of its source (their source line, read in its own format).
func pantoLine(v gjson.Result, e *Entry) {
	e.ID, e.Timestamp = v.Get("id").Str, v.Get("timestamp").Str
	switch v.Get("type").Str {
	case "session":
		e.Session, e.Cwd = e.ID, v.Get("cwd").Str
		e.ID = ""
		return
	case "message":
	case "compaction":
		e.add("system", KindText, "", "", v.Get("summary").Str)
		return
	default:
		if line := v.Get("line"); line.IsObject() {
			var sub Entry
			switch v.Get("agent").Str {
			case "claude":
				claudeLine(line, &sub)
			case "codex":
				codexLine(line, &sub)
			case "pi":
				piLine(line, &sub)
			}
			e.Pieces = append(e.Pieces, sub.Pieces...)
		}
		return
	}
	m := v.Get("message")
	role := m.Get("role").Str
	e.Model = v.Get("model").Str
	if mm := m.Get("model").Str; mm != "" {
		e.Model = mm
	}
	c := m.Get("content")
	if c.Type == gjson.String {
		e.add(role, KindText, "", "", c.Str)
		return
	}
	c.ForEach(func(_, b gjson.Result) bool {
		switch b.Get("type").Str {
		case "text":
			e.add(role, KindText, "", "", b.Get("text").Str)
		case "thinking":
			e.add(role, KindThinking, "", "", b.Get("thinking").Str)
		case "toolUse":
			e.add(role, KindToolInput, b.Get("name").Str, "", jsonValues(b.Get("input").Str))
		case "toolResult":
			e.add("tool", KindToolResult, "", b.Get("toolUseId").Str, b.Get("content").Str)
		}
		return true
	})
}

// callNames finds, in a line of format f, the tool calls it makes: call id
// → tool name (for the results that do not say their tool).
func callNames(f agents.Format, line []byte, names map[string]string) {
	v := gjson.ParseBytes(line)
	put := func(id, name string) {
		if id != "" && name != "" {
			names[strings.Clone(id)] = strings.Clone(name)
		}
	}
	blocks := func(c gjson.Result, typ string) {
		c.ForEach(func(_, b gjson.Result) bool {
			if b.Get("type").Str == typ {
				put(b.Get("id").Str, b.Get("name").Str)
			}
			return true
		})
	}
	switch f {
	case agents.Claude:
		blocks(v.Get("message.content"), "tool_use")
		blocks(v.Get("data.message.message.content"), "tool_use")
	case agents.Codex:
		p := v.Get("payload")
		put(p.Get("call_id").Str, p.Get("name").Str)
	case agents.Panto:
		blocks(v.Get("message.content"), "toolUse")
	case agents.Pi:
		blocks(v.Get("message.content"), "toolCall")
	}
}

// callMarks are in every line that makes a tool call, by format.
var callMarks = map[agents.Format]string{
	agents.Claude: `"tool_use"`, agents.Codex: `_call"`, agents.Panto: `"toolUse"`, agents.Pi: `"toolCall"`,
}

// lineID is the entry id of a line with no id of its own: its number.
func lineID(n int) string { return "line " + strconv.Itoa(n) }
