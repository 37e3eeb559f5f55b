package agents

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestOneDocument: a Gemini CLI chat is read as one JSON document when it
// is written over several lines (its first line no whole object) or on
// one line with nothing after it, however long that line; as JSON Lines
// when lines follow its first, whatever that line's length, and where
// that line ends exactly at the look (the first MiB) or past it.
func TestOneDocument(t *testing.T) {
	meta := `{"sessionId":"aaaaaaaa-1111-4222-8333-444444444444","projectHash":"p","startTime":"2026-03-01T10:00:00.000Z"}`
	record := `{"id":"u1","timestamp":"2026-03-01T10:00:00.000Z","type":"user","content":"hi"}`
	chat := func(pad int) string {
		return `{"sessionId":"aaaaaaaa-1111-4222-8333-444444444444","messages":[{"id":"u1","type":"user","content":"` + strings.Repeat("x", pad) + `"}]}`
	}
	const look = 1 << 20
	exact := chat(0)
	exact = chat(look - 1 - len(exact)) // its newline the look's last byte
	for _, c := range []struct {
		name, log string
		doc       bool
	}{
		{"a document over lines", "{\n  \"sessionId\": \"a\",\n  \"messages\": []\n}\n", true},
		{"a document on one line", chat(10) + "\n", true},
		{"a document on one line, no newline", chat(10), true},
		{"a document on one line, blanks after", chat(10) + "\n \n\t\r\n", true},
		{"blank lines, then a document on one line", "\n\n" + chat(10) + "\n", true},
		{"a long document on one line", chat(3*look) + "\n", true},
		{"a long document on one line, no newline", chat(3 * look), true},
		{"a document whose newline ends the look", exact + "\n", true},
		{"a document just longer than the look", chat(look-len(chat(0))) + "\n", true},
		{"JSON Lines", meta + "\n" + record + "\n", false},
		{"JSON Lines, no newline at the end", meta + "\n" + record, false},
		{"JSON Lines whose first line ends the look", exact + "\n" + record + "\n", false},
		{"JSON Lines whose first line is long", chat(3*look) + "\n" + record + "\n", false},
		{"empty", "", true},
		{"blank", "\n \n", true},
	} {
		if c.name == "a document whose newline ends the look" && len(exact)+1 != look {
			t.Fatalf("the fixture is not what it is for: %d bytes", len(exact)+1)
		}
		doc, err := oneDocument(Source{R: strings.NewReader(c.log), Size: int64(len(c.log))})
		if err != nil || doc != c.doc {
			t.Errorf("%s: one document %v (%v), want %v", c.name, doc, err, c.doc)
		}
	}
}

// TestGeminiOneLineAsLines: a chat on one line, now read as a document
// (a stream), converts to what its reading as JSON Lines made, entry for
// entry: an import made before is the same import (for the real chats of
// ../shared/real written on one line, and one of 2,000 messages). The
// same chat with a record after it is read as JSON Lines.
func TestGeminiOneLineAsLines(t *testing.T) {
	var chats [][]byte
	paths, _ := filepath.Glob("../../../shared/real/gemini-cli/*session.json")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		one, _ := json.Marshal(v)
		chats = append(chats, one)
	}
	var msgs []map[string]any
	for i := range 1000 {
		msgs = append(msgs, map[string]any{"id": "u" + strconv.Itoa(i), "timestamp": "2026-03-01T10:00:00.000Z", "type": "user", "content": "question " + strconv.Itoa(i)},
			map[string]any{"id": "g" + strconv.Itoa(i), "timestamp": "2026-03-01T10:00:01.000Z", "type": "gemini", "content": "answer", "model": "gemini-2.5-flash",
				"toolCalls": []map[string]any{{"id": "c" + strconv.Itoa(i), "name": "run_shell_command", "args": map[string]any{"command": "ls"}, "result": []any{map[string]any{"functionResponse": map[string]any{"response": map[string]any{"output": "a b"}}}}}},
				"tokens":    map[string]int{"input": 100, "output": 10, "cached": 40, "thoughts": 5, "tool": 0, "total": 115}})
	}
	one, _ := json.Marshal(map[string]any{"sessionId": "aaaaaaaa-1111-4222-8333-444444444444", "projectHash": "p", "startTime": "2026-03-01T10:00:00.000Z", "messages": msgs})
	chats = append(chats, one)
	if len(chats) < 3 {
		t.Fatalf("%d chats: ../shared/real's Gemini chats are missing", len(chats))
	}
	read := func(b []byte) ([]byte, *Stats) {
		tmp, n, st, err := Convert(Source{Path: "session-2026-03-01T10-00-aaaaaaaa.json", R: bytes.NewReader(b), Size: int64(len(b))}, Gemini)
		if err != nil {
			t.Fatal(err)
		}
		defer tmp.Close()
		out, _ := io.ReadAll(io.NewSectionReader(tmp, 0, n))
		return out, st
	}
	for i, c := range chats {
		doc, st := read(append(c, '\n'))
		lines, lst := read(append(append(c, '\n'), `{"kind":"x"}`+"\n"...))
		if lst.Counts["gemini records of no known kind (not read)"] != 1 || st.Counts["gemini records of no known kind (not read)"] != 0 {
			t.Fatalf("chat %d: read as lines %v, as a document %v: not the two ways", i, lst.Counts, st.Counts)
		}
		if !bytes.Equal(doc, lines) {
			t.Errorf("chat %d: on one line it converts to\n%.600s\nas lines to\n%.600s", i, doc, lines)
		}
	}
}

// TestGeminiDocMembersAfterMessages: a chat's directories and kind are
// written after its messages (ConversationRecord's order): its cwd and a
// sub-agent's parent are still in the header, on several lines and on
// one. The header was made at the first message, from the members before
// it: no cwd, and a sub-agent's chat taken for a session of its own (and
// no id at all when a re-serialising tool sorted sessionId after them).
func TestGeminiDocMembersAfterMessages(t *testing.T) {
	chat := map[string]any{"sessionId": "aaaaaaaa-1111-4222-8333-444444444444", "projectHash": "p", "startTime": "2026-03-01T10:00:00.000Z",
		"messages":    []map[string]any{{"id": "u1", "timestamp": "2026-03-01T10:00:00.000Z", "type": "user", "content": "hello"}},
		"directories": []string{"/home/u/proj"}, "kind": "subagent"}
	pretty, _ := json.MarshalIndent(chat, "", "  ")
	// in ConversationRecord's order, not Marshal's (sorted)
	order := []string{"sessionId", "projectHash", "startTime", "messages", "directories", "kind"}
	var b bytes.Buffer
	b.WriteString("{\n")
	for i, k := range order {
		v, _ := json.MarshalIndent(chat[k], "  ", "  ")
		fmt.Fprintf(&b, "  %q: %s", k, v)
		if i < len(order)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString("}\n")
	oneLine, _ := json.Marshal(chat)
	for name, log := range map[string][]byte{"Gemini CLI's order": b.Bytes(), "sorted": pretty, "on one line": oneLine} {
		got := convert(t, "/h/.gemini/tmp/p/chats/parentid/session-x.json", log)
		cwd, parent, id := got.header.Get("cwd").Str, got.header.Get("origin.parent").Str, got.header.Get("origin.id").Str
		if cwd != "/home/u/proj" || parent != "parentid" || id != "aaaaaaaa-1111-4222-8333-444444444444" {
			t.Errorf("%s: cwd %q, parent %q, id %q: want /home/u/proj, parentid, aaaaaaaa-…", name, cwd, parent, id)
		}
	}
}

// TestDocJumpArray: the read that looks for the members after the
// messages passes over them by their indentation (jumpArray) where the
// document is indented, by walking them where it is not, and finds the
// same members either way as the read that validates every message:
// indented by 1, 2 and 4 spaces and by tabs, compact, with arrays and
// brackets inside the messages, with an empty list.
func TestDocJumpArray(t *testing.T) {
	chat := map[string]any{
		"sessionId": "s", "messages": []any{
			map[string]any{"id": "a", "content": "]\n  ]", "toolCalls": []any{[]any{1, []any{2}}, map[string]any{"x": []any{}}}},
			map[string]any{"id": "b", "content": "ok"},
		},
		"directories": []any{"/w", "/v"}, "kind": "subagent",
	}
	empty := map[string]any{"messages": []any{}, "kind": "main", "directories": []any{}}
	for _, c := range []struct {
		name   string
		doc    any
		indent string
	}{
		{"two spaces", chat, "  "}, {"one space", chat, " "}, {"four spaces", chat, "    "}, {"tabs", chat, "\t"},
		{"compact", chat, ""}, {"empty list", empty, "  "}, {"empty list compact", empty, ""},
	} {
		var b []byte
		var err error
		if c.indent == "" {
			b, err = json.Marshal(c.doc)
		} else {
			b, err = json.MarshalIndent(c.doc, "", c.indent)
		}
		if err != nil {
			t.Fatal(err)
		}
		members := func(elem func(int64, []byte) error) string {
			var got []string
			d := newDocStream(bytes.NewReader(b))
			err := d.object("messages", func(key string, val []byte) error {
				got = append(got, key+"="+string(val))
				return nil
			}, elem)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			return strings.Join(got, " ")
		}
		want := members(func(int64, []byte) error { return nil })
		if got := members(nil); got != want || !strings.Contains(want, "kind=") {
			t.Errorf("%s: passing over the messages: %s\nreading them: %s", c.name, got, want)
		}
	}
}
