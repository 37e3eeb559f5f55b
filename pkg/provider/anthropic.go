package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/panto-dev/panto/internal/rawjson"
	"github.com/tidwall/gjson"
)

type aThinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens,omitempty"`
}

type aBlock struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text,omitempty"`
	Thinking  *string         `json:"thinking,omitempty"`
	Signature string          `json:"signature,omitempty"`
	Data      string          `json:"data,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   *string         `json:"content,omitempty"`
}

type aMessage struct {
	Role    string   `json:"role"`
	Content []aBlock `json:"content"`
}

type aRequest struct {
	Model     string     `json:"model"`
	MaxTokens int        `json:"max_tokens"`
	Stream    bool       `json:"stream"`
	System    string     `json:"system,omitempty"`
	Thinking  *aThinking `json:"thinking,omitempty"`
	Tools     []Tool     `json:"tools,omitempty"`
	Messages  []aMessage `json:"messages"`
}

// thinkingBudgets maps --reasoning levels to Anthropic thinking budgets.
var thinkingBudgets = map[string]int{"low": 2048, "medium": 8192, "high": 24576}

func anthropicThinking(level string, maxTokens int) (*aThinking, int, error) {
	switch level {
	case "", "off", "none":
		return nil, maxTokens, nil
	case "adaptive":
		return &aThinking{Type: "adaptive"}, maxTokens, nil
	}
	budget, ok := thinkingBudgets[level]
	if !ok {
		n, err := strconv.Atoi(level)
		if err != nil || n < 1024 {
			return nil, 0, fmt.Errorf("reasoning %q: give off, low, medium, high, adaptive, or a budget of at least 1024 tokens", level)
		}
		budget = n
	}
	if maxTokens <= budget {
		maxTokens = budget + 4096 // the budget must stay below max_tokens
	}
	return &aThinking{Type: "enabled", BudgetTokens: budget}, maxTokens, nil
}

// CheckReasoning tells whether cfg's reasoning level is one its protocol
// takes (Anthropic's: off, low, medium, high, adaptive or a budget of at
// least 1024 tokens; OpenAI-compatible servers name their own efforts, so
// theirs is passed as given).
func CheckReasoning(cfg Config) error {
	if cfg.Provider == OpenAI {
		return nil
	}
	_, _, err := anthropicThinking(cfg.Reasoning, cfg.MaxTokens)
	return err
}

// AnthropicRequest builds the request body for the conversation. System
// messages go to the top-level system; consecutive messages of one role are
// merged (tool results first); thinking blocks are sent back only with
// their signature; toolUse input goes as the JSON object it encodes.
func AnthropicRequest(cfg Config, conv []Message) ([]byte, error) {
	th, maxTokens, err := anthropicThinking(cfg.Reasoning, cfg.MaxTokens)
	if err != nil {
		return nil, err
	}
	req := aRequest{Model: cfg.Model, MaxTokens: maxTokens, Stream: true, Thinking: th, Tools: cfg.Tools}
	var system []string
	for _, m := range conv {
		if m.Role == "system" {
			for _, b := range m.Blocks {
				if b.Type == "text" {
					system = append(system, b.Text)
				}
			}
			continue
		}
		var results, rest []aBlock
		for _, b := range m.Blocks {
			switch b.Type {
			case "text":
				if b.Text != "" {
					rest = append(rest, aBlock{Type: "text", Text: &b.Text})
				}
			case "thinking":
				if b.Signature != "" && m.Role == "assistant" {
					rest = append(rest, aBlock{Type: "thinking", Thinking: &b.Text, Signature: b.Signature})
				}
			case "redactedThinking":
				if m.Role == "assistant" {
					rest = append(rest, aBlock{Type: "redacted_thinking", Data: b.Data})
				}
			case "toolUse":
				input := json.RawMessage(b.Input)
				if len(strings.TrimSpace(string(input))) == 0 {
					input = json.RawMessage("{}")
				}
				rest = append(rest, aBlock{Type: "tool_use", ID: b.ID, Name: b.Name, Input: input})
			case "toolResult":
				results = append(results, aBlock{Type: "tool_result", ToolUseID: b.ID, Content: &b.Text})
			}
		}
		blocks := append(results, rest...)
		if len(blocks) == 0 {
			continue
		}
		if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == m.Role {
			prev := &req.Messages[n-1]
			merged := append(toolResults(prev.Content), results...)
			prev.Content = append(append(merged, others(prev.Content)...), rest...)
			continue
		}
		req.Messages = append(req.Messages, aMessage{Role: m.Role, Content: blocks})
	}
	req.System = strings.Join(system, "\n\n")
	return marshal(req), nil
}

func toolResults(bs []aBlock) []aBlock {
	var out []aBlock
	for _, b := range bs {
		if b.Type == "tool_result" {
			out = append(out, b)
		}
	}
	return out
}

func others(bs []aBlock) []aBlock {
	var out []aBlock
	for _, b := range bs {
		if b.Type != "tool_result" {
			out = append(out, b)
		}
	}
	return out
}

func anthropicTurn(ctx context.Context, cfg Config, conv []Message) (*Reply, error) {
	body, err := AnthropicRequest(cfg, conv)
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	h.Set("content-type", "application/json")
	h.Set("accept", "text/event-stream")
	h.Set("anthropic-version", cfg.APIVersion)
	if cfg.APIKey != "" {
		h.Set("x-api-key", cfg.APIKey)
	}
	resp, err := post(ctx, cfg.HTTP, cfg.Provider, strings.TrimSuffix(cfg.BaseURL, "/")+"/v1/messages", h, body, cfg.Retries)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return readAnthropic(resp.Body, cfg)
}

// readAnthropic assembles a reply from an Anthropic Messages stream.
func readAnthropic(r io.Reader, cfg Config) (*Reply, error) {
	rep := &Reply{Provider: cfg.Provider, Model: cfg.Model}
	byIndex := map[int64]int{} // stream index → position in rep.Blocks
	var inputs [][]byte
	var texts [][]byte // text and thinking, joined at the end (+= is quadratic)
	var usage Usage
	hasUsage, started, stopped := false, false, false
	overlay := func(u gjson.Result) {
		if u.IsObject() {
			hasUsage = AnthropicUsage([]byte(u.Raw), &usage) || hasUsage
		}
	}
	fail := func(err error) (*Reply, error) { return rep.broken(cfg.Partial && started, texts, inputs, err) }
	sse := NewSSEReader(r)
	for !stopped {
		ev, err := sse.Next()
		if errors.Is(err, io.EOF) {
			return fail(&StreamError{Provider: cfg.Provider, Message: "the stream ended before message_stop"})
		}
		if err != nil {
			return fail(&StreamError{Provider: cfg.Provider, Message: "reading the stream: " + err.Error()})
		}
		// Every event is validated once, here: what follows reads valid
		// JSON only (an event without data is known by its name alone), and
		// a truncated event is the stream's error, never a part of the reply.
		if len(ev.Data) > 0 && !rawjson.Valid(ev.Data) {
			return fail(&StreamError{Provider: cfg.Provider, Message: fmt.Sprintf("a %s event is not valid JSON", eventLabel(ev.Name))})
		}
		if ev.Name == "content_block_delta" {
			// The hot path, thousands of times a turn: walk, do not parse.
			deltaEvent(ev.Data, byIndex, rep, texts, inputs, cfg.OnDelta)
			continue
		}
		d := gjson.ParseBytes(ev.Data)
		typ := d.Get("type").Str
		if typ == "" {
			typ = ev.Name
		}
		switch typ {
		case "message_start":
			started = true
			if m := d.Get("message.model").Str; m != "" {
				rep.Model = m
			}
			overlay(d.Get("message.usage"))
		case "content_block_start":
			cb := d.Get("content_block")
			var b Block
			switch cb.Get("type").Str {
			case "text":
				b = Block{Type: "text", Text: cb.Get("text").Str}
			case "thinking":
				b = Block{Type: "thinking", Text: cb.Get("thinking").Str, Signature: cb.Get("signature").Str}
			case "redacted_thinking":
				b = Block{Type: "redactedThinking", Data: cb.Get("data").Str}
			case "tool_use":
				b = Block{Type: "toolUse", ID: cb.Get("id").Str, Name: cb.Get("name").Str}
				cfg.OnDelta("toolUse", b.Name)
			default:
				continue // server tools and future blocks are not kept
			}
			byIndex[d.Get("index").Int()] = len(rep.Blocks)
			rep.Blocks = append(rep.Blocks, b)
			inputs = append(inputs, nil)
			texts = append(texts, []byte(b.Text))
		case "content_block_delta": // an event named otherwise, typed so in its data
			deltaEvent(ev.Data, byIndex, rep, texts, inputs, cfg.OnDelta)
		case "content_block_stop":
			if i, ok := byIndex[d.Get("index").Int()]; ok && rep.Blocks[i].Type == "toolUse" {
				if err := rep.setInput(i, inputs[i]); err != nil {
					return fail(&StreamError{Provider: cfg.Provider, Message: err.Error()})
				}
			}
		case "message_delta":
			if sr := d.Get("delta.stop_reason"); sr.Type == gjson.String {
				stop, ok := AnthropicStop(sr.Str)
				if !ok {
					stop = "stop"
				}
				rep.StopReason = stop
			}
			overlay(d.Get("usage"))
		case "message_stop":
			stopped = true
		case "error":
			return fail(&StreamError{Provider: cfg.Provider, Type: d.Get("error.type").Str, Message: d.Get("error.message").Str})
		}
	}
	if rep.StopReason == "" {
		return fail(&StreamError{Provider: cfg.Provider, Message: "the stream ended without a stop reason"})
	}
	rep.finishTexts(texts)
	for i := range rep.Blocks { // a tool call whose block never stopped
		if rep.Blocks[i].Type == "toolUse" && rep.Blocks[i].Input == nil {
			if err := rep.setInput(i, inputs[i]); err != nil {
				return fail(&StreamError{Provider: cfg.Provider, Message: err.Error()})
			}
		}
	}
	if hasUsage {
		rep.Usage = &usage
	}
	return rep, nil
}

// deltaEvent applies one content_block_delta event (valid JSON) to the
// reply: the one implementation of a delta, whatever the event's name.
func deltaEvent(data []byte, byIndex map[int64]int, rep *Reply, texts [][]byte, inputs [][]byte, onDelta func(string, string)) {
	var index, delta []byte
	rawjson.Members(data, func(k, v []byte) bool {
		switch {
		case rawjson.KeyIs(k, "index") && index == nil:
			index = v
		case rawjson.KeyIs(k, "delta") && delta == nil:
			delta = v
		}
		return true
	})
	n, _ := rawjson.Int(index)
	i, ok := byIndex[n]
	if !ok || len(delta) == 0 || delta[0] != '{' {
		return
	}
	var typ, text, thinking, sig, partial []byte
	rawjson.Members(delta, func(k, v []byte) bool {
		switch {
		case rawjson.KeyIs(k, "type"):
			typ = v
		case rawjson.KeyIs(k, "text"):
			text = v
		case rawjson.KeyIs(k, "thinking"):
			thinking = v
		case rawjson.KeyIs(k, "signature"):
			sig = v
		case rawjson.KeyIs(k, "partial_json"):
			partial = v
		}
		return true
	})
	switch rawjson.Str(typ) {
	case "text_delta":
		t := rawjson.Str(text)
		texts[i] = append(texts[i], t...)
		onDelta("text", t)
	case "thinking_delta":
		t := rawjson.Str(thinking)
		texts[i] = append(texts[i], t...)
		onDelta("thinking", t)
	case "signature_delta":
		rep.Blocks[i].Signature += rawjson.Str(sig)
	case "input_json_delta":
		inputs[i] = append(inputs[i], rawjson.Str(partial)...)
	}
}

// eventLabel names an event for an error: its name, or "data" for one
// without.
func eventLabel(name string) string {
	if name == "" {
		return "data"
	}
	return name
}

// setInput sets a toolUse block's input from its streamed JSON text: empty
// means no arguments ({}); anything else must be valid JSON.
func (r *Reply) setInput(i int, in []byte) error {
	if len(strings.TrimSpace(string(in))) == 0 {
		in = []byte("{}")
	}
	if !rawjson.Valid(in) {
		return fmt.Errorf("tool call %s (%s): the arguments are not valid JSON", r.Blocks[i].Name, r.Blocks[i].ID)
	}
	r.Blocks[i].Input = in
	return nil
}

// broken ends a turn whose stream failed: with partial, the reply so far
// (stopReason "error") beside the error; otherwise only the error.
func (r *Reply) broken(partial bool, texts, inputs [][]byte, err error) (*Reply, error) {
	if !partial {
		return nil, err
	}
	r.StopReason = "error"
	r.finishTexts(texts)
	r.finishInputs(inputs)
	return r, err
}

// finishTexts sets the text of each text and thinking block.
func (r *Reply) finishTexts(texts [][]byte) {
	for i := range r.Blocks {
		if t := r.Blocks[i].Type; t == "text" || t == "thinking" {
			r.Blocks[i].Text = string(texts[i])
		}
	}
}

// finishInputs gives every toolUse block of a partial reply an input.
func (r *Reply) finishInputs(inputs [][]byte) {
	for i := range r.Blocks {
		if r.Blocks[i].Type == "toolUse" && r.Blocks[i].Input == nil {
			if r.setInput(i, inputs[i]) != nil {
				r.Blocks[i].Input = []byte("{}")
			}
		}
	}
}
