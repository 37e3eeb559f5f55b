package provider

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/panto-dev/panto/internal/rawjson"
	"github.com/tidwall/gjson"
)

type oFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Arguments   *string         `json:"arguments,omitempty"`
}

type oToolCall struct {
	ID       string    `json:"id"`
	Type     string    `json:"type"`
	Function oFunction `json:"function"`
}

type oMessage struct {
	Role       string      `json:"role"`
	Content    *string     `json:"content"`
	ToolCalls  []oToolCall `json:"tool_calls,omitempty"`
	ToolCallID string      `json:"tool_call_id,omitempty"`
}

type oTool struct {
	Type     string    `json:"type"`
	Function oFunction `json:"function"`
}

type oRequest struct {
	Model               string         `json:"model"`
	Stream              bool           `json:"stream"`
	StreamOptions       map[string]any `json:"stream_options"`
	MaxCompletionTokens int            `json:"max_completion_tokens,omitempty"`
	ReasoningEffort     string         `json:"reasoning_effort,omitempty"`
	Tools               []oTool        `json:"tools,omitempty"`
	Messages            []oMessage     `json:"messages"`
}

// OpenAIRequest builds the Chat Completions request body: toolUse blocks
// become tool_calls, each toolResult a "tool" message (before the user's
// text of the same message), thinking is not sent (the API has no field for
// it). A message left with no text and no call is not sent: servers such
// as vLLM refuse an assistant message whose content is "" (OpenAI takes
// it), as Anthropic refuses any empty message.
func OpenAIRequest(cfg Config, conv []Message) []byte {
	req := oRequest{Model: cfg.Model, Stream: true, StreamOptions: map[string]any{"include_usage": true},
		MaxCompletionTokens: cfg.MaxTokens, ReasoningEffort: cfg.Reasoning}
	if req.ReasoningEffort == "off" {
		req.ReasoningEffort = ""
	}
	for _, t := range cfg.Tools {
		req.Tools = append(req.Tools, oTool{Type: "function", Function: oFunction{Name: t.Name, Description: t.Description, Parameters: t.InputSchema}})
	}
	for _, m := range conv {
		var texts []string
		var calls []oToolCall
		for _, b := range m.Blocks {
			switch b.Type {
			case "text":
				if b.Text != "" { // an empty text is no content (a usage-only reply, an empty OpenCode message)
					texts = append(texts, b.Text)
				}
			case "toolUse":
				args := string(b.Input)
				if strings.TrimSpace(args) == "" {
					args = "{}"
				}
				calls = append(calls, oToolCall{ID: b.ID, Type: "function", Function: oFunction{Name: b.Name, Arguments: &args}})
			case "toolResult":
				content := b.Text
				req.Messages = append(req.Messages, oMessage{Role: "tool", ToolCallID: b.ID, Content: &content})
			}
		}
		var content *string
		if len(texts) > 0 {
			s := strings.Join(texts, "\n\n")
			content = &s
		}
		if content == nil && len(calls) == 0 {
			continue
		}
		req.Messages = append(req.Messages, oMessage{Role: m.Role, Content: content, ToolCalls: calls})
	}
	return marshal(req)
}

func openaiTurn(ctx context.Context, cfg Config, conv []Message) (*Reply, error) {
	h := http.Header{}
	h.Set("content-type", "application/json")
	h.Set("accept", "text/event-stream")
	if cfg.APIKey != "" {
		h.Set("authorization", "Bearer "+cfg.APIKey)
	}
	url := strings.TrimSuffix(cfg.BaseURL, "/") + "/chat/completions"
	resp, err := post(ctx, cfg.HTTP, cfg.Provider, url, h, OpenAIRequest(cfg, conv), cfg.Retries)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return readOpenAI(resp.Body, cfg)
}

var openaiStops = map[string]string{
	"stop": "stop", "length": "length", "tool_calls": "toolUse", "function_call": "toolUse", "content_filter": "error",
}

// readOpenAI assembles a reply from a Chat Completions stream: content and
// reasoning (reasoning_content or reasoning, from compatible servers) in
// stream order, tool-call fragments joined by index, the usage of the last
// chunk that carries one (never summed).
func readOpenAI(r io.Reader, cfg Config) (*Reply, error) {
	rep := &Reply{Provider: cfg.Provider, Model: cfg.Model}
	calls := map[int64]int{} // tool-call index → position in rep.Blocks
	var inputs [][]byte
	var texts [][]byte
	var usage gjson.Result
	started, finished := false, ""
	fail := func(err error) (*Reply, error) { return rep.broken(cfg.Partial && started, texts, inputs, err) }
	appendText := func(typ, t string) {
		if t == "" {
			return
		}
		if n := len(rep.Blocks); n == 0 || rep.Blocks[n-1].Type != typ {
			rep.Blocks = append(rep.Blocks, Block{Type: typ})
			inputs = append(inputs, nil)
			texts = append(texts, nil)
		}
		texts[len(texts)-1] = append(texts[len(texts)-1], t...)
		cfg.OnDelta(typ, t)
	}
	sse := NewSSEReader(r)
	for {
		ev, err := sse.Next()
		if errors.Is(err, io.EOF) {
			if finished == "" {
				return fail(&StreamError{Provider: cfg.Provider, Message: "the stream ended before a finish reason"})
			}
			break
		}
		if err != nil {
			return fail(&StreamError{Provider: cfg.Provider, Message: "reading the stream: " + err.Error()})
		}
		if ev.Error != nil {
			typ, msg := errorOf([]byte(`{"error":` + string(ev.Error) + `}`))
			return fail(&StreamError{Provider: cfg.Provider, Type: typ, Message: msg})
		}
		if strings.TrimSpace(string(ev.Data)) == "[DONE]" {
			if finished == "" {
				return fail(&StreamError{Provider: cfg.Provider, Message: "the stream ended before a finish reason"})
			}
			break
		}
		if len(ev.Data) == 0 {
			continue
		}
		if !rawjson.Valid(ev.Data) { // validated once: a truncated chunk is no part of the reply
			return fail(&StreamError{Provider: cfg.Provider, Message: "a stream chunk is not valid JSON"})
		}
		d := gjson.ParseBytes(ev.Data)
		if e := d.Get("error"); e.Exists() || d.Get("object").Str == "error" {
			typ, msg := errorOf(ev.Data)
			return fail(&StreamError{Provider: cfg.Provider, Type: typ, Message: msg})
		}
		started = true
		if m := d.Get("model").Str; m != "" {
			rep.Model = m
		}
		if u := d.Get("usage"); u.IsObject() {
			usage = u
		}
		c := d.Get("choices.0")
		if !c.Exists() {
			continue
		}
		delta := c.Get("delta")
		reasoning := delta.Get("reasoning_content")
		if reasoning.Type != gjson.String {
			reasoning = delta.Get("reasoning")
		}
		appendText("thinking", reasoning.Str)
		appendText("text", delta.Get("content").Str)
		delta.Get("tool_calls").ForEach(func(_, tc gjson.Result) bool {
			idx := tc.Get("index").Int()
			i, ok := calls[idx]
			if !ok {
				i = len(rep.Blocks)
				calls[idx] = i
				rep.Blocks = append(rep.Blocks, Block{Type: "toolUse", ID: tc.Get("id").Str, Name: tc.Get("function.name").Str})
				inputs = append(inputs, nil)
				texts = append(texts, nil)
				cfg.OnDelta("toolUse", rep.Blocks[i].Name)
			}
			if id := tc.Get("id").Str; rep.Blocks[i].ID == "" {
				rep.Blocks[i].ID = id
			}
			if name := tc.Get("function.name").Str; rep.Blocks[i].Name == "" {
				rep.Blocks[i].Name = name
			}
			inputs[i] = append(inputs[i], tc.Get("function.arguments").Str...)
			return true
		})
		if fr := c.Get("finish_reason"); fr.Type == gjson.String {
			if fr.Str == "error" {
				return fail(&StreamError{Provider: cfg.Provider, Type: "error", Message: "the provider ended the stream with finish_reason error"})
			}
			finished = fr.Str
		}
	}
	stop, ok := openaiStops[finished]
	if !ok {
		stop = "stop"
	}
	rep.StopReason = stop
	rep.finishTexts(texts)
	for i := range rep.Blocks {
		if rep.Blocks[i].Type == "toolUse" {
			if err := rep.setInput(i, inputs[i]); err != nil {
				return fail(&StreamError{Provider: cfg.Provider, Message: err.Error()})
			}
		}
	}
	if usage.Exists() {
		prompt, cached := usage.Get("prompt_tokens").Int(), usage.Get("prompt_tokens_details.cached_tokens").Int()
		write := usage.Get("prompt_tokens_details.cache_write_tokens").Int()
		rep.Usage = &Usage{
			Input: max(0, prompt-cached-write), CacheRead: cached, CacheWrite: write,
			Output: usage.Get("completion_tokens").Int(), Reasoning: usage.Get("completion_tokens_details.reasoning_tokens").Int(),
		}
	}
	return rep, nil
}
