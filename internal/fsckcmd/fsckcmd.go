// Package fsckcmd is panto-fsck: it checks session files and repairs them
// after crashes, for a person at a terminal and for cron.
package fsckcmd

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/panto-dev/panto/internal/agents"
	"github.com/panto-dev/panto/internal/cli"
	"github.com/panto-dev/panto/internal/exitcode"
	"github.com/panto-dev/panto/internal/fsck"
	"github.com/panto-dev/panto/internal/index"
	"github.com/panto-dev/panto/internal/ordered"
	"github.com/panto-dev/panto/internal/stores"
	"github.com/panto-dev/panto/internal/tty"
	"github.com/panto-dev/panto/pkg/catalog"
	"github.com/panto-dev/panto/pkg/store"
)

const name = "panto-fsck"

type grammar struct {
	Version       cli.VersionFlag `help:"Print the version and exit."`
	Paths         []string        `arg:"" optional:"" help:"Session files, or directories (every *.jsonl below); - or none for stdin."`
	All           bool            `help:"Every session of every project under the sessions base."`
	Repair        bool            `help:"Repair what the policy allows (takes the writer's lock; busy files are skipped)."`
	Policy        string          `enum:"tail,point-in-time,salvage" default:"tail" help:"tail: cut a torn tail; point-in-time: cut from the first corrupt line; salvage: move only corrupt lines aside."`
	DryRun        bool            `short:"n" help:"Change nothing; report what a repair would do."`
	JSON          bool            `help:"One JSON object per file on stdout."`
	Verbose       bool            `short:"v" help:"Also list clean files."`
	Quiet         bool            `short:"q" help:"No summary line."`
	cli.StoreFlag `embed:""`
}

// Main runs panto-fsck in this process.
//
// A closed stdout must not kill it in the middle of a repair (a cut saved
// but not made): SIGPIPE is ignored, so a failed write is an error that
// stops the work once the files in hand are done (bit 8).
func Main() int {
	cli.QuietPipe()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() { <-ctx.Done(); interrupt() }()
	return Run(os.Args[1:], cli.OS())
}

// interrupted is done when a signal comes (Main).
var interrupted, interrupt = context.WithCancel(context.Background())

// Run runs panto-fsck with args and returns fsck(8)'s exit bitmask.
func Run(args []string, proc cli.IO) int {
	var g grammar
	_, code, done := cli.Parse(name, "Check session files and repair them after crashes (read-only unless --repair).", &g, args, proc, nil)
	if done {
		switch code {
		case exitcode.Usage:
			return fsck.BitUsage
		case exitcode.Failure: // --help or --version not written
			return fsck.BitError
		}
		return code
	}
	out := bufio.NewWriterSize(proc.Stdout, 64<<10)
	defer out.Flush()
	return g.run(proc, out)
}

func (g *grammar) run(proc cli.IO, out *bufio.Writer) int {
	if g.DryRun {
		g.Repair = true
	}
	stdin := len(g.Paths) == 0 && !g.All || len(g.Paths) == 1 && g.Paths[0] == "-"
	if stdin {
		if g.Repair && !g.DryRun {
			cli.Errorf(proc.Stderr, name, "cannot repair stdin: give the session file")
			return fsck.BitUsage
		}
		if cli.IsTerminal(proc.Stdin) {
			cli.StdinHint(proc, name, "a session's lines")
		}
		// A signal ends the read (a check of stdin changes nothing, so
		// nothing is left half done): a pipe that never ends is no hang.
		done := make(chan *fsck.Report, 1)
		go func() { done <- stdinReport(proc.Stdin) }()
		select {
		case r := <-done:
			return g.report(proc, out, r, 1)
		case <-interrupted.Done():
			cli.Errorf(proc.Stderr, name, "cancelled: nothing checked")
			return fsck.BitCancelled
		}
	}
	st, err := stores.Open(g.Store, proc)
	if err != nil {
		cli.Errorf(proc.Stderr, name, "%v", err)
		if exitcode.Of(err) == exitcode.Usage {
			return fsck.BitUsage
		}
		return fsck.BitError
	}
	defer st.Close()
	files, err := g.files(st, proc)
	if err != nil {
		cli.Errorf(proc.Stderr, name, "%v", err)
		return fsck.BitError
	}
	opts := fsck.Options{Repair: g.Repair, DryRun: g.DryRun, Policy: g.Policy, CacheDir: index.Dir(proc.Getenv), Foreign: foreign}
	run := func(path string) *fsck.Report {
		if catalog.IsLeftover(filepath.Base(path)) {
			return leftoverReport(path, g.Repair && !g.DryRun)
		}
		return fsck.Run(path, opts)
	}
	if _, files := st.(store.Files); !files {
		if g.Repair && !g.DryRun {
			cli.Errorf(proc.Stderr, name, "the repair policies are for files (a database keeps no torn tail): check without --repair")
			return fsck.BitUsage
		}
		run = func(name string) *fsck.Report { return checkStored(st, name) }
	}
	progress := cli.IsTerminal(proc.Stderr) && len(files) >= 200 && !g.JSON
	bits, counts := 0, map[string]int{}
	// A check changes nothing: a signal ends it at once, the files not
	// reported yet left unreported (bit 32). A repair finishes the file in
	// hand first: a cut is never left saved but not made.
	abandon := !g.Repair || g.DryRun
	emitted, err := checkAll(interrupted, files, run, abandon, func(i int, r *fsck.Report) error {
		bits |= r.Bits
		counts[r.Status]++
		if progress && (r.Status != "clean" || i%100 == 0) {
			fmt.Fprintf(proc.Stderr, "\r\033[K")
		}
		if err := g.emit(proc, out, r); err != nil {
			return err
		}
		if progress && i%100 == 0 {
			fmt.Fprintf(proc.Stderr, "checked %d/%d", i+1, len(files))
		}
		return nil
	})
	switch {
	case err == nil:
	case !errors.Is(err, context.Canceled):
		// A report could not be written: said, unless its reader left
		// (a closed pipe ends the run quietly, in its bit alone).
		if !cli.IsBrokenPipe(err) {
			cli.Errorf(proc.Stderr, name, "%v", err)
		}
		return bits | fsck.BitError
	case abandon:
		cli.Errorf(proc.Stderr, name, "cancelled: the files not reported above were not checked")
		return bits | fsck.BitCancelled
	case emitted < len(files): // a repair: files left unstarted
		cli.Errorf(proc.Stderr, name, "cancelled: the files in hand were finished; %d of %d not checked (run it again)", len(files)-emitted, len(files))
		bits |= fsck.BitCancelled
	}
	if progress {
		fmt.Fprintf(proc.Stderr, "\r\033[K")
	}
	if !g.Quiet {
		var parts []string
		for _, s := range []string{"clean", "repaired", "damaged", "busy", "error"} {
			parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
		}
		if n := counts["foreign"]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d other agents' logs", n))
		}
		fmt.Fprintf(proc.Stderr, "%s: %d files: %s\n", name, len(files), strings.Join(parts, ", "))
	}
	return bits
}

// checkStored checks a session of a store that is not files: what a
// database can still get wrong (orphans, duplicate ids, invalid messages,
// orphan tool uses). Nothing is repaired.
func checkStored(st store.Store, name string) *fsck.Report {
	f, err := st.Open(context.Background(), name)
	if err != nil {
		return errorReport(name, err)
	}
	defer f.Close()
	return checkReport(name, f)
}

// errorReport is the report of an input that could not be read: what the
// one table of store errors says (stores), its exit code as fsck(8)'s bit
// (a usage error, an ambiguous id prefix, is 16; any other 8).
//
// A session whose database rows are no session (SPEC §10: rows are input,
// and a read refuses them) is damaged instead, left unrepaired (bit 4): the
// rows are not fsck's to repair, and a cron job's --all goes on with the
// others and says which one.
func errorReport(name string, err error) *fsck.Report {
	if errors.Is(err, store.ErrBadRow) {
		return &fsck.Report{Path: name, Status: "damaged", Error: err.Error(), Bits: fsck.BitLeft, Findings: []fsck.Finding{}}
	}
	err = stores.ErrorOf(err, name, stores.Input)
	bit := fsck.BitError
	if exitcode.Of(err) == exitcode.Usage {
		bit = fsck.BitUsage
	}
	return &fsck.Report{Path: name, Status: "error", Error: err.Error(), Bits: bit, Findings: []fsck.Finding{}}
}

func stdinReport(r io.Reader) *fsck.Report { return checkReport("-", r) }

// checkReport checks what r holds, read-only.
func checkReport(label string, r io.Reader) *fsck.Report {
	rep := &fsck.Report{Path: label, Findings: []fsck.Finding{}}
	a, err := fsck.Check(r, nil)
	if err != nil {
		rep.Status, rep.Error, rep.Bits = "error", err.Error(), fsck.BitError
		return rep
	}
	rep.BytesBefore, rep.BytesAfter, rep.EntriesKept = a.Size, a.Size, len(a.Log.Nodes)
	rep.Findings = append(rep.Findings, a.Findings...)
	rep.Status = "clean"
	if a.Damaged() {
		rep.Status, rep.Bits = "damaged", fsck.BitLeft
	}
	return rep
}

func (g *grammar) report(proc cli.IO, out *bufio.Writer, r *fsck.Report, n int) int {
	if err := g.emit(proc, out, r); err != nil {
		if !cli.IsBrokenPipe(err) { // a reader that left is no error to say
			cli.Errorf(proc.Stderr, name, "%v", err)
		}
		return r.Bits | fsck.BitError
	}
	if !g.Quiet {
		fmt.Fprintf(proc.Stderr, "%s: %d file: %s\n", name, n, r.Status)
	}
	return r.Bits
}

// emit writes one file's report: JSON on stdout, or lines for a person on
// stderr.
func (g *grammar) emit(proc cli.IO, out *bufio.Writer, r *fsck.Report) error {
	if g.JSON {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		out.Write(b)
		out.WriteByte('\n')
		return out.Flush()
	}
	if r.Status == "clean" && !g.Verbose {
		return nil
	}
	w := proc.Stderr
	head := fmt.Sprintf("%s: %s", r.Path, r.Status)
	switch {
	case r.Error != "":
		head += ": " + r.Error
	case r.Note != "":
		head += ": " + r.Note
	case r.Status == "busy":
		head += ": a writer holds its lock; try again later"
	case r.CutSavedAs != nil:
		head += fmt.Sprintf(" (policy %s: %d → %d bytes, %d entries cut, cut bytes saved as %s)", r.Policy, r.BytesBefore, r.BytesAfter, r.EntriesCut, *r.CutSavedAs)
	case r.Policy != "" && r.BytesAfter != r.BytesBefore:
		head += fmt.Sprintf(" (policy %s would cut %d bytes, %d entries)", r.Policy, r.BytesBefore-r.BytesAfter, r.EntriesCut)
	}
	fmt.Fprintln(w, tty.Line(head)) // a path or a message may quote bytes of the file
	for _, f := range r.Findings {
		line := fmt.Sprintf("  line %d (byte %d): %s %s: %s", f.Line, f.Offset, f.Severity, f.ID, f.Message)
		if f.Action != "" {
			line += " [" + f.Action + "]"
		}
		fmt.Fprintln(w, tty.Line(line))
	}
	return nil
}

// checkAll checks (or repairs) the files on every core and hands each
// report to emit in the order of files, whatever order the work finishes
// in; an error of emit stops the work, and is returned. When ctx is done
// (a signal) no file is started any more: the files in hand are finished
// and reported, or, with abandon, left at once (a check changes nothing),
// and ctx's error is returned. It returns how many reports were emitted.
func checkAll(ctx context.Context, files []input, run func(path string) *fsck.Report, abandon bool, emit func(i int, r *fsck.Report) error) (int, error) {
	emitted := 0
	err := ordered.Stream(ctx, ordered.Options{Workers: runtime.GOMAXPROCS(0), Abandon: abandon},
		func(send func(int) bool) error {
			for i := range files {
				if !send(i) {
					break
				}
			}
			return nil
		},
		func(i int, yield func(*fsck.Report) bool) {
			if p := files[i]; p.err != nil {
				yield(errorReport(p.path, p.err))
			} else {
				yield(run(p.path))
			}
		},
		func(i int, reports iter.Seq[*fsck.Report]) error {
			for r := range reports {
				if err := emit(i, r); err != nil {
					return err
				}
				emitted++
			}
			return nil
		})
	return emitted, err
}

// leftoverAge is how old a leftover temporary file must be to be taken
// for a killed writer's: a younger one may be a writer's at work.
const leftoverAge = time.Minute

// leftoverReport is the report of a temporary file a writer killed midway
// left beside the sessions (a session being created, a file being
// rewritten): no session, damage to say; --repair removes it. One
// modified in the last minute may be a live writer's: busy, left alone.
func leftoverReport(path string, repair bool) *fsck.Report {
	r := &fsck.Report{Path: path, Findings: []fsck.Finding{}}
	fi, err := os.Lstat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) { // its writer finished meanwhile
			r.Status = "clean"
			return r
		}
		r.Status, r.Error, r.Bits = "error", err.Error(), fsck.BitError
		return r
	}
	r.BytesBefore, r.BytesAfter = fi.Size(), fi.Size()
	what := fmt.Sprintf("a temporary file a writer killed midway left (%d bytes, no session)", fi.Size())
	target := ""
	if fi.Mode().IsRegular() {
		target = catalog.LeftoverSession(path)
	}
	if target != "" {
		// A whole session whose creation was killed between its write
		// and its link: never removed, linked into place.
		what = fmt.Sprintf("a session whose creation a kill cut between its write and its link (%d bytes), not yet at its name %s", fi.Size(), filepath.Base(target))
	}
	switch {
	case time.Since(fi.ModTime()) < leftoverAge:
		r.Status, r.Bits = "busy", fsck.BitBusy
		r.Findings = append(r.Findings, fsck.Finding{ID: "leftoverTemp", Severity: fsck.Info, Message: what + ", or a writer's at work: modified in the last minute, left alone"})
	case target != "" && repair:
		if err := os.Link(path, target); err != nil { // never over a file that appeared meanwhile
			r.Status, r.Error, r.Bits = "error", err.Error(), fsck.BitError
			return r
		}
		if err := os.Remove(path); err != nil {
			r.Status, r.Error, r.Bits = "error", err.Error(), fsck.BitError
			return r
		}
		if d, err := os.Open(filepath.Dir(path)); err == nil {
			d.Sync()
			d.Close()
		}
		r.Status, r.Bits = "repaired", fsck.BitRepaired
		r.Findings = append(r.Findings, fsck.Finding{ID: "leftoverTemp", Severity: fsck.Warning, Message: what + ": linked into place (panto-fsck " + filepath.Base(target) + " checks it)"})
	case target != "":
		r.Status, r.Bits = "damaged", fsck.BitLeft
		r.Findings = append(r.Findings, fsck.Finding{ID: "leftoverTemp", Severity: fsck.Warning, Message: what + ": panto-fsck --repair links it into place"})
	case repair:
		if err := os.Remove(path); err != nil {
			r.Status, r.Error, r.Bits = "error", err.Error(), fsck.BitError
			return r
		}
		r.Status, r.Bits, r.BytesAfter = "repaired", fsck.BitRepaired, 0
		r.Findings = append(r.Findings, fsck.Finding{ID: "leftoverTemp", Severity: fsck.Warning, Message: what + ": removed"})
	default:
		r.Status, r.Bits = "damaged", fsck.BitLeft
		r.Findings = append(r.Findings, fsck.Finding{ID: "leftoverTemp", Severity: fsck.Warning, Message: what + ": panto-fsck --repair removes it"})
	}
	return r
}

type input struct {
	path string
	err  error
}

// files expands the arguments: for files a file as given, a directory to
// every session file below it (sorted, links followed), --all to the
// sessions base; for a database, session ids or prefixes, --all to every
// session, oldest first.
func (g *grammar) files(st store.Store, proc cli.IO) ([]input, error) {
	var out []input
	seen := map[[2]uint64]bool{}
	add := func(path string, err error) error {
		// A file named twice (DIR and DIR/x.jsonl; x.jsonl and ./x.jsonl;
		// --all and a path) is checked once: two workers repairing it at
		// once found it "busy", held by the other, and said a writer
		// held it (bit 2).
		if fi, serr := os.Stat(path); err == nil && serr == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				key := [2]uint64{uint64(st.Dev), st.Ino}
				if seen[key] {
					return nil
				}
				seen[key] = true
			}
		}
		out = append(out, input{path, err})
		return nil
	}
	ctx := context.Background()
	_, isFiles := st.(store.Files)
	leftovers := func(dir string) { // a killed writer's temporary files: said, removed by --repair
		if isFiles {
			catalog.WalkLeftovers(dir, -1, func(p string) error { return add(p, nil) })
		}
	}
	for _, p := range g.Paths {
		stores.EachLog(ctx, st, p, add)
		leftovers(p)
	}
	if !g.All {
		return out, nil
	}
	if _, files := st.(store.Files); files {
		// Every file below the base, damaged or not, sorted by path.
		base, err := catalog.EnvFrom(proc.Getenv).BaseDir()
		if err != nil {
			return nil, err
		}
		if _, err := os.Stat(base); errors.Is(err, fs.ErrNotExist) {
			return out, nil // no sessions yet
		}
		st.Each(ctx, base, add)
		leftovers(base)
		return out, nil
	}
	list, err := st.List(ctx, proc.Cwd, true, func(err error) { add("", err) })
	if err != nil {
		return nil, err
	}
	for i := len(list) - 1; i >= 0; i-- {
		add(list[i].Path, nil)
	}
	return out, nil
}

// foreign tells another agent's log from a damaged session, and says
// whether that log is damaged itself (a torn OpenCode database).
func foreign(r io.ReaderAt, size int64) (string, string, bool) {
	f, err := agents.Identify(r, size)
	if err != nil || f == agents.Unknown || f == agents.Panto {
		return "", "", false
	}
	if a := agents.Of(f); a != nil && !a.Reads() {
		return f.String(), f.Name() + ", which panto does not read (yet)", false
	}
	noun, err := agents.Describe(r, size, f)
	switch {
	case err != nil:
		// a SQLite database that is not OpenCode's, or one damaged
		return f.String(), err.Error(), errors.Is(err, agents.ErrDamaged)
	case noun == "":
		noun = f.Name()
	}
	return f.String(), noun + ": read it with panto-replay, or panto-log import it", false
}
