package search

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/panto-dev/panto/internal/agents"
)

// Session ids of the planted logs.
const (
	claudeID = "11111111-2222-4333-8444-555555555555"
	codexID  = "019a0000-0000-7000-8000-000000000001"
	piID     = "019a0000-0000-7000-8000-000000000002"
	pantoID  = "019a0000-0000-7000-8000-000000000003"
)

// places are where a needle can be; each log below plants "zq<place>"
// in each of them (a subagent's conversation too), with the role and kind
// a hit there must have.
var places = []struct{ word, role, kind string }{
	{"zquser", "user", KindText},
	{"zqassistant", "assistant", KindText},
	{"zqthinking", "assistant", KindThinking},
	{"zqcommand", "assistant", KindToolInput},
	{"zqfilepath", "assistant", KindToolInput},
	{"zqresult", "tool", KindToolResult},
	{"zqsummary", "system", KindText},
	{"zqsubagent", "assistant", KindText},
}

// hard is text that JSON writers escape, planted in every user prompt:
// quotes, backslashes, a newline, non-ASCII, a character outside the BMP.
const hard = "say \"zqquoted\" to C:\\zq\\dir then\nnext line: crème brûlée zqé 😀zqemoji and a<b&c>d"

// hardNeedles must each be found in the prompt that holds hard.
var hardNeedles = []string{`"zqquoted"`, `C:\zq\dir`, "then\nnext", "brûlée zqé", "😀zqemoji", "y \"zq", `\zq\`, "a<b&c>d", "crème"}

func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// asciiOnly writes every non-ASCII character of a JSON line as \uXXXX
// (surrogate pairs beyond the BMP), as Python's json.dumps does.
func asciiOnly(line string) string {
	var b strings.Builder
	for _, r := range line {
		if r < 0x80 {
			b.WriteRune(r)
			continue
		}
		if r > 0xffff {
			h, l := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, h, l)
			continue
		}
		fmt.Fprintf(&b, `\u%04x`, r)
	}
	return b.String()
}

type obj = map[string]any
type arr = []any

func claudeLines(prompt string) []string {
	l := func(typ string, n int, msg obj, extra obj) string {
		o := obj{"parentUuid": nil, "isSidechain": false, "userType": "external", "cwd": "/home/u/proj", "sessionId": claudeID,
			"version": "2.1.14", "type": typ, "message": msg, "uuid": fmt.Sprintf("aaaaaaaa-0000-4000-8000-%012d", n),
			"timestamp": fmt.Sprintf("2026-11-01T10:00:%02d.000Z", n)}
		for k, v := range extra {
			o[k] = v
		}
		return js(o)
	}
	asst := func(n int, blocks ...any) string {
		return l("assistant", n, obj{"model": "claude-opus-4-5", "id": "msg_1", "type": "message", "role": "assistant", "content": blocks}, nil)
	}
	return []string{
		js(obj{"type": "summary", "summary": "a title", "leafUuid": "x"}),
		l("user", 1, obj{"role": "user", "content": "zquser: " + prompt}, nil),
		asst(2, obj{"type": "thinking", "thinking": "I think zqthinking", "signature": "zqsig"}),
		asst(3, obj{"type": "text", "text": "I say zqassistant"}),
		asst(4, obj{"type": "tool_use", "id": "toolu_zqid1", "name": "Bash", "input": obj{"command": "grep -r \"zqcommand\" .", "description": "look"}}),
		l("user", 5, obj{"role": "user", "content": arr{obj{"type": "tool_result", "tool_use_id": "toolu_zqid1", "content": "found zqresult here"}}}, nil),
		asst(6, obj{"type": "tool_use", "id": "toolu_zqid2", "name": "Read", "input": obj{"file_path": "/home/u/proj/zqfilepath.go"}}),
		l("user", 7, obj{"role": "user", "content": "This session is being continued. zqsummary"}, obj{"isCompactSummary": true}),
		l("progress", 8, nil, obj{"data": obj{"type": "agent_progress", "message": obj{"type": "assistant", "uuid": "sub-1",
			"message": obj{"role": "assistant", "model": "claude-haiku-4-5", "content": arr{obj{"type": "text", "text": "the subagent says zqsubagent"}}}}}}),
	}
}

func codexLines(prompt string) []string {
	ri := func(n int, p obj) string {
		return js(obj{"timestamp": fmt.Sprintf("2026-11-02T10:00:%02d.000Z", n), "type": "response_item", "payload": p})
	}
	args := js(obj{"cmd": "grep -r \"zqcommand\" .", "workdir": "/home/u/proj"})
	return []string{
		js(obj{"timestamp": "2026-11-02T10:00:00.000Z", "type": "session_meta", "payload": obj{"id": codexID, "cwd": "/home/u/proj", "timestamp": "2026-11-02T10:00:00.000Z"}}),
		js(obj{"timestamp": "2026-11-02T10:00:00.500Z", "type": "turn_context", "payload": obj{"cwd": "/home/u/proj", "model": "gpt-5.5"}}),
		ri(1, obj{"type": "message", "role": "user", "content": arr{obj{"type": "input_text", "text": "zquser: " + prompt}}}),
		js(obj{"timestamp": "2026-11-02T10:00:01.000Z", "type": "event_msg", "payload": obj{"type": "user_message", "message": "zquser again"}}),
		ri(2, obj{"type": "reasoning", "summary": arr{obj{"type": "summary_text", "text": "**zqthinking**"}}, "encrypted_content": "zqenc"}),
		ri(3, obj{"type": "message", "role": "assistant", "content": arr{obj{"type": "output_text", "text": "I say zqassistant"}}}),
		ri(4, obj{"type": "function_call", "name": "exec_command", "arguments": args, "call_id": "call_zq1"}),
		ri(5, obj{"type": "function_call_output", "call_id": "call_zq1", "output": "found zqresult here"}),
		ri(6, obj{"type": "custom_tool_call", "name": "apply_patch", "call_id": "call_zq2", "input": "*** Update File: src/zqfilepath.go\n"}),
		js(obj{"timestamp": "2026-11-02T10:00:07.000Z", "type": "compacted", "payload": obj{"message": "summary: zqsummary"}}),
		ri(8, obj{"type": "agent_message", "author": "/root/sub", "content": arr{obj{"type": "input_text", "text": "the subagent says zqsubagent"}}}),
	}
}

func piLines(prompt string) []string {
	m := func(n int, msg obj) string {
		return js(obj{"type": "message", "id": fmt.Sprintf("p%07d", n), "parentId": nil, "timestamp": fmt.Sprintf("2026-11-03T10:00:%02d.000Z", n), "message": msg})
	}
	return []string{
		js(obj{"type": "session", "version": 3, "id": piID, "timestamp": "2026-11-03T10:00:00.000Z", "cwd": "/home/u/proj"}),
		m(1, obj{"role": "user", "content": arr{obj{"type": "text", "text": "zquser: " + prompt}}, "timestamp": 1}),
		m(2, obj{"role": "assistant", "model": "claude-opus-4-5", "api": "anthropic-messages", "content": arr{
			obj{"type": "thinking", "thinking": "zqthinking"}, obj{"type": "text", "text": "I say zqassistant"},
			obj{"type": "toolCall", "id": "tc1", "name": "bash", "arguments": obj{"command": "grep -r \"zqcommand\" ."}},
			obj{"type": "toolCall", "id": "tc2", "name": "read", "arguments": obj{"path": "zqfilepath.go"}}}, "timestamp": 2}),
		m(3, obj{"role": "toolResult", "toolCallId": "tc1", "toolName": "bash", "content": arr{obj{"type": "text", "text": "found zqresult here"}}, "timestamp": 3}),
		js(obj{"type": "compaction", "id": "p0000004", "parentId": "p0000003", "timestamp": "2026-11-03T10:00:04.000Z", "summary": "zqsummary", "firstKeptEntryId": "p0000003"}),
		m(5, obj{"role": "assistant", "model": "claude-opus-4-5", "api": "anthropic-messages", "content": arr{obj{"type": "text", "text": "the subagent says zqsubagent"}}, "timestamp": 5}),
	}
}

func pantoLines(prompt string) []string {
	m := func(n int, msg obj) string {
		return js(obj{"type": "message", "id": fmt.Sprintf("%08x", n), "parentId": nil, "timestamp": fmt.Sprintf("2026-11-04T10:00:%02d.000Z", n), "provider": "anthropic", "model": "claude-opus-4-5", "message": msg})
	}
	return []string{
		js(obj{"type": "session", "version": 1, "id": pantoID, "timestamp": "2026-11-04T10:00:00.000Z", "cwd": "/home/u/proj"}),
		m(1, obj{"role": "user", "content": arr{obj{"type": "text", "text": "zquser: " + prompt}}}),
		m(2, obj{"role": "assistant", "content": arr{obj{"type": "thinking", "thinking": "zqthinking"}, obj{"type": "text", "text": "I say zqassistant"},
			obj{"type": "toolUse", "id": "toolu_1", "name": "bash", "input": js(obj{"command": "grep -r \"zqcommand\" ."})},
			obj{"type": "toolUse", "id": "toolu_2", "name": "read", "input": js(obj{"path": "zqfilepath.go"})}}}),
		m(3, obj{"role": "user", "content": arr{obj{"type": "toolResult", "toolUseId": "toolu_1", "content": "found zqresult here"}}}),
		js(obj{"type": "compaction", "id": "00000004", "parentId": "00000003", "timestamp": "2026-11-04T10:00:04.000Z", "summary": "zqsummary"}),
		js(obj{"type": "progress", "id": "00000005", "parentId": "00000004", "timestamp": "2026-11-04T10:00:05.000Z", "agent": "claude",
			"line": obj{"type": "progress", "data": obj{"type": "agent_progress", "message": obj{"type": "assistant",
				"message": obj{"role": "assistant", "content": arr{obj{"type": "text", "text": "the subagent says zqsubagent"}}}}}}}),
	}
}

type planted struct {
	format  agents.Format
	session string
	lines   func(string) []string
}

var logs = []planted{
	{agents.Claude, claudeID, claudeLines},
	{agents.Codex, codexID, codexLines},
	{agents.Pi, piID, piLines},
	{agents.Panto, pantoID, pantoLines},
}

// writeLogs writes each log twice: as a writer of raw UTF-8 does, and
// with every non-ASCII character escaped; it returns the files.
func writeLogs(t *testing.T) []File {
	dir := t.TempDir()
	var files []File
	for _, lg := range logs {
		for _, ascii := range []bool{false, true} {
			lines := lg.lines(hard)
			if ascii {
				for i := range lines {
					lines[i] = asciiOnly(lines[i])
				}
			}
			p := filepath.Join(dir, fmt.Sprintf("%s-%v-%s.jsonl", lg.format, ascii, lg.session))
			if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			files = append(files, File{Path: p})
		}
	}
	return files
}

func search(t *testing.T, files []File, words []string, res []string, c Case, opt Options) ([]*Hit, Summary) {
	t.Helper()
	q, err := Parse(words, res, c)
	if err != nil {
		t.Fatalf("Parse(%q, %q): %v", words, res, err)
	}
	var hits []*Hit
	sum := Run(context.Background(), q, files, opt, func(h *Hit) bool { hits = append(hits, h); return true })
	return hits, sum
}

// TestPlaces: a needle in every place a log holds text is found once per
// file, in its session, with the role and kind of that place; escaped
// text is matched decoded, whether the writer escaped non-ASCII or not.
func TestPlaces(t *testing.T) {
	files := writeLogs(t)
	for _, pl := range places {
		hits, _ := search(t, files, []string{pl.word}, nil, Smart, Options{})
		got := map[string]int{}
		for _, h := range hits {
			got[h.Agent]++
			if h.Role != pl.role || h.Kind != pl.kind {
				t.Errorf("%s in %s: role %s kind %s, want %s %s (%q)", pl.word, h.Agent, h.Role, h.Kind, pl.role, pl.kind, h.Snippet)
			}
			want := map[string]string{"claude": claudeID, "codex": codexID, "pi": piID, "panto": pantoID}[h.Agent]
			if h.Session != want {
				t.Errorf("%s in %s: session %s, want %s", pl.word, h.Agent, h.Session, want)
			}
			if !strings.Contains(strings.ToLower(h.Snippet), pl.word) {
				t.Errorf("%s: snippet %q", pl.word, h.Snippet)
			}
			if len(h.Matches) == 0 || h.Snippet[h.Matches[0][0]:h.Matches[0][1]] != pl.word {
				t.Errorf("%s: matches %v in %q", pl.word, h.Matches, h.Snippet)
			}
		}
		for _, lg := range logs {
			if n := got[lg.format.String()]; n != 2 {
				t.Errorf("%s: %d hits in the %s logs, want 2 (one per file)", pl.word, n, lg.format)
			}
		}
	}
}

// TestEscapedNeedles: needles a JSON writer escapes (quotes, backslashes,
// a newline, non-ASCII raw or as \uXXXX, a surrogate pair, < > &) and
// needles split across an escape are all found, in every file.
func TestEscapedNeedles(t *testing.T) {
	files := writeLogs(t)
	for i, n := range append(hardNeedles, "CRÈME BRÛLÉE") {
		c := Smart
		if i == len(hardNeedles) {
			c = Insensitive
		}
		hits, _ := search(t, files, []string{n}, nil, c, Options{})
		files := map[string]bool{}
		for _, h := range hits {
			files[h.Path] = true
			if h.Role != "user" || h.Kind != KindText {
				t.Errorf("%q: a hit of role %s kind %s", n, h.Role, h.Kind)
			}
		}
		if len(files) != 2*len(logs) {
			t.Errorf("%q: found in %d files, want %d", n, len(files), 2*len(logs))
		}
	}
}

// TestNoHitOnSyntax: keys, ids, signatures and JSON syntax are not text.
func TestNoHitOnSyntax(t *testing.T) {
	files := writeLogs(t)
	for _, n := range []string{"tool_use_id", "sessionId", "parentUuid", claudeID, codexID, "toolu_zqid1", "call_zq1", "zqsig", "zqenc", `":"`, "input_text", "isCompactSummary", "agent_progress"} {
		hits, _ := search(t, files, []string{n}, nil, Sensitive, Options{})
		for _, h := range hits {
			t.Errorf("%q: a hit in %s (%s %s): %q", n, h.Agent, h.Role, h.Kind, h.Snippet)
		}
	}
}

// TestQueries: words in any order in one entry, phrases, exclusions,
// smart case, regexps.
func TestQueries(t *testing.T) {
	files := writeLogs(t)
	count := func(words, res []string, c Case) int {
		hits, _ := search(t, files, words, res, c, Options{})
		return len(hits)
	}
	n := 2 * len(logs) // one hit per file
	for _, tc := range []struct {
		words, res []string
		c          Case
		want       int
	}{
		{[]string{"zqassistant", "say"}, nil, Smart, n},
		{[]string{"say", "zqassistant"}, nil, Smart, n},
		{[]string{"I say zqassistant"}, nil, Smart, n},
		{[]string{"zqassistant say"}, nil, Smart, 0},       // a phrase is matched as written
		{[]string{"zqassistant", "zquser"}, nil, Smart, 0}, // in one entry
		{[]string{"zqassistant", "-say"}, nil, Smart, 0},
		{[]string{"zqassistant", "-nothere"}, nil, Smart, n},
		{[]string{"ZQASSISTANT"}, nil, Smart, 0},
		{[]string{"ZQASSISTANT"}, nil, Insensitive, n},
		{[]string{"zqAssistant"}, nil, Smart, 0},
		{[]string{"i say"}, nil, Smart, n},
		{[]string{"i say"}, nil, Sensitive, 0},
		{nil, []string{`zqass[a-z]+t`}, Smart, n},
		{nil, []string{`ZQass[a-z]+t`}, Smart, 0},
		{nil, []string{`[0-9]zq`}, Smart, 0},
		{[]string{"say"}, []string{`zqa.*t\b`}, Smart, n},
	} {
		if got := count(tc.words, tc.res, tc.c); got != tc.want {
			t.Errorf("%q %q case %d: %d hits, want %d", tc.words, tc.res, tc.c, got, tc.want)
		}
	}
}

// TestBadQueries are refused before anything is read.
func TestBadQueries(t *testing.T) {
	for _, tc := range []struct{ words, res []string }{
		{nil, nil}, {[]string{""}, nil}, {[]string{"-x"}, nil}, {nil, []string{"a("}}, {nil, []string{""}},
	} {
		if _, err := Parse(tc.words, tc.res, Smart); err == nil {
			t.Errorf("Parse(%q, %q): no error", tc.words, tc.res)
		}
	}
	q, err := Parse(nil, []string{`[A-Z]{30}`}, Smart)
	if err != nil || !q.Slow {
		t.Errorf("a regexp with no literal: slow %v, %v", q != nil && q.Slow, err)
	}
}

// TestFilters narrow before the limit.
func TestFilters(t *testing.T) {
	files := writeLogs(t)
	for _, tc := range []struct {
		f    Filter
		want int
	}{
		{Filter{Roles: map[string]bool{"tool": true}}, 2 * len(logs)},
		{Filter{Kinds: map[string]bool{KindToolInput: true}}, 4 * len(logs)},
		{Filter{Tool: "bash"}, 4 + 4 + 2 + 2}, // claude Bash: input, result (by its call); pi, panto: input + result; codex: none
		{Filter{Tool: "exec_command"}, 4},
		{Filter{Session: "0000", Kinds: map[string]bool{KindText: true}}, 0},
		{Filter{Session: codexID[:8], Roles: map[string]bool{"user": true}}, 6}, // the sessions of codex, pi and panto share a prefix
		{Filter{Project: "/home/u"}, 8 * 2 * len(logs)},
		{Filter{Project: "/home/u/pro"}, 0},
		{Filter{Model: "gpt"}, 8 * 2},
	} {
		hits, _ := search(t, files, []string{"zq"}, nil, Smart, Options{Filter: tc.f})
		if len(hits) != tc.want {
			var got []string
			for _, h := range hits {
				got = append(got, h.Agent+":"+h.Role+":"+h.Kind+":"+h.Tool)
			}
			sort.Strings(got)
			t.Errorf("%+v: %d hits, want %d: %v", tc.f, len(hits), tc.want, got)
		}
	}
}
