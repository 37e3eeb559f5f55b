package fsck

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/panto-dev/panto/internal/index"
	"github.com/panto-dev/panto/pkg/catalog"
	"github.com/panto-dev/panto/pkg/filestore"
	"github.com/panto-dev/panto/pkg/store"
)

// Policies, named after RocksDB's WAL recovery modes.
const (
	Tail        = "tail"          // cut only a torn tail: what a crash leaves
	PointInTime = "point-in-time" // cut from the first corrupt line to the end
	Salvage     = "salvage"       // keep every complete line; move only corrupt ones aside
)

// Exit bits of fsck(8), OR-ed over all files.
const (
	BitRepaired  = 1
	BitBusy      = 2
	BitLeft      = 4
	BitError     = 8
	BitUsage     = 16
	BitCancelled = 32
)

// Options say what to do with a file.
type Options struct {
	Repair   bool
	DryRun   bool
	Policy   string
	CacheDir string // checkpoints to forget after a change
	// Foreign tells, of a file that does not begin with a panto header,
	// whether it is another agent's log: its format and a sentence that
	// says what it is and how to read it ("" when it is none), and whether
	// it is damaged (its reader cannot read it: a torn database). Such a
	// file is reported "foreign" and never repaired; only its damage is
	// bit 4 (SPEC §11).
	Foreign func(r io.ReaderAt, size int64) (format, note string, damaged bool)
}

// Report is the outcome for one file (one JSON object with --json).
type Report struct {
	Path        string    `json:"path"`
	Status      string    `json:"status"`           // clean, damaged, repaired, busy, error, foreign
	Format      string    `json:"format,omitempty"` // for a foreign log: its agent
	Note        string    `json:"note,omitempty"`   // for a foreign log: what it is and how to read it
	Policy      string    `json:"policy,omitempty"`
	BytesBefore int64     `json:"bytesBefore"`
	BytesAfter  int64     `json:"bytesAfter"`
	EntriesKept int       `json:"entriesKept"`
	EntriesCut  int       `json:"entriesCut"`
	CutSavedAs  *string   `json:"cutSavedAs"`
	Findings    []Finding `json:"findings"`
	Error       string    `json:"error,omitempty"`
	Bits        int       `json:"-"`
}

// plan is what a policy would change: the byte ranges to drop, in order.
type plan struct {
	drop    []span
	rewrite bool // dropping needs a rewrite, not only a truncation
	entries int  // complete entries dropped
}

func (a *Analysis) plan(policy string) plan {
	var p plan
	if !a.headerOK || a.newer || a.Size == 0 {
		return p // never repair what has no valid header, or a newer format
	}
	good := a.good
	cut := func(from int64) {
		p.drop = []span{{off: from, end: a.Size}}
		p.entries = a.Log.EntriesFrom(from)
	}
	switch policy {
	case Tail:
		if good < a.Size {
			cut(good)
		}
	case PointInTime:
		if len(a.corrupt) > 0 {
			cut(a.corrupt[0].off)
		} else if good < a.Size {
			cut(good)
		}
	case Salvage:
		if a.bom {
			p.drop = append(p.drop, span{off: 0, end: 3})
		}
		p.drop = append(p.drop, a.corrupt...)
		p.drop = append(p.drop, a.dupHead...)
		if good < a.Size {
			p.drop = append(p.drop, span{off: good, end: a.Size})
		}
		slices.SortFunc(p.drop, func(x, y span) int { return int(x.off - y.off) })
		p.rewrite = len(p.drop) > 0 && p.drop[0].end != a.Size
	}
	return p
}

// longFirstLine reports whether r's first line goes on past its first
// MiB, read a chunk at a time up to the first newline.
func longFirstLine(r io.ReaderAt, size int64) bool {
	const look = 1 << 20
	if size <= look {
		return false
	}
	var buf [32 << 10]byte
	for off := int64(0); off < look; {
		n, err := r.ReadAt(buf[:], off)
		if bytes.IndexByte(buf[:n], '\n') >= 0 || err != nil {
			return false
		}
		off += int64(n)
	}
	return true
}

// Run checks the file at path and, as o asks, repairs it.
func Run(path string, o Options) *Report {
	r := &Report{Path: path, Findings: []Finding{}}
	if o.Repair || o.DryRun {
		r.Policy = o.Policy
	}
	fail := func(err error) *Report {
		r.Status, r.Error, r.Bits = "error", err.Error(), BitError
		return r
	}
	write := o.Repair && !o.DryRun
	var (
		src    io.Reader // with Size
		f      *os.File  // open to write, when repairing
		locked bool      // a writer holds the lock (known only where it matters)
	)
	busy := func() bool { return locked }
	if write {
		// Repair the file a link names, never the link: a replacement
		// renamed over the link would leave the real file damaged.
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			return fail(err)
		}
		path = real
		var fi os.FileInfo
		f, fi, err = filestore.OpenLocked(path, 0)
		if errors.Is(err, store.ErrBusy) {
			r.Status, r.Bits = "busy", BitBusy
			return r
		}
		if err != nil {
			return fail(err)
		}
		defer f.Close()
		src = io.NewSectionReader(f, 0, fi.Size())
	} else {
		rf, err := filestore.OpenRead(path)
		if err != nil {
			return fail(err)
		}
		defer rf.Close()
		if !rf.Regular() {
			return fail(fmt.Errorf("%w: %s", catalog.ErrNotRegular, path))
		}
		if o.DryRun {
			locked, _ = rf.Locked() // a repair would skip a locked file
		} else {
			// Asked only of a file that ends in an unterminated line: is a
			// writer holding the lock, or has the file changed since it was
			// read (an append that finished in between)?
			busy = func() bool {
				locked, _ = rf.Locked()
				now, err := rf.SizeNow()
				return locked || err == nil && now != rf.Size()
			}
		}
		src = rf
	}
	if ra, ok := src.(interface {
		io.ReaderAt
		Size() int64
	}); ok && o.Foreign != nil && longFirstLine(ra, ra.Size()) {
		// No panto header is a MiB long: another agent's log (a chat of
		// 200 MB on one line) is told before check holds the line whole.
		if format, note, damaged := o.Foreign(ra, ra.Size()); format != "" {
			r.BytesBefore, r.BytesAfter = ra.Size(), ra.Size()
			r.Status, r.Format, r.Note = "foreign", format, note
			if damaged {
				r.Bits |= BitLeft
			}
			return r
		}
	}
	reuse, _ := analyses.Get().(*Analysis)
	a, err := check(src, busy, reuse)
	if err != nil {
		return fail(err)
	}
	defer func() { // nothing the report holds points into the Analysis
		if a.small() {
			analyses.Put(a)
		}
	}()
	r.BytesBefore, r.BytesAfter = a.Size, a.Size
	if (!a.headerOK || a.newer) && o.Foreign != nil {
		if ra, ok := src.(interface {
			io.ReaderAt
			Size() int64
		}); ok {
			if format, note, damaged := o.Foreign(ra, ra.Size()); format != "" {
				r.Status, r.Format, r.Note = "foreign", format, note
				if damaged {
					r.Bits |= BitLeft
				}
				return r
			}
		}
	}
	r.EntriesKept = len(a.Log.Nodes)
	r.Findings = append(r.Findings, a.Findings...)
	if !o.Repair && !o.DryRun {
		r.finish(a.Damaged(), false)
		return r
	}
	if locked && o.DryRun {
		r.Status, r.Bits = "busy", BitBusy // a repair would skip it now
		if a.Damaged() {
			r.Bits |= BitLeft
		}
		return r
	}
	p := a.plan(o.Policy)
	if len(p.drop) == 0 {
		r.finish(a.Damaged(), false)
		return r
	}
	dropped := int64(0)
	for _, s := range p.drop {
		dropped += s.end - s.off
	}
	r.EntriesCut, r.EntriesKept = p.entries, r.EntriesKept-p.entries
	r.BytesAfter = a.Size - dropped
	r.mark(p, o.DryRun)
	if o.DryRun {
		r.Bits = BitLeft
		r.Status = "damaged"
		return r
	}
	saved, err := apply(f, path, p)
	index.Forget(o.CacheDir, path)
	if err != nil && saved == "" { // nothing changed: report the damage as it stays
		r.BytesAfter, r.EntriesCut, r.EntriesKept = r.BytesBefore, 0, len(a.Log.Nodes)
		for i := range r.Findings {
			r.Findings[i].Action = ""
		}
		fail(err)
		if a.Damaged() {
			r.Bits |= BitLeft
		}
		return r
	}
	if saved != "" {
		r.CutSavedAs = &saved
	}
	if err != nil {
		return fail(err)
	}
	// Check again what is now at path.
	again, err := os.Open(path)
	if err != nil {
		return fail(err)
	}
	defer again.Close()
	info, err := again.Stat()
	if err != nil {
		return fail(err)
	}
	b, err := Check(io.NewSectionReader(again, 0, info.Size()), nil)
	if err != nil {
		return fail(err)
	}
	r.BytesAfter = b.Size
	r.finish(b.Damaged(), true)
	return r
}

func (r *Report) finish(damaged, changed bool) {
	switch {
	case changed:
		r.Status, r.Bits = "repaired", BitRepaired
	case damaged:
		r.Status = "damaged"
	default:
		r.Status = "clean"
	}
	if damaged {
		r.Bits |= BitLeft
		if changed {
			r.Status = "damaged"
		}
	}
}

// mark sets the action on each finding the plan deals with.
func (r *Report) mark(p plan, dry bool) {
	verb := "cut"
	if dry {
		verb = "would cut"
	}
	for i := range r.Findings {
		f := &r.Findings[i]
		for _, s := range p.drop {
			if f.Offset >= s.off && f.Offset < s.end && f.Severity != Info || (f.ID == "bom" && s.off == 0 && s.end == 3) {
				f.Action = verb
			}
		}
	}
}

// apply saves the bytes p drops beside path, then removes them from the
// locked file f: by truncation when they are all at the end, else by
// atomic replacement.
func apply(f *os.File, path string, p plan) (string, error) {
	if !p.rewrite {
		cut, err := filestore.CutAt(f, path, p.drop[0].off, p.drop[0].end, p.entries)
		if cut == nil {
			return "", err
		}
		return cut.SavedAs, err
	}
	var parts []io.Reader
	for _, s := range p.drop {
		parts = append(parts, io.NewSectionReader(f, s.off, s.end-s.off))
	}
	saved, discard, err := filestore.SaveAside(path, io.MultiReader(parts...))
	if err != nil {
		return "", err
	}
	err = filestore.Replace(path, func(w io.Writer) error {
		at := int64(0)
		for _, s := range p.drop {
			if _, err := io.Copy(w, io.NewSectionReader(f, at, s.off-at)); err != nil {
				return err
			}
			at = s.end
		}
		size, err := f.Seek(0, io.SeekEnd)
		if err != nil {
			return err
		}
		_, err = io.Copy(w, io.NewSectionReader(f, at, size-at))
		return err
	})
	if err != nil && unchanged(f, path) {
		discard() // nothing was cut: no copy of a cut stays behind
		return "", err
	}
	return saved, err
}

// unchanged reports whether the file at path is still f: a replacement
// that failed did not take its place.
func unchanged(f *os.File, path string) bool {
	fi, err1 := f.Stat()
	pi, err2 := os.Stat(path)
	return err1 == nil && err2 == nil && os.SameFile(fi, pi)
}
