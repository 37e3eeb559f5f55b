package session

import (
	"errors"
	"testing"
)

// TestKeptFrom: a compaction keeps from the entry its firstKeptEntryId
// names among the entries before it on its path; an empty id, or one of no
// entry before it (after it, on another branch, itself), keeps nothing
// before it.
func TestKeptFrom(t *testing.T) {
	path := []string{"root", "a", "b", "c", "cmp", "d"} // the compaction at 4
	id := func(j int) string {
		if j >= 4 {
			t.Fatalf("id(%d) read: only entries before the compaction are looked at", j)
		}
		return path[j]
	}
	for _, c := range []struct {
		kept   string
		want   int
		onPath bool
	}{
		{"root", 0, true},
		{"b", 2, true},
		{"c", 3, true},
		{"", 5, false},
		{"d", 5, false},   // after the compaction
		{"cmp", 5, false}, // itself
		{"elsewhere", 5, false},
	} {
		if got, on := KeptFrom(c.kept, 4, id); got != c.want || on != c.onPath {
			t.Errorf("KeptFrom(%q) = %d, %v; want %d, %v", c.kept, got, on, c.want, c.onPath)
		}
	}
}

// TestParseCompaction: a compaction line is read back to the fields it was
// made of; what SPEC §13 requires of it is refused otherwise.
func TestParseCompaction(t *testing.T) {
	req := CompactionRequest([]byte(`{"role":"assistant","content":[],"provider":"anthropic","model":"m","usage":{"input":10,"output":5}}`))
	f := CompactionFields("the summary \"quoted\"", "e1", 1234, req)
	line := append(append([]byte(`{"type":"compaction",`), f...), '}')
	got, err := ParseCompaction(line)
	if err != nil || string(got) != string(f) {
		t.Fatalf("ParseCompaction = %s, %v; want %s", got, err, f)
	}
	c := Classify(append(append([]byte(`{"type":"compaction","id":"x","parentId":"e1","timestamp":"2026-01-01T00:00:00.000Z",`), f...), '}'))
	if !c.IsCompaction() {
		t.Fatalf("a compaction entry classified %+v", c)
	}
	if m := Classify([]byte(`{"type":"message","id":"x","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":[]}}`)); m.IsCompaction() {
		t.Fatal("a message is no compaction")
	}
	for _, bad := range []string{
		`{"type":"compaction"`,
		`{"type":"compaction","summary":"s","tokensBefore":1}`,
		`{"type":"compaction","summary":"s","firstKeptEntryId":"","tokensBefore":1}`,
		`{"type":"compaction","summary":"s","firstKeptEntryId":"e","tokensBefore":-1}`,
		`{"type":"compaction","summary":1,"firstKeptEntryId":"e","tokensBefore":1}`,
		`{"type":"compaction","summary":"s","firstKeptEntryId":"e","tokensBefore":1,"provider":"p"}`,
		`{"type":"compaction","summary":"s","firstKeptEntryId":"e","tokensBefore":1,"provider":"p","model":"m","usage":3}`,
	} {
		if _, err := ParseCompaction([]byte(bad)); !errors.Is(err, ErrInvalidMsg) {
			t.Errorf("ParseCompaction(%s) = %v, want ErrInvalidMsg", bad, err)
		}
	}
}
