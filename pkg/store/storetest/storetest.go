// Package storetest is the conformance suite every store must pass: the
// same calls, the same answers, whatever holds the sessions (STYLE §21,
// as testing/fstest checks any fs.FS).
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

// Cwd is the working directory the suite's sessions belong to.
const Cwd = "/home/u/proj"

func msg(t *testing.T, line string) store.Msg {
	t.Helper()
	m, err := store.ParseMessage([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func user(t *testing.T, text string) store.Msg {
	return store.Msg{Raw: session.TextMessage("user", text), Role: "user"}
}

// reply is an assistant message; its text may hold any bytes, invalid
// UTF-8 included.
func reply(t *testing.T, text string) store.Msg {
	return msg(t, `{"role":"assistant","content":[{"type":"text","text":"`+text+`"}],"provider":"p","model":"m","stopReason":"stop","usage":{"input":3,"output":2}}`)
}

// ids returns the entry ids of lines.
func ids(lines []byte) []string {
	var out []string
	for _, l := range bytes.Split(bytes.TrimSuffix(lines, []byte("\n")), []byte("\n")) {
		out = append(out, session.Classify(l).ID)
	}
	return out
}

// read returns the session's bytes and its scan; the scan must find it clean.
func read(t *testing.T, st store.Store, name string) ([]byte, *scan.Log) {
	t.Helper()
	r, err := st.Open(context.Background(), name)
	if err != nil {
		t.Fatalf("open %s: %v", name, err)
	}
	defer r.Close()
	b, err := io.ReadAll(io.NewSectionReader(r, 0, r.Size()))
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(b)) != r.Size() {
		t.Fatalf("size %d, read %d bytes", r.Size(), len(b))
	}
	l, err := scan.Scan(bytes.NewReader(b), scan.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !l.HeaderOK || l.Damage().Verdict != scan.Clean || len(l.Corrupt)+len(l.Invalid)+len(l.Dangling)+len(l.DupIDs) > 0 {
		t.Fatalf("%s is not clean: %+v", name, l)
	}
	return b, l
}

// Run holds the store newStore makes (a fresh, empty one each call) to
// the contract of package store.
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	ctx := context.Background()
	t.Run("created by its first reply", func(t *testing.T) {
		st := newStore(t)
		name, err := st.NewName(Cwd)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Append(ctx, name, []store.Msg{user(t, "hi")}, store.AppendOptions{Provider: "p", Model: "m", Cwd: Cwd}); !errors.Is(err, store.ErrNoReply) {
			t.Fatalf("a prompt alone: %v, want ErrNoReply", err)
		}
		if _, err := st.Open(ctx, name); !errors.Is(err, store.ErrNoSuchSession) {
			t.Fatalf("open before the first reply: %v, want ErrNoSuchSession", err)
		}
		res, err := st.Append(ctx, name, []store.Msg{user(t, "hi"), reply(t, "hello")}, store.AppendOptions{Cwd: Cwd})
		if err != nil || !res.Created {
			t.Fatalf("first batch: %+v %v", res, err)
		}
		b, l := read(t, st, name)
		if l.Header.Cwd != Cwd || len(l.Nodes) != 2 || !bytes.HasSuffix(b, res.Lines) {
			t.Fatalf("got %q", b)
		}
		// The prompt was sent where its reply came from.
		if s, ok := l.Active(1); !ok || s != (session.Stamp{Provider: "p", Model: "m"}) {
			t.Fatalf("stamp %+v %v", s, ok)
		}
	})
	t.Run("batches, stamps, branches and the expected leaf", func(t *testing.T) {
		st := newStore(t)
		name, _ := st.NewName(Cwd)
		first, err := st.Append(ctx, name, []store.Msg{user(t, "one"), reply(t, "1")}, store.AppendOptions{Cwd: Cwd, Provider: "p0", Model: "m0"})
		if err != nil {
			t.Fatal(err)
		}
		firstIDs := ids(first.Lines)
		leaf := firstIDs[1]
		wrong := "ffffffff"
		before, _ := read(t, st, name)
		if _, err := st.Append(ctx, name, []store.Msg{user(t, "x")}, store.AppendOptions{ExpectLeaf: &wrong}); !errors.Is(err, store.ErrLeafMoved) {
			t.Fatalf("a wrong leaf: %v, want ErrLeafMoved", err)
		}
		none := ""
		if _, err := st.Append(ctx, name, []store.Msg{user(t, "x")}, store.AppendOptions{ExpectLeaf: &none}); !errors.Is(err, store.ErrLeafMoved) {
			t.Fatalf("no leaf expected of a session that has one: %v, want ErrLeafMoved", err)
		}
		if after, _ := read(t, st, name); !bytes.Equal(before, after) {
			t.Fatal("a refused batch changed the session")
		}
		// The active stamp goes on; a tool round; the right leaf.
		second, err := st.Append(ctx, name, []store.Msg{user(t, "two"), msg(t, `{"role":"assistant","content":[{"type":"toolUse","id":"t1","name":"bash","input":"{\"command\":\"ls\"}"}],"provider":"p","model":"m","stopReason":"toolUse"}`),
			msg(t, `{"role":"user","content":[{"type":"toolResult","toolUseId":"t1","content":"a.txt"}]}`)}, store.AppendOptions{ExpectLeaf: &leaf})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(second.Lines, []byte(`"parentId":"`+leaf+`"`)) || strings.Count(string(second.Lines), `"provider":"p0","model":"m0","message"`) != 2 {
			t.Fatalf("second batch %s", second.Lines)
		}
		// A branch from the first prompt, stamped as that prompt was.
		branch, err := st.Append(ctx, name, []store.Msg{user(t, "again")}, store.AppendOptions{Parent: firstIDs[0]})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(branch.Lines, []byte(`"parentId":"`+firstIDs[0]+`","timestamp"`)) || !bytes.Contains(branch.Lines, []byte(`"provider":"p0","model":"m0"`)) {
			t.Fatalf("branch %s", branch.Lines)
		}
		if _, err := st.Append(ctx, name, []store.Msg{user(t, "x")}, store.AppendOptions{Parent: "00000000"}); !errors.Is(err, store.ErrNoParent) {
			t.Fatalf("an unknown parent: %v, want ErrNoParent", err)
		}
		// A stamp given wins.
		third, err := st.Append(ctx, name, []store.Msg{user(t, "three")}, store.AppendOptions{Provider: "p9", Model: "m9"})
		if err != nil || !bytes.Contains(third.Lines, []byte(`"provider":"p9","model":"m9"`)) {
			t.Fatalf("a given stamp: %s %v", third.Lines, err)
		}
		b, l := read(t, st, name)
		want := append(append(append(append([]byte(nil), first.Lines...), second.Lines...), branch.Lines...), third.Lines...)
		if !bytes.HasSuffix(b, want) || len(l.Nodes) != 7 || l.Messages != 7 {
			t.Fatalf("session %s\nwant the batches %s", b, want)
		}
	})
	t.Run("bytes kept exactly", func(t *testing.T) {
		st := newStore(t)
		name, _ := st.NewName(Cwd)
		odd := "caf\xc3\xa9 \xff\xfe \\u00e9 \\\"quoted\\\" \\n 日本"
		res, err := st.Append(ctx, name, []store.Msg{user(t, "hi"), reply(t, odd)}, store.AppendOptions{Cwd: Cwd})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := read(t, st, name)
		if !bytes.HasSuffix(b, res.Lines) || !bytes.Contains(b, []byte(odd)) {
			t.Fatalf("the bytes changed: %q", b)
		}
	})
	t.Run("truncate after an entry", func(t *testing.T) {
		st := newStore(t)
		name, _ := st.NewName(Cwd)
		res, err := st.Append(ctx, name, []store.Msg{user(t, "a"), reply(t, "b"), user(t, "c"), reply(t, "d")}, store.AppendOptions{Cwd: Cwd})
		if err != nil {
			t.Fatal(err)
		}
		all := ids(res.Lines)
		if _, err := st.Truncate(ctx, name, "00000000"); !errors.Is(err, store.ErrNoParent) {
			t.Fatalf("an unknown entry: %v", err)
		}
		cut, err := st.Truncate(ctx, name, all[1])
		if err != nil || cut == nil || cut.Entries != 2 || cut.SavedAs == "" {
			t.Fatalf("cut %+v %v", cut, err)
		}
		if cut, err := st.Truncate(ctx, name, all[1]); err != nil || cut != nil {
			t.Fatalf("nothing left to cut: %+v %v", cut, err)
		}
		_, l := read(t, st, name)
		if len(l.Nodes) != 2 || l.ID(l.Leaf()) != all[1] {
			t.Fatalf("after the cut: %d entries, leaf %s", len(l.Nodes), l.ID(l.Leaf()))
		}
		next, err := st.Append(ctx, name, []store.Msg{user(t, "e")}, store.AppendOptions{ExpectLeaf: &all[1]})
		if err != nil || !bytes.Contains(next.Lines, []byte(`"parentId":"`+all[1]+`"`)) {
			t.Fatalf("append after the cut: %s %v", next.Lines, err)
		}
	})
	t.Run("truncate after the header", func(t *testing.T) {
		st := newStore(t)
		name, _ := st.NewName(Cwd)
		res, err := st.Append(ctx, name, []store.Msg{user(t, "a"), reply(t, "b")}, store.AppendOptions{Cwd: Cwd})
		if err != nil {
			t.Fatal(err)
		}
		b, l := read(t, st, name)
		cut, err := st.Truncate(ctx, name, l.Header.ID) // no entry has the session's id: every entry
		if err != nil || cut == nil || cut.Entries != 2 || cut.Bytes != int64(len(res.Lines)) {
			t.Fatalf("cut %+v %v, want the 2 entries (%d bytes)", cut, err, len(res.Lines))
		}
		r, err := st.Open(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		left, _ := io.ReadAll(io.NewSectionReader(r, 0, r.Size()))
		r.Close()
		if want := b[:len(b)-len(res.Lines)]; !bytes.Equal(left, want) {
			t.Fatalf("after the cut: %q, want the header %q", left, want)
		}
		again, err := st.Append(ctx, name, []store.Msg{user(t, "c")}, store.AppendOptions{Provider: "p", Model: "m"})
		if err != nil || !bytes.Contains(again.Lines, []byte(`"parentId":null`)) {
			t.Fatalf("append after the cut: %s %v", again.Lines, err)
		}
	})
	t.Run("list and resolve", func(t *testing.T) {
		st := newStore(t)
		var names []string
		for i := range 3 {
			name, _ := st.NewName(Cwd)
			cwd := Cwd
			if i == 2 {
				cwd = "/elsewhere"
				name, _ = st.NewName(cwd)
			}
			if _, err := st.Append(ctx, name, []store.Msg{user(t, "hi"), reply(t, "yo")}, store.AppendOptions{Cwd: cwd}); err != nil {
				t.Fatal(err)
			}
			names = append(names, name)
		}
		list, err := st.List(ctx, Cwd, false, func(err error) { t.Error(err) })
		if err != nil || len(list) != 2 {
			t.Fatalf("list of %s: %+v %v", Cwd, list, err)
		}
		all, err := st.List(ctx, Cwd, true, func(err error) { t.Error(err) })
		if err != nil || len(all) != 3 {
			t.Fatalf("list of all: %+v %v", all, err)
		}
		for _, s := range all {
			if s.Messages != 2 || s.Created.IsZero() || s.Modified.IsZero() || !session.IsUUID(s.ID) {
				t.Fatalf("summary %+v", s)
			}
		}
		id := all[0].ID
		got, err := st.Resolve(ctx, Cwd, true, id[:20])
		if err != nil || got != all[0].Path {
			t.Fatalf("resolve %s: %s %v, want %s", id[:20], got, err, all[0].Path)
		}
		if _, err := st.Resolve(ctx, Cwd, true, "0"); !errors.Is(err, store.ErrAmbiguousID) && !errors.Is(err, store.ErrNoSuchSession) {
			t.Fatalf("a prefix of all: %v", err)
		}
		if _, err := st.Resolve(ctx, Cwd, true, id[:8]); !errors.Is(err, store.ErrAmbiguousID) {
			t.Fatalf("a prefix shared by sessions made within a minute: %v, want ErrAmbiguousID", err)
		}
		if _, err := st.Resolve(ctx, Cwd, true, "ffff"); !errors.Is(err, store.ErrNoSuchSession) {
			t.Fatalf("no such prefix: %v", err)
		}
	})
}
