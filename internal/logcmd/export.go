package logcmd

import (
	"bytes"
	"context"
	"io"
	"os"

	"github.com/panto-dev/panto/internal/agents"
	"github.com/panto-dev/panto/internal/cli"
	"github.com/panto-dev/panto/internal/stores"
	"github.com/panto-dev/panto/pkg/catalog"

	"github.com/panto-dev/panto/internal/exitcode"
	"github.com/panto-dev/panto/pkg/store"
)

type exportCmd struct {
	Session string `arg:"" help:"The session: a file (in a database: an id or a unique prefix)."`
}

// Run runs the subcommand.
func (c *exportCmd) Run(e *env) error {
	st, err := e.store()
	if err != nil {
		return err
	}
	return c.run(e.ctx, st, e.out)
}

// run writes the session's complete lines (a torn tail left out) to out.
func (c *exportCmd) run(ctx context.Context, st store.Store, out io.Writer) error {
	name, err := stores.SessionArg(ctx, st, cli.IO{Getenv: os.Getenv}, c.Session)
	if err != nil {
		return err
	}
	r, err := st.Open(ctx, name)
	if err != nil {
		return storeError(err, c.Session)
	}
	defer r.Close()
	if _, _, ok := catalog.SplitSession(name); ok {
		// One session of a database (an OpenCode DB#SESSION): no bytes
		// of its own to copy; its panto session, as an import writes it.
		return exportConverted(name, r, out)
	}
	end, err := linesEnd(r, r.Size())
	if err == nil {
		_, err = io.Copy(out, io.NewSectionReader(r, 0, end))
	}
	if err != nil {
		return exitcode.Failuref("export %s: %w", c.Session, err)
	}
	return nil
}

// linesEnd is where the complete lines of r's first size bytes end: after
// its last newline (0 when none), looked for from the end a chunk at a
// time. What follows, a torn tail, never leaves; and a line is never held
// to be told complete (a chat of 200 MB on one line took 982 MB to
// export, held until its newline came).
func linesEnd(r io.ReaderAt, size int64) (int64, error) {
	buf := make([]byte, min(size, 64<<10))
	for end := size; end > 0; {
		off := max(0, end-int64(len(buf)))
		n, err := r.ReadAt(buf[:end-off], off)
		if n < int(end-off) {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF // the file was cut while read
			}
			return 0, err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return off + int64(i) + 1, nil
		}
		end = off
	}
	return 0, nil
}

// exportConverted writes the panto session of the one session r's log
// holds under name (DB#SESSION).
func exportConverted(name string, r store.Reader, out io.Writer) error {
	ra, ok := r.(io.ReaderAt)
	if !ok {
		return exitcode.Failuref("export %s: not a file", name)
	}
	f, err := agents.Sniff(ra, r.Size())
	if err != nil {
		return exitcode.Failuref("export %s: %v", name, err)
	}
	tmp, n, _, err := agents.Convert(agents.Source{Path: name, R: ra, Size: r.Size()}, f)
	if err != nil {
		return stores.ErrorOf(err, name, stores.Read)
	}
	defer tmp.Close()
	if _, err := io.Copy(out, io.NewSectionReader(tmp, 0, n)); err != nil {
		return exitcode.Failuref("export %s: %w", name, err)
	}
	return nil
}
