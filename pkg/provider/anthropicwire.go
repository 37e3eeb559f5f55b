package provider

import "github.com/tidwall/gjson"

// The Anthropic Messages wire format, read in one place: panto-turn's
// stream reader and the Claude Code transcript reader (package agents) both
// use these, so a stop reason or a usage count means the same wherever a
// reply comes from.

// anthropicStops maps Anthropic's stop_reason to panto's (README: a
// refusal is an error, not a normal stop).
var anthropicStops = map[string]string{
	"end_turn": "stop", "stop_sequence": "stop", "pause_turn": "stop",
	"max_tokens": "length", "model_context_window_exceeded": "length",
	"tool_use": "toolUse", "refusal": "error",
}

// AnthropicStop maps an Anthropic stop_reason to panto's stop reason; ok is
// false for a reason the table does not know (a newer API's).
func AnthropicStop(reason string) (stop string, ok bool) {
	stop, ok = anthropicStops[reason]
	return stop, ok
}

// AnthropicUsage reads an Anthropic usage object onto u: each count the
// object holds replaces u's, the others are left as they were (a stream's
// message_delta carries only some). It reports whether u was an object.
// cache_creation's 5-minute and 1-hour split gives CacheWrite1h, and
// CacheWrite when the split says more than cache_creation_input_tokens;
// output_tokens_details.thinking_tokens gives Reasoning. Counts are taken
// as written: what a negative one means is the caller's to decide.
func AnthropicUsage(raw []byte, u *Usage) bool {
	o := gjson.ParseBytes(raw)
	if !o.IsObject() {
		return false
	}
	var split int64
	hasSplit := false
	o.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "input_tokens":
			setCount(&u.Input, v)
		case "output_tokens":
			setCount(&u.Output, v)
		case "cache_read_input_tokens":
			setCount(&u.CacheRead, v)
		case "cache_creation_input_tokens":
			setCount(&u.CacheWrite, v)
		case "cache_creation":
			if !v.IsObject() {
				break
			}
			w5, w1 := v.Get("ephemeral_5m_input_tokens"), v.Get("ephemeral_1h_input_tokens")
			if w1.Type == gjson.Number {
				u.CacheWrite1h = w1.Int()
				split, hasSplit = u.CacheWrite1h, true
			}
			if w5.Type == gjson.Number {
				split, hasSplit = split+w5.Int(), true
			}
		case "output_tokens_details":
			setCount(&u.Reasoning, v.Get("thinking_tokens"))
		}
		return true
	})
	if hasSplit && u.CacheWrite < split {
		u.CacheWrite = split // the split says more than the total
	}
	return true
}

func setCount(dst *int64, v gjson.Result) {
	if v.Type == gjson.Number {
		*dst = v.Int()
	}
}
