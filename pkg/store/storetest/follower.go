package storetest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/panto-dev/panto/pkg/scan"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/panto-dev/panto/pkg/store"
)

// RunFollower holds the Follower newFollower makes (a fresh, empty one each
// call) to the contract of store.Follower: a session and its position are
// committed together; a commit that expects another state writes nothing
// (ErrMoved); a cut keeps the entries asked for; what the store holds is
// told back (Follows, FollowsAll, Header, IDsAfter, Shared, Beyond).
func RunFollower(t *testing.T, newFollower func(t *testing.T) store.Follower) {
	ctx := context.Background()
	f := newFollower(t)
	id, header, lines := SessionFile(t, 6)

	none, err := f.Follows(ctx, id)
	if err != nil || none.Exists || none.Pos != nil || none.Agrees() {
		t.Fatalf("Follows of a session not there: %+v, %v", none, err)
	}

	// New: the session and its position, in one commit.
	first := PositionOf("/f", header, lines[:3])
	if res, err := f.Commit(ctx, store.Commit{ID: id, Header: header, Keep: -1, Lines: lines[:3], To: first}); err != nil || res.Entries != 3 {
		t.Fatalf("first commit: %+v, %v", res, err)
	}
	got, err := f.Follows(ctx, id)
	if err != nil || !got.Exists || got.Entries != 3 || !got.Agrees() || *got.Pos != withTime(first, got.Pos) {
		t.Fatalf("after the first commit: %+v %+v, %v", got, got.Pos, err)
	}
	all, err := f.FollowsAll(ctx)
	if err != nil || all[id].Pos == nil || all[id].Entries != 3 {
		t.Fatalf("FollowsAll: %+v, %v", all, err)
	}
	if h, err := f.Header(ctx, id); err != nil || !bytes.Equal(h, header) {
		t.Fatalf("Header: %q, %v", h, err)
	}

	// A stale expectation (another follower went first) writes nothing.
	for _, c := range []struct {
		name    string
		entries int64
		expect  *store.Position
	}{
		{"no position expected", 3, nil},
		{"other entries", 2, &first},
		{"another position", 3, &store.Position{Bytes: first.Bytes - 1, Lines: 3, Entries: 3, SessionBytes: first.SessionBytes, SessionSum: first.SessionSum}},
	} {
		_, err := f.Commit(ctx, store.Commit{ID: id, Header: header, ExpectEntries: c.entries, Expect: c.expect, Keep: -1, Lines: lines[3:], To: PositionOf("/f", header, lines)})
		if !errors.Is(err, store.ErrMoved) {
			t.Errorf("%s: %v, want ErrMoved", c.name, err)
		}
	}
	if b := ReadAll(t, f, id); !bytes.Equal(b, FileOf(header, lines[:3])) {
		t.Fatalf("a refused commit wrote:\n%s", b)
	}

	// The rest: the file and the session share every entry.
	whole := PositionOf("/f", header, lines)
	if _, err := f.Commit(ctx, store.Commit{ID: id, Header: header, ExpectEntries: 3, Expect: &first, Keep: -1, Lines: lines[3:], To: whole}); err != nil {
		t.Fatal(err)
	}
	file := FileOf(header, lines)
	sh, err := f.Shared(ctx, id, scan.NewReader(bytes.NewReader(file), 0))
	if err != nil || sh.Entries != 6 || sh.Have != 6 || sh.Bytes != int64(len(file)) {
		t.Fatalf("Shared: %+v, %v", sh, err)
	}
	if tail, err := f.Beyond(ctx, id, sh, &whole); err != nil || len(tail.Lens) != 0 {
		t.Fatalf("Beyond the whole file: %+v, %v", tail, err)
	}
	ids, err := f.IDsAfter(ctx, id, 4)
	if err != nil || len(ids) != 2 || ids[0] != session.Classify(lines[4]).ID || ids[1] != session.Classify(lines[5]).ID {
		t.Fatalf("IDsAfter 4: %q, %v", ids, err)
	}

	// A file that holds only two of them: it shares two; the session holds
	// four more, the follower's own.
	two := FileOf(header, lines[:2])
	sh, err = f.Shared(ctx, id, scan.NewReader(bytes.NewReader(two), 0))
	if err != nil || sh.Entries != 2 || sh.Have != 6 || sh.Bytes != int64(len(two)) || sh.NextLen != int64(len(lines[2])) {
		t.Fatalf("Shared with two entries: %+v, %v", sh, err)
	}
	if tail, err := f.Beyond(ctx, id, sh, &whole); err != nil || len(tail.Lens) != 4 || tail.Lens[0] != int64(len(lines[2])) || tail.Committed != 4 {
		t.Fatalf("Beyond two entries: %+v, %v", tail, err)
	}

	// A cut back to two entries.
	cut := PositionOf("/f", header, lines[:2])
	res, err := f.Commit(ctx, store.Commit{ID: id, Header: header, ExpectEntries: 6, Expect: &whole, Keep: 2, To: cut})
	if err != nil || res.Cut != 4 {
		t.Fatalf("cut: %+v, %v", res, err)
	}
	if b := ReadAll(t, f, id); !bytes.Equal(b, two) {
		t.Fatalf("after the cut:\n%s", b)
	}
	// A commit whose position does not match its lines is refused whole.
	if _, err := f.Commit(ctx, store.Commit{ID: id, Header: header, ExpectEntries: 2, Expect: &cut, Keep: -1, Lines: lines[2:3], To: whole}); err == nil {
		t.Fatal("a commit whose position does not match its lines was taken")
	}
	if got, _ := f.Follows(ctx, id); got.Pos == nil || *got.Pos != withTime(cut, got.Pos) {
		t.Fatalf("the position moved: %+v", got.Pos)
	}
}

// SessionFile is a small session file for a Follower's tests: a header
// (a new id) and n entries, each the child of the one before.
func SessionFile(t *testing.T, n int) (id string, header []byte, lines [][]byte) {
	t.Helper()
	id, err := session.NewSessionID()
	if err != nil {
		t.Fatal(err)
	}
	header = session.Header{ID: id, Timestamp: "2026-12-01T00:00:00.000Z", Cwd: "/t"}.AppendLine(nil)
	header = header[:len(header)-1]
	parent := ""
	for i := range n {
		eid := strings.Repeat(string(rune('a'+i%6)), 7) + string(rune('0'+i/6))
		p := "null"
		if parent != "" {
			p = `"` + parent + `"`
		}
		lines = append(lines, []byte(`{"type":"message","id":"`+eid+`","parentId":`+p+`,"timestamp":"2026-12-01T00:00:0`+string(rune('0'+i%10))+`.000Z","provider":"p","model":"m","message":{"role":"user","content":[{"type":"text","text":"q"}]}}`))
		parent = eid
	}
	return id, header, lines
}

// FileOf is a session file's bytes: header and lines, each with its "\n".
func FileOf(header []byte, lines [][]byte) []byte {
	b := append(append([]byte(nil), header...), '\n')
	for _, l := range lines {
		b = append(append(b, l...), '\n')
	}
	return b
}

// PositionOf is the position after the header and lines of a session
// file followed from path into its own session.
func PositionOf(path string, header []byte, lines [][]byte) store.Position {
	b := FileOf(header, lines)
	sum := store.Sum(0, b)
	return store.Position{Source: path, Bytes: int64(len(b)), Lines: int64(len(lines)) + 1, Sum: sum,
		Entries: int64(len(lines)), SessionBytes: int64(len(b)), SessionSum: sum}
}

// withTime is p with the time the store stamped on got.
func withTime(p store.Position, got *store.Position) store.Position {
	p.Updated = got.Updated
	return p
}

// ReadAll reads session id of st back as a session file's bytes.
func ReadAll(t *testing.T, st store.Store, id string) []byte {
	t.Helper()
	r, err := st.Open(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(io.NewSectionReader(r, 0, r.Size()))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
