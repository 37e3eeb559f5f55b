package provider

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// OfflineModel is the model the offline provider answers as by default.
const OfflineModel = "offline-1"

// The offline model is deterministic: the same request always gets the same
// reply. It answers a prompt with a thinking block (signed) and a text that
// quotes the prompt; when tools are offered and a line of the prompt starts
// with "$ ", it calls the first tool with {"command": the rest of the line};
// after tool results it reports what the tool printed. Usage counts about
// four bytes a token: the earlier messages as cache reads, the last one as
// a cache write, and a few fresh tokens.
func offlineTurn(ctx context.Context, cfg Config, conv []Message) (*Reply, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("offline: %w", err)
	}
	srv := &http.Server{Handler: OfflineHandler(), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	if cfg.Model == "" {
		cfg.Model = OfflineModel
	}
	cfg.BaseURL = "http://" + ln.Addr().String()
	return anthropicTurn(ctx, cfg, conv)
}

// signature is the offline model's signature of a thinking text.
func signature(thinking string) string {
	sum := sha256.Sum256([]byte("offline:" + thinking))
	return hex.EncodeToString(sum[:16])
}

func tokens(s string) int64 { return int64(len(s)+3) / 4 }

// OfflineHandler serves the offline model on the Anthropic Messages API.
func OfflineHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/messages", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil || !gjson.ValidBytes(body) {
			offlineError(w, 400, "invalid_request_error", "the request body is not JSON")
			return
		}
		req := gjson.ParseBytes(body)
		msgs := req.Get("messages").Array()
		if len(msgs) == 0 {
			offlineError(w, 400, "invalid_request_error", "messages: at least one message is required")
			return
		}
		for _, m := range msgs {
			for _, b := range m.Get("content").Array() {
				if b.Get("type").Str == "thinking" && b.Get("signature").Str != signature(b.Get("thinking").Str) {
					offlineError(w, 400, "invalid_request_error", "a thinking block was changed or its signature is not ours")
					return
				}
			}
		}
		reply := offlineReply(req)
		w.Header().Set("content-type", "text/event-stream; charset=utf-8")
		w.Header().Set("cache-control", "no-cache")
		flusher, _ := w.(http.Flusher)
		send := func(name, data string) {
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data)
			if flusher != nil {
				flusher.Flush()
			}
		}
		reply.stream(send)
	})
	return mux
}

func offlineError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("content-type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"type":"error","error":{"type":%q,"message":%q}}`, typ, msg)
}

type offline struct {
	model              string
	thinking, text     string
	tool, cmd          string
	stop               string
	input, read, write int64
}

func offlineReply(req gjson.Result) *offline {
	msgs := req.Get("messages").Array()
	last := msgs[len(msgs)-1]
	o := &offline{model: req.Get("model").Str, stop: "end_turn"}
	if o.model == "" {
		o.model = OfflineModel
	}
	var prompt, results []string
	for _, b := range last.Get("content").Array() {
		switch b.Get("type").Str {
		case "text":
			prompt = append(prompt, b.Get("text").Str)
		case "tool_result":
			results = append(results, b.Get("content").Str)
		}
	}
	if s := last.Get("content"); s.Type == gjson.String {
		prompt = append(prompt, s.Str)
	}
	text := strings.Join(prompt, "\n")
	turn := (len(msgs) + 1) / 2
	switch {
	case len(results) > 0:
		out := strings.Join(results, "\n")
		lines := strings.Count(strings.TrimRight(out, "\n"), "\n") + 1
		first, _, _ := strings.Cut(strings.TrimSpace(out), "\n")
		o.thinking = fmt.Sprintf("%d tool results came back; summarising them.", len(results))
		o.text = fmt.Sprintf("The tool printed %d lines. The first: %q.", lines, first)
	default:
		o.thinking = fmt.Sprintf("Turn %d: the user wrote %d words.", turn, len(strings.Fields(text)))
		o.text = fmt.Sprintf("Offline reply %d to: %q", turn, text)
		tools := req.Get("tools").Array()
		for _, line := range strings.Split(text, "\n") {
			if cmd, ok := strings.CutPrefix(line, "$ "); ok && len(tools) > 0 {
				o.tool, o.cmd = tools[0].Get("name").Str, cmd
				o.text = fmt.Sprintf("I'll run `%s`.", cmd)
				o.stop = "tool_use"
				break
			}
		}
	}
	if max := req.Get("max_tokens").Int(); max > 0 && tokens(o.thinking+o.text) > max {
		o.text = strings.ToValidUTF8(o.text[:min(len(o.text), int(max)*4)], "")
		o.tool, o.stop = "", "max_tokens"
	}
	prev := req.Get("system").Raw + req.Get("tools").Raw
	for _, m := range msgs[:len(msgs)-1] {
		prev += m.Raw
	}
	o.read, o.write, o.input = tokens(prev), tokens(last.Raw), 4
	return o
}

// stream sends the reply as Anthropic events, the text a word at a time.
func (o *offline) stream(send func(name, data string)) {
	q := func(s string) string { return string(marshal(s)) }
	send("message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":"msg_offline","type":"message","role":"assistant","model":%s,"content":[],"stop_reason":null,"usage":{"input_tokens":%d,"cache_read_input_tokens":%d,"cache_creation_input_tokens":%d,"cache_creation":{"ephemeral_5m_input_tokens":%d,"ephemeral_1h_input_tokens":0},"output_tokens":1}}}`,
		q(o.model), o.input, o.read, o.write, o.write))
	send("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`)
	send("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":%s}}`, q(o.thinking)))
	send("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":%s}}`, q(signature(o.thinking))))
	send("content_block_stop", `{"type":"content_block_stop","index":0}`)
	send("ping", `{"type":"ping"}`)
	send("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`)
	words := strings.SplitAfter(o.text, " ")
	for _, w := range words {
		send("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":%s}}`, q(w)))
	}
	send("content_block_stop", `{"type":"content_block_stop","index":1}`)
	if o.tool != "" {
		send("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":%s,"name":%s,"input":{}}}`, q("toolu_offline_"+signature(o.cmd)[:8]), q(o.tool)))
		args := string(marshal(map[string]string{"command": o.cmd}))
		half := len(args) / 2
		for half > 0 && !utf8.RuneStart(args[half]) {
			half--
		}
		for _, part := range []string{"", args[:half], args[half:]} {
			send("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":%s}}`, q(part)))
		}
		send("content_block_stop", `{"type":"content_block_stop","index":2}`)
	}
	out := tokens(o.thinking) + tokens(o.text) + tokens(o.cmd)
	send("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%s,"stop_sequence":null},"usage":{"output_tokens":%d,"output_tokens_details":{"thinking_tokens":%d}}}`, q(o.stop), out, tokens(o.thinking)))
	send("message_stop", `{"type":"message_stop"}`)
}

// LongStream returns an Anthropic Messages stream of n text deltas, for
// benchmarks of the stream parser.
func LongStream(n int) []byte {
	var b []byte
	ev := func(name, data string) { b = fmt.Appendf(b, "event: %s\ndata: %s\n\n", name, data) }
	ev("message_start", `{"type":"message_start","message":{"id":"msg_bench","type":"message","role":"assistant","model":"claude-bench","content":[],"stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}}}`)
	ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
	for i := range n {
		ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"word%d "}}`, i))
	}
	ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
	ev("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":%d}}`, n))
	ev("message_stop", `{"type":"message_stop"}`)
	return b
}
