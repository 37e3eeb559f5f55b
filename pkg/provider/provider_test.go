package provider

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/panto-dev/panto/pkg/session"
)

const streams = "../../testdata/streams"

// replay serves a recorded stream from testdata/streams.
func replay(t *testing.T, file string) *httptest.Server {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(streams, file))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("content-type", "text/event-stream")
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv
}

var hello = []Message{{Role: "user", Blocks: []Block{{Type: "text", Text: "hi"}}}}

func TestRecordedStreams(t *testing.T) {
	tests := []struct {
		file, provider string
		partial        bool
		want           string // the reply line, or the error
	}{
		{"anthropic_text.sse", Anthropic, false, `{"role":"assistant","content":[{"type":"text","text":"Hello! How can I help?"}],"provider":"anthropic","model":"claude-sonnet-4-5-20250929","stopReason":"stop","usage":{"input":12,"output":12,"cacheRead":2048}}`},
		{"anthropic_crlf.sse", Anthropic, false, `{"role":"assistant","content":[{"type":"text","text":"Hello! How can I help?"}],"provider":"anthropic","model":"claude-sonnet-4-5-20250929","stopReason":"stop","usage":{"input":12,"output":12,"cacheRead":2048}}`},
		{"anthropic_thinking_tool.sse", Anthropic, false, `{"role":"assistant","content":[{"type":"thinking","thinking":"The user wants the weather in Paris. I should call get_weather.","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3h"},{"type":"text","text":"Let me check."},{"type":"toolUse","id":"toolu_01T1x1fJ34qAmk2tNTrN7Up6","name":"get_weather","input":"{\"location\": \"Paris\", \"unit\": \"celsius\"}"}],"provider":"anthropic","model":"claude-sonnet-4-5-20250929","stopReason":"toolUse","usage":{"input":472,"output":89,"cacheWrite":1500,"reasoning":40,"cacheWrite1h":1000}}`},
		{"anthropic_redacted_empty_tool.sse", Anthropic, false, `{"role":"assistant","content":[{"type":"redactedThinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4aDFIT"},{"type":"toolUse","id":"toolu_02","name":"list_files","input":"{}"}],"provider":"anthropic","model":"claude-x","stopReason":"toolUse","usage":{"input":5,"output":30}}`},
		{"anthropic_no_usage_max_tokens.sse", Anthropic, false, `{"role":"assistant","content":[{"type":"text","text":"long"}],"provider":"anthropic","model":"claude-x","stopReason":"length"}`},
		{"anthropic_error_midstream.sse", Anthropic, false, "anthropic: stream error overloaded_error: Overloaded"},
		{"anthropic_error_midstream.sse", Anthropic, true, `{"role":"assistant","content":[{"type":"text","text":"partial"}],"provider":"anthropic","model":"claude-x","stopReason":"error"}`},
		{"anthropic_no_stop.sse", Anthropic, false, "anthropic: the stream ended before message_stop"},
		// Every event is validated once: a truncated delta, or a truncated
		// message_stop, ends the turn in an error; it is no part of a reply.
		{"anthropic_truncated_delta.sse", Anthropic, false, "anthropic: a content_block_delta event is not valid JSON"},
		{"anthropic_truncated_delta.sse", Anthropic, true, `{"role":"assistant","content":[{"type":"text","text":"Hello"}],"provider":"anthropic","model":"claude-sonnet-4-5-20250929","stopReason":"error"}`},
		{"anthropic_truncated_stop.sse", Anthropic, false, "anthropic: a message_stop event is not valid JSON"},
		// One stop-reason table for the wire, shared with the Claude Code reader.
		{"anthropic_refusal.sse", Anthropic, false, `{"role":"assistant","content":[{"type":"text","text":"Hello! How can I help?"}],"provider":"anthropic","model":"claude-sonnet-4-5-20250929","stopReason":"error","usage":{"input":12,"output":12,"cacheRead":2048}}`},
		{"openai_text.sse", OpenAI, false, `{"role":"assistant","content":[{"type":"text","text":"Hello! How can I help?"}],"provider":"openai","model":"gpt-4o-2024-08-06","stopReason":"stop","usage":{"input":176,"output":9,"cacheRead":1024}}`},
		{"openai_no_done.sse", OpenAI, false, `{"role":"assistant","content":[{"type":"text","text":"Hello! How can I help?"}],"provider":"openai","model":"gpt-4o-2024-08-06","stopReason":"stop","usage":{"input":176,"output":9,"cacheRead":1024}}`},
		{"openai_truncated.sse", OpenAI, false, "openai: the stream ended before a finish reason"},
		{"openai_truncated_chunk.sse", OpenAI, false, "openai: a stream chunk is not valid JSON"},
		{"openai_tools.sse", OpenAI, false, `{"role":"assistant","content":[{"type":"toolUse","id":"call_AAA","name":"get_weather","input":"{\"location\": \"Paris\"}"},{"type":"toolUse","id":"call_BBB","name":"get_time","input":"{\"tz\":\"CET\"}"}],"provider":"openai","model":"gpt-4o-2024-08-06","stopReason":"toolUse","usage":{"input":80,"output":150,"reasoning":128}}`},
		{"openai_ollama.sse", OpenAI, false, `{"role":"assistant","content":[{"type":"thinking","thinking":"Thinking."},{"type":"text","text":"Sure."},{"type":"toolUse","id":"call_x","name":"bash","input":"{\"command\":\"ls\"}"}],"provider":"openai","model":"qwen3","stopReason":"toolUse","usage":{"input":20,"output":9}}`},
		{"openai_vllm_usage_every_chunk.sse", OpenAI, false, `{"role":"assistant","content":[{"type":"thinking","thinking":"hmm"},{"type":"text","text":"multi ok"}],"provider":"openai","model":"m","stopReason":"length","usage":{"input":6,"output":3,"cacheRead":4}}`},
		{"openai_openrouter_error.sse", OpenAI, false, "openai: stream error server_error: Provider disconnected unexpectedly"},
		{"openai_llamacpp_error.sse", OpenAI, false, "openai: stream error exceed_context_size_error: the request exceeds the available context size, try increasing it"},
		{"openai_multiline_data.sse", OpenAI, false, `{"role":"assistant","content":[{"type":"text","text":"two lines"}],"provider":"openai","model":"m","stopReason":"stop"}`},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			srv := replay(t, tt.file)
			cfg := Config{Provider: tt.provider, Model: "requested", BaseURL: srv.URL, Partial: tt.partial, MaxTokens: 100}
			rep, err := Turn(context.Background(), cfg, hello)
			got := ""
			if rep != nil {
				got = string(rep.JSON())
			} else if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Fatalf("got\n%s\nwant\n%s", got, tt.want)
			}
			if tt.partial && err == nil {
				t.Fatal("a partial reply came without its error")
			}
		})
	}
}

// TestRetries: 429 and 529 are retried after the delay the server asks
// for; 400 and x-should-retry: false are not; retries are bounded.
func TestRetries(t *testing.T) {
	body, _ := os.ReadFile(filepath.Join(streams, "anthropic_text.sse"))
	tests := []struct {
		name     string
		fails    int
		status   int
		header   [2]string
		retries  int
		attempts int32
		err      string
	}{
		{"429 then ok", 2, 429, [2]string{"retry-after-ms", "5"}, 2, 3, ""},
		{"529 retry-after seconds", 1, 529, [2]string{"retry-after", "0.01"}, 2, 2, ""},
		{"retry-after http date", 1, 503, [2]string{"retry-after", time.Now().Add(-time.Second).UTC().Format(http.TimeFormat)}, 1, 2, ""},
		{"bounded", 5, 429, [2]string{"retry-after-ms", "1"}, 2, 3, "anthropic: HTTP 429 rate_limit_error: slow down"},
		{"400 not retried", 5, 400, [2]string{}, 2, 1, "anthropic: HTTP 400 rate_limit_error: slow down"},
		{"x-should-retry false", 5, 500, [2]string{"x-should-retry", "false"}, 2, 1, "anthropic: HTTP 500 rate_limit_error: slow down"},
		{"x-should-retry true on 400", 1, 400, [2]string{"x-should-retry", "true"}, 2, 2, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var n atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if n.Add(1) <= int32(tt.fails) {
					if tt.header[0] != "" {
						w.Header().Set(tt.header[0], tt.header[1])
					}
					w.WriteHeader(tt.status)
					w.Write([]byte(`{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`))
					return
				}
				w.Write(body)
			}))
			defer srv.Close()
			_, err := Turn(context.Background(), Config{Provider: Anthropic, BaseURL: srv.URL, Retries: tt.retries}, hello)
			if n.Load() != tt.attempts {
				t.Fatalf("%d attempts, want %d", n.Load(), tt.attempts)
			}
			if got := errString(err); got != tt.err {
				t.Fatalf("error %q, want %q", got, tt.err)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestNoRetryAfterOutput: a stream that breaks after it started is never
// retried.
func TestNoRetryAfterOutput(t *testing.T) {
	var n atomic.Int32
	body, _ := os.ReadFile(filepath.Join(streams, "anthropic_error_midstream.sse"))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Write(body)
	}))
	defer srv.Close()
	_, err := Turn(context.Background(), Config{Provider: Anthropic, BaseURL: srv.URL, Retries: 3}, hello)
	var se *StreamError
	if !errors.As(err, &se) || n.Load() != 1 {
		t.Fatalf("err %v after %d attempts", err, n.Load())
	}
}

// conversation has a system prompt, thinking (signed, and unsigned from
// another provider), tool use with results, and a model switch.
var conversation = []Message{
	{Role: "system", Blocks: []Block{{Type: "text", Text: "You are terse. <b>&</b>"}}},
	{Role: "user", Blocks: []Block{{Type: "text", Text: "Weather in Paris?"}}},
	{Role: "assistant", Blocks: []Block{
		{Type: "thinking", Text: "Need the tool.", Signature: "EqQB"},
		{Type: "redactedThinking", Data: "EmwK"},
		{Type: "text", Text: "Checking."},
		{Type: "toolUse", ID: "toolu_01A", Name: "get_weather", Input: []byte(`{"location": "Paris"}`)},
		{Type: "toolUse", ID: "toolu_01B", Name: "list", Input: []byte(``)},
	}},
	{Role: "user", Blocks: []Block{
		{Type: "text", Text: "also this"},
		{Type: "toolResult", ID: "toolu_01A", Text: "18C, cloudy"},
		{Type: "toolResult", ID: "toolu_01B", Text: ""},
	}},
	{Role: "assistant", Blocks: []Block{
		{Type: "thinking", Text: "from openai, no signature"},
		{Type: "text", Text: "It is 18C."},
	}},
	{Role: "user", Blocks: []Block{{Type: "text", Text: "Thanks"}}},
}

var tools = []Tool{{Name: "get_weather", Description: "Weather for a city", InputSchema: []byte(`{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}`)}}

func TestRequestBodies(t *testing.T) {
	cfg := Config{Model: "claude-x", MaxTokens: 1000, Reasoning: "low", Tools: tools}
	got, err := AnthropicRequest(cfg, conversation)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "anthropic_request.json", got)
	cfg = Config{Model: "gpt-4o", MaxTokens: 1000, Reasoning: "high", Tools: tools}
	golden(t, "openai_request.json", OpenAIRequest(cfg, conversation))
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("../../testdata/requests", name)
	if os.Getenv("PANTO_UPDATE_GOLDEN") != "" {
		os.MkdirAll(filepath.Dir(path), 0o755)
		os.WriteFile(path, append(got, '\n'), 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSuffix(string(want), "\n") != string(got) {
		t.Fatalf("%s differs:\n got %s\nwant %s", name, got, want)
	}
}

// TestOffline: the offline model is deterministic, signs its thinking,
// calls a tool on "$ ", and rejects a changed thinking block.
func TestOffline(t *testing.T) {
	cfg := Config{Provider: Offline, MaxTokens: 1000, APIVersion: "2023-06-01", Tools: []Tool{{Name: "bash", InputSchema: []byte(`{"type":"object"}`)}}}
	conv := []Message{{Role: "user", Blocks: []Block{{Type: "text", Text: "please\n$ echo hi"}}}}
	a, err := Turn(context.Background(), cfg, conv)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Turn(context.Background(), cfg, conv)
	if string(a.JSON()) != string(b.JSON()) {
		t.Fatalf("not deterministic:\n%s\n%s", a.JSON(), b.JSON())
	}
	if a.StopReason != "toolUse" || a.Blocks[2].Name != "bash" || string(a.Blocks[2].Input) != `{"command":"echo hi"}` || a.Usage == nil {
		t.Fatalf("reply %s", a.JSON())
	}
	next := append(conv, Message{Role: "assistant", Blocks: a.Blocks},
		Message{Role: "user", Blocks: []Block{{Type: "toolResult", ID: a.Blocks[2].ID, Text: "hi\n"}}})
	c, err := Turn(context.Background(), cfg, next)
	if err != nil || c.StopReason != "stop" || !strings.Contains(c.Blocks[1].Text, `The tool printed 1 lines. The first: "hi".`) {
		t.Fatalf("after the tool: %v %s", err, c.JSON())
	}
	next[1].Blocks[0].Text = "changed"
	if _, err := Turn(context.Background(), cfg, next); err == nil || !strings.Contains(err.Error(), "HTTP 400 invalid_request_error: a thinking block was changed") {
		t.Fatalf("a changed thinking block: %v", err)
	}
}

func TestSSEReader(t *testing.T) {
	in := ": comment\r\nevent: a\r\ndata: 1\r\ndata:2\r\n\r\nid: x\nretry: 5\n\ndata: {\"last\":true}"
	r := NewSSEReader(strings.NewReader(in))
	var got []string
	for {
		ev, err := r.Next()
		if err != nil {
			break
		}
		got = append(got, ev.Name+"|"+string(ev.Data))
	}
	if strings.Join(got, ",") != `a|1
2,|{"last":true}` {
		t.Fatalf("events %q", got)
	}
}

// endless is a stream of one line that never ends.
type endless struct{ head []byte }

func (e *endless) Read(p []byte) (int, error) {
	n := copy(p, e.head)
	e.head = e.head[n:]
	for i := n; i < len(p); i++ {
		p[i] = 'x'
	}
	return len(p), nil
}

// TestSSEBounded: an endless line, or an event of endless data lines, is
// an error once it passes MaxLine, never memory without bound.
func TestSSEBounded(t *testing.T) {
	if _, err := NewSSEReader(&endless{head: []byte("data: ")}).Next(); !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("an endless line: %v", err)
	}
	line := "data: " + strings.Repeat("y", 1<<20) + "\n"
	many := io.MultiReader(strings.NewReader(strings.Repeat(line, 20)), strings.NewReader("\n"))
	if _, err := NewSSEReader(many).Next(); !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("an event of 20 MiB: %v", err)
	}
	ok := io.MultiReader(strings.NewReader(strings.Repeat(line, 8)), strings.NewReader("\n"))
	if ev, err := NewSSEReader(ok).Next(); err != nil || len(ev.Data) < 8<<20 {
		t.Fatalf("an event of 8 MiB: %d bytes, %v", len(ev.Data), err)
	}
}

// FuzzSSE: no stream makes the SSE reader or either protocol's assembler
// panic, and a reply they return always renders as a valid message line.
func FuzzSSE(f *testing.F) {
	for _, name := range []string{"anthropic_thinking_tool.sse", "openai_tools.sse", "openai_llamacpp_error.sse"} {
		b, err := os.ReadFile(filepath.Join(streams, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, read := range []func(io.Reader, Config) (*Reply, error){readAnthropic, readOpenAI} {
			rep, err := read(bytes.NewReader(data), Config{Provider: "p", Model: "m", OnDelta: func(string, string) {}, Partial: true})
			if rep == nil {
				continue
			}
			if _, verr := session.CheckMessage(rep.JSON()); verr != nil {
				t.Fatalf("reply %s (err %v) is not a valid message: %v", rep.JSON(), err, verr)
			}
		}
	})
}

// BenchmarkReadAnthropic parses a stream of 10,000 text deltas.
func BenchmarkReadAnthropic(b *testing.B) {
	stream := LongStream(10000)
	b.SetBytes(int64(len(stream)))
	for range b.N {
		rep, err := readAnthropic(bytes.NewReader(stream), Config{Provider: Anthropic, OnDelta: func(string, string) {}})
		if err != nil || rep.Usage.Output != 10000 {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(10000*b.N)/b.Elapsed().Seconds(), "events/s")
}
