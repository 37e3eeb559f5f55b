package agent_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/panto-dev/panto/pkg/agent"
	"github.com/panto-dev/panto/pkg/provider"
	"github.com/tidwall/gjson"
)

// An imported session holds replies with no content: usage-only entries
// (a Copilot call told by its own event, Copilot's shutdown remainder,
// Codex's token count with no reply: content []) and OpenCode's messages
// with no parts ([{"type":"text","text":""}]). They stay in the session
// and in panto-replay's message lines (panto-cost counts them there), but
// no provider takes an empty message: Anthropic refuses one ("all messages
// must have non-empty content"), and OpenAI-compatible servers such as
// vLLM refuse an assistant message whose content is "". A resumed agent
// must send neither. The OpenAI request sent {"role":"assistant",
// "content":""} for OpenCode's empty message.
const usageOnly = `{"type":"session","version":1,"id":"019dc5ba-53f6-71a5-ab8f-b1f8709c2572","timestamp":"2026-04-25T17:40:15.990Z","cwd":"/p"}
{"type":"message","id":"10000001","parentId":null,"timestamp":"2026-04-25T14:00:01.000Z","provider":"github-copilot","model":"claude-sonnet-4-5","message":{"role":"user","content":[{"type":"text","text":"write the readme"}]}}
{"type":"message","id":"20000001","parentId":"10000001","timestamp":"2026-04-25T14:00:02.000Z","message":{"role":"assistant","content":[],"provider":"github-copilot","model":"claude-sonnet-4-5","stopReason":"stop","usage":{"input":2000,"output":300}}}
{"type":"message","id":"20000002","parentId":"20000001","timestamp":"2026-04-25T14:00:03.000Z","message":{"role":"assistant","content":[{"type":"text","text":"The readme is written."}],"provider":"github-copilot","model":"claude-sonnet-4-5","stopReason":"stop","usage":{"input":0,"output":0}}}
{"type":"message","id":"20000003","parentId":"20000002","timestamp":"2026-04-25T14:00:04.000Z","message":{"role":"assistant","content":[{"type":"text","text":""}],"provider":"opencode","model":"claude-sonnet-4-5","stopReason":"stop","usage":{"input":10,"output":0}}}
{"type":"message","id":"20000004","parentId":"20000003","timestamp":"2026-04-25T14:00:05.000Z","message":{"role":"assistant","content":[],"provider":"github-copilot","model":"claude-sonnet-4-5","stopReason":"stop","usage":{"input":500,"output":60}}}
`

// strict wraps a provider's handler with the refusal of an empty message
// that the real ones make; refused counts what it refused.
func strict(t *testing.T, next http.Handler, refused *int) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Error(err)
			return
		}
		for i, m := range gjson.GetBytes(body, "messages").Array() {
			c := m.Get("content")
			empty := c.Type == gjson.Null && !m.Get("tool_calls").Exists() ||
				c.Type == gjson.String && c.Str == "" && !m.Get("tool_calls").Exists() ||
				c.IsArray() && len(c.Array()) == 0
			c.ForEach(func(_, b gjson.Result) bool {
				if b.Get("type").Str == "text" && b.Get("text").Str == "" {
					empty = true
				}
				return true
			})
			if empty {
				*refused++
				w.Header().Set("content-type", "application/json")
				w.WriteHeader(400)
				fmt.Fprintf(w, `{"type":"error","error":{"type":"invalid_request_error","message":"messages.%d: all messages must have non-empty content"}}`, i)
				return
			}
		}
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		next.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// openaiReply streams one Chat Completions reply.
var openaiReply = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("content-type", "text/event-stream")
	io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Done."},"finish_reason":null}]}`+"\n\n")
	io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\n")
	io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[],"usage":{"prompt_tokens":20,"completion_tokens":2,"total_tokens":22}}`+"\n\n")
	io.WriteString(w, "data: [DONE]\n\n")
})

func TestResumeUsageOnlyReplies(t *testing.T) {
	for _, tc := range []struct {
		name    string
		style   string
		handler http.Handler
		want    string
	}{
		{"anthropic", provider.Anthropic, provider.OfflineHandler(), `Offline reply`},
		{"openai", provider.OpenAI, openaiReply, "Done."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			f := filepath.Join(dir, "s.jsonl")
			if err := os.WriteFile(f, []byte(usageOnly), 0o600); err != nil {
				t.Fatal(err)
			}
			refused := 0
			srv := strict(t, tc.handler, &refused)
			cfg := provider.Config{Provider: tc.style, Model: "m", BaseURL: srv.URL, APIKey: "test"}
			a, err := agent.New(ctx, agent.Config{Store: open(t, "", dir), Session: f, Provider: cfg})
			if err != nil {
				t.Fatal(err)
			}
			if n := len(a.Conversation()); n != 5 {
				t.Fatalf("conversation of %d messages, want the 5 of the path (the empty ones kept)", n)
			}
			if err := a.Submit(ctx, "and the license?"); err != nil {
				t.Fatal(err)
			}
			reply, err := a.Step(ctx)
			if err != nil || refused > 0 {
				t.Fatalf("Step: %v (%d requests refused as empty)", err, refused)
			}
			if got := lastText(reply); !strings.HasPrefix(got, tc.want) {
				t.Fatalf("reply %q", got)
			}
		})
	}
}
