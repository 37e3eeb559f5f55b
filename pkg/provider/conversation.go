package provider

import (
	"github.com/tidwall/gjson"
)

// Message is one message of the conversation sent to a provider.
type Message struct {
	Role   string
	Blocks []Block // toolResult blocks use ID (toolUseId) and Text (content)
}

// ParseMessage reads one message line (a message of SPEC §3) that its
// caller has validated; the provider knows nothing else of the format.
func ParseMessage(line []byte) Message {
	m := Message{Role: gjson.GetBytes(line, "role").Str}
	gjson.GetBytes(line, "content").ForEach(func(_, b gjson.Result) bool {
		bl := Block{Type: b.Get("type").Str}
		switch bl.Type {
		case "text":
			bl.Text = b.Get("text").Str
		case "thinking":
			bl.Text, bl.Signature = b.Get("thinking").Str, b.Get("signature").Str
		case "redactedThinking":
			bl.Data = b.Get("data").Str
		case "toolUse":
			bl.ID, bl.Name, bl.Input = b.Get("id").Str, b.Get("name").Str, []byte(b.Get("input").Str)
		case "toolResult":
			bl.ID, bl.Text = b.Get("toolUseId").Str, b.Get("content").Str
		}
		m.Blocks = append(m.Blocks, bl)
		return true
	})
	return m
}
