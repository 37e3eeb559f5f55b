package provider

import (
	"strconv"
	"time"

	"github.com/panto-dev/panto/internal/rawjson"
)

// Block is one content block of a reply, in panto's terms.
type Block struct {
	Type      string // text, thinking, redactedThinking, toolUse
	Text      string // text; thinking
	Signature string // thinking
	Data      string // redactedThinking
	ID, Name  string // toolUse
	Input     []byte // toolUse: the raw JSON text of the arguments
}

// ToolCall is one tool call of a reply: the call's id, the tool's name and
// the raw JSON text of its arguments. Started is for a call that got no
// result (agent's Pending): when the tool round it is in began to run its
// tools, so it may have run and its result was lost; the zero time when it
// is known never to have started.
type ToolCall struct {
	ID, Name string
	Input    []byte
	Started  time.Time
}

// Usage is a reply's token counts (SPEC §2): Input is fresh input only;
// Reasoning is part of Output and CacheWrite1h part of CacheWrite.
type Usage struct {
	Input, Output, CacheRead, CacheWrite, Reasoning, CacheWrite1h int64
}

// normalize makes counts a server reported follow SPEC §2. A part larger
// than its whole (reasoning beyond the completion tokens, one-hour cache
// writes beyond all cache writes) means the server counted the part apart
// from the whole: the whole is their sum. A negative count is read as 0.
func (u *Usage) normalize() {
	for _, n := range []*int64{&u.Input, &u.Output, &u.CacheRead, &u.CacheWrite, &u.Reasoning, &u.CacheWrite1h} {
		*n = max(0, *n)
	}
	sum := func(whole, part *int64) {
		if *part > *whole {
			if s := *whole + *part; s > *part {
				*whole = s
			} else {
				*part = 0 // beyond any count: the part is not believed
			}
		}
	}
	sum(&u.Output, &u.Reasoning)
	sum(&u.CacheWrite, &u.CacheWrite1h)
}

// Reply is the assistant message of one turn.
type Reply struct {
	Blocks     []Block
	Provider   string
	Model      string
	StopReason string // stop, length, toolUse, error
	Usage      *Usage // nil when the provider reported none
}

// JSON renders the reply as a message line (without "\n"), fields in the
// order of SPEC §2.
func (r *Reply) JSON() []byte {
	b := []byte(`{"role":"assistant","content":[`)
	for i, bl := range r.Blocks {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"type":`...)
		b = rawjson.AppendString(b, bl.Type)
		switch bl.Type {
		case "text":
			b = append(b, `,"text":`...)
			b = rawjson.AppendString(b, bl.Text)
		case "thinking":
			b = append(b, `,"thinking":`...)
			b = rawjson.AppendString(b, bl.Text)
			if bl.Signature != "" {
				b = append(b, `,"signature":`...)
				b = rawjson.AppendString(b, bl.Signature)
			}
		case "redactedThinking":
			b = append(b, `,"data":`...)
			b = rawjson.AppendString(b, bl.Data)
		case "toolUse":
			b = append(b, `,"id":`...)
			b = rawjson.AppendString(b, bl.ID)
			b = append(b, `,"name":`...)
			b = rawjson.AppendString(b, bl.Name)
			b = append(b, `,"input":`...)
			b = rawjson.AppendString(b, string(bl.Input))
		}
		b = append(b, '}')
	}
	b = append(b, `],"provider":`...)
	b = rawjson.AppendString(b, r.Provider)
	b = append(b, `,"model":`...)
	b = rawjson.AppendString(b, r.Model)
	b = append(b, `,"stopReason":`...)
	b = rawjson.AppendString(b, r.StopReason)
	if r.Usage != nil {
		u := *r.Usage
		u.normalize()
		b = append(b, `,"usage":{"input":`...)
		b = strconv.AppendInt(b, u.Input, 10)
		b = append(b, `,"output":`...)
		b = strconv.AppendInt(b, u.Output, 10)
		for _, f := range []struct {
			k string
			v int64
		}{{"cacheRead", u.CacheRead}, {"cacheWrite", u.CacheWrite}, {"reasoning", u.Reasoning}, {"cacheWrite1h", u.CacheWrite1h}} {
			if f.v != 0 {
				b = append(b, `,"`+f.k+`":`...)
				b = strconv.AppendInt(b, f.v, 10)
			}
		}
		b = append(b, '}')
	}
	return append(b, '}')
}
