package provider

import (
	"fmt"
	"io"

	"github.com/panto-dev/panto/pkg/session"
	"github.com/tidwall/gjson"
)

// Message is one message of the conversation sent to a provider.
type Message struct {
	Role   string
	Blocks []Block // toolResult blocks use ID (toolUseId) and Text (content)
}

// ReadConversation reads message lines (what panto-replay prints). Every
// line is validated as panto-log validates it.
func ReadConversation(r io.Reader) ([]Message, error) {
	var msgs []Message
	err := session.MessageLines(r, func(n int, line []byte) error {
		m, err := ParseMessage(line)
		if err != nil {
			return fmt.Errorf("stdin line %d: %w", n, err)
		}
		msgs = append(msgs, m)
		return nil
	})
	return msgs, err
}

// ParseMessage reads one message line.
func ParseMessage(line []byte) (Message, error) {
	role, err := session.CheckMessage(line)
	if err != nil {
		return Message{}, err
	}
	m := Message{Role: role}
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
	return m, nil
}
