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
	"syscall"

	"github.com/panto-dev/panto/internal/cli"
	"github.com/panto-dev/panto/pkg/agents"
	"github.com/panto-dev/panto/pkg/catalog"
	"github.com/panto-dev/panto/pkg/exitcode"
	"github.com/panto-dev/panto/pkg/filestore"
	"github.com/panto-dev/panto/pkg/index"
	"github.com/panto-dev/panto/pkg/nullstore"
	"github.com/panto-dev/panto/pkg/pgstore"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/panto-dev/panto/pkg/store"
	"github.com/tidwall/gjson"
)

type importCmd struct {
	Paths []string `arg:"" help:"Other agents' logs: files, or directories (every *.jsonl below, subagents/ files included)."`
	From  string   `enum:"auto,claude,codex,pi" default:"auto" help:"The agent that wrote them: claude, codex, pi, or auto (known from each file's first lines)."`
}

// imported counts an import's outcome.
type imported struct {
	created, grew, changed, unchanged, skipped, failed int
	entries                                            int64 // of the sessions written
	stats                                              agents.Stats
}

// run imports every log the arguments name into the store: one panto
// session per source session, at the sessions directory of its cwd (files)
// or under its id (a database); deterministic and incremental. It prints
// the name of each session created or changed, and a summary on stderr.
func (c *importCmd) run(ctx context.Context, st store.Store, io cli.IO, out io.Writer) error {
	from, err := agents.ParseFormat(c.From)
	if err != nil {
		return exitcode.New(exitcode.Usage, err)
	}
	cache := filepath.Join(filepath.Dir(index.Dir(io.Getenv)), "import")
	var n imported
	for _, arg := range c.Paths {
		err := catalog.Walk(arg, func(path string, err error) error {
			if err == nil {
				err = c.one(ctx, st, io, out, path, from, cache, &n)
			}
			if err != nil {
				n.failed++
				cli.Errorf(io.Stderr, name, "import %s: %v", path, err)
			}
			return nil
		})
		if err != nil {
			return err
		}
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

// one imports the log at path.
func (c *importCmd) one(ctx context.Context, st store.Store, io cli.IO, out io.Writer, path string, from agents.Format, cache string, n *imported) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%w: give logs", catalog.ErrNotRegular)
	}
	abs, _ := filepath.Abs(path)
	sum := sha256.Sum256([]byte(st.Where() + "\x00" + abs))
	mark := filepath.Join(cache, hex.EncodeToString(sum[:12]))
	state := fmt.Sprintf("%+v\n", stateOf(fi))
	if b, err := os.ReadFile(mark); err == nil && bytes.HasPrefix(b, []byte(state)) {
		if name := string(b[len(state):]); name != "" && exists(st, name) {
			n.unchanged++
			return nil
		}
	}
	if from == agents.Unknown {
		if from, err = agents.Sniff(f, fi.Size()); err != nil {
			return err
		}
		switch from {
		case agents.Panto:
			n.skipped++
			cli.Warnf(io.Stderr, name, "%s is a panto session already: skipped", path)
			return nil
		case agents.Unknown:
			return agents.ErrNotALog
		}
	}
	tmp, size, stats, err := agents.Convert(agents.Source{Path: abs, R: f, Size: fi.Size()}, from)
	if err != nil {
		return err
	}
	defer tmp.Close()
	if k := len(stats.Corrupt); k > 0 {
		cli.Warnf(io.Stderr, name, "%s: %d lines are not JSON objects (line %d first): not imported, the rest was", path, k, stats.Corrupt[0])
	}
	n.stats.Merge(stats)
	first, err := bufio.NewReader(io_(tmp, size)).ReadSlice('\n')
	if err != nil {
		return err
	}
	h := session.Classify(bytes.TrimSuffix(first, []byte("\n")))
	target, outcome, added, err := put(ctx, st, h.ID, h.Cwd, tmp, size)
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
	if cache != "" {
		if err := os.MkdirAll(cache, 0o700); err == nil {
			os.WriteFile(mark, []byte(state+target), 0o600)
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

func io_(f *os.File, size int64) io.Reader { return io.NewSectionReader(f, 0, size) }

// exists reports whether the store has the session name.
func exists(st store.Store, name string) bool {
	r, err := st.Open(context.Background(), name)
	if err != nil {
		return false
	}
	r.Close()
	return true
}

// put makes the store hold the session in tmp: created whole, or the
// entries it lacks appended; an entry it holds with other bytes (a Claude
// Code response that grew another copy since) is cut there first (the cut
// kept aside, as panto-log truncate does). It returns the session's name,
// what happened, and how many entries were written.
func put(ctx context.Context, st store.Store, id, cwd string, tmp *os.File, size int64) (string, string, int64, error) {
	switch s := st.(type) {
	case *nullstore.Null:
		return id, "new", 0, nil
	case *filestore.Files:
		dir, err := s.Env.ProjectDir(cwd)
		if err != nil {
			return "", "", 0, err
		}
		path := filepath.Join(dir, catalog.FileName(id))
		return receive(ctx, st, path, tmp, size, func() (int64, error) {
			n, err := s.Receive(path, io_(tmp, size))
			if err != nil || n == 0 {
				return 0, err
			}
			k, err := lines(io.NewSectionReader(tmp, size-n, n))
			if n == size {
				k-- // a new file: its header is no entry
			}
			return k, err
		})
	case *pgstore.PG:
		named, err := os.CreateTemp("", "panto-import-*.jsonl")
		if err != nil {
			return "", "", 0, err
		}
		defer os.Remove(named.Name())
		defer named.Close()
		if _, err := io.Copy(named, io_(tmp, size)); err != nil {
			return "", "", 0, err
		}
		return receive(ctx, st, id, tmp, size, func() (int64, error) {
			res, err := s.Push(ctx, named.Name())
			return res.Entries, err
		})
	}
	return "", "", 0, fmt.Errorf("import into %s is not supported", st.Where())
}

// receive runs write (which returns how much it added), once more after
// cutting the session back to what it shares with tmp when they differ.
func receive(ctx context.Context, st store.Store, name string, tmp *os.File, size int64, write func() (int64, error)) (string, string, int64, error) {
	had := exists(st, name)
	added, err := write()
	outcome := "new"
	if errors.Is(err, store.ErrConflict) {
		after, cerr := shared(ctx, st, name, tmp, size)
		if cerr != nil {
			return "", "", 0, cerr
		}
		if _, err = st.Truncate(ctx, name, after); err == nil {
			added, err = write()
		}
		outcome = "changed"
	}
	switch {
	case err != nil:
		return "", "", 0, err
	case outcome == "changed", !had:
	case added > 0:
		outcome = "grew"
	default:
		outcome = "unchanged"
	}
	return name, outcome, added, nil
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
	b := bufio.NewReaderSize(io_(tmp, size), 1<<20)
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
