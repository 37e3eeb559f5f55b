package agents

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"slices"
	"strings"
)

// A cost report of a whole OpenCode database needs one thing of the part
// table: the step-finish parts (ocStepFinish), a sixth of its rows, spread
// over every page of it among the texts and tools' outputs. Through SQL,
// SQLite reads those pages one at a time (a pread each, 4 KiB) and runs its
// program on every row: most of a cost report's time. scanParts reads the
// table's B-tree from the file itself instead, with SQLite's file format
// (https://sqlite.org/fileformat2.html): the interior pages from the root
// down, then the leaves in the file's order, neighbours read together, and
// of each row only the three values a step-finish needs.
//
// It is used only where it reads exactly what SQL would: the user's file
// opened immutable (no -wal beside it, so every committed page is in the
// file), unchanged since it was opened, in UTF-8, with a part table of the
// columns read, each a text. Anything else it does not expect, a damaged
// page included, makes it give up (errNoScan) and the parts are read
// through SQL, as before, which says what is wrong with the file.
// TestOpenCodeScanSame holds the two ways to the same sums.

// errNoScan is a database scanParts leaves to SQL.
var errNoScan = errors.New("the part table is read through SQL")

// maxDepth bounds a B-tree's depth, as SQLite's cursors do (20 levels).
const maxDepth = 20

// partTable is where the part table's B-tree begins and where, in a row,
// are the values a cost report reads.
type partTable struct {
	root            uint32
	msg, sess, data int // the values' positions in a row
}

// partTableOf finds the part table in the schema; false for a table
// scanParts does not read (no rowid, generated columns, a value that is
// the rowid itself).
func (d *ocDB) partTableOf() (partTable, bool) {
	var t partTable
	var sql string
	if err := d.db.QueryRow(`SELECT rootpage, sql FROM sqlite_schema WHERE type = 'table' AND name = 'part'`).Scan(&t.root, &sql); err != nil {
		return t, false
	}
	if strings.Contains(strings.ToUpper(sql), "WITHOUT") { // WITHOUT ROWID: an index's B-tree
		return t, false
	}
	rows, err := d.db.Query(`SELECT cid, name, pk, hidden FROM pragma_table_xinfo('part') ORDER BY cid`)
	if err != nil {
		return t, false
	}
	defer rows.Close()
	found := 0
	for i := 0; rows.Next(); i++ {
		var cid, pk, hidden int
		var name string
		if rows.Scan(&cid, &name, &pk, &hidden) != nil || cid != i || hidden != 0 {
			return t, false // a generated or hidden column is not where its position says
		}
		var at *int
		switch name {
		case "message_id":
			at = &t.msg
		case "session_id":
			at = &t.sess
		case "data":
			at = &t.data
		default:
			continue
		}
		if pk != 0 { // the rowid itself is stored as NULL
			return t, false
		}
		*at = i
		found++
	}
	return t, rows.Err() == nil && found == 3 && t.root > 1
}

// dbFile reads a SQLite database file by pages.
type dbFile struct {
	f      *os.File
	size   int    // of a page
	usable int    // of a page: its size less the bytes reserved at its end
	pages  uint32 // in the file
	one    []byte
}

// openDBFile opens the immutable database of d for scanParts, the same
// file d reads: false if it is not (it changed since d opened it) or its
// header says something scanParts does not read.
func (d *ocDB) openDBFile() (*dbFile, bool) {
	if d.snapshot != "" || d.changed() {
		return nil, false
	}
	f, err := os.Open(d.path)
	if err != nil {
		return nil, false
	}
	fi, err := f.Stat()
	if err != nil || fi.Size() != d.state.size || inode(fi) != d.state.ino {
		f.Close()
		return nil, false
	}
	h := make([]byte, 100)
	if _, err := f.ReadAt(h, 0); err != nil || !IsSQLite(h) {
		f.Close()
		return nil, false
	}
	size := int(binary.BigEndian.Uint16(h[16:]))
	if size == 1 {
		size = 65536
	}
	usable := size - int(h[20])
	if size < 512 || size > 65536 || size&(size-1) != 0 || usable < 480 ||
		binary.BigEndian.Uint32(h[56:]) != 1 { // text in UTF-8
		f.Close()
		return nil, false
	}
	pages := uint32(fi.Size() / int64(size))
	// The header's count of pages, when it is valid (written by the same
	// change as the change counter), is the database's; what is after it
	// in the file is not.
	if n := binary.BigEndian.Uint32(h[28:]); n > 0 && binary.BigEndian.Uint32(h[92:]) == binary.BigEndian.Uint32(h[24:]) {
		pages = min(pages, n)
	}
	return &dbFile{f: f, size: size, usable: usable, pages: pages, one: make([]byte, size)}, true
}

// read reads n pages from page p on (numbered from 1) into buf.
func (b *dbFile) read(p uint32, n int, buf []byte) ([]byte, error) {
	if p < 1 || uint64(p)+uint64(n)-1 > uint64(b.pages) {
		return nil, errNoScan
	}
	buf = buf[:n*b.size]
	if _, err := b.f.ReadAt(buf, int64(p-1)*int64(b.size)); err != nil {
		return nil, errNoScan
	}
	return buf, nil
}

// Page types of a table's B-tree (the first byte of a page's header).
const (
	tableInterior = 0x05
	tableLeaf     = 0x0d
)

// cells is the cell pointers of a page of type want (its header at the
// page's start: page 1, the schema's, is never one of the part table's).
func (b *dbFile) cells(pg []byte, want byte, root bool) ([]byte, error) {
	if pg[0] != want {
		return nil, errNoScan
	}
	hdr := 8
	if want == tableInterior {
		hdr = 12
	}
	// As SQLite reads a page: no more cells than fit, and a page below the
	// root never empty.
	n := int(binary.BigEndian.Uint16(pg[3:]))
	if hdr+2*n > b.usable || n > (b.usable-8)/6 || n == 0 && !root {
		return nil, errNoScan
	}
	return pg[hdr : hdr+2*n], nil
}

// leaves lists the leaf pages of the B-tree at root, in the file's order:
// its interior pages are read a level at a time (all leaves are at the
// same depth).
func (b *dbFile) leaves(root uint32) ([]uint32, error) {
	level := []uint32{root}
	for depth := 0; depth < maxDepth; depth++ {
		first, err := b.read(level[0], 1, b.one)
		if err != nil {
			return nil, err
		}
		if first[0] == tableLeaf {
			slices.Sort(level)
			return level, nil
		}
		var next []uint32
		for _, p := range level {
			pg, err := b.read(p, 1, b.one)
			if err != nil {
				return nil, err
			}
			ptrs, err := b.cells(pg, tableInterior, p == root)
			if err != nil {
				return nil, err
			}
			for i := 0; i < len(ptrs); i += 2 {
				c := int(binary.BigEndian.Uint16(ptrs[i:]))
				if c < len(ptrs)+12 || c+4 > b.usable {
					return nil, errNoScan
				}
				next = append(next, binary.BigEndian.Uint32(pg[c:]))
			}
			next = append(next, binary.BigEndian.Uint32(pg[8:]))
			if len(next) > int(b.pages) { // pages met twice: no tree
				return nil, errNoScan
			}
		}
		level = next
	}
	return nil, errNoScan
}

// runPages is how many pages scanParts reads at once at most (1 MiB of
// 4 KiB pages), and runGap how many pages of other tables it reads over
// between two of the part table's rather than reading them apart.
const (
	runBytes = 1 << 20
	runGap   = 32
)

// scanParts calls fn with the message id, session id and data of every
// row of the part table whose data ocStepFinish selects, as SQL would
// give them; the three are views into a buffer reused after fn returns.
// errNoScan: the table is to be read through SQL, fn having been called
// for none of its rows or some.
func (d *ocDB) scanParts(stop func() error, fn func(msg, sess, data []byte)) error {
	t, ok := d.partTableOf()
	if !ok {
		return errNoScan
	}
	b, ok := d.openDBFile()
	if !ok {
		return errNoScan
	}
	defer b.f.Close()
	leaves, err := b.leaves(t.root)
	if err != nil {
		return err
	}
	var r rowReader
	r.b, r.t = b, t
	buf := make([]byte, max(runBytes, b.size))
	most := uint32(len(buf) / b.size)
	for i := 0; i < len(leaves); {
		if err := stop(); err != nil {
			return err
		}
		j := i + 1
		for j < len(leaves) && leaves[j]-leaves[i] < most && leaves[j]-leaves[j-1] <= runGap {
			j++
		}
		run, err := b.read(leaves[i], int(leaves[j-1]-leaves[i])+1, buf)
		if err != nil {
			return err
		}
		for _, p := range leaves[i:j] {
			k := int(p-leaves[i]) * b.size
			if err := r.leaf(run[k:k+b.size], p == t.root, fn); err != nil {
				return err
			}
		}
		i = j
	}
	return nil
}

// rowReader reads the rows of the part table's leaf pages.
type rowReader struct {
	b     *dbFile
	t     partTable
	whole []byte // a row's payload put together from its overflow pages
	types []uint64
}

// leaf reads the rows of one leaf page.
func (r *rowReader) leaf(pg []byte, root bool, fn func(msg, sess, data []byte)) error {
	b := r.b
	ptrs, err := b.cells(pg, tableLeaf, root)
	if err != nil {
		return err
	}
	u := b.usable
	maxLocal := u - 35
	minLocal := (u-12)*32/255 - 23
	for i := 0; i < len(ptrs); i += 2 {
		c := int(binary.BigEndian.Uint16(ptrs[i:]))
		if c < len(ptrs)+8 || c >= u {
			return errNoScan
		}
		size, n := uvarint(pg[c:u])
		if n == 0 || size > 1<<31 {
			return errNoScan
		}
		c += n
		if _, n = uvarint(pg[c:u]); n == 0 { // the rowid
			return errNoScan
		}
		c += n
		p := int(size)
		local := p
		if p > maxLocal {
			local = minLocal + (p-minLocal)%(u-4)
			if local > maxLocal {
				local = minLocal
			}
		}
		end := c + local
		if local < p {
			end += 4
		}
		if end > u {
			return errNoScan
		}
		if err := r.row(pg[c:c+local], pg[c+local:end], p, fn); err != nil {
			return err
		}
	}
	return nil
}

// row reads one row: its payload's bytes on the leaf (local), the number
// of its first overflow page (4 bytes, none when it has none) and its
// whole size.
func (r *rowReader) row(local, overflow []byte, size int, fn func(msg, sess, data []byte)) error {
	hlen, n := uvarint(local)
	if n == 0 || hlen > uint64(len(local)) || int(hlen) < n {
		return errNoScan
	}
	r.types = r.types[:0]
	for h := n; h < int(hlen); {
		st, m := uvarint(local[h:hlen])
		if m == 0 {
			return errNoScan
		}
		r.types = append(r.types, st)
		h += m
	}
	last := max(r.t.msg, r.t.sess, r.t.data)
	if len(r.types) <= last { // a row written before the column was added
		return errNoScan
	}
	var at [3][2]int // the three values' offsets in the payload
	off := int(hlen)
	for col, st := range r.types {
		l, ok := valueLen(st)
		if !ok {
			return errNoScan
		}
		for k, want := range [3]int{r.t.msg, r.t.sess, r.t.data} {
			if col == want {
				if st < 13 || st%2 == 0 { // not a text
					return errNoScan
				}
				at[k] = [2]int{off, off + l}
			}
		}
		off += l
	}
	if off != size {
		return errNoScan
	}
	payload := local
	if at[0][1] > len(local) || at[1][1] > len(local) || at[2][1] > len(local) {
		// Most rows that spill over are tools' outputs: their first bytes
		// on the leaf say they are no step-finish, and the rest is not read.
		if d := at[2]; d[0]+21 <= len(local) && skipPart(local[d[0]:d[0]+21]) {
			return nil
		}
		if len(overflow) != 4 {
			return errNoScan
		}
		whole, err := r.readOverflow(local, binary.BigEndian.Uint32(overflow), size)
		if err != nil {
			return err
		}
		payload = whole
	}
	data := payload[at[2][0]:at[2][1]]
	if !stepFinish(data) {
		return nil
	}
	fn(payload[at[0][0]:at[0][1]], payload[at[1][0]:at[1][1]], data)
	return nil
}

// stepFinish is ocStepFinish in Go, on a part's whole data: a part that
// begins {"type":" is one when its type is "step-finish"; any other when
// it holds "step-finish" (ocReply checks the type). substr counts
// characters and these are ASCII, so bytes give the same answer; instr
// compares bytes.
func stepFinish(data []byte) bool {
	if bytes.HasPrefix(data, typeFirst) {
		return len(data) >= 21 && string(data[9:21]) == `step-finish"`
	}
	return bytes.Contains(data, []byte(`"step-finish"`))
}

// skipPart is whether a part's first 21 bytes say it is no step-finish.
func skipPart(head []byte) bool {
	return bytes.HasPrefix(head, typeFirst) && string(head[9:21]) != `step-finish"`
}

var typeFirst = []byte(`{"type":"`)

// readOverflow puts a row's payload together: its bytes on the leaf, then
// those of its chain of overflow pages from first.
func (r *rowReader) readOverflow(local []byte, first uint32, size int) ([]byte, error) {
	b := r.b
	r.whole = append(r.whole[:0], local...)
	for p := first; len(r.whole) < size; {
		if p == 0 || len(r.whole) > size {
			return nil, errNoScan
		}
		pg, err := b.read(p, 1, b.one)
		if err != nil {
			return nil, err
		}
		p = binary.BigEndian.Uint32(pg)
		r.whole = append(r.whole, pg[4:4+min(b.usable-4, size-len(r.whole))]...)
	}
	return r.whole, nil
}

// valueLen is the length in a row of a value of serial type st.
func valueLen(st uint64) (int, bool) {
	switch {
	case st <= 4:
		return int(st), true
	case st == 5:
		return 6, true
	case st == 6 || st == 7:
		return 8, true
	case st <= 9:
		return 0, true
	case st <= 11: // reserved
		return 0, false
	case st > 1<<32:
		return 0, false
	}
	return int(st-12) / 2, true
}

// uvarint reads one of SQLite's big-endian varints from b: its value and
// length, 0 for none.
func uvarint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < 8; i++ {
		if i >= len(b) {
			return 0, 0
		}
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	if len(b) < 9 {
		return 0, 0
	}
	return v<<8 | uint64(b[8]), 9
}
