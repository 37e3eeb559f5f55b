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
	"syscall"
	"time"

	"github.com/panto-dev/panto/internal/cli"
	"github.com/panto-dev/panto/pkg/agents"
	"github.com/panto-dev/panto/pkg/catalog"
	"github.com/panto-dev/panto/pkg/exitcode"
	"github.com/panto-dev/panto/pkg/index"
	"github.com/panto-dev/panto/pkg/store"
	"github.com/tidwall/gjson"
)

type importCmd struct {
	Paths []string `arg:"" optional:"" help:"Other agents' logs: files, or directories (every *.jsonl below, subagents/ files included). With --follow or --once, none: the agents' own places."`
	From  string   `enum:"auto,claude,codex,pi" default:"auto" help:"The agent that wrote them: claude, codex, pi, or auto (known from each file's first lines)."`

	Follow bool          `help:"Keep following the logs into the database --to names, converting each again as it grows; until SIGINT or SIGTERM."`
	Once   bool          `help:"One pass of --follow, then exit (for cron)."`
	To     string        `help:"With --follow or --once: the database: postgres://…" placeholder:"URL"`
	JSON   bool          `help:"With --follow or --once: one JSON line per committed batch on stdout."`
	Poll   time.Duration `help:"With --follow: look at every log every DURATION instead of watching for changes." placeholder:"DURATION"`
}

// imported counts an import's outcome.
type imported struct {
	created, grew, changed, unchanged, skipped, failed int
	entries                                            int64 // of the sessions written
	stats                                              agents.Stats
}

// run imports every log the arguments name into the store: one panto
// session per source session, at the sessions directory of its cwd (files)
// or under its id (a database); deterministic and incremental. Logs are
// converted on every core and written in their order. It prints the name
// of each session created or changed, and a summary on stderr.
func (c *importCmd) run(ctx context.Context, st store.Store, io cli.IO, out io.Writer) error {
	from, err := agents.ParseFormat(c.From)
	if err != nil {
		return exitcode.New(exitcode.Usage, err)
	}
	cache := "" // where the state of each source at its last import is kept
	if d := index.Dir(io.Getenv); d != "" {
		cache = filepath.Join(filepath.Dir(d), "import")
	}
	workers := runtime.GOMAXPROCS(0)
	todo := make(chan *prepared, workers)
	ordered := make(chan *prepared, 2*workers)
	quit := make(chan struct{})
	defer close(quit)
	for range workers {
		go func() {
			for p := range todo {
				p.prepare(st, from, cache)
				close(p.done)
			}
		}()
	}
	walkErr := make(chan error, 1)
	go func() {
		defer close(ordered)
		defer close(todo)
		for _, arg := range c.Paths {
			err := catalog.Walk(arg, func(path string, err error) error {
				p := &prepared{path: path, err: err, done: make(chan struct{})}
				for _, ch := range []chan *prepared{ordered, todo} {
					select {
					case ch <- p:
					case <-quit:
						return errStopImport
					}
				}
				return nil
			})
			if err != nil {
				walkErr <- err
				return
			}
		}
	}()
	var n imported
	for p := range ordered {
		<-p.done
		err := p.commit(ctx, st, io, out, &n)
		if err != nil {
			n.failed++
			cli.Errorf(io.Stderr, name, "import %s: %v", p.path, err)
		}
	}
	select {
	case err := <-walkErr:
		if !errors.Is(err, errStopImport) {
			return err
		}
	default:
	}
	fmt.Fprintf(io.Stderr, "%s: into %s: %d entries in %d sessions new, %d grown, %d changed, %d unchanged, %d skipped",
		name, st.Where(), n.entries, n.created, n.grew, n.changed, n.unchanged, n.skipped)
	if s := n.stats.Summary(); s != "" {
		fmt.Fprintf(io.Stderr, "; converted: %s", s)
	}
	fmt.Fprintln(io.Stderr)
	if n.failed > 0 {
		return exitcode.Failuref("%d logs not imported (see above)", n.failed)
	}
	return nil
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
	path string
	err  error
	done chan struct{}

	unchanged bool // since its last import, by its state
	skipped   bool // a panto session already
	mark      string
	state     string
	tmp       *os.File
	size      int64
	stats     *agents.Stats
}

// prepare converts the log, unless its last import says it is unchanged.
func (p *prepared) prepare(st store.Store, from agents.Format, cache string) {
	if p.err != nil {
		return
	}
	f, err := os.Open(p.path)
	if err != nil {
		p.err = err
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		p.err = err
		return
	case !fi.Mode().IsRegular():
		p.err = fmt.Errorf("%w: give logs", catalog.ErrNotRegular)
		return
	}
	abs, _ := filepath.Abs(p.path)
	if cache != "" {
		sum := sha256.Sum256([]byte(st.Where() + "\x00" + abs))
		p.mark = filepath.Join(cache, hex.EncodeToString(sum[:12]))
		p.state = fmt.Sprintf("%+v\n", stateOf(fi))
	}
	if b, err := os.ReadFile(p.mark); p.mark != "" && err == nil && bytes.HasPrefix(b, []byte(p.state)) {
		if name := string(b[len(p.state):]); name != "" && exists(context.Background(), st, name) {
			p.unchanged = true
			return
		}
	}
	if from == agents.Unknown {
		if from, p.err = agents.Sniff(f, fi.Size()); p.err != nil {
			return
		}
		switch from {
		case agents.Panto:
			p.skipped = true
			return
		case agents.Unknown:
			p.err = agents.ErrNotALog
			return
		}
	}
	p.tmp, p.size, p.stats, p.err = agents.Convert(agents.Source{Path: abs, R: f, Size: fi.Size()}, from)
}

// commit writes a prepared log into the store.
func (p *prepared) commit(ctx context.Context, st store.Store, io cli.IO, out io.Writer, n *imported) error {
	if p.tmp != nil {
		defer p.tmp.Close()
	}
	switch {
	case p.err != nil:
		return p.err
	case p.unchanged:
		n.unchanged++
		return nil
	case p.skipped:
		n.skipped++
		cli.Warnf(io.Stderr, name, "%s is a panto session already: skipped", p.path)
		return nil
	}
	if k := len(p.stats.Corrupt); k > 0 {
		cli.Warnf(io.Stderr, name, "%s: %d lines are not JSON objects (line %d first): not imported, the rest was", p.path, k, p.stats.Corrupt[0])
	}
	n.stats.Merge(p.stats)
	target, outcome, added, err := put(ctx, st, p.tmp, p.size)
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
		fmt.Fprintln(out, target)
	}
	if p.mark != "" {
		if err := os.MkdirAll(filepath.Dir(p.mark), 0o700); err == nil {
			os.WriteFile(p.mark, []byte(p.state+target), 0o600)
		}
	}
	return nil
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
// entries it lacks appended; an entry it holds with other bytes (a Claude
// Code response that grew another copy since) is cut there first (the cut
// kept aside, as panto-log truncate does), and the rest received again.
// It returns the session's name, what happened, and how many entries were
// written.
func put(ctx context.Context, st store.Store, tmp *os.File, size int64) (string, string, int64, error) {
	src := io.NewSectionReader(tmp, 0, size)
	res, err := st.Receive(ctx, src)
	outcome := "new"
	if errors.Is(err, store.ErrConflict) && res != nil {
		after, cerr := shared(ctx, st, res.Name, tmp, size)
		if cerr != nil {
			return "", "", 0, cerr
		}
		if _, err = st.Truncate(ctx, res.Name, after); err == nil {
			res, err = st.Receive(ctx, src)
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

// shared returns the id of the last entry the session holds that tmp holds
// too, byte for byte, at the same place.
func shared(ctx context.Context, st store.Store, name string, tmp *os.File, size int64) (string, error) {
	r, err := st.Open(ctx, name)
	if err != nil {
		return "", err
	}
	defer r.Close()
	a := bufio.NewReaderSize(io.NewSectionReader(r, 0, r.Size()), 1<<20)
	b := bufio.NewReaderSize(section(tmp, size), 1<<20)
	last := ""
	for i := 0; ; i++ {
		x, errA := a.ReadBytes('\n')
		y, errB := b.ReadBytes('\n')
		if errA != nil || errB != nil || !bytes.Equal(x, y) {
			break
		}
		if i > 0 {
			last = gjson.GetBytes(x, "id").Str
		}
	}
	if last == "" {
		return "", fmt.Errorf("%w: %s shares no entry with its source (imported from another file?): nothing written", store.ErrConflict, name)
	}
	return last, nil
}
