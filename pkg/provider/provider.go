// Package provider runs one streamed turn against a model provider: the
// Anthropic Messages API, the OpenAI Chat Completions API (and the servers
// compatible with it), or the built-in offline model, which serves the
// Anthropic protocol over loopback through the same HTTP and SSE code.
package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/tidwall/gjson"
)

// Provider names as written to logs.
const (
	Anthropic = "anthropic"
	OpenAI    = "openai"
	Offline   = "offline"
)

// Config is everything one turn needs.
type Config struct {
	Provider   string
	Model      string
	BaseURL    string
	APIKey     string
	APIVersion string // anthropic-version
	MaxTokens  int
	Reasoning  string // Anthropic: off, low, medium, high, adaptive or a token budget; OpenAI: reasoning_effort
	Tools      []Tool
	Retries    int
	Partial    bool // on a broken stream, return what arrived with stopReason "error"
	HTTP       *http.Client
	// OnDelta sees the reply as it arrives: kind is "text", "thinking" or
	// "toolUse" (text is then the tool's name).
	OnDelta func(kind, text string)
}

// Tool is one tool offered to the model.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// ParseTools reads a JSON array of {name, description, input_schema}.
func ParseTools(b []byte) ([]Tool, error) {
	if !gjson.ValidBytes(b) || !gjson.ParseBytes(b).IsArray() {
		return nil, errors.New("not a JSON array of tools")
	}
	var tools []Tool
	if err := json.Unmarshal(b, &tools); err != nil {
		return nil, err
	}
	for i, t := range tools {
		if t.Name == "" {
			return nil, fmt.Errorf("tool %d has no name", i+1)
		}
		if len(t.InputSchema) == 0 {
			tools[i].InputSchema = json.RawMessage(`{"type":"object"}`)
		}
	}
	return tools, nil
}

// Turn sends the conversation and returns the assistant's reply.
func Turn(ctx context.Context, cfg Config, conv []Message) (*Reply, error) {
	if cfg.HTTP == nil {
		cfg.HTTP = http.DefaultClient
	}
	if cfg.OnDelta == nil {
		cfg.OnDelta = func(string, string) {}
	}
	switch cfg.Provider {
	case Anthropic:
		return anthropicTurn(ctx, cfg, conv)
	case OpenAI:
		return openaiTurn(ctx, cfg, conv)
	case Offline:
		return offlineTurn(ctx, cfg, conv)
	}
	return nil, fmt.Errorf("unknown provider %q", cfg.Provider)
}

// marshal encodes v without HTML escaping.
func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // only our own request types, always encodable, come here
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
