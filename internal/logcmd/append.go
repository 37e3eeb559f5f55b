package logcmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/panto-dev/panto/internal/cli"
	"github.com/panto-dev/panto/internal/exitcode"
	"github.com/panto-dev/panto/internal/rawjson"
	"github.com/panto-dev/panto/internal/replay"
	"github.com/panto-dev/panto/internal/stores"
	"github.com/panto-dev/panto/internal/tty"
	"github.com/panto-dev/panto/pkg/scan"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/panto-dev/panto/pkg/store"
	"github.com/tidwall/gjson"
)

type appendCmd struct {
	File       string        `arg:"" help:"The session: a file (in a database: its id, or a unique prefix of an existing one); created by its first reply."`
	Provider   string        `help:"Provider stamped on user entries (default: the file's active one)."`
	Model      string        `help:"Model stamped on user entries (default: the file's active one)."`
	System     string        `help:"Append this system prompt first, before --user (no JSON needed)." placeholder:"TEXT"`
	SystemFile string        `name:"system-file" help:"Append the system prompt FILE holds (its final newlines left out, as panto-turn's --system-file), as --system does: for one of any size (an argument is at most 128 KiB)." placeholder:"FILE"`
	User       string        `help:"Append this user prompt first (no JSON needed); stdin is read after it unless it is a terminal." placeholder:"TEXT"`
	UserFile   string        `name:"user-file" help:"Append the user prompt FILE holds, as --user does (for a prompt of any size: an argument is at most 128 KiB)." placeholder:"FILE"`
	Parent     string        `help:"Make the first entry a child of entry ID (a branch) instead of the leaf." placeholder:"ID"`
	Root       bool          `help:"Make the first entry a root: the sibling of a first prompt that got no reply (the session holds nothing else)."`
	ExpectLeaf *string       `help:"Fail (exit 3, nothing written) unless the leaf is still ID." placeholder:"ID"`
	AllowEmpty bool          `help:"Create a new file even if the batch has no assistant message."`
	Wait       time.Duration `default:"10s" help:"How long to wait for another writer's lock."`
	ToolResult []string      `name:"tool-result" help:"Append one user entry holding this tool result (repeat for every result of a round; the content is read from FILE)." placeholder:"ID=FILE"`
	Quiet      bool          `short:"q" help:"Do not echo the entry lines written."`
	IDs        bool          `name:"ids" help:"Echo only the ids of the entries written, one per line."`
}

func (c *appendCmd) validate() error {
	switch {
	case (c.Provider == "") != (c.Model == ""):
		return exitcode.Usagef("--provider and --model go together")
	case c.UserFile != "" && c.User != "":
		return exitcode.Usagef("--user and --user-file: give one")
	case c.SystemFile != "" && c.System != "":
		return exitcode.Usagef("--system and --system-file: give one")
	case c.Root && c.Parent != "":
		return exitcode.Usagef("--root and --parent: give one")
	}
	return nil
}

// Run runs the subcommand.
func (c *appendCmd) Run(e *env) error {
	st, err := e.store()
	if err != nil {
		return err
	}
	return c.run(e.ctx, st, e.proc, e.out)
}

func (c *appendCmd) run(ctx context.Context, st store.Store, proc cli.IO, out io.Writer) error {
	if c.UserFile != "" {
		b, err := os.ReadFile(c.UserFile)
		if err != nil {
			return exitcode.Usagef("--user-file: %v", err)
		}
		if len(b) == 0 {
			return exitcode.Usagef("--user-file %s is empty: nothing appended", tty.Line(c.UserFile))
		}
		c.User = string(b)
	}
	if c.SystemFile != "" {
		if fi, err := os.Stat(c.SystemFile); err == nil && !fi.Mode().IsRegular() {
			return exitcode.Usagef("--system-file %s: not a regular file: give one", tty.Line(c.SystemFile)) // a FIFO would be waited on
		}
		b, err := os.ReadFile(c.SystemFile)
		if err != nil {
			return exitcode.Usagef("--system-file: %v", err)
		}
		if c.System = strings.TrimRight(string(b), "\n"); c.System == "" {
			return exitcode.Usagef("--system-file %s is empty: nothing appended", tty.Line(c.SystemFile))
		}
	}
	var msgs []store.Msg
	if c.System != "" {
		msgs = append(msgs, store.Msg{Raw: session.TextMessage("system", c.System), Role: "system"})
	}
	if len(c.ToolResult) > 0 {
		m, err := toolResults(c.ToolResult, c.User)
		if err != nil {
			return err
		}
		msgs = append(msgs, m)
	} else if c.User != "" {
		msgs = append(msgs, store.Msg{Raw: session.TextMessage("user", c.User), Role: "user"})
	}
	if len(msgs) == 0 || !cli.IsTerminal(proc.Stdin) {
		cli.StdinHint(proc, name, "message lines")
		in, err := readMessages(proc.Stdin)
		if err != nil {
			return err
		}
		msgs = append(msgs, in...)
	}
	if len(msgs) == 0 {
		// A FILE that is no session file is the mistake to say, not the
		// empty stdin (it is checked here, not before every append).
		if r, err := st.Open(ctx, c.File); err == nil {
			r.Close()
		} else if errors.Is(err, store.ErrIsDir) {
			return storeError(fmt.Errorf("%w: %s", store.ErrIsDir, c.File), c.File)
		}
		return exitcode.Usagef("no message lines on stdin: nothing appended (give message lines, or --user TEXT)")
	}
	if err := checkKept(ctx, st, c.File, c.Parent, msgs); err != nil {
		return err
	}
	stores.SetWait(st, c.Wait)
	res, err := st.Append(ctx, c.File, msgs, store.AppendOptions{
		Provider: c.Provider, Model: c.Model, Parent: c.Parent, Root: c.Root, ExpectLeaf: c.ExpectLeaf,
		AllowEmpty: c.AllowEmpty, Cwd: proc.Cwd,
	})
	if err != nil {
		return storeError(err, c.File)
	}
	if res.Cut != nil {
		cli.Warnf(proc.Stderr, name, "cut a torn tail of %d bytes from %s first (saved as %s)", res.Cut.Bytes, c.File, res.Cut.SavedAs)
	}
	switch {
	case c.Quiet:
		return nil
	case c.IDs:
		for _, line := range bytes.SplitAfter(res.Lines, []byte("\n")) {
			if len(line) > 0 {
				fmt.Fprintln(out, session.Classify(line[:len(line)-1]).ID)
			}
		}
	default:
		out.Write(res.Lines)
	}
	// The entries are in the session: a report that cannot be printed
	// (a full disk; a closed pipe stays quiet) must not read as an append
	// that failed, which a caller would make again.
	if f, ok := out.(interface{ Flush() error }); ok {
		if err := f.Flush(); err != nil {
			return exitcode.New(exitcode.Failure, fmt.Errorf("appended %d entries to %s, but could not print them: %w: they are in the session, do not append them again", bytes.Count(res.Lines, []byte("\n")), c.File, err))
		}
	}
	return nil
}

// toolResults builds one user message of tool results (ID=FILE each, the
// file holding the tool's output), then the text, if any: the results of a
// round travel together, as providers want them.
func toolResults(specs []string, text string) (store.Msg, error) {
	b := []byte(`{"role":"user","content":[`)
	for i, spec := range specs {
		id, file, ok := strings.Cut(spec, "=")
		if !ok || id == "" || file == "" {
			return store.Msg{}, exitcode.Usagef("--tool-result %q: give ID=FILE", spec)
		}
		content, err := os.ReadFile(file)
		if err != nil {
			return store.Msg{}, exitcode.Usagef("--tool-result %s: %v", id, err)
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"type":"toolResult","toolUseId":`...)
		b = rawjson.AppendString(b, id)
		b = append(b, `,"content":`...)
		b = append(rawjson.AppendString(b, string(content)), '}')
	}
	if text != "" {
		b = append(b, `,{"type":"text","text":`...)
		b = append(rawjson.AppendString(b, text), '}')
	}
	return store.ParseMessage(append(b, "]}"...))
}

// checkKept refuses a compaction of msgs whose firstKeptEntryId names no
// entry on the path it is appended under (parent, or the leaf): panto-fsck
// calls such a session damaged (compactionKeptMissing). An empty one keeps
// nothing and is written. A session that cannot be read is left to Append
// to report; the path an entry is appended under never changes but by a
// truncate, so reading it before the append is enough.
func checkKept(ctx context.Context, st store.Store, file, parent string, msgs []store.Msg) error {
	var kept []string
	for _, m := range msgs {
		if m.Type == session.TypeCompaction {
			if id := gjson.GetBytes(append([]byte{'{'}, append(m.Raw, '}')...), "firstKeptEntryId").Str; id != "" {
				kept = append(kept, id)
			}
		}
	}
	if len(kept) == 0 {
		return nil
	}
	var on func(j int) string // the ids of the path the compaction goes under
	var path []int32
	if r, err := st.Open(ctx, file); err == nil {
		s, err := replay.Open(r, r.Size())
		if err == nil {
			at := s.Log.Leaf()
			if parent != "" {
				at = s.Log.Lookup(parent)
			}
			if at >= 0 {
				path = s.Log.Path(at)
			}
			on = func(j int) string { return s.Log.ID(path[j]) }
		}
		r.Close()
		if err != nil {
			return nil
		}
	}
	for _, id := range kept {
		if _, found := session.KeptFrom(id, len(path), on); !found {
			return exitcode.Usagef("a compaction keeps from %s, which is no entry on the path it is appended to: nothing appended (give an entry of the path: panto-replay --get lastPromptId)", tty.Line(id))
		}
	}
	return nil
}

// readMessages reads every message line of r (and compaction lines, as
// panto-turn --compact prints them, and tool round marks, SPEC §13);
// blank lines are skipped.
func readMessages(r io.Reader) ([]store.Msg, error) {
	var msgs []store.Msg
	var bad error
	err := scan.MessageLines(r, func(n int, line []byte) error {
		parse := store.ParseMessage
		switch gjson.GetBytes(line, "type").Str {
		case session.TypeCompaction:
			parse = store.ParseCompaction
		case session.TypeToolRound:
			parse = store.ParseToolRound
		}
		m, err := parse(line)
		if err != nil {
			bad = exitcode.Usagef("stdin line %d: %v: nothing appended", n, err)
			return bad
		}
		msgs = append(msgs, m)
		return nil
	})
	if bad != nil {
		return nil, bad
	}
	if err != nil {
		return nil, exitcode.Failuref("read stdin: %v: nothing appended", err)
	}
	return msgs, nil
}
