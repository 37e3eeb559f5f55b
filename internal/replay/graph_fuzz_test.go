package replay

import (
	"bytes"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/panto-dev/panto/internal/fsck"
	"github.com/panto-dev/panto/pkg/scan"
	"github.com/panto-dev/panto/pkg/session"
)

// graphIDs are the ids a hostile graph draws from: few, so that ids
// repeat, parents name the entry itself, a later one or nothing.
var graphIDs = []string{"00000001", "00000002", "00000003", "00000004", "00000005", "00000006", "0000000a", "c0c0c0c0"}

// hostileSession is a panto session whose entries are spelled by g, three
// bytes each: the id, the parent (none, or any id: earlier, itself, later,
// never used), and the kind (a user or assistant message, with a tool call
// or result, or a compaction keeping from any id, or none).
func hostileSession(g []byte) []byte {
	b := session.Header{ID: "019dc5ba-53f6-71a5-ab8f-b1f8709c2572", Timestamp: "2026-01-01T00:00:00.000Z", Cwd: "/p"}.AppendLine(nil)
	for k := 0; k+2 < len(g) && k < 3*200; k += 3 {
		id := graphIDs[int(g[k])%len(graphIDs)]
		parent := ""
		if p := int(g[k+1]) % (len(graphIDs) + 1); p < len(graphIDs) {
			parent = graphIDs[p]
		}
		ts := "2026-01-01T00:00:00.000Z"
		switch kind, arg := g[k+2]%6, graphIDs[int(g[k+2]/6)%len(graphIDs)]; kind {
		case 0:
			b = session.Entry{ID: id, ParentID: parent, Timestamp: ts, Provider: "p", Model: "m", Message: session.TextMessage("user", "q "+arg)}.AppendLine(b)
		case 1:
			b = session.Entry{ID: id, ParentID: parent, Timestamp: ts, Message: []byte(`{"role":"assistant","content":[{"type":"text","text":"a"}],"provider":"p","model":"m","stopReason":"stop","usage":{"input":1,"output":1}}`)}.AppendLine(b)
		case 2:
			b = session.Entry{ID: id, ParentID: parent, Timestamp: ts, Message: []byte(`{"role":"assistant","content":[{"type":"toolUse","id":"t` + arg + `","name":"bash","input":"{}"}],"provider":"p","model":"m","stopReason":"toolUse","usage":{"input":1,"output":1}}`)}.AppendLine(b)
		case 3:
			b = session.Entry{ID: id, ParentID: parent, Timestamp: ts, Provider: "p", Model: "m", Message: []byte(`{"role":"user","content":[{"type":"toolResult","toolUseId":"t` + arg + `","content":"ok"}]}`)}.AppendLine(b)
		case 4:
			b = session.Kept{Type: "compaction", ID: id, ParentID: parent, Timestamp: ts, Fields: []byte(`"summary":"s","firstKeptEntryId":"` + arg + `","tokensBefore":5`)}.AppendLine(b)
		case 5:
			b = session.Kept{Type: "compaction", ID: id, ParentID: parent, Timestamp: ts, Fields: []byte(`"summary":"s","tokensBefore":5`)}.AppendLine(b)
		}
	}
	return b
}

// within runs fn and fails the test when it does not end in a bound far
// above what it takes: a walk round a cycle never ends.
func within(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		panic(what + ": did not end in 20 s (a walk without progress?)")
	}
}

// FuzzTreeGraph feeds the tree builders hostile graphs (cycles through
// parentIds, self-references, repeated ids, parents named after their
// children, compactions keeping from themselves, a later entry, another
// branch, nothing): the index keeps every parent before its child, and
// replay in every form (messages, what is sent, markdown, html, the tree,
// --info of every leaf) and fsck end on every one.
func FuzzTreeGraph(f *testing.F) {
	f.Add([]byte{0, 8, 0, 1, 0, 1, 2, 1, 2, 3, 2, 3})       // a chain
	f.Add([]byte{0, 0, 0})                                  // its own parent
	f.Add([]byte{0, 1, 0, 1, 0, 1})                         // a cycle through ids
	f.Add([]byte{0, 8, 0, 1, 0, 2, 2, 1, 4, 3, 2, 1})       // a compaction keeping the root
	f.Add([]byte{0, 8, 0, 0, 0, 1, 0, 0, 4, 1, 0, 4 + 6*1}) // repeated ids, a compaction keeping itself
	f.Add([]byte{0, 8, 2, 1, 0, 3, 2, 1, 5, 3, 2, 4 + 6*3}) // tool rounds and compactions
	f.Fuzz(func(t *testing.T, g []byte) {
		data := hostileSession(g)
		within(t, fmt.Sprintf("%d entries", len(g)/3), func() { walkAll(t, data) })
	})
}

func walkAll(t *testing.T, data []byte) {
	s, err := Open(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range s.Log.Nodes {
		if n.Parent >= int32(i) {
			t.Fatalf("node %d has parent %d: not before it", i, n.Parent)
		}
	}
	if err := s.WriteTree(io.Discard); err != nil {
		t.Fatal(err)
	}
	for i := range s.Log.Nodes {
		path := s.Log.Path(int32(i))
		if len(path) > len(s.Log.Nodes) {
			t.Fatalf("a path of %d nodes in a tree of %d", len(path), len(s.Log.Nodes))
		}
		s.Log.Active(int32(i))
		if _, err := s.Info(int32(i)); err != nil {
			t.Fatal(err)
		}
		if err := s.EachSent(path, func(int32, []byte) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if err := s.WriteMarkdown(io.Discard, path); err != nil {
			t.Fatal(err)
		}
		if err := s.WriteHTML(io.Discard, path, HTMLOptions{}); err != nil {
			t.Fatal(err)
		}
		// Split into pages (a site's): every page asked for once, in
		// order, each ended once, and the first ended last.
		var pages []*bytes.Buffer
		first := new(bytes.Buffer)
		pages = append(pages, first)
		split := &Pages{MaxEntries: 2, MaxBytes: 200, MaxText: 16, Name: func(k int) string { return fmt.Sprintf("p%d.html", k) },
			Next: func(k int) (io.Writer, error) {
				if k != len(pages) {
					t.Fatalf("page %d asked for after %d pages", k, len(pages))
				}
				pages = append(pages, new(bytes.Buffer))
				return pages[k], nil
			}}
		if err := s.WriteHTML(first, path, HTMLOptions{Pages: split, LocalTimes: true}); err != nil {
			t.Fatal(err)
		}
		for k, p := range pages {
			if n := bytes.Count(p.Bytes(), []byte("</html>")); n != 1 {
				t.Fatalf("page %d of %d ends %d times", k+1, len(pages), n)
			}
			if n := bytes.Count(p.Bytes(), []byte("<script>")); n != 1 {
				t.Fatalf("page %d of %d holds %d scripts", k+1, len(pages), n)
			}
		}
	}
	if _, err := fsck.Check(bytes.NewReader(data), nil); err != nil {
		t.Fatal(err)
	}
	_ = scan.NoParent
}
