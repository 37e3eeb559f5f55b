package search

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/panto-dev/panto/internal/agents"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/tidwall/gjson"
)

// File is one log to search.
type File struct {
	Path string
	// Open, when set, opens the log instead of Path (a session of a
	// database): Path is then only its name.
	Open    func() (Source, error)
	Format  agents.Format // Unknown: told from its first line
	ModTime time.Time
	Size    int64
}

// Source is a log opened to read, at any offset.
type Source interface {
	io.ReaderAt
	Size() int64
	Close() error
}

// Filter narrows the hits; every filter applies before any limit.
type Filter struct {
	Agents  map[string]bool // nil: all
	Roles   map[string]bool // nil: all
	Kinds   map[string]bool // nil: all
	Tool    string          // a tool's name, letter case aside
	Project string          // the session's cwd is this directory or below it
	Model   string          // the model's name holds this, letter case aside
	Session string          // the session's id (or its agent's id) starts with this
	Since   time.Time       // entries at or after
	Until   time.Time       // entries before
}

// Resume is the command that resumes a session in its own agent.
type Resume struct {
	Argv []string `json:"argv"`
	Cwd  string   `json:"cwd"`
}

// Hit is one piece of an entry that matched.
type Hit struct {
	Agent     string
	Session   string
	Entry     string
	Timestamp string
	Role      string
	Kind      string
	Tool      string
	Cwd       string
	Title     string
	Path      string
	Snippet   string
	Matches   [][2]int
	Resume    Resume
}

// Summary says what a search did.
type Summary struct {
	Hits     int
	Sessions int
	Files    int   // files read
	Bytes    int64 // bytes read
	Capped   bool  // the limit stopped it with more hits to give
	Skipped  map[string]int
	Elapsed  time.Duration
	Problems int // sources that could not be read
}

// Options tunes a search.
type Options struct {
	Filter  Filter
	Limit   int // stop after this many hits (0: no limit)
	Workers int // files read at once (0: GOMAXPROCS)
	// Problem is told of a file that could not be read; the search goes on.
	Problem func(path string, err error)
	// Skip, when set, says a file is left out, and why ("" to search it).
	Skip func(m *Meta) string
}

// Meta is what a search learns of a file's session.
type Meta struct {
	Path    string
	Format  agents.Format
	Session string // the id the user types: panto's header id, or the agent's own
	Origin  string // an import's origin.id
	Cwd     string
	Model   string
	Title   string
}

// Sizes of the buffers: a worker reads bufSize at a time and keeps a line
// of up to maxLine whole; a longer line is searched as a stream.
var (
	bufSize = 1 << 20
	maxLine = 4 << 20
)

// job is one file being searched, its hits handed over in order.
type job struct {
	file File
	hits chan *Hit
	err  error
	read int64
	done bool // read (not skipped)
	skip string
}

// Run searches files, in order, with workers reading several at once;
// emit is given each hit in file order and returns false to stop.
func Run(ctx context.Context, q *Query, files []File, opt Options, emit func(*Hit) bool) Summary {
	start := time.Now()
	sum := Summary{Skipped: map[string]int{}}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	n := opt.Workers
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	// Jobs are queued well ahead of the workers: a worker that finds none
	// waits for the queueing goroutine to get a CPU, which the workers
	// hold (2,960 files of the 1 GiB bench: 1,200 such waits with 2 jobs
	// ahead, 340 with 16). What a job keeps is its hits (256 at most), so
	// memory stays flat.
	work := make(chan *job, 8*n)
	order := make(chan *job, 8*n)
	go func() {
		defer close(work)
		defer close(order)
		for _, f := range files {
			j := &job{file: f, hits: make(chan *Hit, 256)}
			select {
			case order <- j:
			case <-ctx.Done():
				return
			}
			select {
			case work <- j:
			case <-ctx.Done():
				close(j.hits) // in order, never to be read: nothing comes
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := &worker{q: q, opt: &opt, ctx: ctx}
			for j := range work {
				w.run(j)
				close(j.hits)
			}
		}()
	}
	sessions := map[string]bool{}
	stopped := false
	for j := range order {
		for h := range j.hits {
			if stopped {
				continue
			}
			if opt.Limit > 0 && sum.Hits >= opt.Limit {
				sum.Capped, stopped = true, true
				cancel()
				continue
			}
			sum.Hits++
			sessions[h.Agent+"\x00"+h.Session] = true
			if !emit(h) {
				stopped = true
				cancel()
			}
		}
		sum.Bytes += j.read
		if j.done {
			sum.Files++
		}
		if j.skip != "" {
			sum.Skipped[j.skip]++
		}
		if j.err != nil && !errors.Is(j.err, context.Canceled) {
			sum.Problems++
			sum.Skipped["unreadable"]++
			if opt.Problem != nil {
				opt.Problem(j.file.Path, j.err)
			}
		}
	}
	wg.Wait()
	sum.Sessions = len(sessions)
	sum.Elapsed = time.Since(start)
	return sum
}

// worker reads one file at a time with a buffer of its own.
type worker struct {
	q   *Query
	opt *Options
	ctx context.Context
	buf []byte
	fnd finder
	e   Entry

	// the file being read
	j       *job
	f       io.ReaderAt
	size    int64
	meta    Meta
	names   map[string]string // call id → tool name, found when first needed
	lineNo  int               // lines before countTo, counted when a hit needs its number
	countTo int64             // the offset in the file up to which lines are counted
	lineOff int64             // where the line being decoded starts in the file
	lastTS  string
	titled  bool   // meta.Title was looked for
	cur     []byte // the region being looked at, and where the line
	curAt   int    // being decoded starts in it (for toolOf)
	scanned bool   // the whole file was read for its calls
	curOff  int64  // the offset of cur in the file
	known   bool   // the session's head was read (know)
	atStart bool   // cur begins at the file's start
	hbuf    []byte // the file's start, read again (knowLate)
}

// bigLines lets one huge line at a time be decoded: memory stays flat
// however many workers meet one.
var bigLines = make(chan struct{}, 1)

func (w *worker) run(j *job) {
	w.j, w.names, w.lastTS, w.titled, w.cur, w.scanned, w.known = j, nil, "", false, nil, false, false
	w.lineNo, w.countTo = 0, 0
	var f io.ReaderAt
	var size int64
	if j.file.Open != nil {
		src, err := j.file.Open()
		if err != nil {
			j.err = err
			return
		}
		defer src.Close()
		f, size = src, src.Size()
	} else {
		file, err := os.OpenFile(j.file.Path, os.O_RDONLY|syscall.O_NONBLOCK, 0) // a FIFO does not block the open
		if err != nil {
			j.err = err
			return
		}
		defer file.Close()
		fi, err := file.Stat()
		if err != nil {
			j.err = err
			return
		}
		if !fi.Mode().IsRegular() {
			j.skip = "not a regular file"
			return
		}
		if !w.opt.Filter.Since.IsZero() && fi.ModTime().Before(w.opt.Filter.Since) {
			j.skip = "older than --since"
			return
		}
		f, size = file, fi.Size()
	}
	w.f, w.size = f, size
	// The file's start is read once, into the buffer the scan goes on
	// with: the format, the session's head and the first lines are told
	// from it.
	if len(w.buf) != bufSize {
		w.buf = make([]byte, bufSize)
	}
	n, err := f.ReadAt(w.buf[:min(size, int64(len(w.buf)))], 0)
	if err != nil && err != io.EOF {
		j.err = err
		return
	}
	start := w.buf[:n]
	format := j.file.Format
	if format == agents.Unknown {
		if format, err = sniff(f, size, start); err != nil {
			j.err = err
			return
		}
	}
	if format == agents.Unknown {
		j.skip = "not a session log"
		return
	}
	w.meta = Meta{Path: j.file.Path, Format: format}
	if !lineFormats[format] || format == agents.Codex && j.file.Open == nil && agents.Paged(j.file.Path) { // a paged rollout: its pages read as one
		j.done = true
		j.read = size
		j.err = w.converted(size)
		return
	}
	fl := &w.opt.Filter
	if fl.Agents != nil && !fl.Agents[agentName(format)] {
		j.skip = "filtered"
		return
	}
	// What the session is (its id, cwd, model) is learned when a line
	// may hit; first when it decides whether the file is read at all:
	// an import's origin (Skip), --session, --project.
	if format == agents.Panto || fl.Session != "" || fl.Project != "" {
		if why := w.know(start, int64(n) == size); why != "" {
			j.skip = why
			return
		}
	}
	j.done = true
	j.err = w.scan(io.NewSectionReader(f, int64(n), size-int64(n)), n)
	if errors.Is(j.err, errSkipped) {
		j.err, j.done = nil, false
	}
}

// know learns what the session is from the file's start (the lines
// that start holds whole) and says why the file is left out ("" when it
// is searched).
func (w *worker) know(start []byte, whole bool) string {
	w.known = true
	w.head(start, whole)
	if w.opt.Skip != nil {
		if why := w.opt.Skip(&w.meta); why != "" {
			return why
		}
	}
	if !w.fileFilter() {
		return "filtered"
	}
	return ""
}

// knowLate is know when a line may hit, the scan past the file's start:
// the start is read again.
func (w *worker) knowLate() error {
	if w.known {
		return nil
	}
	var start []byte
	whole := true // the lines of cur are whole
	if w.atStart && w.cur != nil {
		start = w.cur
	} else {
		if len(w.hbuf) == 0 {
			w.hbuf = make([]byte, headSize)
		}
		n, err := w.f.ReadAt(w.hbuf[:min(w.size, int64(len(w.hbuf)))], 0)
		if err != nil && err != io.EOF {
			return err
		}
		start, whole = w.hbuf[:n], int64(n) == w.size
	}
	if why := w.know(start, whole); why != "" {
		w.j.skip = why
		return errSkipped
	}
	return nil
}

// headSize is how much of a file's start is read again to learn its
// session when the scan is past it.
const headSize = 256 << 10

// head learns the session's id, cwd and model from the first lines that
// start holds whole (its last line too when whole).
func (w *worker) head(start []byte, whole bool) {
	f := w.meta.Format
	// The model is looked for only when --model needs it: no hit says
	// it, and a log may name it many lines in (each line parsed for it).
	needModel := w.opt != nil && w.opt.Filter.Model != ""
	var e Entry
	for n := 0; n < 64 && len(start) > 0; n++ {
		i := bytes.IndexByte(start, '\n')
		if i < 0 {
			if !whole {
				// cut where the read ended (a line longer than what was
				// read): the fields before the cut still say
				w.learn(f, start, &e)
				break
			}
			i = len(start)
		}
		if line := start[:i]; len(line) > 0 {
			w.learn(f, line, &e)
		}
		if w.meta.Session != "" && w.meta.Cwd != "" && (w.meta.Model != "" || !needModel) {
			break
		}
		start = start[min(i+1, len(start)):]
	}
	if w.meta.Session == "" {
		w.meta.Session = idFromName(w.meta.Path)
	}
}

// learn takes what a line says of the session: the few fields that say
// it, not the line's text.
func (w *worker) learn(f agents.Format, line []byte, e *Entry) {
	*e = Entry{Pieces: e.Pieces[:0]}
	switch f {
	case agents.Claude:
		r := gjson.GetManyBytes(line, "sessionId", "cwd", "message.model", "type")
		e.Session, e.Cwd = r[0].Str, r[1].Str
		if r[3].Str == "assistant" {
			e.Model = r[2].Str
		}
	case agents.Codex:
		r := gjson.GetManyBytes(line, "type", "payload.id", "payload.cwd", "payload.model")
		switch r[0].Str {
		case "session_meta":
			e.Session, e.Cwd = r[1].Str, r[2].Str
		case "turn_context":
			e.Cwd, e.Model = r[2].Str, r[3].Str
		}
	case agents.Pi, agents.Panto:
		r := gjson.GetManyBytes(line, "type", "id", "cwd", "modelId", "message.model", "model")
		switch r[0].Str {
		case "session":
			e.Session, e.Cwd = r[1].Str, r[2].Str
		case "model_change":
			e.Model = r[3].Str
		case "message":
			e.Model = r[4].Str
			if e.Model == "" {
				e.Model = r[5].Str
			}
		}
	}
	e.Session, e.Cwd, e.Model = strings.Clone(e.Session), strings.Clone(e.Cwd), strings.Clone(e.Model)
	if w.meta.Session == "" && e.Session != "" {
		w.meta.Session = e.Session
		if f == agents.Panto {
			w.meta.Origin = gjson.GetBytes(line, "origin.id").Str
		}
	}
	if w.meta.Cwd == "" && e.Cwd != "" {
		w.meta.Cwd = e.Cwd
	}
	if w.meta.Model == "" && e.Model != "" {
		w.meta.Model = e.Model
	}
}

// idFromName is the session id a log's name holds, for a log whose lines
// do not say it: a Claude Code <id>.jsonl, a Codex rollout-…-<id>.jsonl,
// a pi <time>_<id>.jsonl.
func idFromName(path string) string {
	base := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	if len(base) >= 36 {
		return base[len(base)-36:]
	}
	return base
}

// fileFilter applies the filters a file's session alone decides.
func (w *worker) fileFilter() bool {
	fl := &w.opt.Filter
	if fl.Agents != nil && !fl.Agents[agentName(w.meta.Format)] {
		return false
	}
	if fl.Session != "" && !strings.HasPrefix(w.meta.Session, fl.Session) && (w.meta.Origin == "" || !strings.HasPrefix(w.meta.Origin, fl.Session)) {
		return false
	}
	if fl.Project != "" && !under(w.meta.Cwd, fl.Project) {
		return false
	}
	return true
}

// under reports whether dir is root or below it.
func under(dir, root string) bool {
	if dir == "" {
		return false
	}
	root = strings.TrimSuffix(filepath.Clean(root), "/")
	dir = filepath.Clean(dir)
	return dir == root || strings.HasPrefix(dir, root+"/") || root == ""
}

// scan reads the file through the buffer, line-aligned, and looks at the
// lines the prefilter lets through.
func (w *worker) scan(r io.Reader, have int) error {
	buf := w.buf
	carry := have // the file's start, read already
	w.j.read += int64(have)
	w.atStart = true
	for {
		if err := w.ctx.Err(); err != nil {
			return err
		}
		n, err := io.ReadFull(r, buf[carry:])
		w.j.read += int64(n)
		data := buf[:carry+n]
		eof := err == io.EOF || err == io.ErrUnexpectedEOF
		if err != nil && !eof {
			return err
		}
		end := bytes.LastIndexByte(data, '\n') + 1
		if eof {
			end = len(data)
		}
		if end == 0 && !eof { // one line fills the buffer
			if len(buf) < maxLine {
				nb := make([]byte, min(2*len(buf), maxLine))
				carry = copy(nb, data)
				buf = nb
				continue
			}
			start := w.j.read - int64(len(data))
			w.lineOff = start
			rest, err := w.huge(r, data)
			if err != nil {
				return err
			}
			// its lines counted past it, never by reading it again
			w.lineNo = w.lineAt(start)
			w.countTo = w.j.read - int64(len(rest))
			buf = w.buf // the big buffer goes
			carry = copy(buf, rest)
			continue
		}
		w.curOff = w.j.read - int64(len(data))
		err = w.region(data[:end])
		w.atStart = false
		if err != nil {
			return err
		}
		if eof {
			return nil
		}
		rest := data[end:]
		if len(buf) > len(w.buf) && len(rest) <= len(w.buf)/2 {
			buf = w.buf // back to the small buffer
		}
		carry = copy(buf, rest)
	}
}

// region looks at the complete lines of b.
func (w *worker) region(b []byte) error {
	w.cur = b
	defer func() { w.cur = nil }()
	p := w.q.pre
	if p == nil || !p.byRun() {
		for i := 0; i < len(b); {
			j := bytes.IndexByte(b[i:], '\n')
			end := len(b)
			if j >= 0 {
				end = i + j
			}
			if p == nil || p.candidate(b[i:end]) {
				if err := w.line(b, i, end); err != nil {
					return err
				}
			}
			i = end + 1
		}
		return nil
	}
	w.fnd.reset(p, b)
	for i := 0; i < len(b); {
		at := w.fnd.next(i)
		if at < 0 {
			return nil
		}
		s := bytes.LastIndexByte(b[:at], '\n') + 1
		end := len(b)
		if j := bytes.IndexByte(b[at:], '\n'); j >= 0 {
			end = at + j
		}
		if p.candidate(b[s:end]) {
			if err := w.line(b, s, end); err != nil {
				return err
			}
		}
		i = end + 1
	}
	return nil
}

// line decodes a candidate line (b[s:end]) and hands over its hits.
func (w *worker) line(b []byte, s, end int) error {
	w.lineOff = w.curOff + int64(s)
	if err := w.knowLate(); err != nil {
		return err
	}
	line := b[s:end]
	if len(line) > 1<<20 {
		bigLines <- struct{}{}
		defer func() { <-bigLines }()
	}
	Extract(w.meta.Format, line, &w.e)
	w.curAt = s
	return w.entry(&w.e, 0)
}

// lineAt is the number of the line that starts at off in the file (from
// 1), its lines counted only now: only a hit on an entry with no id of
// its own needs it. The region held is counted in place, what is before
// it read again; off is never before the last asked for.
func (w *worker) lineAt(off int64) int {
	if w.countTo < off {
		if w.cur != nil && w.curOff <= w.countTo && off <= w.curOff+int64(len(w.cur)) {
			w.lineNo += bytes.Count(w.cur[w.countTo-w.curOff:off-w.curOff], []byte{'\n'})
			w.countTo = off
		} else {
			w.countFile(off)
		}
	}
	return w.lineNo + 1
}

// countFile counts the lines of the file from countTo up to off, read
// again a chunk at a time.
func (w *worker) countFile(off int64) {
	if len(w.hbuf) == 0 {
		w.hbuf = make([]byte, headSize)
	}
	for w.countTo < off {
		n, err := w.f.ReadAt(w.hbuf[:min(off-w.countTo, int64(len(w.hbuf)))], w.countTo)
		w.lineNo += bytes.Count(w.hbuf[:n], []byte{'\n'})
		w.countTo += int64(n)
		if n == 0 || err != nil && err != io.EOF {
			w.countTo = off // unreadable now: the number may be short
			return
		}
	}
}

// entry matches one decoded entry and hands over its hits; lineNo is
// the entry's number (0: its line's, counted when needed).
func (w *worker) entry(e *Entry, lineNo int) error {
	if e.Timestamp != "" {
		w.lastTS = e.Timestamp
	}
	if len(e.Pieces) == 0 {
		return nil
	}
	fl := &w.opt.Filter
	if !w.inTime() || !w.ofModel(e.Model) {
		return nil
	}
	texts := make([]string, 0, len(e.Pieces))
	kept := make([]*Piece, 0, len(e.Pieces))
	for i := range e.Pieces {
		p := &e.Pieces[i]
		if fl.Roles != nil && !fl.Roles[p.Role] || fl.Kinds != nil && !fl.Kinds[p.Kind] {
			continue
		}
		if fl.Tool != "" {
			if p.Kind != KindToolInput && p.Kind != KindToolResult {
				continue
			}
			if !strings.EqualFold(w.toolOf(p), fl.Tool) {
				continue
			}
		}
		texts = append(texts, p.Text)
		kept = append(kept, p)
	}
	if len(kept) == 0 {
		return nil
	}
	ok, spans := w.q.Match(texts)
	if !ok {
		return nil
	}
	for i, p := range kept {
		if len(spans[i]) == 0 {
			continue
		}
		h := w.hit(e, p, spans[i], lineNo)
		select {
		case w.j.hits <- h:
		case <-w.ctx.Done():
			return w.ctx.Err()
		}
	}
	return nil
}

// inTime reports whether the entry being read (at the time last said,
// lastTS) is within --since and --until.
func (w *worker) inTime() bool {
	fl := &w.opt.Filter
	if fl.Since.IsZero() && fl.Until.IsZero() {
		return true
	}
	t, err := time.Parse(time.RFC3339Nano, w.lastTS)
	return err == nil && !(!fl.Since.IsZero() && t.Before(fl.Since) || !fl.Until.IsZero() && !t.Before(fl.Until))
}

// ofModel reports whether an entry of model (the session's when "") is
// of the model --model names.
func (w *worker) ofModel(model string) bool {
	if w.opt.Filter.Model == "" {
		return true
	}
	if model == "" {
		model = w.meta.Model
	}
	return strings.Contains(strings.ToLower(model), strings.ToLower(w.opt.Filter.Model))
}

// toolOf is the tool of a piece, the call it answers looked up when the
// piece does not say.
func (w *worker) toolOf(p *Piece) string {
	if p.Tool != "" || p.Call == "" {
		return p.Tool
	}
	if w.names == nil {
		w.names = map[string]string{}
	}
	if name, ok := w.names[p.Call]; ok {
		p.Tool = name
		return name
	}
	// The call is most often a little before its result, in the buffer:
	// its id looked for backwards there, then in the file before it;
	// else the file is read for its calls, once.
	if w.cur != nil {
		w.callIn(w.cur[:w.curAt], p.Call, true)
	}
	if _, ok := w.names[p.Call]; !ok && w.cur != nil && w.curOff > 0 {
		w.callBefore(p.Call, w.curOff)
	}
	if _, ok := w.names[p.Call]; !ok && !w.scanned {
		w.scanned = true
		w.findCalls()
	}
	p.Tool = w.names[p.Call]
	return p.Tool
}

// callIn looks in b, backwards, for the line that makes the call whose
// id is call (lines that only name it, such as a progress line's
// parentToolUseID, are passed by). It reports whether to look further
// back: not found, and b's first line is whole (whole says b begins
// with a line).
func (w *worker) callIn(b []byte, call string, whole bool) bool {
	key := make([]byte, 0, len(call)+2)
	key = append(append(append(key, '"'), call...), '"')
	mark := []byte(callMarks[w.meta.Format])
	for end := len(b); ; {
		i := lastIndex(b[:end], key)
		if i < 0 {
			return true
		}
		s := bytes.LastIndexByte(b[:i], '\n') + 1
		if s == 0 && !whole {
			return false // a line longer than what was read: findCalls reads it
		}
		e := bytes.IndexByte(b[i:], '\n')
		if e < 0 {
			e = len(b) - i
		}
		if line := b[s : i+e]; bytes.Contains(line, mark) { // else it only names the call
			callNames(w.meta.Format, line, w.names)
			if _, ok := w.names[call]; ok {
				return false
			}
		}
		end = i
	}
}

// lastIndex is bytes.LastIndex(b, key), found a window at a time from
// the end, each looked through forwards for the key's two rarest bytes
// with indexPair (vectorised): LastIndex hashes byte by byte (0.4 GB/s
// for a call's id in a Claude Code log), and bytes.Index keys on its
// first byte, a quote.
func lastIndex(b, key []byte) int {
	const win = 16 << 10
	if len(key) < 2 || len(key) > win/2 {
		return bytes.LastIndex(b, key)
	}
	k1 := 0
	for i, c := range key {
		if rank(c, false) < rank(key[k1], false) {
			k1 = i
		}
	}
	k2 := second(key, k1, false)
	if k2 < k1 {
		k1, k2 = k2, k1
	}
	for end := len(b); end >= len(key); {
		start := max(0, end-win)
		last := -1
		for i, w := 0, b[start:end]; i+len(key) <= len(w); {
			j := indexPair(w[i+k1:len(w)-len(key)+k2+1], k2-k1, key[k1], key[k2], 0, 0)
			if j < 0 {
				break
			}
			if s := i + j; bytes.Equal(w[s:s+len(key)], key) {
				last = s
			}
			i += j + 1
		}
		if last >= 0 {
			return start + last
		}
		if start == 0 {
			break
		}
		end = start + len(key) - 1 // a key across the window's start is in the next
	}
	return -1
}

// callBefore looks for the call whose id is call in the file before off
// (where its result is), a chunk at a time backwards: a call is most
// often a little before its result, and the file is not read again
// whole for it.
func (w *worker) callBefore(call string, off int64) {
	if len(w.hbuf) == 0 {
		w.hbuf = make([]byte, headSize)
	}
	for end := off; end > 0; {
		start := max(0, end-int64(len(w.hbuf)))
		n, err := w.f.ReadAt(w.hbuf[:end-start], start)
		if err != nil && err != io.EOF {
			return
		}
		b := w.hbuf[:n]
		if start > 0 {
			// from the first whole line: the next chunk back ends there
			nl := bytes.IndexByte(b, '\n')
			if nl < 0 {
				return // a line longer than the chunk: findCalls reads it
			}
			b, start = b[nl+1:], start+int64(nl+1)
		}
		if !w.callIn(b, call, true) {
			return
		}
		end = start
	}
}

// findCalls reads the file's tool calls: call id → tool name.
func (w *worker) findCalls() {
	mark := []byte(callMarks[w.meta.Format])
	if len(mark) == 0 {
		return
	}
	br := bufio.NewReaderSize(io.NewSectionReader(w.f, 0, w.size), 256<<10)
	var long []byte
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long[:0], line...)
			for err == bufio.ErrBufferFull && len(long) < maxLine {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			for err == bufio.ErrBufferFull {
				_, err = br.ReadSlice('\n')
				long = long[:0] // too long to be a call worth naming
			}
			line = long
		}
		if bytes.Contains(line, mark) {
			callNames(w.meta.Format, line, w.names)
		}
		if err != nil {
			return
		}
	}
}

// snippet bounds: context before the first match, and the whole length.
const (
	snipBefore = 80
	snipLen    = 240
)

func (w *worker) hit(e *Entry, p *Piece, spans [][2]int, lineNo int) *Hit {
	if !w.titled {
		w.meta.Title, w.titled = w.title(), true
	}
	id := e.ID
	if id == "" {
		if lineNo == 0 {
			lineNo = w.lineAt(w.lineOff)
		}
		id = lineID(lineNo)
	}
	ts := e.Timestamp
	if ts == "" {
		ts = w.lastTS
	}
	cwd := w.meta.Cwd
	if e.Cwd != "" {
		cwd = e.Cwd
	}
	snip, ms := Snippet(p.Text, spans)
	agent := agentName(w.meta.Format)
	return &Hit{
		Agent: agent, Session: w.meta.Session, Entry: id, Timestamp: ts,
		Role: p.Role, Kind: p.Kind, Tool: w.toolOf(p), Cwd: cwd, Title: w.meta.Title,
		Path: w.meta.Path, Snippet: snip, Matches: ms,
		Resume: ResumeOf(agent, w.meta.Session, w.meta.Path, cwd),
	}
}

func (w *worker) title() string {
	var r io.ReaderAt = w.f
	var start []byte // the file's start, held: not read again
	if w.cur != nil && w.curOff == 0 {
		r, start = startReader{w.cur, w.f}, w.cur
	}
	if w.meta.Format == agents.Panto {
		t, _, _ := session.TitleOf(r, w.size)
		return t
	}
	src := agents.Source{Path: w.meta.Path, R: r, Size: w.size}
	if w.meta.Format == agents.Codex && !agents.Paged(w.meta.Path) {
		// a rollout of one page (its listing says, kept a few seconds):
		// its title is its own, without the sessions tree listed again
		// for its pages, once for each file with a hit
		src.Path = ""
	}
	return agents.TitleStart(src, w.meta.Format, start)
}

// agentName is a format's agent, as hits say it.
func agentName(f agents.Format) string { return f.String() }

// ResumeOf is the command that resumes a session in its own agent, run in
// the session's directory: the agent's own (the registry's), pi's by its
// file, panto's by its id.
func ResumeOf(agent, id, path, cwd string) Resume {
	argv := []string{}
	switch a := agents.Named(agent); {
	case agent == "panto":
		argv = []string{"panto", "--resume", id}
	case agent == "pi":
		argv = []string{"pi", "--session", path}
	case a != nil && a.Resume != nil:
		argv = a.Resume(id)
	}
	return Resume{Argv: argv, Cwd: cwd}
}

// Snippet cuts text around its first match: at most snipLen bytes, cut on
// character boundaries; spans are moved into it (those that fall outside
// are dropped, those cut are clipped).
func Snippet(text string, spans [][2]int) (string, [][2]int) {
	if len(spans) == 0 {
		return cut(text, 0, min(len(text), snipLen)), nil
	}
	first := spans[0]
	s := max(0, first[0]-snipBefore)
	e := min(len(text), s+max(snipLen, first[1]-first[0]))
	for s > 0 && !utf8.RuneStart(text[s]) {
		s--
	}
	for e < len(text) && !utf8.RuneStart(text[e]) {
		e++
	}
	var ms [][2]int
	for _, sp := range spans {
		a, b := max(sp[0], s), min(sp[1], e)
		if a < b {
			ms = append(ms, [2]int{a - s, b - s})
		}
	}
	return text[s:e], ms
}

func cut(text string, s, e int) string {
	for e < len(text) && e > 0 && !utf8.RuneStart(text[e]) {
		e--
	}
	return text[s:e]
}

// lineFormats are the formats searched line by line, raw; the others (a
// whole-file JSON chat, a database) are read through their agent's reader
// (the registry's) into panto entries, which are searched.
var lineFormats = map[agents.Format]bool{agents.Claude: true, agents.Codex: true, agents.Pi: true, agents.Panto: true}

// converted searches a log of a format read through its agent's reader.
func (w *worker) converted(size int64) error {
	var line []byte
	n := 0
	several := w.meta.Format == agents.OpenCode // a file that may hold several sessions (a database)
	passed, skip, why := false, false, ""       // a session of those filtered out: its entries passed by
	_, _, err := agents.Read(agents.Source{Path: w.meta.Path, R: w.f, Size: size}, w.meta.Format, agents.Options{Content: true},
		func(h *agents.Header) error {
			w.meta.Session, w.meta.Cwd = strings.Clone(h.Origin.ID), strings.Clone(h.Cwd)
			if several {
				// Each session's title is its first prompt (as list
				// --all's): a file that holds several has no title of
				// its own to read.
				w.meta.Title, w.titled, w.meta.Model = "", true, ""
			}
			skip = false
			if w.opt.Skip != nil {
				if why = w.opt.Skip(&w.meta); why != "" {
					skip = true
				}
			}
			if !skip && !w.fileFilter() {
				skip, why = true, "filtered"
			}
			switch {
			case skip && !several:
				w.j.skip = why
				return errSkipped
			case !skip:
				passed = true
			}
			return nil
		},
		func(e *agents.Entry) error {
			if skip {
				return nil
			}
			n++
			if w.meta.Model == "" && e.Model != "" {
				w.meta.Model = strings.Clone(e.Model)
			}
			if several && w.meta.Title == "" && e.Role == "user" && len(e.Body) > 0 {
				w.meta.Title = agents.TitleOf(append(append([]byte(`{"type":"message","message":`), e.Body...), '}'), agents.Unknown)
			}
			line = e.AppendLine(line[:0])
			if p := w.q.pre; p != nil && (p.byRun() && !holds(line, p.run, p.fold) || !p.candidate(line)) {
				return nil
			}
			Extract(agents.Panto, line, &w.e)
			return w.entry(&w.e, n)
		})
	if errors.Is(err, errSkipped) {
		return nil
	}
	if err == nil && several && !passed && why != "" {
		w.j.skip = why // every session filtered out: the file is
	}
	return err
}

var errSkipped = errors.New("skipped")
