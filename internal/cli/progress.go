package cli

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// Progress is a count shown on a terminal's stderr while a command works
// through many inputs ("panto-cost: 1,204 files read"), drawn again at most
// ten times a second and cleared at the end. On a pipe or a file it is
// nil, and its methods do nothing: a log or a script never sees it.
type Progress struct {
	mu    sync.Mutex
	w     io.Writer
	name  string
	what  string
	n     int
	shown bool
	last  time.Time
}

// NewProgress returns the progress of counting what (a plural noun), or
// nil when stderr is not a terminal.
func NewProgress(proc IO, name, what string) *Progress {
	if !IsTerminal(proc.Stderr) {
		return nil
	}
	return &Progress{w: proc.Stderr, name: name, what: what}
}

// Step counts one more done.
func (p *Progress) Step() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	if now := time.Now(); now.Sub(p.last) >= 100*time.Millisecond {
		p.last = now
		fmt.Fprintf(p.w, "\r%s: %d %s\x1b[K", p.name, p.n, p.what)
		p.shown = true
	}
}

// Clear takes the line away (at the end, or before something else is
// written).
func (p *Progress) Clear() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
}

func (p *Progress) clear() {
	if p.shown {
		io.WriteString(p.w, "\r\x1b[K")
		p.shown = false
	}
}

// Writer is w for whoever else writes to the terminal while the progress
// shows (warnings): the line is cleared first, so no message starts in it.
func (p *Progress) Writer(w io.Writer) io.Writer {
	if p == nil {
		return w
	}
	return progressWriter{p, w}
}

type progressWriter struct {
	p *Progress
	w io.Writer
}

func (pw progressWriter) Write(b []byte) (int, error) {
	pw.p.mu.Lock()
	defer pw.p.mu.Unlock()
	pw.p.clear()
	return pw.w.Write(b)
}
