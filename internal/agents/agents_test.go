package agents

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/panto-dev/panto/pkg/session"
)

func TestDetect(t *testing.T) {
	for _, c := range []struct {
		line string
		want Format
	}{
		{`{"type":"session","version":1,"id":"019dc5ba-53f6-71a5-ab8f-b1f8709c2572","timestamp":"t","cwd":"/"}`, Panto},
		{`{"type":"session","version":2,"id":"019dc5ba-53f6-71a5-ab8f-b1f8709c2572","timestamp":"t","cwd":"/"}`, Panto},
		{`{"type":"session","version":3,"id":"6f1c2a9e-1b7d-4c1e-9a57-3d1f0b2c4e5a","timestamp":"t","cwd":"/"}`, Pi},
		{`{"type":"session","id":"d703a1a9-0000-4000-8000-000000000000","timestamp":"t","cwd":"/"}`, Pi},
		{`{"type":"message","id":"a1b2c3d4","parentId":null}`, Panto},
		{`{"role":"assistant","content":[]}`, Panto},
		{`{"timestamp":"t","type":"session_meta","payload":{}}`, Codex},
		{`{"type":"summary","summary":"s","leafUuid":"u"}`, Claude},
		{`{"type":"file-history-snapshot","messageId":"m"}`, Claude},
		{`{"parentUuid":null,"sessionId":"s","type":"user"}`, Claude},
		// Entire's own transcript.jsonl: "user" and "assistant" lines with no
		// Claude Code fields (uuid, sessionId, message) are no Claude Code log.
		{`{"v":1,"agent":"claude-code","cli_version":"dev","type":"user","ts":"2026-05-08T17:47:43.274Z","content":[{"id":"e9","text":"hi"}]}`, Unknown},
		{`{"type":"assistant","ts":"t","id":"msg_1","input_tokens":6,"output_tokens":2,"content":[]}`, Unknown},
		{`{"type":"user","message":{"role":"user","content":"hi"}}`, Claude},
		{`{"hello":1}`, Unknown},
		{`[1,2]`, Unknown},
		{`not json`, Unknown},
	} {
		if got := Detect([]byte(c.line)); got != c.want {
			t.Errorf("Detect(%s) = %v, want %v", c.line, got, c.want)
		}
	}
}

// TestSniffPiV7 is a pi session from pi 0.80 on: a version 3 header whose
// id is a UUIDv7, as panto's own header has. Its first line alone cannot
// tell it from a later panto version; the lines after it can (an entry type
// only pi writes, a message with pi's own fields). Every way in (a file, a
// stream, import's strict look, a read) must take it for pi: taken for
// panto, it replayed as one message, imported as nothing ("is a panto
// session already") and cost a tenth of what it did.
func TestSniffPiV7(t *testing.T) {
	pi, err := os.ReadFile("testdata/pi3-v7.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	header, rest, _ := bytes.Cut(pi, []byte("\n"))
	piMessage := rest[bytes.Index(rest, []byte(`{"type":"message"`)):]
	pantoV2 := `{"type":"session","version":2,"id":"019dc5ba-53f6-71a5-ab8f-b1f8709c2572","timestamp":"2026-04-25T17:40:15.990Z","cwd":"/p"}` + "\n" +
		`{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2026-04-25T17:40:16.000Z","provider":"anthropic","model":"m","message":{"role":"user","content":[{"type":"text","text":"hi"}]}}` + "\n"
	for _, c := range []struct {
		name, log string
		want      Format
	}{
		{"pi v3, UUIDv7 id", string(pi), Pi},
		{"pi v3, UUIDv7 id, first a message", string(header) + "\n" + string(piMessage), Pi},
		{"pi v3, UUIDv7 id, blank lines and CRLF", string(header) + "\r\n\n" + string(rest), Pi},
		{"a later panto version", pantoV2, Panto},
		{"a later panto header alone", string(bytes.SplitN([]byte(pantoV2), []byte("\n"), 2)[0]), Panto},
		{"pi v3, random id", strings.Replace(string(pi), "019c9a10-2b3c-7d4e", "019c9a10-2b3c-4d4e", 1), Pi},
		// A first prompt longer than the look: its time in ms is past the
		// cut, but a panto user entry has its provider before its message.
		{"pi v3, UUIDv7 id, a long first prompt", string(header) + "\n" +
			`{"type":"message","id":"3c4d5e6f","parentId":null,"timestamp":"2026-05-04T08:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"` +
			strings.Repeat("x", headLook+100) + `"}],"timestamp":1777881601000}}` + "\n", Pi},
	} {
		b := []byte(c.log)
		if got, err := Sniff(bytes.NewReader(b), int64(len(b))); err != nil || got != c.want {
			t.Errorf("%s: Sniff = %v, %v; want %v", c.name, got, err, c.want)
		}
		if got, err := Identify(bytes.NewReader(b), int64(len(b))); err != nil || got != c.want {
			t.Errorf("%s: Identify = %v, %v; want %v", c.name, got, err, c.want)
		}
		got, r, err := SniffStream(bytes.NewReader(b))
		if err != nil || got != c.want {
			t.Errorf("%s: SniffStream = %v, %v; want %v", c.name, got, err, c.want)
		}
		if again, _ := io.ReadAll(r); !bytes.Equal(again, b) {
			t.Errorf("%s: SniffStream's reader gives %q, want the stream whole", c.name, again)
		}
	}
	got, err := replies(t, pi, Unknown, true)
	if err != nil || len(got) != 2 {
		t.Fatalf("Read(pi3-v7.jsonl, Unknown): %d replies, %v; want 2, nil", len(got), err)
	}
}

// replies reads the replies of b in format f, with or without content.
// usageOf is the sum of the replies' usage.
func usageOf(rs []Reply) session.Usage {
	var sum session.Usage
	for _, r := range rs {
		sum.Input += r.Usage.Input
		sum.Output += r.Usage.Output
		sum.CacheRead += r.Usage.CacheRead
		sum.CacheWrite += r.Usage.CacheWrite
		sum.CacheWrite1h += r.Usage.CacheWrite1h
		sum.Reasoning += r.Usage.Reasoning
	}
	return sum
}

func replies(t testing.TB, b []byte, f Format, content bool) ([]Reply, error) {
	return repliesNamed(t, "x.jsonl", b, f, content)
}

func repliesNamed(t testing.TB, name string, b []byte, f Format, content bool) ([]Reply, error) {
	var out []Reply
	_, _, err := Read(Source{Path: name, R: bytes.NewReader(b), Size: int64(len(b))}, f, Options{Content: content},
		func(*Header) error { return nil },
		func(e *Entry) error {
			if e.Reply != nil {
				out = append(out, *e.Reply)
			}
			return nil
		})
	return out, err
}

func TestBase64Size(t *testing.T) {
	for _, c := range []struct {
		s    string
		want int
	}{{"", 0}, {"QQ==", 1}, {"QUI=", 2}, {"QUJD", 3}, {"iVBORw0KGgo=", 8}, {"QUJDRA", 4}} {
		if got := base64Size(c.s); got != c.want {
			t.Errorf("base64Size(%q) = %d, want %d", c.s, got, c.want)
		}
	}
}

func TestSessionIDDeterministic(t *testing.T) {
	a := sessionID("2026-02-10T10:00:00.000Z", "claude\x00s1")
	if a != sessionID("2026-02-10T10:00:00.000Z", "claude\x00s1") || a == sessionID("2026-02-10T10:00:00.000Z", "claude\x00s2") {
		t.Fatal("the session id is not a function of its source")
	}
	if !isV7(a) || !strings.HasPrefix(a, "019c46fe-") {
		t.Fatalf("%s is not the UUIDv7 of 2026-02-10T10:00:00Z", a)
	}
}

// stopReasons are the stop reasons a Reply holds (session format).
var stopReasons = map[string]bool{"": true, "stop": true, "length": true, "toolUse": true, "error": true}

// check converts b and holds the result to the format: every line a valid
// header or entry, no response counted twice, and the replies a cost
// report reads (no content) the same as those of the conversion.
func check(t *testing.T, b []byte, f Format) { checkNamed(t, "x.jsonl", b, f) }

// checkNamed is check of a log at path name: readers take ids from names.
func checkNamed(t *testing.T, name string, b []byte, f Format) {
	var out bytes.Buffer
	_, st, err := Read(Source{Path: name, R: bytes.NewReader(b), Size: int64(len(b))}, f, Options{Content: true},
		func(h *Header) error { out.Write(h.Line()); return nil },
		func(e *Entry) error { out.Write(e.AppendLine(nil)); return nil })
	if errors.Is(err, ErrNotALog) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	_ = st
	ids := map[string]bool{}
	for i, line := range bytes.Split(bytes.TrimSuffix(out.Bytes(), []byte("\n")), []byte("\n")) {
		c := session.Classify(line)
		if i == 0 && c.Kind != session.KindHeader || i > 0 && c.Kind != session.KindMessage && c.Kind != session.KindUnknown {
			t.Fatalf("line %d is %v (%s): %s", i+1, c.Kind, c.Problem, line)
		}
		if i > 0 {
			if ids[c.ID] {
				t.Fatalf("line %d repeats id %s", i+1, c.ID)
			}
			ids[c.ID] = true
		}
	}
	with, err := repliesNamed(t, name, b, f, true)
	if err != nil {
		t.Fatal(err)
	}
	without, err := repliesNamed(t, name, b, f, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(with) != len(without) {
		t.Fatalf("%d replies with content, %d without", len(with), len(without))
	}
	keys := map[string]bool{}
	for i := range with {
		if with[i] != without[i] {
			t.Fatalf("reply %d: %+v with content, %+v without", i, with[i], without[i])
		}
		// Two reads of the log share the pooled line reader, so views kept
		// into its buffer agree with each other: their bytes, garbage in
		// the poison build (invalid UTF-8), tell them apart.
		if r := with[i]; !utf8.ValidString(r.Key) || !utf8.ValidString(r.Mode) || !stopReasons[r.StopReason] {
			t.Fatalf("reply %d: key %q, mode %q, stop reason %q: a view into a line read since?", i, r.Key, r.Mode, r.StopReason)
		}
		if k := with[i].Key; k != "" {
			if keys[k] {
				t.Fatalf("response %s counted twice", k)
			}
			keys[k] = true
		}
	}
}

func TestFixtures(t *testing.T) {
	for _, c := range []struct {
		file    string
		f       Format
		replies int
		usage   session.Usage // their sum
	}{
		// Hand-worked in testdata/script/agents.txtar: the last copy of
		// msg_A; msg_S and msg_T from progress lines; msg_C synthetic.
		{"claude.jsonl", Claude, 5, session.Usage{Input: 3 + 50 + 70 + 5, Output: 455 + 20 + 30 + 40, CacheRead: 1000, CacheWrite: 1000, CacheWrite1h: 600}},
		{"codex.jsonl", Codex, 4, session.Usage{Input: 1850, Output: 235, CacheRead: 2150, Reasoning: 75}},
		{"codex-fork.jsonl", Codex, 2, session.Usage{Input: 500, Output: 30, CacheRead: 1000}},
		{"pi3.jsonl", Pi, 2, session.Usage{Input: 3775, Output: 151, CacheRead: 3100, CacheWrite: 50}},
		{"pi1.jsonl", Pi, 1, session.Usage{Input: 2775, Output: 141}},
	} {
		b, err := os.ReadFile("testdata/" + c.file)
		if err != nil {
			t.Fatal(err)
		}
		// The same log with its keys written with escapes, as JSON allows
		// ("\u0074ype" is "type"): the same replies, not none.
		escaped := strings.NewReplacer(`"type":`, `"\u0074ype":`, `"usage":`, `"\u0075sage":`, `"message":`, `"\u006dessage":`).Replace(string(b))
		for i, b := range [][]byte{b, []byte(escaped)} {
			check(t, b, c.f)
			rs, err := replies(t, b, Unknown, false)
			if err != nil {
				t.Fatal(err)
			}
			sum := usageOf(rs)
			if len(rs) != c.replies || sum != c.usage {
				t.Errorf("%s (escaped keys: %v): %d replies, usage %+v; want %d, %+v", c.file, i == 1, len(rs), sum, c.replies, c.usage)
			}
		}
	}
}

func fuzz(f *testing.F, format Format, seeds ...string) {
	for _, s := range seeds {
		b, err := os.ReadFile("testdata/" + s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add("rollout-2026-02-12T20-29-40-019c538b-8b20-7e4f-9d0a-69b09d72c0d7.jsonl", b)
		f.Add("abcdefghijklmnopqrstuvwxyz012345.jsonl", b) // 38 bytes: once a panic
	}
	// The file name varies too: a reader takes a session id from it.
	f.Fuzz(func(t *testing.T, name string, b []byte) { checkNamed(t, name, b, format) })
}

func FuzzClaude(f *testing.F) { fuzz(f, Claude, "claude.jsonl", "claude-compact.jsonl") }
func FuzzCodex(f *testing.F) {
	fuzz(f, Codex, "codex.jsonl", "codex-fork.jsonl", "codex-compact.jsonl", "codex-compact-local.jsonl",
		"codex-threads/tree/rollout-2026-03-01T12-00-00-019ca945-0a00-7000-8000-0000000000d1.jsonl",
		"codex-threads/tree/rollout-2026-03-01T11-00-00-019ca90e-1b80-7000-8000-0000000000f1.jsonl",
		"codex-threads/paged/rollout-2026-03-01T11-00-00-019ca8d7-2d00-7000-8000-0000000000a1_019ca90e-1b80-7000-8000-0000000000a2.jsonl")
}
func FuzzPi(f *testing.F) {
	fuzz(f, Pi, "pi3.jsonl", "pi1.jsonl", "pi-compact.jsonl", "pi1-compact.jsonl")
}
