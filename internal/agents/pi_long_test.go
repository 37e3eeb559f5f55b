package agents

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
)

// piLong is a pi (version 3) session of n messages, a user question and an
// assistant answer in turn, each the child of the one before; with compact,
// a compaction that keeps from the third entry after every answer from
// the fourth on (pi writes one in every long session).
func piLong(n int, compact bool) []byte {
	var b bytes.Buffer
	b.WriteString(`{"type":"session","version":3,"id":"7a2c3b9e-1b7d-4c1e-9a57-3d1f0b2c4e5b","timestamp":"2026-03-02T10:00:00.000Z","cwd":"/home/u/pi"}` + "\n")
	parent, k := "null", 0
	next := func() string { k++; return fmt.Sprintf("%08x", k) }
	for i := range n {
		id := next()
		if i%2 == 0 {
			fmt.Fprintf(&b, `{"type":"message","id":"%s","parentId":%s,"timestamp":"2026-03-02T10:00:00.000Z","message":{"role":"user","content":"question %d","timestamp":1}}`+"\n", id, parent, i)
		} else {
			fmt.Fprintf(&b, `{"type":"message","id":"%s","parentId":%s,"timestamp":"2026-03-02T10:00:00.000Z","message":{"role":"assistant","content":[{"type":"text","text":"answer %d"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-opus-4-5","usage":{"input":100,"output":10,"cacheRead":0,"cacheWrite":0,"totalTokens":110},"stopReason":"stop","timestamp":1}}`+"\n", id, parent, i)
		}
		parent = `"` + id + `"`
		if compact && i%2 == 1 && i > 3 {
			c := next()
			fmt.Fprintf(&b, `{"type":"compaction","id":"%s","parentId":%s,"timestamp":"2026-03-02T10:00:00.000Z","summary":"S","firstKeptEntryId":"00000003","tokensBefore":330}`+"\n", c, parent)
			parent = `"` + c + `"`
		}
	}
	return b.Bytes()
}

// TestPiLongLog: a pi session of 2,000 messages (past the line reader's
// buffer, 256 KiB, twice) is read whole: every message, each the child of
// the one before, every reply once; with a compaction after every answer
// the read ends. The pi reader kept each entry id as a view into the line
// reader's buffer, reused: past ~512 KiB parents were looked up by ids that
// had changed under the maps (hostile.md #1: 992 messages of 1,900, costs
// differing per run, and with compactions a walk to the kept entry round a
// cycle, forever).
func TestPiLongLog(t *testing.T) {
	for _, compact := range []bool{false, true} {
		b := piLong(2000, compact)
		if len(b) < 512<<10 {
			t.Fatalf("the log is %d bytes: not past 512 KiB", len(b))
		}
		done := make(chan struct{})
		var msgs, replies, compactions int
		var err error
		var last string
		var broken []string
		go func() {
			defer close(done)
			_, _, err = Read(Source{Path: "long.jsonl", R: bytes.NewReader(b), Size: int64(len(b))}, Pi, Options{Content: true},
				func(*Header) error { return nil },
				func(e *Entry) error {
					if e.ParentID != last && len(broken) < 3 {
						broken = append(broken, fmt.Sprintf("entry %s (line %d): parent %q, not the entry before, %q", e.ID, e.Line, e.ParentID, last))
					}
					last = strings.Clone(e.ID) // the entry is the reader's only during the call
					switch {
					case e.Kind == "compaction":
						compactions++
					case e.Role != "":
						msgs++
					}
					if e.Reply != nil {
						replies++
					}
					return nil
				})
		}()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Fatalf("compactions %v: the read of a %d-byte pi log did not end in a minute", compact, len(b))
		}
		if err != nil {
			t.Fatal(err)
		}
		if msgs != 2000 || replies != 1000 || len(broken) > 0 {
			t.Errorf("compactions %v: %d messages, %d replies, %d compactions; want 2000, 1000; %v", compact, msgs, replies, compactions, broken)
		}
		if want := 0; compact {
			want = 998
			if compactions != want {
				t.Errorf("%d compactions, want %d", compactions, want)
			}
		}
	}
}

// TestOnPathCycle: the walk to a compaction's kept entry ends on a map
// with a cycle or a self-reference (none is made from a log, but a walk
// must end on any input).
func TestOnPathCycle(t *testing.T) {
	for _, parents := range []map[string]string{
		{"a": "b", "b": "a"},
		{"a": "a"},
		{"a": "b", "b": "c", "c": "b"},
	} {
		if onPath(parents, "a", "z") {
			t.Errorf("%v: z is on no path", parents)
		}
	}
	if !onPath(map[string]string{"c": "b", "b": "a"}, "c", "a") {
		t.Error("a is on the path to c")
	}
}
