package search

import (
	"bytes"
	"io"
	"os"
	"syscall"

	"github.com/panto-dev/panto/internal/agents"
	"github.com/tidwall/gjson"
)

// startReader reads a file whose start is in memory: from there when it
// can, else from the file.
type startReader struct {
	start []byte
	f     io.ReaderAt
}

func (r startReader) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) <= int64(len(r.start)) {
		return copy(p, r.start[off:]), nil
	}
	return r.f.ReadAt(p, off)
}

// sniff tells a log's format from its start, read already. The agents'
// Sniff reads the first line whole: a first line longer than the start
// (a 200 MB prompt, a chat of 200 MB written on one line) is told from
// the keys its start holds instead, so memory stays flat.
func sniff(f io.ReaderAt, size int64, start []byte) (agents.Format, error) {
	t := bytes.TrimLeft(start, " \t\r\n")
	if int64(len(start)) == size || bytes.IndexByte(t, '\n') >= 0 {
		return agents.SniffStart(startReader{start, f}, size, start)
	}
	if f := longFirstLine(t); f != agents.Unknown {
		return f, nil
	}
	return agents.DocFormat(t), nil // a whole chat on one line
}

// longFirstLine tells the format of a log from the start of its first
// line, a line too long to hold: from the keys met before the cut
// (gjson reads a cut object up to where it is cut). Unknown when they do
// not say: such a file is left out, as no log.
func longFirstLine(t []byte) agents.Format {
	if len(t) == 0 || t[0] != '{' {
		return agents.Unknown
	}
	r := gjson.GetManyBytes(t, "type", "sessionId", "timestamp", "payload", "id")
	typ := r[0].Str
	switch {
	case r[1].Type == gjson.String && typ != "":
		return agents.Claude
	case r[2].Exists() && (typ == "response_item" || typ == "event_msg" || typ == "session_meta" || typ == "turn_context" || typ == "compacted"):
		return agents.Codex
	case r[4].Type == gjson.String && (typ == "message" || typ == "compaction" || typ == "branch_summary" || typ == "custom_message"):
		return agents.Pi // panto's first line is its header, never long
	}
	return agents.Unknown
}

// SessionOf is the session id a log of lines (Claude Code's, Codex's,
// pi's, panto's) says in its first lines, read from its first MiB only
// (else the id its file name holds): for a log whose name does not hold
// it, without reading a long line whole.
func SessionOf(path string) string {
	file, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return ""
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	buf := make([]byte, min(fi.Size(), int64(bufSize)))
	n, err := file.ReadAt(buf, 0)
	if err != nil && err != io.EOF {
		return ""
	}
	format, err := sniff(file, fi.Size(), buf[:n])
	if err != nil || !lineFormats[format] {
		return ""
	}
	w := &worker{meta: Meta{Path: path, Format: format}, size: fi.Size()}
	w.head(buf[:n], int64(n) == fi.Size())
	return w.meta.Session
}
