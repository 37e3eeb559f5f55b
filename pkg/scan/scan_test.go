package scan

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
)

const sample = `{"type":"session","version":1,"id":"019dc5ba-53f6-71a5-ab8f-b1f8709c2572","timestamp":"t","cwd":"/p"}
{"type":"message","id":"a","parentId":null,"timestamp":"t","provider":"p1","model":"m1","message":{"role":"user","content":[{"type":"text","text":"hi"}]}}
{"type":"message","id":"b","parentId":"a","timestamp":"t","message":{"role":"assistant","content":[],"provider":"p1","model":"m1"}}
{"type":"label","id":"l","parentId":"b","name":"x"}
{"type":"message","id":"c","parentId":"b","timestamp":"t","provider":"p2","model":"m2","message":{"role":"user","content":[{"type":"text","text":"branch"}]}}
{"type":"message","id":"d","parentId":"a","timestamp":"t2","message":{"role":"assistant","content":[],"provider":"p1","model":"m1"}}
`

func TestScan(t *testing.T) {
	l, err := Scan(iotest.OneByteReader(strings.NewReader(sample)), ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !l.HeaderOK || len(l.Nodes) != 5 || l.Messages != 4 || l.Unknown["label"] != 1 || l.Torn() || l.LastTime != "t2" {
		t.Fatalf("scan: %+v", l)
	}
	if got := l.ID(l.Leaf()); got != "d" {
		t.Fatalf("leaf %s, want d", got)
	}
	if s, _ := l.Active(l.Lookup("c")); s.Provider != "p2" {
		t.Fatalf("active at c: %+v", s)
	}
	if s, _ := l.Active(l.Leaf()); s.Provider != "p1" {
		t.Fatalf("active at d: %+v", s)
	}
	var path []string
	for _, i := range l.Path(l.Lookup("c")) {
		path = append(path, l.ID(i))
	}
	if strings.Join(path, ",") != "a,b,c" {
		t.Fatalf("path %v", path)
	}
}

func TestScanDamage(t *testing.T) {
	lines := strings.SplitAfter(sample, "\n")
	tests := []struct {
		name       string
		text       string
		stop       bool
		good       int64
		corruptMid bool
		stopped    int // line a stopping scan stopped at
		dangling   int
		dup        int
	}{
		{"torn tail", sample + `{"type":"mess`, false, int64(len(sample)), false, 0, 0, 0},
		{"complete but unterminated", sample + `{"type":"x"}`, false, int64(len(sample)), false, 0, 0, 0},
		{"garbage lines at end", sample + "\x00\x00\n\x00\n", false, int64(len(sample)), false, 0, 0, 0},
		{"corrupt middle", lines[0] + lines[1] + "{oops\n" + strings.Join(lines[2:], ""), false, int64(len(sample) + 6), true, 0, 0, 0},
		{"reader stops", lines[0] + lines[1] + "{oops\n" + strings.Join(lines[2:], ""), true, int64(len(lines[0]) + len(lines[1])), false, 3, 0, 0},
		{"reader stops at torn", sample + `{"type":`, true, int64(len(sample)), false, 7, 0, 0},
		{"dangling", lines[0] + lines[2], false, int64(len(lines[0]) + len(lines[2])), false, 0, 1, 0},
		{"duplicate id", sample + lines[5], false, int64(len(sample) + len(lines[5])), false, 0, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := Scan(strings.NewReader(tt.text), ScanOptions{StopAtCorrupt: tt.stop})
			if err != nil {
				t.Fatal(err)
			}
			stopped := 0
			if l.Stopped != nil {
				stopped = l.Stopped.Line
			}
			if l.Good != tt.good || l.CorruptMid != tt.corruptMid || stopped != tt.stopped || len(l.Dangling) != tt.dangling || len(l.DupIDs) != tt.dup {
				t.Fatalf("good %d mid %v stopped %d dangling %d dup %d; want %d %v %d %d %d",
					l.Good, l.CorruptMid, stopped, len(l.Dangling), len(l.DupIDs), tt.good, tt.corruptMid, tt.stopped, tt.dangling, tt.dup)
			}
		})
	}
}

// TestReaderLongLines reads lines far longer than its buffer, and tells a
// terminated line from an unterminated one.
func TestReaderLongLines(t *testing.T) {
	long := bytes.Repeat([]byte("x"), 3<<20)
	in := append(append(append([]byte{}, long...), '\n'), long[:1000]...)
	r := NewReader(bytes.NewReader(in), 0)
	line, off, term, err := r.Next()
	if err != nil || !term || off != 0 || len(line) != len(long) {
		t.Fatalf("first: %d bytes term %v off %d err %v", len(line), term, off, err)
	}
	line, off, term, err = r.Next()
	if err != nil || term || off != int64(len(long)+1) || len(line) != 1000 {
		t.Fatalf("second: %d bytes term %v off %d err %v", len(line), term, off, err)
	}
	if _, _, _, err = r.Next(); err != io.EOF {
		t.Fatalf("end: %v", err)
	}
}

// FuzzScan: no input makes Scan panic; a file of valid lines (the fuzzed
// bytes cut back to their last good line) scans to the same entries again,
// and a torn tail never hides an entry before it.
func FuzzScan(f *testing.F) {
	f.Add([]byte(sample))
	f.Add([]byte(sample + `{"type":"mes`))
	f.Add([]byte("\xef\xbb\xbf" + sample))
	f.Add([]byte("{}\n[]\n\x00\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := Scan(bytes.NewReader(data), ScanOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if l.Good > l.Size || l.Size != int64(len(data)) {
			t.Fatalf("good %d size %d len %d", l.Good, l.Size, len(data))
		}
		again, err := Scan(bytes.NewReader(data[:l.Good]), ScanOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if again.Torn() || len(again.Nodes) != len(l.Nodes) {
			t.Fatalf("prefix to good: torn %v, %d entries, want %d", again.Torn(), len(again.Nodes), len(l.Nodes))
		}
		for i := range l.Nodes {
			if l.Nodes[i] != again.Nodes[i] {
				t.Fatalf("entry %d differs: %+v %+v", i, l.Nodes[i], again.Nodes[i])
			}
		}
		// A scan in the memory of an earlier one learns the same, with the
		// tool pairs too.
		fresh, err := Scan(bytes.NewReader(data), ScanOptions{Tools: true})
		if err != nil {
			t.Fatal(err)
		}
		old, err := Scan(strings.NewReader(sample+sample), ScanOptions{Tools: true})
		if err != nil {
			t.Fatal(err)
		}
		reused, err := Scan(bytes.NewReader(data), ScanOptions{Tools: true, Reuse: old})
		if err != nil {
			t.Fatal(err)
		}
		if g, w := fmt.Sprintf("%+v", *reused), fmt.Sprintf("%+v", *fresh); g != w {
			t.Fatalf("reused\n%s\nfresh\n%s", g, w)
		}
	})
}

// TestIDIndex: every id of a log with many entries (the index grows many
// times over) is found at its node, ids of invalid entries are taken but
// not nodes, repeats are refused, and parents far back are found.
func TestIDIndex(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"type":"session","version":1,"id":"s","timestamp":"t","cwd":"/"}` + "\n")
	const n = 20000
	entry := func(id, parent string) {
		p := "null"
		if parent != "" {
			p = `"` + parent + `"`
		}
		fmt.Fprintf(&b, `{"type":"message","id":%q,"parentId":%s,"timestamp":"t","provider":"p","model":"m","message":{"role":"user","content":[]}}`+"\n", id, p)
	}
	for i := range n {
		parent := ""
		if i > 0 {
			parent = fmt.Sprint("e", i/2) // mostly not the entry just before
		}
		entry(fmt.Sprint("e", i), parent)
	}
	b.WriteString(`{"type":"message","id":"bad","parentId":null}` + "\n")
	entry("e7", "") // a repeat
	entry("child-of-bad", "bad")
	l, err := Scan(struct{ io.Reader }{strings.NewReader(b.String())}, ScanOptions{}) // no Size: the index starts small
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Nodes) != n+1 || len(l.DupIDs) != 1 || l.DupIDs[0].ID != "e7" || len(l.Dangling) != 1 || len(l.Invalid) != 1 {
		t.Fatalf("nodes %d, dups %v, dangling %v, invalid %v", len(l.Nodes), l.DupIDs, l.Dangling, l.Invalid)
	}
	for i := range n {
		id := fmt.Sprint("e", i)
		if got := l.Lookup(id); got != int32(i) {
			t.Fatalf("Lookup(%s) = %d, want %d", id, got, i)
		}
		if i > 0 && l.Nodes[i].Parent != int32(i/2) {
			t.Fatalf("parent of %s = %d, want %d", id, l.Nodes[i].Parent, i/2)
		}
	}
	if l.Lookup("bad") != -1 || !l.Taken("bad") || l.Taken("nobody") || l.Lookup("nobody") != -1 {
		t.Fatal("an invalid entry's id must be taken, not a node; an unknown id neither")
	}
	ids := map[string]bool{}
	l.EachID(func(id string) { ids[id] = true })
	if len(ids) != n+2 || !ids["bad"] || !ids["child-of-bad"] {
		t.Fatalf("EachID gave %d ids, want %d", len(ids), n+2)
	}
}

// TestToolPairs: a scan with Tools pairs toolResult blocks with the
// toolUse blocks before them, through enough ids to grow its table.
func TestToolPairs(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"type":"session","version":1,"id":"s","timestamp":"t","cwd":"/"}` + "\n")
	msg := func(id, role string, blocks ...string) {
		stamp := `"provider":"p","model":"m"` // a user entry's, outside its message; a reply's, inside
		out, in := stamp+",", ""
		if role == "assistant" {
			out, in = "", ","+stamp
		}
		fmt.Fprintf(&b, `{"type":"message","id":%q,"parentId":null,"timestamp":"t",%s"message":{"role":%q,"content":[%s]%s}}`+"\n", id, out, role, strings.Join(blocks, ","), in)
	}
	use := func(id string) string { return fmt.Sprintf(`{"type":"toolUse","id":%q,"name":"n","input":"{}"}`, id) }
	result := func(id string) string { return fmt.Sprintf(`{"type":"toolResult","toolUseId":%q,"content":"ok"}`, id) }
	const n = 1000
	for i := range n {
		msg(fmt.Sprint("a", i), "assistant", use(fmt.Sprint("t", i)), use(fmt.Sprint("u", i)))
		msg(fmt.Sprint("r", i), "user", result(fmt.Sprint("t", i))) // u<i> is never answered
	}
	msg("early", "user", result("later")) // before its use: answers nothing
	msg("again", "assistant", use("t5"), use("later"))
	msg("r5", "assistant", use("in-a-repeat")) // a repeated entry id: no node
	msg("last", "user", result("t5"), result("t5"), result("later"), result("in-a-repeat"))
	l, err := Scan(struct{ io.Reader }{strings.NewReader(b.String())}, ScanOptions{Tools: true}) // no Size: the table starts small
	if err != nil {
		t.Fatal(err)
	}
	if len(l.ToolUses) != 2*n+2 {
		t.Fatalf("%d tool uses, want %d", len(l.ToolUses), 2*n+2)
	}
	for i := range n {
		tu, uu := l.ToolUses[2*i], l.ToolUses[2*i+1]
		want := int32(1)
		if i == 5 {
			want = 3 // and the repeated use at "again" is not a second use
		}
		if l.ToolUseID(2*i) != fmt.Sprint("t", i) || tu.Answers != want || l.ToolUseID(2*i+1) != fmt.Sprint("u", i) || uu.Answers != 0 || tu.Line != int32(2+2*i) || tu.Node != int32(2*i) {
			t.Fatalf("uses %d: %+v %+v", i, tu, uu)
		}
	}
	later, repeat := l.ToolUses[2*n], l.ToolUses[2*n+1]
	if l.ToolUseID(2*n) != "later" || later.Answers != 1 || later.Node != l.Lookup("again") || l.ToolUseID(2*n+1) != "in-a-repeat" || repeat.Answers != 1 || repeat.Node != -1 {
		t.Fatalf("later %+v, in a repeat %+v", later, repeat)
	}
	if len(l.Unanswering) != 1 || l.Unanswering[0].ID != "later" || l.Unanswering[0].Line != 2+2*n {
		t.Fatalf("unanswering %v", l.Unanswering)
	}
	if l, _ := Scan(strings.NewReader(b.String()), ScanOptions{}); len(l.ToolUses)+len(l.Unanswering) != 0 {
		t.Fatal("tool blocks paired without ScanOptions.Tools")
	}
}

// TestScanReuse: a scan that takes the memory of an earlier Log learns
// exactly what a fresh scan does, whatever the earlier one held.
func TestScanReuse(t *testing.T) {
	tools := `{"type":"message","id":"t1","parentId":"d","timestamp":"t","message":{"role":"assistant","content":[{"type":"toolUse","id":"u1","name":"n","input":"{}"}],"provider":"p","model":"m"}}` + "\n" +
		`{"type":"message","id":"t2","parentId":"t1","timestamp":"t","provider":"p","model":"m","message":{"role":"user","content":[{"type":"toolResult","toolUseId":"u9","content":"x"}]}}` + "\n"
	inputs := []string{
		sample + tools + `{"type":"message","id":"a","parentId":null}` + "\n" + `{"type":"label","id":"a","parentId":"b","name":"x"}` + "\n",
		sample,
		strings.Repeat(sample, 40), // room for more
		sample[:len(sample)/2],
		"",
		sample + tools,
	}
	for _, sized := range []bool{true, false} {
		var old *Log
		for i, in := range inputs {
			open := func() io.Reader {
				if sized {
					return strings.NewReader(in)
				}
				return struct{ io.Reader }{strings.NewReader(in)} // no Size
			}
			want, err := Scan(open(), ScanOptions{Tools: true})
			if err != nil {
				t.Fatal(err)
			}
			got, err := Scan(open(), ScanOptions{Tools: true, Reuse: old})
			if err != nil {
				t.Fatal(err)
			}
			// Printed, every field and the index (an empty slice and nil alike).
			if g, w := fmt.Sprintf("%+v", *got), fmt.Sprintf("%+v", *want); g != w {
				t.Fatalf("sized %v, input %d after %d: reused\n%s\nfresh\n%s", sized, i, i-1, g, w)
			}
			old = got
		}
	}
}

// Lines longer than the buffer read the same from a file section (whose
// long lines are sized by reading ahead) as from a plain reader, at any
// base offset, the last one unterminated too.
func TestReaderLongLinesOfASection(t *testing.T) {
	var file bytes.Buffer
	file.WriteString("head\n")
	for _, n := range []int{readBuffer - 1, readBuffer, readBuffer + 1, 3*readBuffer + 7, 10} {
		file.Write(bytes.Repeat([]byte{'a' + byte(n%26)}, n))
		file.WriteByte('\n')
	}
	file.Write(bytes.Repeat([]byte("z"), 2*readBuffer)) // no "\n"
	b := file.Bytes()
	for _, base := range []int64{0, 5} {
		read := func(r io.Reader) (lines []string) {
			rd := NewReader(r, base)
			for {
				line, off, term, err := rd.Next()
				if err != nil {
					return lines
				}
				lines = append(lines, fmt.Sprint(off, term, len(line), string(line[:min(3, len(line))])))
			}
		}
		want := read(bytes.NewReader(b[base:]))
		got := read(io.NewSectionReader(bytes.NewReader(b), base, int64(len(b))-base))
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("base %d: %v, want %v", base, got, want)
		}
	}
}

// TestScanHugeLines: a file of lines far longer than a chunk scans to the
// entries a line-by-line reading finds, and each huge line is held once:
// the chunk that holds it is sized by reading ahead to its end, not grown
// by doubling (which allocated about 3× the line, and left it behind).
func TestScanHugeLines(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2)) // the parallel scan
	const huge = 24 << 20
	var b bytes.Buffer
	b.WriteString(`{"type":"session","version":1,"id":"s","timestamp":"t","cwd":"/"}` + "\n")
	parent := "null"
	for i, n := range []int{10, huge, 100, huge + 12345, chunkSize - 200, 3 * chunkSize} {
		fmt.Fprintf(&b, `{"type":"message","id":"e%d","parentId":%s,"timestamp":"t","provider":"p","model":"m","message":{"role":"user","content":[{"type":"text","text":"%s"}]}}`+"\n", i, parent, bytes.Repeat([]byte{'a' + byte(i)}, n))
		parent = fmt.Sprintf(`"e%d"`, i)
	}
	b.WriteString(`{"type":"message","id":"torn","parentId":"e5","message":{"role":"user","content":"` + strings.Repeat("z", huge))
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want, err := Scan(bytes.NewReader(b.Bytes()), ScanOptions{}) // no Size: the line reader
	if err != nil {
		t.Fatal(err)
	}
	// A file section; a source that knows its size and can be read at
	// offsets but is none (a store's reader: its long lines were sized by
	// doubling, 2.5 times the line, hostile.md #17); a file with no size
	// (the line reader).
	for _, src := range []func() io.Reader{
		func() io.Reader { return io.NewSectionReader(f, 0, int64(b.Len())) },
		func() io.Reader { f.Seek(0, io.SeekStart); return sizedFile{f, int64(b.Len())} },
		func() io.Reader { f.Seek(0, io.SeekStart); return f },
	} {
		r := src()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		got, err := Scan(r, ScanOptions{})
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Nodes) != 6 || !got.Torn() || fmt.Sprint(got.Nodes) != fmt.Sprint(want.Nodes) || got.Good != want.Good {
			t.Fatalf("%T: %d entries, torn %v, good %d; line reader: %d entries, good %d", r, len(got.Nodes), got.Torn(), got.Good, len(want.Nodes), want.Good)
		}
		if alloc, limit := after.TotalAlloc-before.TotalAlloc, uint64(3*huge*3/2); alloc > limit {
			t.Errorf("%T: scanning 3 lines of %d MiB allocated %d MiB, want under %d MiB", r, huge>>20, alloc>>20, limit>>20)
		}
	}
}

// sizedFile is a file read from its start that knows its size, as a
// store's readers do, and is no file section.
type sizedFile struct {
	*os.File
	size int64
}

func (s sizedFile) Size() int64 { return s.size }
