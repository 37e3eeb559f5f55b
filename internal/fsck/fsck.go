// Package fsck checks session files and repairs them under a named policy
// (SPEC §5). A check reads; a repair takes the writer's lock, saves
// everything it cuts beside the file first, changes the file only by
// truncation or by atomic replacement, never rewrites a header, and checks
// the file again before it reports success.
package fsck

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/panto-dev/panto/internal/rawjson"
	"github.com/panto-dev/panto/pkg/scan"
	"github.com/panto-dev/panto/pkg/session"
)

// Severities. Errors and warnings are damage a person must look at (exit
// bit 4 while they stay); info is reported only.
const (
	Error   = "error"
	Warning = "warning"
	Info    = "info"
)

// Finding is one problem at a place in a file. Its ID is stable.
type Finding struct {
	ID       string `json:"id"`
	Severity string `json:"severity"`
	Line     int    `json:"line"`
	Offset   int64  `json:"offset"`
	Message  string `json:"message"`
	Action   string `json:"action,omitempty"`
}

// maxPerID bounds the findings of one id kept for one file; the rest are
// counted in one more finding.
const maxPerID = 20

// span is a line's byte range, its "\n" included.
type span struct {
	line     int
	off, end int64
	nul      bool // the line is NUL bytes and nothing else
}

// Analysis is what one check of a file found.
type Analysis struct {
	Log      *scan.Log
	Findings []Finding
	Size     int64
	bom      bool
	corrupt  []span // complete lines that are not JSON objects, before the tail
	dupHead  []span // header lines after line 1 identical to line 1
	headerOK bool   // line 1 is a valid header (after a BOM, if any)
	newer    bool
	counts   map[string]int // findings of each id
	good     int64          // offset after the last good line (line 1 too when a BOM precedes a header)
	first    []byte         // line 1 (after a BOM)
	unterm   span           // an unterminated last line, when unterm.line > 0
	compacts []compaction   // the compaction entries
	complete bool           // which is a complete JSON object
}

func (a *Analysis) add(f Finding) {
	if a.counts == nil {
		a.counts = map[string]int{}
	}
	a.counts[f.ID]++
	switch n := a.counts[f.ID]; {
	case n <= maxPerID:
		a.Findings = append(a.Findings, f)
	case n == maxPerID+1:
		a.Findings = append(a.Findings, Finding{ID: f.ID, Severity: f.Severity, Line: f.Line, Offset: f.Offset, Message: "more findings of this kind follow; only the first are listed"})
	}
}

// Damaged reports whether any finding is an error or a warning.
func (a *Analysis) Damaged() bool {
	for _, f := range a.Findings {
		if f.Severity != Info {
			return true
		}
	}
	return false
}

// Check reads a whole session file. When the file ends in an unterminated
// line, busy (when not nil) is asked whether a writer is at work on it: the
// line may then be an append in progress.
func Check(r io.Reader, busy func() bool) (*Analysis, error) { return check(r, busy, nil) }

// analyses keeps the Analyses (and Logs) of small files for the next
// checks (Run puts them back): thousands of small files make less garbage.
var analyses sync.Pool

// small says whether an Analysis is worth keeping: about the memory a file
// of a megabyte needs.
func (a *Analysis) small() bool {
	return cap(a.Log.Nodes) <= 1024 && cap(a.first) <= 4096 && cap(a.Findings)+cap(a.corrupt)+cap(a.dupHead) <= 1024
}

// check is Check, taking the memory of reuse (an Analysis the caller is
// done with) when it is not nil.
func check(r io.Reader, busy func() bool, reuse *Analysis) (*Analysis, error) {
	a := reuse
	if a == nil {
		a = &Analysis{}
	}
	clear(a.counts)
	*a = Analysis{Log: a.Log, Findings: a.Findings[:0], corrupt: a.corrupt[:0], dupHead: a.dupHead[:0], counts: a.counts, first: a.first[:0], compacts: a.compacts[:0]}
	l, err := scan.Scan(r, scan.ScanOptions{OnLine: a.line, CheckUTF8: true, Tools: true, Reuse: a.Log})
	if err != nil {
		return nil, err
	}
	a.Log, a.Size, a.good = l, l.Size, l.Damage().Good // a torn tail starts there
	if a.bom && a.headerOK {                           // the scan counts that line as corrupt
		a.good = max(a.good, int64(len(a.first))+4) // the BOM, the line, its "\n"
	}
	a.header(l)
	// Corrupt complete lines after the last good one belong to the tail.
	var tail []span
	for i, s := range a.corrupt {
		if s.off >= a.good {
			tail, a.corrupt = a.corrupt[i:], a.corrupt[:i]
			break
		}
	}
	if a.unterm.line > 0 {
		tail = append(tail, a.unterm)
	}
	for _, s := range a.corrupt {
		if s.line == 1 {
			continue // reported as the header's problem
		}
		id, what := "invalidJson", "line is not valid JSON"
		for _, p := range l.Corrupt {
			if p.Line == s.line && p.What == "not a JSON object" {
				id, what = "notObject", "line is JSON but not an object"
			}
		}
		a.add(Finding{ID: id, Severity: Error, Line: s.line, Offset: s.off, Message: what})
	}
	for _, p := range l.Headers {
		a.add(Finding{ID: "duplicateHeader", Severity: Error, Line: p.Line, Offset: p.Off, Message: "a session header after line 1"})
	}
	for _, p := range l.Invalid {
		if p.Line == 1 {
			continue
		}
		a.add(Finding{ID: "invalidEntry", Severity: Warning, Line: p.Line, Offset: p.Off, Message: p.What})
	}
	for _, p := range l.DupIDs {
		a.add(Finding{ID: "duplicateId", Severity: Warning, Line: p.Line, Offset: p.Off, Message: fmt.Sprintf("entry id %q is used by an earlier entry", p.ID)})
	}
	for _, p := range l.ExtraRoots {
		a.add(Finding{ID: "secondRoot", Severity: Warning, Line: p.Line, Offset: p.Off, Message: fmt.Sprintf("entry %s: %s", p.ID, p.What)})
	}
	for _, p := range l.Dangling {
		a.add(Finding{ID: "danglingParent", Severity: Warning, Line: p.Line, Offset: p.Off, Message: fmt.Sprintf("entry %s: %s", p.ID, p.What)})
	}
	// The conversation goes on after an entry when a message descends
	// from it that is past the round of its tool calls: a reply, or a
	// prompt. The results of the round (a user message with toolResult
	// blocks) are the round still going: a parallel call whose result is
	// not written yet at the end of the log is pending, as panto-replay
	// --info says, not an orphan. A tool round's mark (SPEC §13) after a
	// reply whose tools were cut off by a crash is no answer, and no going
	// on either. Parents come before their children (scan), so one pass
	// from the end sees every child before its parent.
	hasChild := make([]bool, len(l.Nodes))
	for i := len(l.Nodes) - 1; i >= 0; i-- {
		n := l.Nodes[i]
		past := n.Kind == session.KindMessage && (n.Role != session.User || n.Tools&session.HasToolResult == 0)
		if n.Parent >= 0 && (past || hasChild[i]) {
			hasChild[n.Parent] = true
		}
	}
	for i, u := range l.ToolUses {
		if u.Answers == 0 && u.Node >= 0 && hasChild[u.Node] {
			a.add(Finding{ID: "orphanToolUse", Severity: Warning, Line: int(u.Line), Offset: u.Off, Message: fmt.Sprintf("toolUse %q is never answered, though the conversation goes on after it", l.ToolUseID(i))})
		}
	}
	for _, p := range l.Unanswering {
		a.add(Finding{ID: "orphanToolResult", Severity: Warning, Line: p.Line, Offset: p.Off, Message: fmt.Sprintf("toolResult for %q answers no earlier toolUse", p.ID)})
	}
	a.checkCompactions(l)
	if len(tail) > 0 {
		one := len(tail) == 1 && a.unterm.line > 0
		a.tail(tail, one, a.complete, one && busy != nil && busy())
	}
	slices.SortStableFunc(a.Findings, func(x, y Finding) int { return x.Line - y.Line })
	return a, nil
}

// compaction is a compaction entry: where it is, and the entry it keeps from.
type compaction struct {
	line     int
	off      int64
	id, kept string
}

// checkCompactions reports a compaction whose firstKeptEntryId names no
// entry on its path (SPEC §13): the conversation after it would lose what
// it meant to keep. One that names none keeps nothing before it: noted.
func (a *Analysis) checkCompactions(l *scan.Log) {
	for _, c := range a.compacts {
		i := l.Lookup(c.id)
		if i < 0 || l.Nodes[i].Line != int32(c.line) {
			continue // its id repeats an earlier one: reported as that
		}
		if c.kept == "" {
			a.add(Finding{ID: "compactionKeepsNothing", Severity: Info, Line: c.line, Offset: c.off, Message: fmt.Sprintf("compaction %s has no firstKeptEntryId: the model is sent its summary and what follows it", c.id)})
			continue
		}
		path := l.Path(i) // from the root to the compaction
		if _, found := session.KeptFrom(c.kept, len(path)-1, func(j int) string { return l.ID(path[j]) }); !found {
			a.add(Finding{ID: "compactionKeptMissing", Severity: Warning, Line: c.line, Offset: c.off, Message: fmt.Sprintf("compaction %s: firstKeptEntryId %q names no entry on its path: the model is sent its summary and what follows it", c.id, c.kept)})
		}
	}
}

func (a *Analysis) header(l *scan.Log) {
	switch {
	case a.Size == 0:
		a.add(Finding{ID: "missingHeader", Severity: Error, Line: 1, Message: "the file is empty"})
	case a.bom:
	case l.Header.Type == "session" && !a.headerOK:
		a.add(Finding{ID: "badHeader", Severity: Error, Line: 1, Message: "bad session header: " + l.Header.Problem})
	case len(a.corrupt) > 0 && a.corrupt[0].line == 1 || l.Good == 0:
		a.add(Finding{ID: "badHeader", Severity: Error, Line: 1, Message: "line 1 is torn or not JSON"})
	case !a.headerOK:
		a.add(Finding{ID: "missingHeader", Severity: Error, Line: 1, Message: "line 1 is not a session header"})
	}
	if a.newer {
		a.add(Finding{ID: "newerVersion", Severity: Warning, Line: 1, Message: fmt.Sprintf("format version %d is newer than this panto's %d: not checked further, never repaired", l.Header.Version, session.Version)})
	}
}

// tail reports the torn tail: the lines after the last good one.
// one says the tail is a single unterminated line; complete, that this line
// is a complete JSON object.
func (a *Analysis) tail(tail []span, one, complete, locked bool) {
	first, n := tail[0], a.Size-tail[0].off
	nul := true
	for _, s := range tail {
		nul = nul && s.nul
	}
	switch {
	case locked && one:
		a.add(Finding{ID: "inProgress", Severity: Info, Line: first.line, Offset: first.off, Message: fmt.Sprintf("%d unterminated bytes at the end while a writer holds the lock: an append in progress", n)})
	case nul:
		a.add(Finding{ID: "zeroTail", Severity: Error, Line: first.line, Offset: first.off, Message: fmt.Sprintf("%s of NUL padding at the end", bytesOf(n))})
	case one && complete:
		a.add(Finding{ID: "missingFinalNewline", Severity: Error, Line: first.line, Offset: first.off, Message: "the last line is a complete JSON object without its \"\\n\": never acknowledged as written"})
	default:
		a.add(Finding{ID: "tornTail", Severity: Error, Line: first.line, Offset: first.off, Message: notComplete(n)})
	}
}

// lint reports the rules of SPEC §2 that line n breaks while it stays
// readable.
func (a *Analysis) lint(n int, off int64, c *session.Line) {
	ids := map[session.Lint]string{session.LintEntryID: "badEntryId", session.LintTimestamp: "badTimestamp", session.LintHeaderID: "badHeaderId"}
	for bit := session.Lint(1); bit != 0 && bit <= c.Lint; bit <<= 1 {
		if c.Lint&bit != 0 {
			what := bit.Problems()[0]
			if c.ID != "" && bit != session.LintHeaderID {
				what = fmt.Sprintf("entry %s: %s", c.ID, what)
			}
			a.add(Finding{ID: ids[bit], Severity: Warning, Line: n, Offset: off, Message: what})
		}
	}
}

// line is the scan's hook: it sees every line.
func (a *Analysis) line(n int, off int64, raw []byte, term bool, c *session.Line) {
	if n == 1 && bytes.HasPrefix(raw, []byte("\xef\xbb\xbf")) {
		a.bom = true
		a.add(Finding{ID: "bom", Severity: Error, Line: 1, Offset: 0, Message: "the file starts with a UTF-8 byte order mark"})
		if term {
			a.first = append(a.first[:0], raw[3:]...)
			h := session.Classify(raw[3:])
			a.headerOK = h.Kind == session.KindHeader
			a.newer = a.headerOK && h.Version > session.Version
		}
	}
	if n == 1 && c != nil && !a.bom {
		a.first = append(a.first[:0], raw...)
		a.headerOK = c.Kind == session.KindHeader
		a.newer = a.headerOK && c.Version > session.Version
	}
	if !term {
		a.unterm = span{n, off, off + int64(len(raw)), nulOnly(raw)}
		a.complete = session.Classify(raw).Kind != session.KindCorrupt
		return
	}
	if c.CR {
		a.add(Finding{ID: "crlf", Severity: Info, Line: n, Offset: off, Message: "line ends with CRLF"})
	}
	if c.BadUTF8 {
		a.add(Finding{ID: "invalidUtf8", Severity: Info, Line: n, Offset: off, Message: "line holds bytes that are not valid UTF-8 (kept as written)"})
	}
	if c.Lint != 0 {
		a.lint(n, off, c)
	}
	if c.Kind == session.KindCorrupt {
		if n > 1 || !a.bom {
			a.corrupt = append(a.corrupt, span{n, off, off + int64(len(raw)) + 1, nulOnly(raw)})
		}
		return
	}
	if c.IsCompaction() && c.ID != "" {
		a.compacts = append(a.compacts, compaction{n, off, c.ID, rawjson.Str(session.Field(raw, "firstKeptEntryId"))})
		if err := session.CheckCompactionRequest(raw); err != nil {
			a.add(Finding{ID: "invalidEntry", Severity: Warning, Line: n, Offset: off, Message: fmt.Sprintf("compaction %s: %v: its cost is unknown", c.ID, err)})
		}
	}
	if c.Type == "session" && n > 1 && bytes.Equal(raw, a.first) {
		a.dupHead = append(a.dupHead, span{n, off, off + int64(len(raw)) + 1, false})
	}
}

// nulOnly reports whether a line is NUL bytes and nothing else.
func nulOnly(raw []byte) bool { return len(raw) > 0 && len(bytes.Trim(raw, "\x00")) == 0 }

// notComplete says that the last n bytes are not complete lines.
func notComplete(n int64) string {
	if n == 1 {
		return "1 byte at the end is not a complete line"
	}
	return fmt.Sprintf("%d bytes at the end are not complete lines", n)
}

// bytesOf says n bytes in words.
func bytesOf(n int64) string {
	if n == 1 {
		return "1 byte"
	}
	return fmt.Sprintf("%d bytes", n)
}
