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
	w := &wholeLines{w: out}
	if _, err := io.Copy(w, r); err != nil {
		return exitcode.Failuref("export %s: %w", c.Session, err)
	}
	return nil
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

// wholeLines passes on what ends in a newline and holds back the rest: a
// torn tail never leaves.
type wholeLines struct {
	w    io.Writer
	held []byte
}

func (h *wholeLines) Write(p []byte) (int, error) {
	i := bytes.LastIndexByte(p, '\n')
	if i < 0 {
		h.held = append(h.held, p...)
		return len(p), nil
	}
	if len(h.held) > 0 {
		if _, err := h.w.Write(h.held); err != nil {
			return 0, err
		}
		h.held = h.held[:0]
	}
	if _, err := h.w.Write(p[:i+1]); err != nil {
		return 0, err
	}
	h.held = append(h.held, p[i+1:]...)
	return len(p), nil
}
