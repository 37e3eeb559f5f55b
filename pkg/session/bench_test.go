package session

import (
	"fmt"
	"strings"
	"testing"
)

// benchLines are session lines like a coding agent's: texts of a few
// kilobytes with escapes and some non-ASCII, tool rounds, usage.
func benchLines() [][]byte {
	words := []string{"the", "session", "log", "é", "日本", `\"quoted\"`, `line\n`, "parse", "tool", "JSON", "fox"}
	text := func(n int) string {
		var b strings.Builder
		for i := 0; b.Len() < n; i++ {
			b.WriteString(words[(i*7+n)%len(words)])
			b.WriteByte(' ')
		}
		return b.String()
	}
	var lines [][]byte
	for i := range 400 {
		var l string
		switch i % 4 {
		case 0:
			l = fmt.Sprintf(`{"type":"message","id":"%08x","parentId":"%08x","timestamp":"2026-11-01T09:00:00.000Z","provider":"anthropic","model":"claude-sonnet-4","message":{"role":"user","content":[{"type":"text","text":"%s"}]}}`, i, i-1, text(300+i))
		case 1:
			l = fmt.Sprintf(`{"type":"message","id":"%08x","parentId":"%08x","timestamp":"2026-11-01T09:00:01.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"%s","signature":"c2ln"},{"type":"text","text":"%s"},{"type":"toolUse","id":"t%d","name":"bash","input":"{\"command\":\"ls -la\"}"}],"provider":"anthropic","model":"claude-sonnet-4","stopReason":"toolUse","usage":{"input":2973,"output":448,"cacheRead":37834}}}`, i, i-1, text(500), text(1500+i), i)
		case 2:
			l = fmt.Sprintf(`{"type":"message","id":"%08x","parentId":"%08x","timestamp":"2026-11-01T09:00:02.000Z","provider":"anthropic","model":"claude-sonnet-4","message":{"role":"user","content":[{"type":"toolResult","toolUseId":"t%d","content":"%s"}]}}`, i, i-1, i-1, text(4000+i))
		default:
			l = fmt.Sprintf(`{"type":"message","id":"%08x","parentId":"%08x","timestamp":"2026-11-01T09:00:03.000Z","message":{"role":"assistant","content":[{"type":"text","text":"%s"}],"provider":"anthropic","model":"claude-sonnet-4","stopReason":"stop","usage":{"input":3000,"output":200}}}`, i, i-1, text(800+i))
		}
		lines = append(lines, []byte(l))
	}
	return lines
}

// BenchmarkClassify: lines classified a second, as a scan does them (with
// fsck's UTF-8 and tool checks, or without).
func BenchmarkClassify(b *testing.B) {
	lines := benchLines()
	n := 0
	for _, l := range lines {
		if c := Classify(l); c.Kind != KindMessage {
			b.Fatalf("bench line is %v: %s", c.Kind, c.Problem)
		}
		n += len(l)
	}
	for _, fsck := range []bool{false, true} {
		b.Run(fmt.Sprintf("fsck=%v", fsck), func(b *testing.B) {
			b.SetBytes(int64(n))
			var text []byte
			for b.Loop() {
				for _, l := range lines {
					ClassifyWith(l, ClassifyOptions{Tools: fsck, CheckUTF8: fsck, Text: &text})
				}
			}
		})
	}
}
