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
	rd := session.NewReader(r, 0)
	var msgs []Message
	for {
		line, _, _, err := rd.Next()
		if err == io.EOF {
			return msgs, nil
		}
		if err != nil {
			return nil, err
		}
		if len(trimSpace(line)) == 0 {
			continue
		}
		m, err := ParseMessage(line)
		if err != nil {
			return nil, fmt.Errorf("stdin line %d: %w", rd.LineNo(), err)
		}
		msgs = append(msgs, m)
	}
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r') {
		b = b[1:]
	}
	return b
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
