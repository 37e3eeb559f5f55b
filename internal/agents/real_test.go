package agents

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/panto-dev/panto/internal/fsck"
	"github.com/panto-dev/panto/internal/replay"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/tidwall/gjson"
)

// conversion is what a log becomes: the panto session, the replayed path's
// messages, and what the reader counted.
type conversion struct {
	session []byte
	header  gjson.Result
	path    []gjson.Result // the messages of the replayed path
	stats   *Stats
	fsck    []fsck.Finding
}

func convert(t testing.TB, name string, b []byte) conversion {
	t.Helper()
	tmp, n, st, err := Convert(Source{Path: name, R: bytes.NewReader(b), Size: int64(len(b))}, Unknown)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	defer tmp.Close()
	out, err := io.ReadAll(io.NewSectionReader(tmp, 0, n))
	if err != nil {
		t.Fatal(err)
	}
	c := conversion{session: out, stats: st}
	c.header = gjson.ParseBytes(out[:bytes.IndexByte(out, '\n')])
	s, err := replay.Open(bytes.NewReader(out), int64(len(out)))
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := s.Leaf("")
	if err != nil {
		t.Fatal(err)
	}
	if leaf >= 0 {
		s.EachLine(s.Log.Path(leaf), func(i int32, line []byte) error {
			if s.Log.Nodes[i].Kind == session.KindMessage {
				c.path = append(c.path, gjson.GetBytes(line, "message"))
			}
			return nil
		})
	}
	a, err := fsck.Check(bytes.NewReader(out), nil)
	if err != nil {
		t.Fatal(err)
	}
	c.fsck = a.Findings
	return c
}

// unanswered is the tool calls of the path that no result on it answers,
// but those of its last reply (a conversation may stop there).
func (c conversion) unanswered() []string {
	answered := map[string]bool{}
	var uses []string
	last := -1
	for i, m := range c.path {
		m.Get("content").ForEach(func(_, b gjson.Result) bool {
			switch b.Get("type").Str {
			case "toolUse":
				uses = append(uses, b.Get("id").Str)
			case "toolResult":
				answered[b.Get("toolUseId").Str] = true
			}
			return true
		})
		if m.Get("role").Str == "assistant" {
			last = i
		}
	}
	var open []string
	for _, u := range uses {
		if !answered[u] && !strings.Contains(c.path[last].Raw, `"id":"`+u+`"`) {
			open = append(open, u)
		}
	}
	return open
}

func (c conversion) lastText() string {
	for i := len(c.path) - 1; i >= 0; i-- {
		if t := replay.Text(c.path[i]); t != "" {
			return t
		}
	}
	return ""
}

// The structures real logs have (SPEC §11), each in a fixture of its own.
func TestRealStructures(t *testing.T) {
	for _, c := range []struct {
		file      string
		time      string // the header's: the log's first timestamp
		messages  int    // on the replayed path
		last      string // the text the path ends with
		synthetic int    // interrupted calls answered
		split     int    // lines holding several objects
		orphaned  int    // results whose call is not in the log
	}{
		// Parallel calls whose results hang off different copies, written on
		// one line, and a final line without "\n".
		{"claude-parallel.jsonl", "2026-03-01T09:00:00.000Z", 5, "a says A, b says B.", 0, 1, 0},
		{"claude-interrupted.jsonl", "2026-03-02T09:00:00.000Z", 5, "Stopped.", 1, 0, 0},
		{"pi-interrupted.jsonl", "2026-03-03T08:00:00.000Z", 5, "OK.", 1, 0, 0},
		{"codex-interrupted.jsonl", "2026-03-04T07:00:00.000Z", 5, "hi", 1, 0, 0},
		{"claude-old.jsonl", "2025-05-01T10:00:00.000Z", 2, "", 0, 0, 0},
		// Logs that begin after a call, with its result (Entire's trimmed
		// captures, a copied tail): the result is kept as text that names
		// the call, not as a result no call precedes.
		{"claude-orphan.jsonl", "2026-03-05T09:00:00.000Z", 4, "Added.", 0, 0, 1},
		{"pi-orphan.jsonl", "2026-03-06T08:00:00.000Z", 3, "Done.", 0, 0, 1},
		{"codex-orphan.jsonl", "2026-03-07T07:00:00.000Z", 3, "Then done.", 0, 0, 1},
	} {
		b, err := os.ReadFile("testdata/" + c.file)
		if err != nil {
			t.Fatal(err)
		}
		got := convert(t, c.file, b)
		if ts := got.header.Get("timestamp").Str; ts != c.time {
			t.Errorf("%s: header time %s, want %s", c.file, ts, c.time)
		}
		if len(got.stats.Corrupt) > 0 || got.stats.Torn > 0 {
			t.Errorf("%s: corrupt lines %v, torn %d: every line is read", c.file, got.stats.Corrupt, got.stats.Torn)
		}
		if len(got.path) != c.messages || got.lastText() != c.last {
			t.Errorf("%s: %d messages on the path ending %q, want %d ending %q", c.file, len(got.path), got.lastText(), c.messages, c.last)
		}
		if open := got.unanswered(); len(open) > 0 {
			t.Errorf("%s: tool calls unanswered on the path: %v", c.file, open)
		}
		if len(got.fsck) > 0 {
			t.Errorf("%s: the conversion is not fsck-clean: %+v", c.file, got.fsck)
		}
		if n := got.stats.Counts["interrupted tool calls answered"]; n != c.synthetic {
			t.Errorf("%s: %d interrupted calls answered, want %d", c.file, n, c.synthetic)
		}
		if n := bytes.Count(got.session, []byte(`"synthetic":true`)); n != c.synthetic {
			t.Errorf("%s: %d synthetic results, want %d", c.file, n, c.synthetic)
		}
		if n := got.stats.Counts[OrphanedCount]; n != c.orphaned {
			t.Errorf("%s: %d results with no call kept as text, want %d", c.file, n, c.orphaned)
		}
		if n := bytes.Count(got.session, []byte(`[the result of a call that is not in the log: `)); n != c.orphaned {
			t.Errorf("%s: %d results named as such in the text, want %d", c.file, n, c.orphaned)
		}
		if n := got.stats.Counts["lines holding several objects, read as each"]; n != c.split {
			t.Errorf("%s: %d lines split, want %d", c.file, n, c.split)
		}
		check(t, b, Unknown)
	}
}

// A Claude Code log larger than the line reader's buffer (256 KiB): the
// header keeps the log's first time, not what a later read left in the
// buffer, and it does not move as the log grows.
func TestClaudeHeaderTimeOfLargeLog(t *testing.T) {
	b, err := os.ReadFile("testdata/claude-interrupted.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var id string
	for _, n := range []int{300, 2000, 2600} {
		var log bytes.Buffer
		log.Write(b)
		for i := range n {
			fmt.Fprintf(&log, `{"parentUuid":null,"sessionId":"5b1f0c2e-7a4d-4c8e-9f10-2b3c4d5e6f70","type":"user","message":{"role":"user","content":"%s"},"uuid":"u-%d","timestamp":"2026-03-02T10:%02d:%02d.000Z"}`+"\n", strings.Repeat("x", 1000), i, i/60%60, i%60)
		}
		got := convert(t, "big.jsonl", log.Bytes())
		if ts := got.header.Get("timestamp").Str; ts != "2026-03-02T09:00:00.000Z" {
			t.Fatalf("%d lines: header time %q, want the first line's", n, ts)
		}
		if id == "" {
			id = got.header.Get("id").Str
		} else if got.header.Get("id").Str != id {
			t.Fatalf("%d lines: the session id moved from %s to %s as the log grew", n, id, got.header.Get("id").Str)
		}
	}
}

// Lines a reader cannot read are counted; a final line that is not
// complete is torn; JSON objects of no known format are no log.
func TestLeftOut(t *testing.T) {
	b, err := os.ReadFile("testdata/pi-interrupted.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	bad := append(append([]byte{}, b...), "{\"type\":\"message\",\"id\":\"a0000005\"\nnot json\n{\"type\":\"mess"...)
	got := convert(t, "bad.jsonl", bad)
	if fmt.Sprint(got.stats.Corrupt) != "[6 7]" || got.stats.Torn != 8 {
		t.Errorf("corrupt lines %v, torn %d; want [6 7] and 8", got.stats.Corrupt, got.stats.Torn)
	}
	// A torn first line is looked past to tell the format.
	claude, err := os.ReadFile("testdata/claude.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	torn := append([]byte("{\"parentUuid\":nu\n"), claude...)
	if f, err := Sniff(bytes.NewReader(torn), int64(len(torn))); f != Claude || err != nil {
		t.Errorf("a Claude Code transcript with a torn first line is told %v (%v)", f, err)
	}
	if f, _ := Identify(bytes.NewReader(torn), int64(len(torn))); f != Claude {
		t.Errorf("Identify: a Claude Code transcript with a torn first line is told %v", f)
	}
	for _, b := range []string{"", "\n\n", "hello\n", "\x00\xff", "{\"type\":\"message\",\"id\":\"a1b2c3d4\"}\n"} {
		if f, _ := Identify(strings.NewReader(b), int64(len(b))); f != Unknown {
			t.Errorf("Identify(%q) = %v, want unknown (no session file)", b, f)
		}
	}
	// Copilot CLI's events (random ids, dotted types) are no panto entries.
	for _, name := range []string{"events-other.jsonl"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if f := Detect(b[:bytes.IndexByte(b, '\n')]); f != Copilot {
			t.Errorf("%s is told %v", name, f)
		}
	}
}

// A Codex rollout with no session_meta first takes its id from its file
// name, whatever its length (37 to 41 bytes once sliced out of bounds).
func TestCodexIDFromAnyName(t *testing.T) {
	line := []byte(`{"timestamp":"2026-02-12T20:29:40.300Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}` + "\n")
	for n := 0; n <= 80; n++ {
		name := strings.Repeat("a", n) + ".jsonl"
		checkNamed(t, name, line, Codex)
		checkNamed(t, "/d/"+name, line, Unknown)
	}
	if got, want := codexFileID("/x/rollout-2026-02-12T20-29-40-019c538b-8b20-7e4f-9d0a-69b09d72c0d7.jsonl"), "019c538b-8b20-7e4f-9d0a-69b09d72c0d7"; got != want {
		t.Errorf("id %q, want %q", got, want)
	}
}

// A line of many objects gives each an id of its own at once: the ids of
// a line's objects once collided, each draw with all the others' (hours
// for a line of a million "{}").
func TestManyObjectsOnALine(t *testing.T) {
	for _, file := range []string{"pi3.jsonl", "claude.jsonl", "codex.jsonl"} {
		b, err := os.ReadFile("testdata/" + file)
		if err != nil {
			t.Fatal(err)
		}
		i := bytes.IndexByte(b, '\n') + 1
		many := append(append(append([]byte{}, b[:i]...), bytes.Repeat([]byte(`{"type":"x"}`), 20000)...), '\n')
		many = append(many, b[i:]...)
		got := convert(t, file, many) // before: hours (the test's timeout)
		if n := bytes.Count(got.session, []byte(`"type":"claude.x"`)) + bytes.Count(got.session, []byte(`"type":"pi.x"`)) + bytes.Count(got.session, []byte(`"type":"codex.x"`)); n != 20000 {
			t.Errorf("%s: %d of the line's 20000 objects kept", file, n)
		}
	}
}
