package agents

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestClaudeHugeResult: converting a Claude Code log whose tool result is
// one 32 MiB line of escapes allocates the line once for its two passes
// and the converted body once (about twice the line): the second pass made
// the line's buffer again, and gjson unescaped the result to hand back a
// string never used (4.7 times the line, 154 MiB here; a 1 GB line took 3.8 GB to replay
// or import, hostile.md #17).
func TestClaudeHugeResult(t *testing.T) {
	const huge = 32 << 20
	head := func(u, p, typ string) string {
		parent := "null"
		if p != "" {
			parent = `"00000000-0000-4000-8000-00000000000` + p + `"`
		}
		return `{"parentUuid":` + parent + `,"sessionId":"0c9a8045-53e9-44b1-83fb-aafc6e1f4f0d","cwd":"/p","type":"` + typ + `","uuid":"00000000-0000-4000-8000-00000000000` + u + `","timestamp":"2026-02-11T10:00:00.000Z"`
	}
	var b bytes.Buffer
	b.WriteString(head("1", "", "user") + `,"message":{"role":"user","content":"run it"}}` + "\n")
	b.WriteString(head("2", "1", "assistant") + `,"requestId":"req_1","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"cat"}}],"stop_reason":"tool_use","usage":{"input_tokens":10,"output_tokens":5}}}` + "\n")
	b.WriteString(head("3", "2", "user") + `,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"`)
	unit := `\u2026 \"quotes\" and \\ escapes \n`
	b.WriteString(strings.Repeat(unit, huge/len(unit)))
	b.WriteString(`"}]}}` + "\n")
	b.WriteString(head("4", "3", "assistant") + `,"requestId":"req_2","message":{"id":"msg_2","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"done"}],"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":5}}}` + "\n")
	path := filepath.Join(t.TempDir(), "g.jsonl")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	size := int64(b.Len())
	b = bytes.Buffer{}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	tmp, n, _, err := Convert(Source{Path: path, R: f, Size: size}, Unknown)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	tmp.Close()
	if n < huge {
		t.Fatalf("converted to %d bytes", n)
	}
	// Twice the line, and a third under the race detector (96 MiB), whose
	// build copies the body once more; 154 MiB without it before.
	if alloc, limit := after.TotalAlloc-before.TotalAlloc, uint64(7*huge/2); alloc > limit {
		t.Errorf("converting a %d MiB line allocated %d MiB, want under %d MiB", huge>>20, alloc>>20, limit>>20)
	} else {
		t.Logf("converting a %d MiB line allocated %d MiB", huge>>20, alloc>>20)
	}
}
