package logcmd

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/panto-dev/panto/internal/agents"
	"github.com/panto-dev/panto/internal/cli"
	"github.com/panto-dev/panto/internal/exitcode"
	"github.com/panto-dev/panto/internal/index"
	"github.com/panto-dev/panto/internal/ordered"
	"github.com/panto-dev/panto/pkg/catalog"
	"github.com/panto-dev/panto/pkg/store"
	"github.com/tidwall/gjson"
)

type importCmd struct {
	Paths []string `arg:"" optional:"" help:"Other agents' logs: files, or directories (every *.jsonl below, subagents/ files included). None with --from AGENT|all (or --follow, --once): the agents' own places."`
	From  string   `enum:"auto,${agents},all" default:"auto" help:"The agent that wrote them: claude, codex, pi, gemini, copilot, opencode, or auto (known from each file's first lines); with no paths, an agent or all reads the agents' own places (CLAUDE_CONFIG_DIR, CODEX_HOME, PI_CODING_AGENT_DIR, GEMINI_CLI_HOME, COPILOT_CONFIG_DIR, OPENCODE_DATA_DIR, else the home and XDG defaults)."`
	Force bool     `help:"Import a source that changed even where that cuts entries its import holds and it does not (appended since, by panto-log append): the cut is kept aside, as panto-log truncate keeps it."`

	Follow bool          `help:"Keep following the logs into the database --to names, converting each again as it grows; until SIGINT or SIGTERM."`
	Once   bool          `help:"One pass of --follow, then exit (for cron)."`
	To     string        `help:"With --follow or --once: the database: postgres://…" placeholder:"URL"`
	JSON   bool          `help:"With --follow or --once: one JSON line per committed batch on stdout."`
	Poll   time.Duration `help:"With --follow: look at every log every DURATION instead of watching for changes." placeholder:"DURATION"`
}

func (c *importCmd) validate() error {
	switch {
	case (c.Follow || c.Once) && c.To == "":
		return exitcode.Usagef("--follow and --once import into a database: give --to postgres://…")
	case c.Follow && c.Once:
		return exitcode.Usagef("--follow and --once: give one")
	case !c.Follow && !c.Once && (c.To != "" || c.JSON || c.Poll != 0):
		return exitcode.Usagef("--to, --json and --poll go with --follow or --once (import into a database without them: --store URL)")
	}
	return nil
}

// Run imports, or follows (--follow, --once). The store is opened (a bad
// --store refused) for a follower too, though it writes to --to.
func (c *importCmd) Run(e *env) error {
	st, err := e.store()
	if err != nil {
		return err
	}
	if c.Follow || c.Once {
		return c.follow(e.proc, e.out)
	}
	e.code, err = c.run(e.ctx, st, e.proc, e.out)
	return err
}

// imported counts an import's outcome.
type imported struct {
	created, grew, changed, unchanged, skipped, failed int
	inDB                                               int   // OpenCode storage/ sessions its database holds: read from there
	findings                                           int   // logs read in part, or refused: exit 1
	entries                                            int64 // of the sessions written
	stats                                              agents.Stats
}

// errFinding marks a log not imported, or imported in part, for a reason
// the caller must look at, not an operational failure: exit 1 (SPEC §7).
type errFinding struct{ error }

func (e errFinding) Unwrap() error { return e.error }

// run imports every log the arguments name into the store: one panto
// session per source session, at the sessions directory of its cwd (files)
// or under its id (a database); deterministic and incremental. Logs are
// converted on every core and written in their order. It prints the name
// of each session created or changed, and a summary on stderr.
func (c *importCmd) run(ctx context.Context, st store.Store, proc cli.IO, out io.Writer) (int, error) {
	from, err := agents.ParseFormat(c.From)
	if err != nil {
		return 0, exitcode.Usagef("--from %v", err)
	}
	paths := c.Paths
	switch {
	case len(paths) > 0 && c.From == "all":
		return 0, exitcode.Usagef("--from all reads the agents' own places: give paths or --from all, not both")
	case len(paths) == 0 && c.From == "auto":
		return 0, exitcode.Usagef("give the logs to import, or --from %s|all to read the agents' own places", strings.Join(agents.Names(), "|"))
	case len(paths) == 0:
		if paths = agents.Places(from, proc.Getenv); len(paths) == 0 {
			cli.Warnf(proc.Stderr, name, "%s", agents.NoLogs(from, proc.Getenv, "import"))
			return exitcode.Findings, nil
		}
	}
	cache := "" // where the state of each source at its last import is kept
	if d := index.Dir(proc.Getenv); d != "" {
		cache = filepath.Join(filepath.Dir(d), "import")
	}
	var n imported
	prog := cli.NewProgress(proc, name, "logs imported")
	defer prog.Clear()
	proc.Stderr = prog.Writer(proc.Stderr) // what is said clears the progress line first
	// The logs are identified and converted on every core (prepare), and
	// committed in the order of the arguments and the walk.
	produce := func(send func(*prepared) bool) error {
		for _, arg := range paths {
			taken := 0
			each := func(path string, err error) error {
				taken++
				if !send(&prepared{path: path, err: err, named: path == arg}) {
					return errStopImport
				}
				return nil
			}
			err := catalog.WalkWith(arg, agents.LogPathIn(arg), each)
			if err == nil && taken == 0 {
				// No file named as a log: each is said to be none (exit 1),
				// not passed over in silence.
				for _, p := range agents.PassedOver(arg) {
					if err = each(p, nil); err != nil {
						break
					}
				}
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	prepare := func(p *prepared) { p.prepare(st, from, c.From, cache) }
	err = ordered.Run(context.Background(), runtime.GOMAXPROCS(0), produce, prepare, func(p *prepared) error {
		prog.Step()
		err := p.commit(ctx, st, proc, out, &n, c.Force)
		var finding errFinding
		switch {
		case err == nil:
			if p.partial {
				n.findings++
			}
		case !p.named && p.notFile:
			// In a directory, what is no file to read (a dangling link, a
			// FIFO) is said and passed over: the rest is imported.
			n.skipped++
			cli.Warnf(proc.Stderr, name, "%s: %v: skipped", p.path, err)
		case errors.As(err, &finding):
			n.findings++
			cli.Errorf(proc.Stderr, name, "import %s: %v", p.path, err)
		default:
			n.failed++
			cli.Errorf(proc.Stderr, name, "import %s: %v", p.path, err)
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStopImport) {
		return 0, err
	}
	fmt.Fprintf(proc.Stderr, "%s: into %s: %d entries in %d sessions new, %d grown, %d changed, %d unchanged, %d skipped",
		name, st.Where(), n.entries, n.created, n.grew, n.changed, n.unchanged, n.skipped)
	if n.inDB > 0 {
		fmt.Fprintf(proc.Stderr, "; %d sessions of OpenCode's storage/ tree imported from its database, which holds them too", n.inDB)
	}
	if s := n.stats.Summary(); s != "" {
		fmt.Fprintf(proc.Stderr, "; converted: %s", s)
	}
	fmt.Fprintln(proc.Stderr)
	switch {
	case n.failed > 0:
		return 0, exitcode.Failuref("%d logs not imported (see above)", n.failed+n.findings)
	case n.findings > 0:
		return exitcode.Findings, nil // each said above
	}
	return 0, nil
}

var errStopImport = errors.New("stop")

// sourceState is what says a source is unchanged since its last import.
type sourceState struct {
	Size, Mtime, Ctime int64
	Dev, Ino           uint64
}

func stateOf(fi os.FileInfo) sourceState {
	s := sourceState{Size: fi.Size(), Mtime: fi.ModTime().UnixNano()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.Dev, s.Ino = uint64(sys.Dev), sys.Ino
		s.Ctime = index.Ctime(sys).UnixNano()
	}
	return s
}

// prepared is one log on its way: converted by a worker (a temporary
// file), then written by the importer, in order.
type prepared struct {
	path      string
	err       error
	named     bool // given as an argument, not found in a directory
	notFile   bool // no regular file to read: a dangling link, a FIFO
	unchanged bool // since its last import, by its state
	skipped   bool // a panto session already
	inDB      bool // a session of OpenCode's storage/ tree that its database holds too
	partial   bool // imported, but its reader left lines out
	mark      string
	state     string
	tmp       *os.File
	size      int64
	stats     *agents.Stats
	// spans are the sessions of a log that holds several (an OpenCode
	// database), converted one after the other into tmp.
	spans []agents.Span
	many  bool
}

// prepare converts the log, unless its last import says it is unchanged.
// what is the --from asked: an import of the same file as another agent's
// is another import.
func (p *prepared) prepare(st store.Store, from agents.Format, what, cache string) {
	if p.err != nil {
		p.notFile = errors.Is(p.err, os.ErrNotExist) // a dangling link
		return
	}
	// Not blocking on open: a FIFO named *.jsonl is refused, not waited on.
	f, err := os.OpenFile(p.path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		p.err, p.notFile = err, errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENXIO)
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		p.err = err
		return
	case !fi.Mode().IsRegular():
		p.err, p.notFile = errFinding{fmt.Errorf("%w: give logs", catalog.ErrNotRegular)}, true
		return
	}
	abs, _ := filepath.Abs(p.path)
	if cache != "" {
		sum := sha256.Sum256([]byte(st.Where() + "\x00" + what + "\x00" + abs))
		p.mark = filepath.Join(cache, hex.EncodeToString(sum[:12]))
		p.state = fmt.Sprintf("%+v\n", stateOf(fi))
		if wi, err := os.Stat(agents.WALOf(abs)); err == nil {
			// A database's newest writes are in its write-ahead log.
			p.state = fmt.Sprintf("%+v wal %+v\n", stateOf(fi), stateOf(wi))
		}
	}
	if b, err := os.ReadFile(p.mark); p.mark != "" && err == nil && bytes.HasPrefix(b, []byte(p.state)) {
		// The mark names the session it became (the sessions, a line each,
		// of a log of several).
		if names := strings.Split(string(b[len(p.state):]), "\n"); names[0] != "" && all(names, func(n string) bool { return exists(context.Background(), st, n) }) {
			p.unchanged = true
			p.spans = make([]agents.Span, len(names))
			return
		}
	}
	is, err := agents.Identify(f, fi.Size())
	switch {
	case err != nil:
		p.err = err
		return
	case is == agents.Panto:
		p.skipped = true
		return
	case from == agents.Unknown && is == agents.Unknown:
		p.err = errFinding{agents.ErrNotALog}
		return
	case from == agents.Unknown:
		from = is
	case is != agents.Unknown && is != from:
		p.err = errFinding{fmt.Errorf("it is %s, not %s: nothing imported (leave out --from, or give --from %v)", is.Name(), from.Name(), is)}
		return
	}
	if head := make([]byte, 16); from == agents.OpenCode {
		if !p.named && agents.InDatabase(abs) != "" {
			// The same session as the database's (OpenCode 1.2 copied its
			// tree into it, and writes the database only): imported once,
			// from the database, as the walk of the data directory meets it.
			p.inDB = true
			return
		}
		if n, _ := f.ReadAt(head, 0); agents.IsSQLite(head[:n]) {
			// A database: every session it holds.
			p.many = true
			p.tmp, p.spans, p.stats, p.err = agents.ConvertAll(agents.Source{Path: abs, R: f, Size: fi.Size()}, from)
			if errors.Is(p.err, agents.ErrNotALog) {
				p.err = errFinding{fmt.Errorf("%w (read as %v)", p.err, from)}
			}
			return
		}
	}
	p.tmp, p.size, p.stats, p.err = agents.Convert(agents.Source{Path: abs, R: f, Size: fi.Size()}, from)
	if errors.Is(p.err, agents.ErrNotALog) {
		p.err = errFinding{fmt.Errorf("%w (read as %v)", p.err, from)}
	}
}

// commit writes a prepared log into the store.
func (p *prepared) commit(ctx context.Context, st store.Store, proc cli.IO, out io.Writer, n *imported, force bool) error {
	if p.tmp != nil {
		defer p.tmp.Close()
	}
	switch {
	case p.err != nil:
		return p.err
	case p.unchanged:
		n.unchanged += max(1, len(p.spans))
		return nil
	case p.inDB:
		n.inDB++
		return nil
	case p.skipped:
		n.skipped++
		cli.Warnf(proc.Stderr, name, "%s is a panto session already: skipped", p.path)
		return nil
	}
	var targets []string
	changed := false
	one := func(tmp *os.File, size int64) error {
		target, outcome, added, err := put(ctx, st, tmp, size, force, func(f string, a ...any) { cli.Warnf(proc.Stderr, name, f, a...) })
		if err != nil {
			return err
		}
		switch outcome {
		case "new":
			n.created++
		case "grew":
			n.grew++
		case "changed":
			n.changed++
		default:
			n.unchanged++
		}
		n.entries += added
		if outcome != "unchanged" {
			changed = true
			fmt.Fprintln(out, shown(proc, target))
		}
		targets = append(targets, target)
		return nil
	}
	if p.many {
		for _, sp := range p.spans {
			tmp, err := spanFile(p.tmp, sp)
			if err == nil {
				err = one(tmp, sp.Size)
				tmp.Close()
			}
			if err != nil {
				return fmt.Errorf("session %s: %w", sp.ID, err)
			}
		}
	} else if err := one(p.tmp, p.size); err != nil {
		return err
	}
	if changed {
		n.stats.Merge(p.stats) // the summary counts what was written
	}
	// What the reader left out is said, and makes the exit 1.
	if k := len(p.stats.Corrupt); k > 0 {
		p.partial = true
		cli.Warnf(proc.Stderr, name, "%s: %d lines are not JSON objects (line %d first): not imported, the rest was", p.path, k, p.stats.Corrupt[0])
	}
	if p.stats.Torn > 0 {
		p.partial = true
		cli.Warnf(proc.Stderr, name, "%s: line %d: incomplete final line (a writer may be mid-append): not imported, the rest was", p.path, p.stats.Torn)
	}
	if p.mark != "" && !p.partial && len(targets) > 0 { // a log read in part is read again, and said again
		if err := os.MkdirAll(filepath.Dir(p.mark), 0o700); err == nil {
			os.WriteFile(p.mark, []byte(p.state+strings.Join(targets, "\n")), 0o600)
		}
	}
	return nil
}

// spanFile copies one session of a log of several into a temporary file
// of its own (already unlinked), for put.
func spanFile(all *os.File, sp agents.Span) (*os.File, error) {
	tmp, err := os.CreateTemp("", "panto-*")
	if err != nil {
		return nil, err
	}
	os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, io.NewSectionReader(all, sp.Off, sp.Size)); err != nil {
		tmp.Close()
		return nil, err
	}
	return tmp, nil
}

// all reports whether ok holds for every element of xs.
func all(xs []string, ok func(string) bool) bool {
	for _, x := range xs {
		if !ok(x) {
			return false
		}
	}
	return true
}

// lines counts the lines r holds.
func lines(r io.Reader) (int64, error) {
	buf := make([]byte, 64<<10)
	var n int64
	for {
		k, err := r.Read(buf)
		n += int64(bytes.Count(buf[:k], []byte{'\n'}))
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// section reads f's first size bytes, from the start, whatever its offset.
func section(f *os.File, size int64) io.Reader { return io.NewSectionReader(f, 0, size) }

// exists reports whether the store has the session name (a file's path,
// or an id in a database), without reading it: a database would send the
// whole session to open it.
func exists(ctx context.Context, st store.Store, name string) bool {
	found := false
	st.Each(ctx, name, func(got string, err error) error {
		found = err == nil && got == name
		return nil
	})
	return found
}

// put makes the store hold the session in tmp: created whole, or the
// entries it lacks appended (a store that holds all of it and more, the
// user having gone on with it or the source having lost its end, keeps
// what it holds). A session that parts from tmp is cut after the last
// entry both hold (the cut kept aside, as panto-log truncate does, and
// said) and the rest received again, only when every entry cut is in tmp
// (a Claude Code response that grew another copy since); a cut that would
// take entries tmp lacks (the user's own) needs force. It returns the
// session's name, what happened, and how many entries were written.
func put(ctx context.Context, st store.Store, tmp *os.File, size int64, force bool, warn func(string, ...any)) (string, string, int64, error) {
	res, err := st.Receive(ctx, io.NewSectionReader(tmp, 0, size))
	outcome := "new"
	if errors.Is(err, store.ErrConflict) && res != nil {
		d, cerr := compare(ctx, st, res.Name, tmp, size)
		switch {
		case cerr != nil:
			return "", "", 0, cerr
		case d.header != nil:
			// The same source session read from another path (a copy):
			// the session keeps its header, the one of its first import.
			other, n, herr := withHeader(tmp, size, d.header)
			if herr != nil {
				return "", "", 0, herr
			}
			defer other.Close()
			return put(ctx, st, other, n, force, warn)
		case d.theirs > 0 && !force:
			return "", "", 0, errFinding{fmt.Errorf("the source changed, and %s holds %d entries after %s that the source does not (appended since the import?): importing it would cut them: nothing written (give --force to cut them aside, as panto-log truncate keeps them)", res.Name, d.theirs, d.where())}
		}
		// Parted at the first entry (a conversion rule of an older panto,
		// the same header), the cut is of every entry: after the header.
		after := d.after
		if after == "" {
			after = d.id
		}
		cut, terr := st.Truncate(ctx, res.Name, after)
		if err = terr; err == nil {
			if cut != nil {
				warn("%s: the source changed after %s: %d entries cut, kept in %s", res.Name, d.where(), cut.Entries, cut.SavedAs)
			}
			res, err = st.Receive(ctx, io.NewSectionReader(tmp, 0, size))
		}
		outcome = "changed"
	}
	switch {
	case err != nil:
		return "", "", 0, err
	case outcome == "changed", res.Created:
	case res.Entries > 0:
		outcome = "grew"
	default:
		outcome = "unchanged"
	}
	return res.Name, outcome, res.Entries, nil
}

// difference is how a session parts from the conversion of its source.
type difference struct {
	header []byte // the session's header, when only it differs from the conversion's (its origin)
	after  string // the last entry both hold, byte for byte, at the same place ("": none)
	theirs int    // entries of the session after that which the conversion does not hold
	id     string // the session's id (its header's)
}

// where names the place the session and its conversion part, for a message.
func (d difference) where() string {
	if d.after == "" {
		return "its header"
	}
	return "entry " + d.after
}

// compare reads the session and tmp side by side, up to where they part.
func compare(ctx context.Context, st store.Store, name string, tmp *os.File, size int64) (difference, error) {
	var d difference
	r, err := st.Open(ctx, name)
	if err != nil {
		return d, err
	}
	defer r.Close()
	a := bufio.NewReaderSize(io.NewSectionReader(r, 0, r.Size()), 1<<20)
	b := bufio.NewReaderSize(section(tmp, size), 1<<20)
	for i := 0; ; i++ {
		x, errA := a.ReadBytes('\n')
		y, errB := b.ReadBytes('\n')
		switch {
		case errA != nil && errA != io.EOF:
			return d, errA
		case errB != nil && errB != io.EOF:
			return d, errB
		case i == 0 && !bytes.Equal(x, y):
			if id := gjson.GetBytes(x, "id").Str; id != "" && id == gjson.GetBytes(y, "id").Str {
				d.header = bytes.Clone(x)
			}
			return d, nil
		case errA != nil || errB != nil || !bytes.Equal(x, y):
			ids := map[string]bool{}
			for len(y) > 0 {
				ids[gjson.GetBytes(y, "id").Str] = true
				if errB != nil {
					break
				}
				y, errB = b.ReadBytes('\n')
			}
			if errB != nil && errB != io.EOF {
				return d, errB
			}
			for len(x) > 0 {
				if !ids[gjson.GetBytes(x, "id").Str] {
					d.theirs++
				}
				if errA != nil {
					break
				}
				x, errA = a.ReadBytes('\n')
			}
			if errA != nil && errA != io.EOF {
				return d, errA
			}
			return d, nil
		}
		if i == 0 {
			d.id = gjson.GetBytes(x, "id").Str
		} else {
			d.after = gjson.GetBytes(x, "id").Str
		}
	}
}

// withHeader returns a temporary file, already unlinked, that holds tmp
// with header (and its "\n") in place of its first line.
func withHeader(tmp *os.File, size int64, header []byte) (*os.File, int64, error) {
	first, err := bufio.NewReader(section(tmp, size)).ReadSlice('\n')
	if err != nil {
		return nil, 0, err
	}
	rest := size - int64(len(first))
	f, err := os.CreateTemp("", "panto-import-*")
	if err != nil {
		return nil, 0, err
	}
	os.Remove(f.Name())
	if _, err = f.Write(header); err == nil {
		_, err = io.Copy(f, io.NewSectionReader(tmp, int64(len(first)), rest))
	}
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, int64(len(header)) + rest, nil
}
