package agents

import (
	"bytes"
	"strings"
	"testing"
)

// TestTitle: a session's title is the first line of the first prompt the
// user typed, in each format; meta lines, command wrappers and tool
// results are none; a long one is cut at TitleMax characters.
func TestTitle(t *testing.T) {
	long := strings.Repeat("é", 100)
	tests := []struct {
		f     Format
		lines string
		want  string
	}{
		{Claude, `{"type":"user","isMeta":true,"message":{"role":"user","content":"Caveat: x"}}
{"type":"user","message":{"role":"user","content":"<command-name>/clear</command-name>"}}
{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"x"}]}}
{"type":"user","message":{"role":"user","content":[{"type":"text","text":"  Fix the bug\nin main.go"}]}}`, "Fix the bug"},
		{Codex, `{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>"}]}}
{"type":"event_msg","payload":{"type":"user_message","message":"Review the branch"}}`, "Review the branch"},
		{Pi, `{"type":"session","version":3}
{"type":"message","message":{"role":"user","content":[{"type":"text","text":"hi pi"}]}}`, "hi pi"},
		{Panto, `{"type":"message","message":{"role":"user","content":[{"type":"text","text":"` + long + `"}]}}`, strings.Repeat("é", TitleMax-1) + "…"},
		{Pi, `{"type":"message","message":{"role":"user","content":[{"type":"text","text":"` + "\\u001b[31mred" + `"}]}}`, "\x1b[31mred"}, // escaped where shown
		{Claude, `{"type":"user","message":{"role":"user","content":"` + strings.Repeat("x", 70<<10) + `"}}
{"type":"user","message":{"role":"user","content":"after a huge line"}}`, "after a huge line"},
		{Claude, "not json\n{\"type\":\"user\"", ""},
	}
	for _, tt := range tests {
		b := []byte(tt.lines)
		if got := Title(Source{R: bytes.NewReader(b), Size: int64(len(b))}, tt.f); got != tt.want {
			t.Errorf("%v %.60q: %q, want %q", tt.f, tt.lines, got, tt.want)
		}
	}
}
