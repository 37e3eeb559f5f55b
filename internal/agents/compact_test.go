package agents

import (
	"bytes"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/panto-dev/panto/internal/fsck"
	"github.com/panto-dev/panto/internal/replay"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/tidwall/gjson"
)

// brief is a message as role and text, its tool blocks named: what a test
// compares of what the model is sent.
func brief(msg []byte) string {
	m := gjson.ParseBytes(msg)
	var parts []string
	m.Get("content").ForEach(func(_, b gjson.Result) bool {
		switch b.Get("type").Str {
		case "text":
			parts = append(parts, b.Get("text").Str)
		case "toolUse":
			parts = append(parts, "toolUse "+b.Get("id").Str)
		case "toolResult":
			parts = append(parts, "toolResult "+b.Get("toolUseId").Str)
		}
		return true
	})
	return m.Get("role").Str + ": " + strings.Join(parts, " | ")
}

// TestCompaction: each agent's compaction becomes a panto compaction entry
// (SPEC §13), so that the conversion replays to what the agent itself sends
// after it (the summary, then what it keeps), the whole path stays there,
// every reply is counted, and the session is fsck-clean.
func TestCompaction(t *testing.T) {
	const intro = replay.SummaryIntro
	localOnly := func(t testing.TB, b []byte) []byte { // a Codex of before replacement_history: the summary alone
		out := regexp.MustCompile(`,"replacement_history":\[.*?\]\}\}`).ReplaceAll(b, []byte("}}"))
		if bytes.Contains(out, []byte("replacement_history")) {
			t.Fatal("the edit left the replacement history")
		}
		return out
	}
	withoutLines := func(drop ...int) func(testing.TB, []byte) []byte {
		return func(_ testing.TB, b []byte) []byte {
			lines := bytes.SplitAfter(b, []byte("\n"))
			var out []byte
			for i, l := range lines {
				if !slices.Contains(drop, i+1) {
					out = append(out, l...)
				}
			}
			return out
		}
	}
	for _, c := range []struct {
		name, file string
		edit       func(testing.TB, []byte) []byte
		sent       []string // what the model is sent after the last compaction
		full       int      // the messages of the path
		compacts   []string // each compaction: the text of the entry it keeps from ("" none), its tokensBefore
		replies    int
		usage      session.Usage
	}{
		{name: "pi", file: "pi-compact.jsonl",
			sent:     []string{"user: " + intro + "We said first and one.", "user: second", "assistant: two", "user: third", "assistant: three"},
			full:     6,
			compacts: []string{"user: second 330"},
			replies:  3, usage: session.Usage{Input: 600, Output: 60}},
		{name: "pi: kept on another branch keeps nothing", file: "pi-compact.jsonl",
			edit: func(_ testing.TB, b []byte) []byte {
				return bytes.Replace(b, []byte(`"parentId":"10000004","timestamp":"2026-03-02T10:00:05.000Z"`), []byte(`"parentId":"10000002","timestamp":"2026-03-02T10:00:05.000Z"`), 1)
			},
			sent:     []string{"user: " + intro + "We said first and one.", "user: third", "assistant: three"},
			full:     4,
			compacts: []string{" 330"},
			replies:  3, usage: session.Usage{Input: 600, Output: 60}},
		{name: "pi v1: kept by index, then nothing kept", file: "pi1-compact.jsonl",
			sent:     []string{"user: " + intro + "All of it.", "user: fourth"},
			full:     7,
			compacts: []string{"user: second 330", " 660"},
			replies:  3, usage: session.Usage{Input: 600, Output: 60}},
		{name: "claude: nothing kept", file: "claude-compact.jsonl",
			sent:     []string{"user: " + intro + "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\nWe listed the files: a.txt.", "user: second", "assistant: two"},
			full:     6,
			compacts: []string{" 330"},
			replies:  3, usage: session.Usage{Input: 600, Output: 60}},
		{name: "claude: a preserved segment is kept", file: "claude-compact.jsonl", edit: func(_ testing.TB, b []byte) []byte {
			b = bytes.Replace(b, []byte(`"preTokens":330}`), []byte(`"preTokens":330,"preservedSegment":{"headUuid":"00000000-0000-4000-8000-000000000002","anchorUuid":"00000000-0000-4000-8000-000000000006","tailUuid":"00000000-0000-4000-8000-000000000004"}}`), 1)
			// What follows goes on from the segment's tail.
			return bytes.Replace(b, []byte(`{"parentUuid":"00000000-0000-4000-8000-000000000006"`), []byte(`{"parentUuid":"00000000-0000-4000-8000-000000000004"`), 1)
		},
			sent:     []string{"user: " + intro + "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\nWe listed the files: a.txt.", "assistant: toolUse toolu_1", "user: toolResult toolu_1", "assistant: one", "user: second", "assistant: two"},
			full:     6,
			compacts: []string{"assistant: toolUse toolu_1 330"},
			replies:  3, usage: session.Usage{Input: 600, Output: 60}},
		{name: "claude: a call open at the compaction is answered before it", file: "claude-compact.jsonl", edit: withoutLines(3, 4),
			sent:     []string{"user: " + intro + "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\nWe listed the files: a.txt.", "user: second", "assistant: two"},
			full:     5,
			compacts: []string{" 330"},
			replies:  2, usage: session.Usage{Input: 400, Output: 40}},
		{name: "codex remote: the replacement history", file: "codex-compact.jsonl",
			sent:     []string{"system: <permissions instructions>", "user: " + intro + CodexEncrypted, "user: first", "user: second", "assistant: two"},
			full:     8,
			compacts: []string{" 110"},
			replies:  3, usage: session.Usage{Input: 100, CacheRead: 50, Output: 15}},
		{name: "codex local: the replacement history but its summary", file: "codex-compact-local.jsonl",
			sent:     []string{"system: <permissions instructions>", "user: " + intro + "We listed the files: a.txt.", "user: first", "user: second", "assistant: two"},
			full:     8,
			compacts: []string{" 110"},
			replies:  3, usage: session.Usage{Input: 100, CacheRead: 50, Output: 15}},
		{name: "codex local, no replacement history", file: "codex-compact-local.jsonl", edit: localOnly,
			sent:     []string{"system: <permissions instructions>", "user: " + intro + "We listed the files: a.txt.", "user: second", "assistant: two"},
			full:     7,
			compacts: []string{" 110"},
			replies:  3, usage: session.Usage{Input: 100, CacheRead: 50, Output: 15}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := os.ReadFile("testdata/" + c.file)
			if err != nil {
				t.Fatal(err)
			}
			if c.edit != nil {
				b = c.edit(t, b)
			}
			check(t, b, Unknown)
			conv := convert(t, c.file, b)
			for _, f := range conv.fsck {
				if f.Severity != fsck.Info {
					t.Errorf("fsck: %+v", f)
				}
			}
			s, err := replay.Open(bytes.NewReader(conv.session), int64(len(conv.session)))
			if err != nil {
				t.Fatal(err)
			}
			leaf, err := s.Leaf("")
			if err != nil {
				t.Fatal(err)
			}
			path := s.Log.Path(leaf)
			var sent []string
			if err := s.EachSent(path, func(_ int32, msg []byte) error { sent = append(sent, brief(msg)); return nil }); err != nil {
				t.Fatal(err)
			}
			if strings.Join(sent, "\n") != strings.Join(c.sent, "\n") {
				t.Errorf("sent:\n%s\nwant:\n%s", strings.Join(sent, "\n"), strings.Join(c.sent, "\n"))
			}
			if len(conv.path) != c.full {
				t.Errorf("%d messages on the path, want %d", len(conv.path), c.full)
			}
			texts := map[string]string{} // entry id → its message, briefly
			var compacts []string
			for _, line := range bytes.Split(bytes.TrimSuffix(conv.session, []byte("\n")), []byte("\n"))[1:] {
				e := gjson.ParseBytes(line)
				switch e.Get("type").Str {
				case "message":
					texts[e.Get("id").Str] = brief([]byte(e.Get("message").Raw))
				case "compaction":
					compacts = append(compacts, texts[e.Get("firstKeptEntryId").Str]+" "+e.Get("tokensBefore").Raw)
					if e.Get("summary").Type != gjson.String {
						t.Errorf("a compaction with no summary: %s", line)
					}
				}
			}
			if strings.Join(compacts, "\n") != strings.Join(c.compacts, "\n") {
				t.Errorf("compactions %q, want %q", compacts, c.compacts)
			}
			rs, err := replies(t, b, Unknown, false)
			if err != nil {
				t.Fatal(err)
			}
			sum := usageOf(rs)
			if len(rs) != c.replies || sum != c.usage {
				t.Errorf("%d replies, usage %+v; want %d, %+v", len(rs), sum, c.replies, c.usage)
			}
			// Deterministic: the same log converts to the same bytes.
			if again := convert(t, c.file, b); !bytes.Equal(again.session, conv.session) {
				t.Error("a second conversion differs from the first")
			}
		})
	}
}

// TestCompactionKeepsIDs: the entries of a log imported when panto kept
// compactions as entries of the agent's own type keep their ids now that
// they are compaction entries, so re-importing such an import cuts none of
// them (the store's comparison is by id) and a grown log appends.
func TestCompactionKeepsIDs(t *testing.T) {
	for _, c := range []struct{ file, old, was string }{
		{"pi-compact.jsonl", `"type":"compaction"`, `"type":"compaction_was"`},
		{"pi1-compact.jsonl", `"type":"compaction"`, `"type":"compaction_was"`},
		{"claude-compact.jsonl", `"isCompactSummary":true,`, ``},
		{"codex-compact.jsonl", `"type":"compacted"`, `"type":"compacted_was"`},
		{"codex-compact-local.jsonl", `"type":"compacted"`, `"type":"compacted_was"`},
	} {
		b, err := os.ReadFile("testdata/" + c.file)
		if err != nil {
			t.Fatal(err)
		}
		ids := func(b []byte) map[string]bool {
			out := map[string]bool{}
			conv := convert(t, c.file, b)
			for _, line := range bytes.Split(bytes.TrimSuffix(conv.session, []byte("\n")), []byte("\n"))[1:] {
				out[gjson.GetBytes(line, "id").Str] = true
			}
			return out
		}
		before := bytes.ReplaceAll(b, []byte(c.old), []byte(c.was))
		if bytes.Equal(before, b) {
			t.Fatalf("%s: no %s", c.file, c.old)
		}
		now := ids(b)
		for id := range ids(before) {
			if !now[id] {
				t.Errorf("%s: entry %s of the conversion before compactions is gone", c.file, id)
			}
		}
	}
}
