// Package replay rebuilds a conversation from a session file: the path from
// the root to a leaf, the resume state (active model, dangling prompt,
// pending tool uses), and the tree. It reads the file once into a small
// index (scan.Scan) and then reads back only the lines it prints, so its
// memory grows with the number of entries, never with the bytes of the log.
package replay

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"

	"github.com/panto-dev/panto/internal/rawjson"
	"github.com/panto-dev/panto/pkg/scan"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/tidwall/gjson"
)

// Session is a scanned session file.
type Session struct {
	Log *scan.Log
	r   io.ReaderAt
	// maxText, when more than 0, is the most of one text a page shows
	// (HTMLOptions.Pages): the rest is said, not shown.
	maxText int
}

// Open scans the session file r (size bytes) the way readers do: up to the
// first corrupt or unterminated line.
func Open(r io.ReaderAt, size int64) (*Session, error) {
	l, err := scan.Scan(io.NewSectionReader(r, 0, size), scan.ScanOptions{StopAtCorrupt: true})
	if err != nil {
		return nil, err
	}
	return &Session{Log: l, r: r}, nil
}

// Line reads back the line of node i, without its "\n".
func (s *Session) Line(i int32) ([]byte, error) {
	n := s.Log.Nodes[i]
	if n.Len > hugeBlock {
		runtime.GC() // what was held of a huge line before (the scan's) goes first
	}
	b := make([]byte, n.Len)
	if _, err := s.r.ReadAt(b, n.Off); err != nil {
		return nil, fmt.Errorf("read line %d: %w", n.Line, err)
	}
	return b, nil
}

// Message returns the raw "message" value of node i, byte for byte as
// stored, or nil for a node that is not a message.
func (s *Session) Message(i int32) ([]byte, error) {
	if s.Log.Nodes[i].Kind != session.KindMessage {
		return nil, nil
	}
	b, err := s.Line(i)
	if err != nil {
		return nil, err
	}
	return s.Log.Nodes[i].Message(b), nil
}

// EachLine calls fn with the line of each node of path, in order. Parents
// always come before their children in a file, so a path is in file order:
// the lines are read in large sequential blocks, and sliced out of them by
// the offsets of the index, without looking for line ends again. Blocks are
// read ahead on other cores while fn works (a few at a time: memory stays
// flat however long the path).
func (s *Session) EachLine(path []int32, fn func(i int32, line []byte) error) error {
	blocks := s.blocks(path)
	if len(blocks) == 0 {
		return nil
	}
	if len(blocks) == 1 || slices.ContainsFunc(blocks, func(b block) bool { return b.size > hugeBlock }) {
		// Most sessions: one read, no goroutines. A path with a huge line
		// is read one block at a time too: a block read ahead would be a
		// second copy of a line as large as hundreds of megabytes while fn
		// works on the first.
		var buf []byte
		for _, b := range blocks {
			if int64(cap(buf)) < b.size {
				buf = nil // let the smaller one go before the larger is made
				if b.size > hugeBlock {
					runtime.GC() // and what the scan held of this line, first
				}
				buf = make([]byte, b.size)
			}
			buf = buf[:b.size]
			if err := s.readBlock(buf, b); err != nil {
				return err
			}
			if err := s.eachIn(path[b.first:b.end], buf, b.off, fn); err != nil {
				return err
			}
			if b.size > hugeBlock {
				buf = nil
				runtime.GC() // give its memory back before the next huge line is read
			}
		}
		return nil
	}
	const ahead = 4
	free := make(chan []byte, ahead)
	for range ahead {
		free <- nil
	}
	type read struct {
		buf []byte
		err error
	}
	ready := make([]chan read, len(blocks))
	for k := range ready {
		ready[k] = make(chan read, 1)
	}
	quit := make(chan struct{})
	defer close(quit)
	go func() {
		for k, b := range blocks {
			var buf []byte
			select {
			case buf = <-free:
			case <-quit:
				return
			}
			go func() {
				if int64(cap(buf)) < b.size {
					buf = make([]byte, b.size)
				}
				buf = buf[:b.size]
				ready[k] <- read{buf, s.readBlock(buf, b)}
			}()
		}
	}()
	for k, b := range blocks {
		r := <-ready[k]
		if r.err != nil {
			return r.err
		}
		if err := s.eachIn(path[b.first:b.end], r.buf, b.off, fn); err != nil {
			return err
		}
		free <- r.buf
	}
	return nil
}

// block is a stretch of the file read at once: the lines of path[first:end].
type block struct {
	off, size  int64
	first, end int
}

// hugeBlock is the size above which a block is read alone (see EachLine).
const hugeBlock = 32 << 20

// blockSize is the least a block reads.
const blockSize = 2 << 20

// blocks plans the reads of the lines of path.
func (s *Session) blocks(path []int32) []block {
	var out []block
	for k, i := range path {
		n := &s.Log.Nodes[i]
		if len(out) > 0 {
			if b := &out[len(out)-1]; n.Off >= b.off && n.Off+n.Len <= b.off+b.size {
				b.end = k + 1
				continue
			}
		}
		size := min(max(blockSize, n.Len), s.Log.Good-n.Off)
		out = append(out, block{off: n.Off, size: size, first: k, end: k + 1})
	}
	return out
}

// readBlock reads block b into buf, all of it: the block lies before the
// end the scan found, so a short read means the file shrank meanwhile.
func (s *Session) readBlock(buf []byte, b block) error {
	n, err := s.r.ReadAt(buf, b.off)
	switch {
	case n == len(buf):
		return nil
	case err == nil || errors.Is(err, io.EOF):
		return fmt.Errorf("read back the log at byte %d: the file shrank while it was read", b.off+int64(n))
	default:
		return fmt.Errorf("read back the log at byte %d: %w", b.off, err)
	}
}

// eachIn calls fn with the lines of path, all within buf (read at off).
func (s *Session) eachIn(path []int32, buf []byte, off int64, fn func(i int32, line []byte) error) error {
	for _, i := range path {
		n := &s.Log.Nodes[i]
		start := n.Off - off
		if err := fn(i, buf[start:start+n.Len]); err != nil {
			return err
		}
		scan.Poison(buf[start : start+n.Len]) // the buffer is reused for the lines after
	}
	return nil
}

// Leaf resolves the leaf to replay to: id, or the last entry when id is "".
// It returns -1 for a file without entries.
func (s *Session) Leaf(id string) (int32, error) {
	if id == "" {
		return s.Log.Leaf(), nil
	}
	i := s.Log.Lookup(id)
	if i < 0 {
		return -1, fmt.Errorf("%w: %q", session.ErrNoSuchEntry, id)
	}
	return i, nil
}

// PendingTool is a toolUse on the path that no toolResult answers.
type PendingTool struct {
	EntryID string `json:"entryId"`
	ID      string `json:"id"`
	Name    string `json:"name"`
	Input   string `json:"input"`
	// Started is the timestamp of the tool round's mark (SPEC §13) that
	// names the call: the tool started then and may have run, its result
	// lost. null: no mark names it, so it never started.
	Started *string `json:"started"`
}

// Started returns, for each tool call a tool round's mark on path names
// (SPEC §13), the mark's timestamp: when the call started.
func (s *Session) Started(path []int32) (map[string]string, error) {
	var marks []int32
	for _, i := range path {
		if s.Log.Nodes[i].Kind == session.KindUnknown {
			marks = append(marks, i)
		}
	}
	started := map[string]string{}
	err := s.EachLine(marks, func(_ int32, line []byte) error {
		r := gjson.GetManyBytes(line, "type", "timestamp", "toolUseIds")
		if r[0].Str != session.TypeToolRound {
			return nil
		}
		r[2].ForEach(func(_, id gjson.Result) bool {
			if id.Type == gjson.String {
				started[id.Str] = r[1].Str
			}
			return true
		})
		return nil
	})
	return started, err
}

// Prompt is a user message at the end of the path: nothing answered it.
type Prompt struct {
	ID       string  `json:"id"`
	ParentID *string `json:"parentId"`
	Kind     string  `json:"kind"` // "prompt" (text) or "toolResults"
	Text     string  `json:"text"`
}

// Reply is the last assistant message on the path.
type Reply struct {
	ID         string `json:"id"`
	Text       string `json:"text"`
	StopReason string `json:"stopReason"`
	Provider   string `json:"provider"`
	Model      string `json:"model"`
}

// Info is the resume state of a path (panto-replay --info).
type Info struct {
	SessionID       string         `json:"sessionId"`
	Cwd             string         `json:"cwd"`
	Version         int64          `json:"version"`
	LeafID          *string        `json:"leafId"`
	Provider        *string        `json:"provider"`
	Model           *string        `json:"model"`
	DanglingPrompt  *Prompt        `json:"danglingPrompt"`
	LastReply       *Reply         `json:"lastReply"`
	PendingToolUses []PendingTool  `json:"pendingToolUses"`
	PathMessages    int            `json:"pathMessages"`
	Messages        int            `json:"messages"`
	Entries         int            `json:"entries"`
	Branches        int            `json:"branches"`
	CorruptLines    int            `json:"corruptLinesSkipped"`
	InvalidEntries  int            `json:"invalidEntriesSkipped"`
	Orphans         int            `json:"orphans"`
	UnknownTypes    map[string]int `json:"unknownTypes"`
	// Compaction is the last compaction entry of the path (null when the
	// path was never compacted): the model is sent its summary in place
	// of the entries before firstKeptEntryId.
	Compaction *Compaction `json:"compaction"`
	// LastPromptID is the last user prompt (not tool results) among what
	// the model is sent: where a compaction keeps from (null for none).
	LastPromptID *string `json:"lastPromptId"`
	// System is the text of the last system message the model is sent
	// (null for none): what a system prompt is reconciled with on resume.
	System *string `json:"system"`
}

// Info computes the resume state of the path to leaf (-1: no entries).
func (s *Session) Info(leaf int32) (*Info, error) {
	l := s.Log
	in := &Info{
		SessionID: l.Header.ID, Cwd: l.Header.Cwd, Version: l.Header.Version,
		Messages: l.Messages, Entries: len(l.Nodes), InvalidEntries: Invalid(l), Orphans: len(l.Dangling),
		UnknownTypes: l.Unknown, PendingToolUses: []PendingTool{},
	}
	if l.Stopped != nil {
		in.CorruptLines = 1
	}
	kids := make([]int, len(l.Nodes))
	for _, n := range l.Nodes {
		if n.Parent >= 0 {
			kids[n.Parent]++
		}
	}
	for _, k := range kids {
		if k > 1 {
			in.Branches++
		}
	}
	if leaf < 0 {
		return in, nil
	}
	leafID := l.ID(leaf)
	in.LeafID = &leafID
	if st, ok := l.Active(leaf); ok {
		in.Provider, in.Model = &st.Provider, &st.Model
	}
	path := l.Path(leaf)
	pre, c, post, err := s.Sent(path)
	if err != nil {
		return nil, err
	}
	in.Compaction = c
	sent := pre
	if c != nil {
		sent = post
	}
	for k := len(sent) - 1; k >= 0; k-- {
		if n := l.Nodes[sent[k]]; n.Role == session.User && n.Tools&session.HasToolResult == 0 {
			id := l.ID(sent[k])
			in.LastPromptID = &id
			break
		}
	}
	for k := len(path) - 1; k >= 0; k-- {
		if l.Nodes[path[k]].Role == session.System {
			m, err := s.Message(path[k])
			if err != nil {
				return nil, err
			}
			text := Text(gjson.ParseBytes(m))
			in.System = &text
			break
		}
	}
	var pending []PendingTool
	var last, lastReply int32 = -1, -1
	var tools []int32
	for _, i := range path {
		if l.Nodes[i].Kind != session.KindMessage {
			continue
		}
		in.PathMessages++
		last = i
		if l.Nodes[i].Role == session.Assistant {
			lastReply = i
		}
		if l.Nodes[i].Tools != 0 {
			tools = append(tools, i) // only tool blocks matter here: read back no other line
		}
	}
	err = s.EachLine(tools, func(i int32, line []byte) error {
		rawjson.Elements(session.Field(l.Nodes[i].Message(line), "content"), func(b []byte) bool {
			var typ, id, name, input, useID []byte
			rawjson.Members(b, func(k, v []byte) bool {
				switch {
				case rawjson.KeyIs(k, "type"):
					typ = v
				case rawjson.KeyIs(k, "id"):
					id = v
				case rawjson.KeyIs(k, "name"):
					name = v
				case rawjson.KeyIs(k, "input"):
					input = v
				case rawjson.KeyIs(k, "toolUseId"):
					useID = v
				}
				return true
			})
			switch rawjson.Str(typ) {
			case "toolUse":
				pending = append(pending, PendingTool{EntryID: l.ID(i), ID: rawjson.Str(id), Name: rawjson.Str(name), Input: rawjson.Str(input)})
			case "toolResult":
				u := rawjson.Str(useID)
				for j := range pending {
					if pending[j].ID == u {
						pending = append(pending[:j], pending[j+1:]...)
						break
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if lastReply >= 0 {
		m, err := s.Message(lastReply)
		if err != nil {
			return nil, err
		}
		msg := gjson.ParseBytes(m)
		in.LastReply = &Reply{ID: l.ID(lastReply), Text: Text(msg), StopReason: msg.Get("stopReason").Str, Provider: msg.Get("provider").Str, Model: msg.Get("model").Str}
	}
	if len(pending) > 0 {
		started, err := s.Started(path)
		if err != nil {
			return nil, err
		}
		for j := range pending {
			if t, ok := started[pending[j].ID]; ok {
				pending[j].Started = &t
			}
		}
	}
	in.PendingToolUses = append(in.PendingToolUses, pending...)
	if last >= 0 && l.Nodes[last].Role == session.User {
		m, _ := s.Message(last)
		p := &Prompt{ID: l.ID(last), Kind: "prompt", Text: Text(gjson.ParseBytes(m))}
		if pid := l.Nodes[last].Parent; pid >= 0 {
			parent := l.ID(pid)
			p.ParentID = &parent
		}
		if gjson.GetBytes(m, `content.#(type=="toolResult")`).Exists() {
			p.Kind = "toolResults"
		}
		in.DanglingPrompt = p
	}
	return in, nil
}

// Invalid is the number of invalid lines skipped.
func Invalid(l *scan.Log) int { return len(l.Invalid) + len(l.DupIDs) + len(l.Headers) }

// Text joins the text blocks of a message.
func Text(msg gjson.Result) string {
	var parts []string
	msg.Get("content").ForEach(func(_, b gjson.Result) bool {
		if b.Get("type").Str == "text" {
			parts = append(parts, b.Get("text").Str)
		}
		return true
	})
	return strings.Join(parts, "\n")
}
