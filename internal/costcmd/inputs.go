package costcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"runtime"
	"sync"
	"time"

	"github.com/panto-dev/panto/internal/cli"
	"github.com/panto-dev/panto/internal/exitcode"
	"github.com/panto-dev/panto/internal/ordered"
	"github.com/panto-dev/panto/internal/stores"
	"github.com/panto-dev/panto/pkg/catalog"
	"github.com/panto-dev/panto/pkg/store"
)

// job is one input: read by a worker, its turns and warnings handed on in
// order (ordered.Stream).
type job struct {
	label string
	input int
	in    io.Reader
	close func()
	err   error // the input could not be opened
	bad   error // a session of --all whose rows are no session: skipped, said
	other error // a file no log (a FIFO) found in a walked directory: skipped, said
}

// item is a turn, or a warning in its place, or the end of an input.
// Turns travel by value in batches that are used again: a large input
// makes no garbage per turn.
type item struct {
	t    turn
	warn string
	end  *ended
}

type ended struct {
	skip skipped
	err  error
}

// batch is how many items a worker hands on at once.
const batch = 256

// batches holds the batches of items read: a worker fills one, the
// counter puts it back.
var batches = sync.Pool{New: func() any { b := make([]item, 0, batch); return &b }}

// inputs reads the arguments in order: stdin, and the sessions of the
// store each argument names (for files: a file, or every session file below
// a directory, links followed), then with --all every session of the
// store. The inputs are read on every core, and what they yield is counted
// in their order, so the report is the same as read one by one. A file
// reached twice is read once, and a reply that another input counted
// already is not counted again. A file that cannot hold turns since
// --since is not read: one whose inode last changed before that day (a
// time nothing but the kernel sets).
func (g *grammar) inputs(st store.Store, proc cli.IO, args []string, since, until time.Time, skip *skipped, warn func(string, ...any), emit func(*turn) error) error {
	ctx := context.Background()
	// Over many inputs a terminal sees how far the reading is; a warning
	// clears the line first.
	prog := cli.NewProgress(proc, name, "inputs read")
	defer prog.Clear()
	if prog != nil {
		w := warn
		warn = func(format string, args ...any) { prog.Clear(); w(format, args...) }
	}
	needTime := g.needTime(since, until)
	needTitle := g.By == "session" // only session rows show titles
	// The dispatcher (produce) opens the inputs in order: which file was
	// read already and which --since rules out are decided here. The run
	// stops at the first error, abandoning the inputs under way: one may
	// be a pipe on stdin that never ends.
	produce := func(send func(*job) bool) error {
		read := map[fileID]bool{}
		n := 0
		send1 := func(j *job) bool {
			j.input = n
			n++
			return send(j)
		}
		all := false  // the sessions of --all are being opened
		current := "" // the argument being read
		open := func(name string, err error) error {
			if err != nil {
				send1(&job{label: name, err: openError(err, name)})
				return errStop
			}
			f, err := st.Open(ctx, name)
			if errors.Is(err, store.ErrBadRow) && all {
				if !send1(&job{label: name, bad: err}) {
					return errStop
				}
				return errBadRow
			}
			if errors.Is(err, catalog.ErrNotRegular) && name != current {
				// a FIFO or a device found in a directory walked (the
				// agents' places when alone): no log, said and passed
				// by, as import does, and counted as a file not read
				// (exit 1); one named is an error
				if !send1(&job{label: name, other: fmt.Errorf("%s: not a regular file", name)}) {
					return errStop
				}
				return nil
			}
			if err != nil {
				send1(&job{label: name, err: openError(err, name)})
				return errStop
			}
			if id, ok := identity(f); ok && !oneOfSeveral(name) {
				if read[id] {
					f.Close()
					return nil
				}
				read[id] = true
			}
			if t, ok := f.(interface{ Ctime() time.Time }); ok && !since.IsZero() && t.Ctime().Before(since) {
				f.Close()
				return nil
			}
			if !send1(&job{label: name, in: f, close: func() { f.Close() }}) {
				f.Close()
				return errStop
			}
			return nil
		}
		for _, arg := range args {
			current = arg
			if arg == "-" {
				cli.StdinHint(proc, name, "entry or message lines")
				if !send1(&job{label: "-", in: proc.Stdin, close: func() {}}) {
					return nil
				}
				continue
			}
			if err := stores.EachLog(ctx, st, arg, open); err != nil {
				if !errors.Is(err, errStop) {
					send1(&job{label: arg, err: err})
				}
				return nil
			}
		}
		if g.All {
			list, err := st.List(ctx, proc.Cwd, true, func(err error) { warn("%v: skipped", err) })
			if err != nil {
				send1(&job{label: "--all", err: exitcode.New(exitcode.Failure, err)})
				return nil
			}
			all = true
			for i := len(list) - 1; i >= 0; i-- { // oldest first, as a directory's files sort
				// A session whose rows are no session (SPEC §10: rows are
				// input) is one bad input of many: said and skipped, as a
				// corrupt line is, and the rest counted.
				if err := open(list[i].Path, nil); errors.Is(err, errBadRow) {
					continue
				} else if err != nil {
					return nil
				}
			}
		}
		return nil
	}
	work := func(j *job, yield func(*[]item) bool) {
		if j.in != nil { // not an input that could not be opened
			j.run(needTime, needTitle, yield)
		}
	}
	c := newCounted()
	emitJob := func(j *job, out iter.Seq[*[]item]) error {
		if j.err != nil {
			return j.err
		}
		if j.bad != nil {
			warn("%v: skipped", j.bad)
			skip.badSessions++
			return nil
		}
		if j.other != nil {
			warn("%v: skipped", j.other)
			skip.foreign++
			return nil
		}
		copies := 0
		for b := range out {
			items := *b
			for i := range items {
				it := &items[i]
				switch {
				case it.warn != "":
					warn("%s", it.warn)
				case it.end != nil:
					skip.add(it.end.skip)
					if it.end.err != nil {
						label := j.label
						if label == "-" {
							label = "stdin"
						}
						return readError(label, it.end.err)
					}
				default:
					t := &it.t
					if t.response != "" && c.add("", "response "+t.response, j.input) >= 0 {
						if !t.foreign {
							copies++
						}
						continue
					}
					if t.dupID != "" {
						if first := c.add(t.session, t.dupID, j.input); first >= 0 {
							if first == j.input {
								skip.duplicate++
								warn("%s: line %d: entry id %q repeats an earlier entry: not counted twice", j.label, t.line, t.dupID)
							} else {
								copies++
							}
							continue
						}
					}
					if t.invalidWarn != "" {
						skip.invalid++
						warn("%s", t.invalidWarn)
					}
					if err := emit(t); err != nil {
						return err
					}
				}
			}
			clear(items) // keep no strings of this input alive
			*b = items[:0]
			batches.Put(b)
		}
		if copies > 0 {
			warn("%s: %d replies already counted from another input: not counted twice", j.label, copies)
		}
		prog.Step()
		return nil
	}
	return ordered.Stream(ctx, ordered.Options{Workers: runtime.GOMAXPROCS(0), Abandon: true}, produce, work, emitJob)
}

// errStop ends a walk whose error is already on its way; errBadRow says
// a session of --all was skipped.
var (
	errStop   = errors.New("stop")
	errBadRow = errors.New("bad rows")
)

// openError is the error of an input that cannot be read, with its exit
// code.
func openError(err error, name string) error { return stores.ErrorOf(err, name, stores.Input) }

// run reads the job's input, handing its turns and warnings on in
// batches; the last item says how it ended.
func (j *job) run(needTime, needTitle bool, yield func(*[]item) bool) {
	defer j.close()
	b := batches.Get().(*[]item)
	items := *b
	flush := func() bool {
		*b = items
		if !yield(b) {
			return false
		}
		b = batches.Get().(*[]item)
		items = *b
		return true
	}
	stopped := errors.New("stopped")
	var e ended
	r := &reader{label: j.label, session: j.label, agent: "panto", skip: &e.skip, needTime: needTime, needTitle: needTitle, names: map[string]string{},
		warn: func(format string, args ...any) { items = append(items, item{warn: fmt.Sprintf(format, args...)}) }}
	if id := catalog.IDFromPath(j.label); id != "" {
		r.session = id
	}
	e.err = r.read(j.in, func(t *turn) error {
		items = append(items, item{t: *t})
		if len(items) >= batch && !flush() {
			return stopped
		}
		return nil
	})
	if errors.Is(e.err, stopped) {
		return
	}
	items = append(items, item{end: &e})
	flush()
}

func (s *skipped) add(o skipped) {
	s.corrupt += o.corrupt
	s.torn += o.torn
	s.invalid += o.invalid
	s.duplicate += o.duplicate
	s.noTime += o.noTime
	s.foreign += o.foreign
	s.badSessions += o.badSessions
}

// oneOfSeveral reports whether name is one session of a log that holds
// several (DB#SESSION): the file's other sessions may be read too.
func oneOfSeveral(name string) bool {
	_, _, ok := catalog.SplitSession(name)
	return ok
}
