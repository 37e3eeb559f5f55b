package pgstore

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/panto-dev/panto/pkg/scan"
	"github.com/panto-dev/panto/pkg/store"
)

// TestCraftedLineKeepsCRC: a row whose line was changed with SQL and whose
// crc column was left as it was (an attacker's UPDATE, or a team's repair
// by hand) is not the file's line: push says the entry differs (nothing
// written) and Shared stops there, instead of trusting the column and
// calling a database that differs the same. The cut it then recognises is
// told by the line's own bytes too.
func TestCraftedLineKeepsCRC(t *testing.T) {
	ctx := context.Background()
	p := open(t, testDB(t))
	id, header, lines, path := pushedFile(ctx, t, p, 3)
	// The same length, other bytes, the old crc.
	if _, err := p.conn.Exec(ctx, `UPDATE panto_entries SET line = overlay(line placing 'Q' from length(line) - 10) WHERE session = $1 AND seq = 2`, id); err != nil {
		t.Fatal(err)
	}
	if _, err := pushFile(ctx, p, path); !errors.Is(err, store.ErrConflict) {
		t.Errorf("push over a crafted line: %v, want ErrConflict", err)
	}
	sh, err := p.Shared(ctx, id, scan.NewReader(bytes.NewReader(fileOf(header, lines)), 0))
	if err != nil || sh.Entries != 1 || sh.Have != 3 {
		t.Errorf("Shared over a crafted line: %+v, %v; want 1 of 3 shared", sh, err)
	}
	var line []byte
	if err := p.conn.QueryRow(ctx, `SELECT line FROM panto_entries WHERE session = $1 AND seq = 2`, id).Scan(&line); err != nil {
		t.Fatal(err)
	}
	if sh.NextLen != int64(len(line)) || sh.NextCRC != crc(line) {
		t.Errorf("the next entry: %d bytes, crc %x; want %d, %x (of the line itself)", sh.NextLen, sh.NextCRC, len(line), crc(line))
	}
}
