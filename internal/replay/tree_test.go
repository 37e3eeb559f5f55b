package replay

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"testing"
)

// branchy is a session shaped as a chain with a side branch at every node:
// the deepest nesting of branches a session of n entries can have.
func branchy(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"type":"session","version":1,"id":"019dc5ba-53f6-71a5-ab8f-b1f8709c2572","timestamp":"2026-04-25T17:40:15.990Z","cwd":"/p"}` + "\n")
	parent := "null"
	for i := range n {
		fmt.Fprintf(&b, `{"type":"message","id":"c%07x","parentId":%s,"timestamp":"2026-04-25T14:00:01.000Z","provider":"p","model":"m","message":{"role":"user","content":[{"type":"text","text":"q"}]}}`+"\n", i, parent)
		fmt.Fprintf(&b, `{"type":"message","id":"s%07x","parentId":"c%07x","timestamp":"2026-04-25T14:00:01.000Z","message":{"role":"assistant","content":[],"provider":"p","model":"m"}}`+"\n", i, i)
		parent = fmt.Sprintf(`"c%07x"`, i)
	}
	return b.Bytes()
}

// treeAlloc is the memory WriteTree allocates for a branchy session of n
// entries (its output discarded).
func treeAlloc(t *testing.T, n int) uint64 {
	data := branchy(n)
	s, err := Open(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if err := s.WriteTree(io.Discard); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestTreeMemoryLinear: the tree's memory grows with its entries, not with
// their nesting (a string prefix per pending branch made it quadratic: a
// 7.5 MB session took 1.9 GB). Four times the entries may take about four
// times the memory, never sixteen.
func TestTreeMemoryLinear(t *testing.T) {
	small, large := treeAlloc(t, 1000), treeAlloc(t, 4000)
	if ratio := float64(large) / float64(small); ratio > 6 {
		t.Fatalf("4x the entries took %.1fx the memory (%d -> %d bytes): not linear", ratio, small, large)
	}
}

func TestTreeShape(t *testing.T) {
	data := branchy(3)
	s, err := Open(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := s.WriteTree(&out); err != nil {
		t.Fatal(err)
	}
	want := `c0000000 user "q" [branch]
+ s0000000 assistant [leaf]
+ c0000001 user "q" [branch]
  + s0000001 assistant [leaf]
  + c0000002 user "q"
    s0000002 assistant [leaf current]
`
	if out.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", out.String(), want)
	}
}
