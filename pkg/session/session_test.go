package session

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		name, line string
		kind       Kind
		problem    string
	}{
		{"header", `{"type":"session","version":1,"id":"019dc5ba-53f6-71a5-ab8f-b1f8709c2572","timestamp":"t","cwd":"/p"}`, KindHeader, ""},
		{"header crlf", `{"type":"session","version":1,"id":"x"}` + "\r", KindHeader, ""},
		{"header no version", `{"type":"session","id":"x"}`, KindInvalid, `header has no integer "version"`},
		{"header float version", `{"type":"session","version":1.5,"id":"x"}`, KindInvalid, `header has no integer "version"`},
		{"user", `{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"t","provider":"p","model":"m","message":{"role":"user","content":[{"type":"text","text":"hi"}]}}`, KindMessage, ""},
		{"user no stamp", `{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"t","message":{"role":"user","content":[]}}`, KindInvalid, `user entry has no "provider" and "model" stamp`},
		{"assistant", `{"type":"message","id":"b","parentId":"a","timestamp":"t","message":{"role":"assistant","content":[{"type":"thinking","thinking":"…","signature":"s"},{"type":"toolUse","id":"1","name":"bash","input":"{\"c\":1}"},{"type":"redactedThinking","data":"d"}],"provider":"p","model":"m","stopReason":"toolUse","usage":{"input":1,"output":2,"cacheRead":3}}}`, KindMessage, ""},
		{"tool result", `{"type":"message","id":"c","parentId":"b","timestamp":"t","provider":"p","model":"m","message":{"role":"user","content":[{"type":"toolResult","toolUseId":"1","content":"out"}]}}`, KindMessage, ""},
		{"no role", `{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"content":[]}}`, KindInvalid, `session: invalid message: "role" must be system, user or assistant`},
		{"bad block", `{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"system","content":[{"type":"video"}]}}`, KindInvalid, `session: invalid message: content block 1 has unknown type "video"`},
		{"bad input", `{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"assistant","content":[{"type":"toolUse","id":"1","name":"n","input":"{"}],"provider":"p","model":"m"}}`, KindInvalid, `session: invalid message: toolUse block 1: "input" is not JSON text`},
		{"bad stop", `{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"assistant","content":[],"provider":"p","model":"m","stopReason":"end_turn"}}`, KindInvalid, `session: invalid message: "stopReason" must be stop, length, toolUse or error`},
		{"negative usage", `{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"assistant","content":[],"provider":"p","model":"m","usage":{"input":-1}}}`, KindInvalid, `session: invalid message: usage.input must be a non-negative integer`},
		{"no id", `{"type":"message","parentId":null,"timestamp":"t","message":{"role":"system","content":[]}}`, KindInvalid, `entry has no "id"`},
		{"parent number", `{"type":"message","id":"a","parentId":7,"timestamp":"t","message":{"role":"system","content":[]}}`, KindInvalid, `entry has no "parentId" (a string or null)`},
		{"unknown type", `{"type":"compaction","id":"z","parentId":"a","summary":"…"}`, KindUnknown, ""},
		{"no type", `{"id":"z"}`, KindInvalid, `no string "type"`},
		{"torn", `{"type":"message","id":"a1`, KindCorrupt, "not valid JSON"},
		{"nul", "\x00\x00\x00", KindCorrupt, "not valid JSON"},
		{"array", `[1,2]`, KindCorrupt, "not a JSON object"},
		{"empty", ``, KindCorrupt, "not valid JSON"},
		{"bom", "\xef\xbb\xbf{\"type\":\"session\",\"version\":1,\"id\":\"x\"}", KindCorrupt, "not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Classify([]byte(tt.line))
			if got.Kind != tt.kind || got.Problem != tt.problem {
				t.Fatalf("Classify = %v %q, want %v %q", got.Kind, got.Problem, tt.kind, tt.problem)
			}
		})
	}
}

// TestReplyUsage: the usage of an assistant message is read in the walk
// that validates it, wherever it is among the message's keys.
func TestReplyUsage(t *testing.T) {
	const head = `{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{`
	tests := []struct {
		name, message string
		usage         Usage
		has           bool
		problem       string
	}{
		{"all counters", `"role":"assistant","content":[],"provider":"p","model":"m","usage":{"input":1,"output":20,"cacheRead":300,"cacheWrite":4000,"reasoning":5,"cacheWrite1h":60}`, Usage{1, 20, 300, 4000, 5, 60}, true, ""},
		{"usage before role", `"usage":{"output":7,"other":{"x":[1]},"input":0},"role":"assistant","content":[],"provider":"p","model":"m"`, Usage{Output: 7}, true, ""},
		{"escaped keys", `"role":"assistant","content":[],"provider":"p","model":"m","\u0075sage":{"\u0069nput":2,"output":3}`, Usage{Input: 2, Output: 3}, true, ""},
		{"first usage wins", `"role":"assistant","content":[],"provider":"p","model":"m","usage":{"input":1,"output":0},"usage":{"input":9,"output":0}`, Usage{Input: 1}, true, ""},
		{"last counter wins", `"role":"assistant","content":[],"provider":"p","model":"m","usage":{"input":1,"input":9,"output":0}`, Usage{Input: 9}, true, ""},
		{"integral float", `"role":"assistant","content":[],"provider":"p","model":"m","usage":{"input":1e3,"output":2.0}`, Usage{Input: 1000, Output: 2}, true, ""},
		{"string counter", `"role":"assistant","content":[],"provider":"p","model":"m","usage":{"input":"1","output":2}`, Usage{}, false, "session: invalid message: usage.input must be a non-negative integer"},
		{"not an object", `"role":"assistant","content":[],"provider":"p","model":"m","usage":[1]`, Usage{}, false, `session: invalid message: "usage" must be an object`},
		// hostile #15: a usage without input and output priced as a known $0
		{"empty usage", `"role":"assistant","content":[],"provider":"p","model":"m","usage":{}`, Usage{}, false, "session: invalid message: usage needs \"input\" and \"output\" (unknown is not zero)"},
		{"no output", `"role":"assistant","content":[],"provider":"p","model":"m","usage":{"input":3}`, Usage{}, false, "session: invalid message: usage needs \"input\" and \"output\" (unknown is not zero)"},
		{"part over whole", `"role":"assistant","content":[],"provider":"p","model":"m","usage":{"input":0,"output":1,"reasoning":2}`, Usage{Output: 1, Reasoning: 2}, false, "session: invalid message: usage.reasoning (2) is a part of usage.output (1) and cannot exceed it"},
		{"role error first", `"role":"bot","content":[],"usage":{"input":"x"}`, Usage{}, false, `session: invalid message: "role" must be system, user or assistant`},
		{"no usage", `"role":"assistant","content":[],"provider":"p","model":"m"`, Usage{}, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Classify([]byte(head + tt.message + `}}`))
			if c.Reply.Usage != tt.usage || c.Reply.HasUsage != tt.has || c.Problem != tt.problem {
				t.Fatalf("usage %+v (has %v), problem %q; want %+v (has %v), %q", c.Reply.Usage, c.Reply.HasUsage, c.Problem, tt.usage, tt.has, tt.problem)
			}
			_, rep, err := ReadMessage([]byte(`{` + tt.message + `}`))
			if rep.Usage != tt.usage || rep.HasUsage != tt.has || (err == nil) != (tt.problem == "") {
				t.Fatalf("ReadMessage: usage %+v (has %v), %v", rep.Usage, rep.HasUsage, err)
			}
		})
	}
}

func TestEntryLineRoundTrip(t *testing.T) {
	msg := []byte(`{"role":"user","content":[{"type":"text","text":"a <b> & \u00e9 ` + "\xff" + `"}],"future":{"x":1.50}}`)
	e := Entry{ID: "a1b2c3d4", Timestamp: "2026-04-25T14:00:01.000Z", Provider: "anthropic", Model: "m", Message: msg}
	line := e.AppendLine(nil)
	want := `{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2026-04-25T14:00:01.000Z","provider":"anthropic","model":"m","message":` + string(msg) + "}\n"
	if string(line) != want {
		t.Fatalf("line\n%s\nwant\n%s", line, want)
	}
	c := Classify(line[:len(line)-1])
	if c.Kind != KindMessage || c.ID != "a1b2c3d4" || c.Provider != "anthropic" || c.Role != "user" {
		t.Fatalf("read back %+v", c)
	}
	// Writing the read fields again gives the same bytes.
	again := Entry{ID: c.ID, ParentID: c.ParentID, Timestamp: c.Timestamp, Provider: c.Provider, Model: c.Model, Message: msg}.AppendLine(nil)
	if !bytes.Equal(again, line) {
		t.Fatalf("round trip changed the line:\n%s\n%s", line, again)
	}
}

func TestHeaderLine(t *testing.T) {
	got := string(Header{ID: "019dc5ba-53f6-71a5-ab8f-b1f8709c2572", Timestamp: Timestamp(time.Date(2026, 4, 25, 17, 40, 15, 990e6, time.FixedZone("x", 3600))), Cwd: "/home/u/<proj>"}.AppendLine(nil))
	want := `{"type":"session","version":1,"id":"019dc5ba-53f6-71a5-ab8f-b1f8709c2572","timestamp":"2026-04-25T16:40:15.990Z","cwd":"/home/u/<proj>"}` + "\n"
	if got != want {
		t.Fatalf("got %s want %s", got, want)
	}
}

func TestNewEntryID(t *testing.T) {
	id, err := NewEntryID(func(string) bool { return false })
	if err != nil || len(id) != 8 || strings.Trim(id, "0123456789abcdef") != "" {
		t.Fatalf("id %q %v: want 8 lowercase hex", id, err)
	}
	draws := 0
	id, err = NewEntryID(func(s string) bool { draws++; return len(s) == 8 })
	if err != nil || !IsUUID(id) || draws != 100 {
		t.Fatalf("after collisions: %q after %d draws (%v), want a UUID after 100", id, draws, err)
	}
}

func TestHexID(t *testing.T) {
	for in, want := range map[string]int64{"00000000": 0, "a1b2c3d4": 0xa1b2c3d4, "ffffffff": 0xffffffff, "A1B2C3D4": -1, "a1b2c3d": -1, "a1b2c3dg": -1} {
		v, ok := HexID(in)
		if ok != (want >= 0) || ok && int64(v) != want {
			t.Errorf("HexID(%q) = %x, %v; want %x", in, v, ok, want)
		}
	}
}

// TestBlockKey: the switch of blockKey and the names of blockKeys agree.
func TestBlockKey(t *testing.T) {
	for j, name := range blockKeys {
		if got := blockKey([]byte(name)); got != j {
			t.Errorf("blockKey(%q) = %d, want %d", name, got, j)
		}
	}
	if got := blockKey([]byte("type")); got != -1 {
		t.Errorf("blockKey(type) = %d, want -1", got)
	}
}

// FuzzClassify: the classifier validates as it walks, so it must draw the
// line encoding/json draws (corrupt or not, an object or not), and so must
// CheckMessage.
func FuzzClassify(f *testing.F) {
	for _, s := range []string{
		`{"type":"message","id":"a1a1a1a1","parentId":null,"timestamp":"2026-04-25T14:00:01.000Z","provider":"p","model":"m","message":{"role":"user","content":[{"type":"text","text":"hi \u00e9"}]}}`,
		`{"type":"message","id":"a2a2a2a2","parentId":"a1a1a1a1","timestamp":"2026-04-25T14:00:02.000Z","message":{"role":"assistant","provider":"p","model":"m","content":[{"type":"thinking","thinking":"x","signature":"s"},{"type":"toolUse","id":"t1","name":"bash","input":"{\"c\":1}"}],"usage":{"input":1,"output":2,"reasoning":1},"stopReason":"toolUse"}}`,
		`{"type":"message","id":"a3a3a3a3","parentId":"a2a2a2a2","timestamp":"2026-04-25T14:00:03.000Z","provider":"p","model":"m","message":{"role":"user","content":[{"type":"toolResult","toolUseId":"t1","content":"ok"}]}}`,
		`{"type":"session","version":1,"id":"019dc5ba-53f6-71a5-ab8f-b1f8709c2572","timestamp":"2026-04-25T17:40:15.990Z","cwd":"/"}`,
		`{"role":"assistant","content":[],"provider":"p","model":"m","usage":{"input":1,"output":2,"reasoning":3}}`,
		`{"type":"label","id":"x"}`, `{"type":"message","message":[]}`, `[{"type":"message"}]`, `{"type":"mess`, "{\"type\":\"message\",\"x\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		valid := json.Valid(data)
		object := valid && bytes.TrimLeft(data, " \t\r\n")[0] == '{'
		c := ClassifyWith(data, ClassifyOptions{Tools: true, CheckUTF8: true})
		if (c.Kind == KindCorrupt) == object || c.NotObject != (valid && !object) || c.BadUTF8 != !utf8.Valid(data) {
			t.Fatalf("ClassifyWith(%q) = %v (notObject %v, badUTF8 %v); encoding/json valid %v, object %v", data, c.Kind, c.NotObject, c.BadUTF8, valid, object)
		}
		_, err := CheckMessage(data)
		if notJSON := err != nil && (strings.HasSuffix(err.Error(), ": not valid JSON") || strings.HasSuffix(err.Error(), ": not a JSON object")); notJSON == object {
			t.Fatalf("CheckMessage(%q) = %v; encoding/json valid %v, object %v", data, err, valid, object)
		}
	})
}
