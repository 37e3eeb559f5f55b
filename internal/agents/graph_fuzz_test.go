package agents

import (
	"bytes"
	"fmt"
	"testing"
	"time"
)

// graphIDs are the ids a hostile graph draws from: few, so that ids
// repeat, parents name the entry itself, a later one or nothing.
var graphIDs = []string{"00000001", "00000002", "00000003", "00000004", "00000005", "0000000a", "not-hex", "c0c0c0c0"}

// within runs fn and panics (the fuzzer keeps the input) when it does not
// end in a bound far above what it takes: a walk round a cycle never ends.
func within(what string, fn func()) {
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		panic(what + ": did not end in 20 s (a walk without progress?)")
	}
}

// pick returns graphIDs[b], or "" for one value past them.
func pick(b byte) string {
	if p := int(b) % (len(graphIDs) + 1); p < len(graphIDs) {
		return graphIDs[p]
	}
	return ""
}

// hostilePi is a pi (version 3) session spelled by g, three bytes an
// entry: its id, its parent, its kind (a message, a tool round, a
// compaction keeping from any id or index, a branch summary).
func hostilePi(g []byte) []byte {
	var b bytes.Buffer
	b.WriteString(`{"type":"session","version":3,"id":"7a2c3b9e-1b7d-4c1e-9a57-3d1f0b2c4e5b","timestamp":"2026-03-02T10:00:00.000Z","cwd":"/home/u/pi"}` + "\n")
	for k := 0; k+2 < len(g) && k < 3*200; k += 3 {
		id, parent := pick(g[k]), pick(g[k+1])
		head := fmt.Sprintf(`"id":%q,"parentId":%q,"timestamp":"2026-03-02T10:00:00.000Z"`, id, parent)
		if parent == "" {
			head = fmt.Sprintf(`"id":%q,"parentId":null,"timestamp":"2026-03-02T10:00:00.000Z"`, id)
		}
		arg := g[k+2] / 7
		switch g[k+2] % 7 {
		case 0:
			fmt.Fprintf(&b, `{"type":"message",%s,"message":{"role":"user","content":"q","timestamp":1}}`, head)
		case 1:
			fmt.Fprintf(&b, `{"type":"message",%s,"message":{"role":"assistant","content":[{"type":"text","text":"a"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-opus-4-5","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0},"stopReason":"stop","timestamp":1}}`, head)
		case 2:
			fmt.Fprintf(&b, `{"type":"message",%s,"message":{"role":"assistant","content":[{"type":"toolCall","id":"t%d","name":"bash","arguments":{}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-opus-4-5","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0},"stopReason":"toolUse","timestamp":1}}`, head, arg%3)
		case 3:
			fmt.Fprintf(&b, `{"type":"message",%s,"message":{"role":"toolResult","toolCallId":"t%d","content":[{"type":"text","text":"ok"}],"timestamp":1}}`, head, arg%3)
		case 4:
			fmt.Fprintf(&b, `{"type":"compaction",%s,"summary":"S","firstKeptEntryId":%q,"tokensBefore":3,"usage":{"input":1,"output":1}}`, head, pick(arg))
		case 5:
			fmt.Fprintf(&b, `{"type":"compaction",%s,"summary":"S","firstKeptEntryIndex":%d,"tokensBefore":3}`, head, int(arg)%40-2)
		case 6:
			fmt.Fprintf(&b, `{"type":"branch_summary",%s,"fromId":%q,"summary":"B"}`, head, pick(arg))
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// hostileClaude is a Claude Code transcript spelled by g, three bytes a
// line: its uuid, its parentUuid, its kind (a prompt, a reply, a tool
// round, a compact boundary with a logical parent and a preserved
// segment, its summary, a sidechain line, a Task call).
func hostileClaude(g []byte) []byte {
	var b bytes.Buffer
	u := func(s string) string {
		if s == "" {
			return "null"
		}
		return fmt.Sprintf(`"00000000-0000-4000-8000-0000%s"`, s)
	}
	for k := 0; k+2 < len(g) && k < 3*200; k += 3 {
		id, parent := pick(g[k]), pick(g[k+1])
		if id == "" {
			id = "ffffffff"
		}
		arg := g[k+2] / 7
		head := fmt.Sprintf(`"parentUuid":%s,"isSidechain":%v,"sessionId":"0b9a8045-53e9-44b1-83fb-aafc6e1f4f0c","cwd":"/p","uuid":%s,"timestamp":"2026-02-11T10:00:00.000Z"`, u(parent), g[k+2]%7 == 5, u(id))
		switch g[k+2] % 7 {
		case 0, 5:
			fmt.Fprintf(&b, `{%s,"type":"user","message":{"role":"user","content":"q"}}`, head)
		case 1:
			fmt.Fprintf(&b, `{%s,"type":"assistant","requestId":"req_%d","message":{"id":"msg_%d","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"a"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}}`, head, arg, arg)
		case 2:
			fmt.Fprintf(&b, `{%s,"type":"assistant","requestId":"req_%d","message":{"id":"msg_%d","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"toolu_%d","name":"Task","input":{"prompt":"p%d"}}],"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1}}}`, head, arg, arg, arg%3, arg%2)
		case 3:
			fmt.Fprintf(&b, `{%s,"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%d","content":"ok"}]}}`, head, arg%3)
		case 4:
			fmt.Fprintf(&b, `{%s,"type":"system","subtype":"compact_boundary","logicalParentUuid":%s,"content":"Conversation compacted","compactMetadata":{"trigger":"manual","preTokens":3,"preservedSegment":{"headUuid":%s,"anchorUuid":%s,"tailUuid":%s}}}`, head, u(pick(arg)), u(pick(arg/3)), u(pick(arg/5)), u(pick(arg/2)))
		case 6:
			fmt.Fprintf(&b, `{%s,"type":"user","isCompactSummary":true,"message":{"role":"user","content":"summary"}}`, head)
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// fuzzGraph reads a hostile log every way: the conversion (valid lines,
// the replies with and without content alike), its replay and fsck, and a
// Claude Code log's subagents.
func fuzzGraph(f *testing.F, build func([]byte) []byte, seeds ...[]byte) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, g []byte) {
		b := build(g)
		within(fmt.Sprintf("a log of %d lines", bytes.Count(b, []byte("\n"))), func() {
			check(t, b, Unknown)
			if _, err := firstLine(Source{R: bytes.NewReader(b), Size: int64(len(b))}); err == nil && len(b) > 0 {
				if f, _ := Sniff(bytes.NewReader(b), int64(len(b))); f != Unknown && f != Panto {
					convert(t, "x.jsonl", b)
				}
				ClaudeSubagents(Source{Path: "x.jsonl", R: bytes.NewReader(b), Size: int64(len(b))})
			}
		})
	})
}

// FuzzPiGraph and FuzzClaudeGraph feed the readers' tree builders hostile
// graphs: parents that cycle, name the entry itself, a later entry or none;
// ids that repeat or are not pi's; compactions keeping from themselves, a
// later entry, another branch, an index past the end; Claude Code's
// logical parents and preserved segments anywhere, sidechains and Task
// calls tied by prompt. Every read ends, and gives a valid session.
func FuzzPiGraph(f *testing.F) {
	fuzzGraph(f, hostilePi,
		[]byte{0, 8, 0, 1, 0, 1, 2, 1, 0, 3, 2, 4 + 7*2},
		[]byte{0, 0, 0, 1, 1, 1},
		[]byte{0, 1, 0, 1, 0, 1, 2, 1, 4, 3, 2, 5 + 7*3},
		[]byte{0, 8, 2, 1, 0, 3, 2, 1, 4 + 7*7, 3, 2, 6})
}

func FuzzClaudeGraph(f *testing.F) {
	fuzzGraph(f, hostileClaude,
		[]byte{0, 8, 0, 1, 0, 1, 2, 1, 2, 3, 2, 3},
		[]byte{0, 0, 0, 1, 1, 1},
		[]byte{0, 8, 0, 1, 0, 1, 8, 1, 4 + 7*10, 2, 3, 6, 3, 2, 0},
		[]byte{0, 8, 2, 1, 0, 5, 2, 1, 5, 3, 8, 2})
}
