package scan

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/panto-dev/panto/internal/ordered"
	"github.com/panto-dev/panto/pkg/session"
)

// Parent values of a Node that are not indexes.
const (
	NoParent       = -1 // parentId null: a root
	DanglingParent = -2 // parentId names no earlier entry
)

// Node is one entry of the tree: a valid message entry, or an entry of an
// unknown type that has an id (Log.ID). A Node holds no pointers: the
// garbage collector never scans the index of a large log.
type Node struct {
	idOff  int64 // the id: Log.idBytes[idOff:idOff+idLen]
	idLen  uint32
	Off    int64 // offset of the line
	Len    int64 // length of the line without "\n"
	Parent int32 // index in Log.Nodes, or NoParent, or DanglingParent
	Stamp  int32 // index in Log.Stamps of a user entry's stamp; -1 otherwise
	Line   int32
	MsgOff uint32       // the "message" value of a message entry: line[MsgOff:MsgOff+MsgLen]
	MsgLen uint32       // (both 0 for a message of 4 GiB or more: find it with session.MessageOf)
	Kind   session.Kind // session.KindMessage or session.KindUnknown
	Role   session.Role
	Tools  session.ToolKinds // the kinds of tool blocks of a message
}

// Message returns the "message" value of node n within its line.
func (n *Node) Message(line []byte) []byte {
	if n.MsgLen > 0 && int(n.MsgOff)+int(n.MsgLen) <= len(line) {
		return line[n.MsgOff : n.MsgOff+n.MsgLen]
	}
	return session.MessageOf(line)
}

// Problem is a finding at a line.
type Problem struct {
	Line int
	Off  int64
	ID   string // the entry concerned, when there is one
	What string
}

func (p Problem) String() string {
	if p.ID != "" {
		return fmt.Sprintf("line %d (entry %s): %s", p.Line, p.ID, p.What)
	}
	return fmt.Sprintf("line %d: %s", p.Line, p.What)
}

// Log is what one pass over a session file learns: the header, the tree of
// entries as a small index (ids, parents, offsets; never the lines
// themselves), and every problem met on the way.
type Log struct {
	Header     session.Line
	HeaderOK   bool            // line 1 is a valid header
	Nodes      []Node          // in file order
	Stamps     []session.Stamp // distinct stamps of user entries
	Size       int64           // bytes read
	Good       int64           // offset after the last terminated, complete line
	Lines      int             // lines read, the torn tail included
	Messages   int             // user and assistant entries
	LastTime   string          // timestamp of the last entry
	Corrupt    []Problem       // lines that are not complete JSON objects
	Invalid    []Problem       // complete objects that break the rules
	Headers    []Problem       // header lines after line 1
	DupIDs     []Problem
	Dangling   []Problem
	ExtraRoots []Problem      // entries after the first whose parentId is null
	Unknown    map[string]int // unknown entry types and how many lines each
	Stopped    *Problem       // where a StopAtCorrupt scan stopped
	CorruptMid bool           // a corrupt line lies before Good
	// With ScanOptions.Tools, the tool blocks of message entries paired:
	ToolUses    []ToolUse // every toolUse id, where it is first used, in file order
	Unanswering []Problem // toolResult blocks that answer no earlier toolUse (ID: the id they name)
	ids         idIndex
	anonymous   []int64 // offsets of the entries of unknown types without an id
	idBytes     []byte  // the ids of Nodes, end to end
	toolIDs     idIndex // ToolUses by id: -1-i for ToolUses[i] (its taken are their ids)
	rootUsers   int     // Nodes that are root user messages
}

// ToolUse is a toolUse id (Log.ToolUseID): the message that first uses it
// and how many toolResult blocks after it answer it.
type ToolUse struct {
	Off     int64
	Line    int32
	Node    int32 // the message's node, or -1 when it has none (its entry id repeats an earlier one)
	Answers int32
}

// ToolUseID returns the id of ToolUses[i].
func (l *Log) ToolUseID(i int) string { return l.toolIDs.taken[i] }

// ID returns the id of node i.
func (l *Log) ID(i int32) string { return string(l.id(i)) }

func (l *Log) id(i int32) []byte {
	n := &l.Nodes[i]
	return l.idBytes[n.idOff : n.idOff+int64(n.idLen)]
}

// Torn reports whether the file ends in a torn tail: bytes after the last
// terminated, complete line.
func (l *Log) Torn() bool { return l.Size > l.Good }

// Leaf is the index of the last node, or -1 when there is none.
func (l *Log) Leaf() int32 { return int32(len(l.Nodes)) - 1 }

// Lookup returns the index of the node with id, or -1.
func (l *Log) Lookup(id string) int32 {
	if _, i, ok := l.ids.find(hashID(id), id, l); ok && i >= 0 {
		return i
	}
	return -1
}

// Taken reports whether id is used by any line of the file.
func (l *Log) Taken(id string) bool { _, _, ok := l.ids.find(hashID(id), id, l); return ok }

// Path returns the node indexes from the root to node i, in order. It stops
// at a dangling parent.
func (l *Log) Path(i int32) []int32 {
	var p []int32
	for ; i >= 0; i = l.Nodes[i].Parent {
		p = append(p, i)
	}
	for a, b := 0, len(p)-1; a < b; a, b = a+1, b-1 {
		p[a], p[b] = p[b], p[a]
	}
	return p
}

// Active returns the stamp of the last user entry on the path to node i.
func (l *Log) Active(i int32) (session.Stamp, bool) {
	for ; i >= 0; i = l.Nodes[i].Parent {
		if s := l.Nodes[i].Stamp; s >= 0 {
			return l.Stamps[s], true
		}
	}
	return session.Stamp{}, false
}

// ScanOptions say how far Scan reads.
type ScanOptions struct {
	// StopAtCorrupt stops at the first corrupt or unterminated line: the
	// readers' point-in-time view (SPEC §5). Otherwise the whole file is
	// read, as writers and fsck must.
	StopAtCorrupt bool
	// OnLine, when set, sees every line after it is classified: its number,
	// offset, bytes (without "\n", valid only during the call), whether it
	// was terminated, and its classification (nil for an unterminated line,
	// which is never classified).
	OnLine func(n int, off int64, raw []byte, terminated bool, c *session.Line)
	// CheckUTF8 sets Line.BadUTF8, checked where lines are classified (in
	// parallel for large inputs).
	CheckUTF8 bool
	// Tools sets Line.Tools: the tool blocks of message entries.
	Tools bool
	// NoIndex builds no tree: the Log keeps its header, counts and
	// problems, and OnLine sees every line. For readers that stream, whose
	// memory must not grow with the log.
	NoIndex bool
	// Reuse is a Log from an earlier scan that its caller is done with:
	// this scan may take its memory (and loses what it held). Checking
	// thousands of small files makes less garbage.
	Reuse *Log
}

// Scan reads a session file once and indexes it. The lines of a large
// input are classified in parallel, on every core, and indexed in order.
func Scan(r io.Reader, opt ScanOptions) (*Log, error) {
	l := opt.Reuse
	if l == nil {
		l = &Log{}
	}
	old := *l
	*l = Log{Unknown: old.Unknown, Stamps: old.Stamps[:0]}
	if l.Unknown == nil {
		l.Unknown = make(map[string]int)
	}
	clear(l.Unknown)
	if s, ok := r.(interface{ Size() int64 }); ok {
		// One allocation instead of many copies and rehashes: room for an
		// entry per KiB, though most are larger (the pages of Nodes are
		// never touched before they are written, so room costs no memory),
		// and an index for an entry per 2 KiB (its pages are touched first).
		n := min(s.Size()/1024, 1<<23)
		if opt.NoIndex {
			n = 0
		}
		l.Nodes = room(old.Nodes, n)
		l.idBytes = room(old.idBytes, 16*n) // ids of up to 16 bytes; room costs nothing until used
		l.ids = old.ids.reuse(int(n / 2))
		if opt.Tools {
			l.toolIDs = old.toolIDs.reuse(int(n / 8))
			l.ToolUses = room(old.ToolUses, 0)
		}
		switch {
		case s.Size() < 2*chunkSize:
			return l, l.scanSmall(r, s.Size(), opt)
		case runtime.GOMAXPROCS(0) > 1:
			return l, l.scanParallel(r, opt)
		}
	} else {
		l.ids, l.toolIDs = old.ids.reuse(0), old.toolIDs.reuse(0)
	}
	rd := NewReader(r, 0)
	var c line // it escapes to the hook, so it is on the heap: one for all lines
	var text []byte
	var hashes []uint64
	for {
		raw, off, term, err := rd.Next()
		if err == io.EOF {
			return l, nil
		}
		if err != nil {
			return l, err
		}
		c = line{}
		if term {
			classify(&c, raw, &opt, &text, &hashes)
			hashes = hashes[:0]
		}
		if !l.step(rd.LineNo(), off, raw, term, &c, opt) {
			return l, nil
		}
	}
}

// room returns s emptied with room for n, in its own memory when that
// fits and is not much larger.
func room[T any](s []T, n int64) []T {
	if c := int64(cap(s)); c >= n && c <= 4*n+64 {
		return s[:0]
	}
	return make([]T, 0, n)
}

// step indexes one line; it returns false where a scan stops.
func (l *Log) step(n int, off int64, raw []byte, term bool, c *line, opt ScanOptions) bool {
	l.Lines++
	l.Size = off + int64(len(raw))
	if !term {
		if opt.OnLine != nil {
			opt.OnLine(n, off, raw, false, nil)
		}
		if opt.StopAtCorrupt {
			l.Stopped = &Problem{Line: n, Off: off, What: "incomplete final line (a writer may be mid-append)"}
		}
		return false
	}
	l.Size++
	if opt.OnLine != nil {
		opt.OnLine(n, off, raw, true, &c.Line)
	}
	if c.Kind == session.KindCorrupt {
		p := Problem{Line: n, Off: off, What: c.Problem}
		l.Corrupt = append(l.Corrupt, p)
		if opt.StopAtCorrupt {
			l.Stopped = &p
			return false
		}
		return true
	}
	if len(l.Corrupt) > 0 {
		l.CorruptMid = true
	}
	l.Good = l.Size
	if opt.NoIndex {
		if n == 1 && c.Type == "session" {
			l.Header, l.HeaderOK = c.Line, c.Kind == session.KindHeader
		}
		return true
	}
	l.add(c, n, off, int64(len(raw)))
	return true
}

// line is a line as a scan's worker classified it: what the format says
// of it, and the hashes of its ids for the index, computed where the line
// was classified (in parallel, while it is in that core's cache).
type line struct {
	session.Line
	idHash   uint64
	toolHash []uint64 // of Line.Tools
}

// classify classifies a line for a scan into *c; the hashes of its tool
// ids go to the end of *hashes.
func classify(c *line, raw []byte, opt *ScanOptions, text *[]byte, hashes *[]uint64) {
	session.ClassifyInto(&c.Line, raw, session.ClassifyOptions{Tools: opt.Tools, CheckUTF8: opt.CheckUTF8, Text: text})
	c.idHash, c.toolHash = 0, nil
	if opt.NoIndex {
		return // the hashes are for the index
	}
	if c.ID != "" {
		c.idHash = hashID(c.ID)
	}
	if len(c.Tools) > 0 {
		k := len(*hashes)
		for _, t := range c.Tools {
			*hashes = append(*hashes, hashID(t.ID))
		}
		c.toolHash = (*hashes)[k:]
	}
}

// chunk is a run of whole lines read from the input, classified by a
// worker, indexed in order by the scanner.
type chunk struct {
	base   int64
	data   []byte
	lines  []chunkLine
	last   bool     // the input ends in this chunk (its final line may be unterminated)
	text   []byte   // a worker's buffer for the text of tool inputs
	hashes []uint64 // the hashes of the lines' tool ids
	err    error
}

type chunkLine struct {
	start, end int // line bytes, without "\n", in data
	term       bool
	c          line
}

// chunkSize is the size of a chunk read: small enough to stay in a core's
// L2 cache from the read to the walk of its lines (README, "Lines
// classified in parallel").
const chunkSize = 1 << 18

// prefetchAhead is how many lines ahead the indexer asks for the slot of an id:
// the index of a large log is larger than the caches, and a request made
// early overlaps its miss with the work on the lines before.
const prefetchAhead = 8

// smallChunks keeps the buffers of small scans for the next: fsck reads
// thousands of small files.
var smallChunks = sync.Pool{New: func() any { return new(chunk) }}

// scanSmall reads a small input of size bytes at once and indexes it on
// this goroutine.
func (l *Log) scanSmall(r io.Reader, size int64, opt ScanOptions) error {
	ch := smallChunks.Get().(*chunk)
	defer smallChunks.Put(ch)
	if int64(cap(ch.data)) < size {
		ch.data = make([]byte, size)
	}
	n, err := io.ReadFull(r, ch.data[:size])
	if err != nil && err != io.ErrUnexpectedEOF { // a file that shrank is read as it is now
		return err
	}
	ch.data, ch.lines, ch.hashes, ch.last = ch.data[:n], ch.lines[:0], ch.hashes[:0], true
	ch.classify(&opt)
	for i := range ch.lines {
		cl := &ch.lines[i]
		if !l.step(i+1, int64(cl.start), ch.data[cl.start:cl.end], cl.term, &cl.c, opt) {
			break
		}
		Poison(ch.data[cl.start:cl.end]) // the chunk is reused by the next scan
	}
	return nil
}

// scanParallel cuts the input into chunks (produce), classifies their
// lines on every core, and indexes them in file order.
func (l *Log) scanParallel(r io.Reader, opt ScanOptions) error {
	workers := runtime.GOMAXPROCS(0)
	free := make(chan *chunk, 4*workers) // chunks done with, to be filled again
	n := 0
	err := ordered.Run(context.Background(), workers,
		func(send func(*chunk) bool) error { produce(r, free, send); return nil },
		func(ch *chunk) { ch.classify(&opt) },
		func(ch *chunk) error {
			for i := range ch.lines {
				if j := i + prefetchAhead; j < len(ch.lines) {
					l.ids.prefetch(ch.lines[j].c.idHash)
				}
				cl := &ch.lines[i]
				n++
				if !l.step(n, ch.base+int64(cl.start), ch.data[cl.start:cl.end], cl.term, &cl.c, opt) {
					return errStopped
				}
				Poison(ch.data[cl.start:cl.end]) // the chunk is reused for the lines after
			}
			if ch.err != nil {
				return ch.err
			}
			select { // nothing keeps a chunk's bytes once its lines are indexed
			case free <- ch:
			default:
			}
			return nil
		})
	if err == errStopped {
		return nil
	}
	return err
}

// errStopped ends a parallel scan that step stopped (StopAtCorrupt).
var errStopped = errors.New("scan: stopped")

func (ch *chunk) classify(opt *ScanOptions) {
	for start := 0; start < len(ch.data); {
		end := bytes.IndexByte(ch.data[start:], '\n')
		ch.lines = append(ch.lines, chunkLine{start: start, end: len(ch.data)})
		cl := &ch.lines[len(ch.lines)-1]
		if end >= 0 {
			cl.end, cl.term = start+end, true
			classify(&cl.c, ch.data[start:cl.end], opt, &ch.text, &ch.hashes)
		}
		if end < 0 {
			break
		}
		start = cl.end + 1
	}
}

// produce cuts the input into chunks of whole lines (a line longer than a
// chunk makes a longer chunk: there is no line-length limit).
func produce(r io.Reader, free <-chan *chunk, send func(*chunk) bool) {
	sec, _ := r.(io.ReaderAt) // a file section, a file, a store's reader: read ahead to size a long line
	var carry []byte
	base := int64(0)
	for {
		var buf, text []byte
		var lines []chunkLine
		var hashes []uint64
		select {
		case old := <-free:
			if cap(old.data) >= max(chunkSize, 2*len(carry)) && cap(old.data) <= 4*chunkSize {
				buf, lines, text, hashes = old.data[:0], old.lines[:0], old.text, old.hashes[:0]
			}
		default:
		}
		if buf == nil {
			buf = make([]byte, 0, max(chunkSize, 2*len(carry)))
		}
		buf = append(buf, carry...)
		var err error
		for {
			var k int
			k, err = io.ReadFull(r, buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+k]
			if err != nil || bytes.IndexByte(buf[len(buf)-k:], '\n') >= 0 { // the carry holds no newline
				break
			}
			// A long line: grow once to hold the rest of it and a chunk
			// after, when the source is a file section that can be read
			// ahead (growing by doubling leaves up to 4× the line behind).
			more := int64(cap(buf))
			if sec != nil {
				more = restOfLine(sec, base+int64(len(buf))) + chunkSize
			}
			grown := make([]byte, len(buf), int64(len(buf))+more)
			copy(grown, buf)
			buf = grown
		}
		ch := &chunk{base: base, lines: lines, text: text, hashes: hashes}
		switch {
		case err == io.EOF || err == io.ErrUnexpectedEOF:
			ch.data, ch.last, carry = buf, true, nil
		case err != nil:
			ch.data, ch.last, ch.err = buf[:0], true, err
		default:
			cut := bytes.LastIndexByte(buf, '\n') + 1
			ch.data, carry = buf[:cut], buf[cut:]
		}
		base += int64(len(ch.data))
		if !send(ch) || ch.last {
			return
		}
	}
}

// add indexes a line that classify classified (its id hashed).
func (l *Log) add(c *line, n int, off, length int64) {
	switch c.Kind {
	case session.KindHeader, session.KindInvalid:
		if c.Type == "session" {
			if n == 1 {
				l.Header, l.HeaderOK = c.Line, c.Kind == session.KindHeader
				if c.Kind == session.KindInvalid {
					l.Invalid = append(l.Invalid, Problem{Line: n, Off: off, What: c.Problem})
				}
			} else {
				l.Headers = append(l.Headers, Problem{Line: n, Off: off, What: "header line after line 1"})
			}
			return
		}
		l.Invalid = append(l.Invalid, Problem{Line: n, Off: off, ID: c.ID, What: c.Problem})
		if c.ID == "" {
			return
		}
		if slot, _, ok := l.ids.find(c.idHash, c.ID, l); !ok {
			l.ids.taken = append(l.ids.taken, c.ID) // used, but not a node of the tree
			l.ids.put(slot, c.idHash, int32(-len(l.ids.taken)), l)
		}
		return
	case session.KindUnknown:
		l.Unknown[c.Type]++
		if c.ID == "" {
			l.anonymous = append(l.anonymous, off)
			return
		}
	}
	slot, _, dup := l.ids.find(c.idHash, c.ID, l)
	if len(c.Tools) > 0 && c.Kind == session.KindMessage {
		node := int32(len(l.Nodes))
		if dup {
			node = -1
		}
		l.pairTools(c.Tools, c.toolHash, n, off, node)
	}
	if dup {
		l.DupIDs = append(l.DupIDs, Problem{Line: n, Off: off, ID: c.ID, What: "repeats an earlier entry id"})
		return
	}
	nd := Node{idOff: int64(len(l.idBytes)), idLen: uint32(len(c.ID)), Parent: NoParent, Line: int32(n), Off: off, Len: length, Kind: c.Kind, Role: session.RoleOf(c.Role), Stamp: -1, Tools: c.ToolKinds}
	if int64(c.MsgOff)+int64(c.MsgLen) < 1<<32 {
		nd.MsgOff, nd.MsgLen = uint32(c.MsgOff), uint32(c.MsgLen)
	}
	if c.ParentID == "" && c.Kind == session.KindMessage && len(l.Nodes) > 0 && !RootsOnly(l) {
		l.ExtraRoots = append(l.ExtraRoots, Problem{Line: n, Off: off, ID: c.ID, What: "parentId is null, but only the first entry is a root"})
	}
	if last := int32(len(l.Nodes)) - 1; c.ParentID != "" && last >= 0 && string(l.id(last)) == c.ParentID {
		nd.Parent = last // the common case: a reply to the entry just before
	} else if c.ParentID != "" {
		if _, p, ok := l.ids.find(hashID(c.ParentID), c.ParentID, l); ok && p >= 0 {
			nd.Parent = p
		} else {
			nd.Parent = DanglingParent
			l.Dangling = append(l.Dangling, Problem{Line: n, Off: off, ID: c.ID, What: fmt.Sprintf("parentId %q names no earlier entry", c.ParentID)})
		}
	}
	if c.Counted() {
		l.Messages++
	}
	if st, ok := c.UserStamp(); ok {
		nd.Stamp = l.stamp(st)
	}
	if t := c.Activity(); t != "" {
		l.LastTime = t
	}
	if nd.Parent == NoParent && nd.Kind == session.KindMessage && nd.Role == session.User {
		l.rootUsers++
	}
	l.Nodes = append(l.Nodes, nd)
	l.idBytes = append(l.idBytes, c.ID...)
	l.ids.put(slot, c.idHash, int32(len(l.Nodes)-1), l)
}

// pairTools records the tool blocks of the message at line n (node).
func (l *Log) pairTools(refs []session.ToolRef, hashes []uint64, n int, off int64, node int32) {
	x := &l.toolIDs
	for i, r := range refs {
		slot, v, seen := x.find(hashes[i], r.ID, nil)
		switch {
		case !r.Result && !seen:
			x.taken = append(x.taken, r.ID)
			x.put(slot, hashes[i], int32(-len(x.taken)), nil)
			l.ToolUses = append(l.ToolUses, ToolUse{Off: off, Line: int32(n), Node: node})
		case r.Result && seen:
			l.ToolUses[-1-v].Answers++
		case r.Result:
			l.Unanswering = append(l.Unanswering, Problem{Line: n, Off: off, ID: r.ID, What: "answers no earlier toolUse"})
		}
	}
}

func (l *Log) stamp(s session.Stamp) int32 {
	if n := len(l.Stamps); n > 0 && l.Stamps[n-1] == s {
		return int32(n - 1)
	}
	for i, t := range l.Stamps {
		if t == s {
			return int32(i)
		}
	}
	l.Stamps = append(l.Stamps, s)
	return int32(len(l.Stamps) - 1)
}

// EntriesFrom counts the complete entries at or after byte off: every
// terminated line that is a complete object, other than a header, whether
// it follows the rules or not (a cut takes them all).
func (l *Log) EntriesFrom(off int64) int {
	n := 0
	for i := len(l.Nodes) - 1; i >= 0 && l.Nodes[i].Off >= off; i-- {
		n++
	}
	for _, ps := range [][]Problem{l.Invalid, l.DupIDs} {
		for _, p := range ps {
			if p.Off >= off {
				n++
			}
		}
	}
	for _, o := range l.anonymous {
		if o >= off {
			n++
		}
	}
	return n
}

// EachID calls fn with every id the file uses: nodes and invalid entries.
func (l *Log) EachID(fn func(string)) {
	for i := range l.Nodes {
		fn(l.ID(int32(i)))
	}
	for _, id := range l.ids.taken {
		fn(id)
	}
}

// RootsOnly reports whether every entry of l is a root user message (a
// prompt that got no reply, and its siblings): the one case where a new
// root is the sibling SPEC §13 asks for, not a second root of a tree.
func RootsOnly(l *Log) bool { return l.rootUsers == len(l.Nodes) }
