package agents

import (
	"fmt"
	"strings"
	"testing"

	"github.com/panto-dev/panto/pkg/session"
	"github.com/tidwall/gjson"
)

// TestCopilotCallUsage holds the split of a model.model_call_success's
// responseUsage: prompt_tokens holds the cached tokens and the cache
// writes; the Responses API's names are read where the chat ones are
// absent; nothing goes below zero.
func TestCopilotCallUsage(t *testing.T) {
	for _, c := range []struct {
		usage string
		want  session.Usage
	}{
		{`{"prompt_tokens":162,"completion_tokens":11,"prompt_tokens_details":{"cached_tokens":0}}`, session.Usage{Input: 162, Output: 11}},
		{`{"prompt_tokens":10000,"completion_tokens":300,"prompt_tokens_details":{"cached_tokens":6000,"cache_creation_tokens":2000},"completion_tokens_details":{"reasoning_tokens":100}}`,
			session.Usage{Input: 2000, Output: 300, CacheRead: 6000, CacheWrite: 2000}},
		// Both names of the writes (responseChunk.usage has both): one count.
		{`{"prompt_tokens":1000,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":100,"cache_creation_tokens":50,"cache_write_tokens":50}}`,
			session.Usage{Input: 850, Output: 1, CacheRead: 100, CacheWrite: 50}},
		{`{"input_tokens":900,"output_tokens":20,"input_tokens_details":{"cached_tokens":800}}`, session.Usage{Input: 100, Output: 20, CacheRead: 800}},
		// More cached than the prompt (a writer's slip): no negative input.
		{`{"prompt_tokens":10,"completion_tokens":-3,"prompt_tokens_details":{"cached_tokens":20}}`, session.Usage{Input: 0, Output: 0, CacheRead: 20}},
		{`{}`, session.Usage{}},
	} {
		if got := copilotCallUsage(gjson.Parse(c.usage)); got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.usage, got, c.want)
		}
	}
}

// TestCopilotModelsKept reads a log whose model is named once, before the
// replies that do not name theirs: each reply and each call is priced
// under it, lines later. A name kept as a view into the scanned line (a
// Claude model with no dot, which copilotModel returned as it was given)
// is garbage by then in the poison build (go test -tags poison).
func TestCopilotModelsKept(t *testing.T) {
	ev := func(i int, typ, data string) string {
		return fmt.Sprintf(`{"type":%q,"data":%s,"id":"e%d","timestamp":"2026-10-05T02:43:%02d.000Z","parentId":null}`, typ, data, i, i)
	}
	lines := []string{
		ev(1, "session.start", `{"sessionId":"s1","copilotVersion":"1.0.91","context":{"cwd":"/p"}}`),
		ev(2, "session.model_change", `{"newModel":"claude-sonnet-4"}`),
		ev(3, "user.message", `{"content":"hi"}`),
		ev(4, "assistant.message", `{"messageId":"m1","content":"a","outputTokens":5,"apiCallId":"a1"}`),
		ev(5, "session.auto_mode_resolved", `{"chosenModel":"claude-opus-4"}`),
		ev(6, "model.model_call_success", `{"callId":"k2","modelCall":{"api_id":"a2"},"responseUsage":{"prompt_tokens":7,"completion_tokens":2}}`),
		ev(7, "user.message", `{"content":"again"}`),
		ev(8, "assistant.message", `{"messageId":"m3","content":"b","outputTokens":3,"apiCallId":"a3"}`),
	}
	log := strings.Join(lines, "\n") + "\n"
	for _, content := range []bool{false, true} {
		var got []string
		_, _, err := Read(Source{Path: "s1/events.jsonl", R: strings.NewReader(log), Size: int64(len(log))}, Copilot, Options{Content: content},
			func(*Header) error { return nil },
			func(e *Entry) error {
				if e.Reply != nil {
					got = append(got, strings.Clone(e.Model)+fmt.Sprintf(":%d+%d", e.Reply.Usage.Input, e.Reply.Usage.Output))
				}
				return nil
			})
		if err != nil {
			t.Fatal(err)
		}
		want := "claude-sonnet-4:0+5 claude-opus-4:7+2 claude-opus-4:0+3"
		if g := strings.Join(got, " "); g != want {
			t.Errorf("content %v: replies %q, want %q", content, g, want)
		}
	}
}
