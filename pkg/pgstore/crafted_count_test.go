package pgstore

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/panto-dev/panto/pkg/store"
)

// TestCraftedCounts: a session's row whose count of entries or size is
// not its entries' (set with SQL), or whose entries skip a sequence
// number, is no session: every read refuses it (ErrBadRow), as it refuses
// a line that is not the row's. Before, export gave the lines and
// panto-fsck called it clean, while push said "9 there already: pull it"
// and append went on at sequence 10.
func TestCraftedCounts(t *testing.T) {
	ctx := context.Background()
	p := open(t, testDB(t))
	id, _, _, _ := pushedFile(ctx, t, p, 4)
	read := func() error {
		r, err := p.Open(ctx, id)
		if err != nil {
			return err
		}
		defer r.Close()
		_, err = io.Copy(io.Discard, r)
		return err
	}
	if err := read(); err != nil {
		t.Fatalf("the session as pushed: %v", err)
	}
	for _, c := range []struct{ name, set, undo string }{
		{"more entries than rows", `UPDATE panto_sessions SET entries = 9 WHERE id = $1`, `UPDATE panto_sessions SET entries = 4 WHERE id = $1`},
		{"fewer entries than rows", `UPDATE panto_sessions SET entries = 1 WHERE id = $1`, `UPDATE panto_sessions SET entries = 4 WHERE id = $1`},
		{"another size", `UPDATE panto_sessions SET bytes = bytes + 1 WHERE id = $1`, `UPDATE panto_sessions SET bytes = bytes - 1 WHERE id = $1`},
		{"a gap in the sequence", `UPDATE panto_entries SET seq = 10 WHERE session = $1 AND seq = 4`, `UPDATE panto_entries SET seq = 4 WHERE session = $1 AND seq = 10`},
	} {
		if _, err := p.conn.Exec(ctx, c.set, id); err != nil {
			t.Fatal(err)
		}
		if err := read(); !errors.Is(err, store.ErrBadRow) {
			t.Errorf("%s: read: %v, want ErrBadRow", c.name, err)
		}
		if _, err := p.conn.Exec(ctx, c.undo, id); err != nil {
			t.Fatal(err)
		}
	}
	if err := read(); err != nil {
		t.Fatalf("the session put back: %v", err)
	}
}
