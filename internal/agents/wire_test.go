package agents

import (
	"testing"

	"github.com/panto-dev/panto/pkg/session"
)

// TestClaudeReplyWire: a Claude Code reply reads its stop reason and usage
// as panto-turn reads the same fields from the API (one table, one usage
// reader, in package provider); a refusal is an error in both.
func TestClaudeReplyWire(t *testing.T) {
	tests := []struct {
		stop, usage string
		want        Reply
	}{
		{"refusal", `{"input_tokens":1,"output_tokens":2}`, Reply{StopReason: "error", HasUsage: true, Usage: session.Usage{Input: 1, Output: 2}}},
		{"end_turn", `{"input_tokens":1,"output_tokens":9,"output_tokens_details":{"thinking_tokens":4}}`, Reply{StopReason: "stop", HasUsage: true, Usage: session.Usage{Input: 1, Output: 9, Reasoning: 4}}},
		{"tool_use", `{"cache_creation_input_tokens":10,"cache_creation":{"ephemeral_5m_input_tokens":4,"ephemeral_1h_input_tokens":6}}`, Reply{StopReason: "toolUse", HasUsage: true, Usage: session.Usage{CacheWrite: 10, CacheWrite1h: 6}}},
		{"max_tokens", `{"cache_creation_input_tokens":3,"cache_creation":{"ephemeral_5m_input_tokens":4,"ephemeral_1h_input_tokens":6}}`, Reply{StopReason: "length", HasUsage: true, Usage: session.Usage{CacheWrite: 10, CacheWrite1h: 6}}},
		{"a_new_reason", `{"input_tokens":-1}`, Reply{Usage: session.Usage{Input: -1}}}, // negative: no usage
		{"", `null`, Reply{}},
	}
	for _, tt := range tests {
		if got := claudeReply(tt.stop, []byte(tt.usage)); got != tt.want {
			t.Errorf("claudeReply(%q, %s) = %+v, want %+v", tt.stop, tt.usage, got, tt.want)
		}
	}
}
