package replay

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/panto-dev/panto/internal/rawjson"
	"github.com/panto-dev/panto/pkg/filestore"
	"github.com/panto-dev/panto/pkg/store"
)

// randText returns text with JSON-hostile characters: quotes, escapes,
// control characters, HTML, non-ASCII and invalid UTF-8.
func randText(r *rand.Rand) string {
	pieces := []string{"a", "é", "\"", "\\", "\n", "\t", "<b>", "&", "\x00", "\xff\xfe", "😀", " ", "\u2028"}
	var b []byte
	for range r.IntN(20) {
		b = append(b, pieces[r.IntN(len(pieces))]...)
	}
	return string(b)
}

// randMessage returns a compact message line: a string of JSON text is
// encoded with rawjson.AppendString, which keeps invalid UTF-8 as U+FFFD
// escapes, so invalid bytes are added raw afterwards where allowed.
func randMessage(r *rand.Rand, role string) []byte {
	b := []byte(`{"role":"` + role + `","content":[`)
	for i := range r.IntN(4) {
		if i > 0 {
			b = append(b, ',')
		}
		switch r.IntN(4) {
		case 0:
			b = append(b, `{"type":"text","text":`...)
			b = append(rawjson.AppendString(b, randText(r)), '}')
		case 1:
			b = append(append(b, `{"type":"text","text":"raw `...), "\xff\xfe"...)
			b = append(b, `"}`...)
		case 2:
			b = append(append(b, `{"type":"toolResult","toolUseId":"t1","content":`...), rawjson.AppendString(nil, randText(r))...)
			b = append(b, '}')
		default:
			b = append(b, `{"type":"toolUse","id":"t1","name":"bash","input":`...)
			b = append(rawjson.AppendString(b, fmt.Sprintf(`{"n":%d.50,"s":%q}`, r.IntN(100), "x")), '}')
		}
	}
	b = append(b, ']')
	if role == "assistant" {
		b = append(b, fmt.Sprintf(`,"provider":"p","model":"m","stopReason":"stop","usage":{"input":%d,"output":%d}`, r.IntN(1e6), r.IntN(1e6))...)
	}
	return append(b, '}')
}

// TestRoundTrip: any conversation written with the file store, in batches of
// any size, replays to exactly the message lines that went in.
func TestRoundTrip(t *testing.T) {
	for seed := range uint64(50) {
		r := rand.New(rand.NewPCG(seed, 1))
		path := filepath.Join(t.TempDir(), "s.jsonl")
		var want [][]byte
		var batch []store.Msg
		for i := range 2 + r.IntN(30) {
			role := []string{"user", "assistant", "system"}[r.IntN(3)]
			if i == 0 {
				role = "assistant"
			}
			line := randMessage(r, role)
			m, err := store.ParseMessage(line)
			if err != nil {
				t.Fatalf("seed %d: generated an invalid message %s: %v", seed, line, err)
			}
			want = append(want, line)
			batch = append(batch, m)
			if r.IntN(3) == 0 {
				if _, err := (&filestore.Files{}).Append(context.Background(), path, batch, store.AppendOptions{Provider: "p", Model: "m"}); err != nil {
					t.Fatal(err)
				}
				batch = nil
			}
		}
		if len(batch) > 0 {
			if _, err := (&filestore.Files{}).Append(context.Background(), path, batch, store.AppendOptions{Provider: "p", Model: "m"}); err != nil {
				t.Fatal(err)
			}
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := f.Stat()
		s, err := Open(f, fi.Size())
		if err != nil {
			t.Fatal(err)
		}
		var got [][]byte
		for _, i := range s.Log.Path(s.Log.Leaf()) {
			m, err := s.Message(i)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, m)
		}
		f.Close()
		if len(got) != len(want) {
			t.Fatalf("seed %d: %d messages back, want %d", seed, len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("seed %d message %d:\n got %q\nwant %q", seed, i, got[i], want[i])
			}
		}
	}
}

// TestEachLineBlocks: a path of many blocks (lines larger than a block
// among them) reads back the lines byte for byte, in order, whether fn goes
// to the end or stops early; a file that shrank since the scan is an error,
// never stale bytes.
func TestEachLineBlocks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	var b bytes.Buffer
	b.WriteString(`{"type":"session","version":1,"id":"s","timestamp":"t","cwd":"/"}` + "\n")
	r := rand.New(rand.NewPCG(7, 7))
	parent := "null"
	for i := range 400 {
		size := r.IntN(60 << 10)
		if i%97 == 5 {
			size = blockSize + r.IntN(blockSize) // longer than a block
		}
		fmt.Fprintf(&b, `{"type":"message","id":"e%d","parentId":%s,"timestamp":"t","provider":"p","model":"m","message":{"role":"user","content":[{"type":"text","text":"%s"}]}}`+"\n", i, parent, bytes.Repeat([]byte{'a' + byte(i%26)}, size))
		parent = fmt.Sprintf(`"e%d"`, i)
	}
	s := openSession(t, path, b.Bytes())
	p := s.Log.Path(s.Log.Leaf())
	if len(p) != 400 || len(s.blocks(p)) < 10 {
		t.Fatalf("path of %d entries in %d blocks: want 400 in many", len(p), len(s.blocks(p)))
	}
	var seen []int32
	err := s.EachLine(p, func(i int32, line []byte) error {
		want, err := s.Line(i)
		if err != nil {
			return err
		}
		if !bytes.Equal(line, want) {
			return fmt.Errorf("line of entry %d differs", i)
		}
		seen = append(seen, i)
		return nil
	})
	if err != nil || len(seen) != len(p) || seen[len(seen)-1] != p[len(p)-1] {
		t.Fatalf("EachLine: %v, %d lines", err, len(seen))
	}
	stop := fmt.Errorf("stop")
	if err := s.EachLine(p, func(i int32, _ []byte) error {
		if i == p[50] {
			return stop
		}
		return nil
	}); err != stop {
		t.Fatalf("EachLine stopped by fn: %v, want fn's error", err)
	}
	if err := os.Truncate(path, int64(b.Len()/2)); err != nil {
		t.Fatal(err)
	}
	err = s.EachLine(p, func(int32, []byte) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "shrank") {
		t.Fatalf("EachLine after the file shrank: %v, want an error", err)
	}
}

// openSession writes b to the file at path and opens it as a session (the
// file closed when the test ends).
func openSession(t *testing.T, path string, b []byte) *Session {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	s, err := Open(f, int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}
