// Package logcmd is panto-log, the only writer of session files and the
// session catalog.
package logcmd

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/alecthomas/kong"
	"github.com/panto-dev/panto/internal/cli"
	"github.com/panto-dev/panto/pkg/catalog"
	"github.com/panto-dev/panto/pkg/exitcode"
	"github.com/panto-dev/panto/pkg/filestore"
	"github.com/panto-dev/panto/pkg/index"
	"github.com/panto-dev/panto/pkg/rawjson"
	"github.com/panto-dev/panto/pkg/scan"
	"github.com/panto-dev/panto/pkg/session"
)

const name = "panto-log"

type grammar struct {
	Version kong.VersionFlag `help:"Print the version and exit."`

	New      newCmd      `cmd:"" help:"Print the path a new session for this directory would get (creates nothing)."`
	Append   appendCmd   `cmd:"" help:"Append message lines from stdin to a session file, durably; print the entry lines written."`
	Truncate truncateCmd `cmd:"" help:"Cut a torn tail, or every entry after --after ID; cut bytes are saved beside the file."`
	List     listCmd     `cmd:"" help:"List the sessions of this directory (or of all), newest activity first."`
	Latest   latestCmd   `cmd:"" help:"Print the path of the newest session of this directory (exit 1 if none)."`
	Resolve  resolveCmd  `cmd:"" help:"Print the path of the session whose id starts with PREFIX."`
}

type appendCmd struct {
	File       string        `arg:"" help:"Session file (created by its first reply)."`
	Provider   string        `help:"Provider stamped on user entries (default: the file's active one)."`
	Model      string        `help:"Model stamped on user entries (default: the file's active one)."`
	User       string        `help:"Append this user prompt first (no JSON needed); stdin is read after it unless it is a terminal." placeholder:"TEXT"`
	Parent     string        `help:"Make the first entry a child of entry ID (a branch) instead of the leaf." placeholder:"ID"`
	ExpectLeaf *string       `help:"Fail (exit 3, nothing written) unless the leaf is still ID." placeholder:"ID"`
	AllowEmpty bool          `help:"Create a new file even if the batch has no assistant message."`
	Wait       time.Duration `default:"10s" help:"How long to wait for another writer's lock."`
	ToolResult []string      `name:"tool-result" help:"Append one user entry holding this tool result (repeat for every result of a round; the content is read from FILE)." placeholder:"ID=FILE"`
	Quiet      bool          `short:"q" help:"Do not echo the entry lines written."`
	IDs        bool          `name:"ids" help:"Echo only the ids of the entries written, one per line."`
}

type truncateCmd struct {
	File  string        `arg:"" help:"Session file."`
	After string        `help:"Cut every entry after entry ID." placeholder:"ID"`
	Wait  time.Duration `default:"10s" help:"How long to wait for another writer's lock."`
}

type newCmd struct{}

type listCmd struct {
	All  bool `help:"Sessions of every project."`
	JSON bool `help:"One JSON object per session."`
}

type latestCmd struct{}

type resolveCmd struct {
	Prefix string `arg:"" help:"Leading characters of a session id."`
	All    bool   `help:"Look in every project, not only this directory's."`
}

// Main runs panto-log in this process.
func Main() int { return Run(os.Args[1:], cli.OS()) }

// Run runs panto-log with args.
func Run(args []string, io cli.IO) int {
	var g grammar
	ctx, code, done := cli.Parse(name, "The only writer of panto session files, and the session catalog.", &g, args, io, nil)
	if done {
		return code
	}
	return cli.Buffered(name, io, func(out *bufio.Writer) (int, error) {
		switch ctx.Command() {
		case "new":
			return 0, runNew(io, out)
		case "append <file>":
			return 0, g.Append.run(io, out)
		case "truncate <file>":
			return 0, g.Truncate.run(io)
		case "list":
			return 0, g.List.run(io, out)
		case "latest":
			return 0, runLatest(io, out)
		case "resolve <prefix>":
			return 0, g.Resolve.run(io, out)
		}
		return 0, exitcode.Usagef("unknown command %q", ctx.Command())
	})
}

func runNew(io cli.IO, out io.Writer) error {
	dir, err := catalog.EnvFrom(io.Getenv).ProjectDir(io.Cwd)
	if err != nil {
		return exitcode.New(exitcode.Usage, err)
	}
	id, err := session.NewSessionID()
	if err != nil {
		return exitcode.New(exitcode.Failure, err)
	}
	_, err = fmt.Fprintln(out, filepath.Join(dir, catalog.FileName(id)))
	return err
}

func (c *appendCmd) run(io cli.IO, out io.Writer) error {
	if (c.Provider == "") != (c.Model == "") {
		return exitcode.Usagef("--provider and --model go together")
	}
	var msgs []filestore.Msg
	if len(c.ToolResult) > 0 {
		m, err := toolResults(c.ToolResult, c.User)
		if err != nil {
			return err
		}
		msgs = append(msgs, m)
	} else if c.User != "" {
		msgs = append(msgs, filestore.Msg{Raw: session.TextMessage("user", c.User), Role: "user"})
	}
	if c.User == "" && len(c.ToolResult) == 0 || !cli.IsTerminal(io.Stdin) {
		in, err := readMessages(io.Stdin)
		if err != nil {
			return err
		}
		msgs = append(msgs, in...)
	}
	if len(msgs) == 0 {
		return exitcode.Usagef("no message lines on stdin: nothing appended (give message lines, or --user TEXT)")
	}
	res, err := filestore.Append(c.File, msgs, filestore.AppendOptions{
		Provider: c.Provider, Model: c.Model, Parent: c.Parent, ExpectLeaf: c.ExpectLeaf,
		AllowEmpty: c.AllowEmpty, Cwd: io.Cwd, LockWait: c.Wait, CacheDir: index.Dir(io.Getenv),
	})
	if err != nil {
		return storeError(err, c.File)
	}
	if res.Cut != nil {
		cli.Warnf(io.Stderr, name, "cut a torn tail of %d bytes from %s first (saved as %s)", res.Cut.Bytes, c.File, res.Cut.SavedAs)
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
		return nil
	}
	_, err = out.Write(res.Lines)
	return err
}

// toolResults builds one user message of tool results (ID=FILE each, the
// file holding the tool's output), then the text, if any: the results of a
// round travel together, as providers want them.
func toolResults(specs []string, text string) (filestore.Msg, error) {
	b := []byte(`{"role":"user","content":[`)
	for i, spec := range specs {
		id, file, ok := strings.Cut(spec, "=")
		if !ok || id == "" || file == "" {
			return filestore.Msg{}, exitcode.Usagef("--tool-result %q: give ID=FILE", spec)
		}
		content, err := os.ReadFile(file)
		if err != nil {
			return filestore.Msg{}, exitcode.Usagef("--tool-result %s: %v", id, err)
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
	return filestore.ParseMessage(append(b, "]}"...))
}

// readMessages reads every message line of r; blank lines are skipped.
func readMessages(r io.Reader) ([]filestore.Msg, error) {
	var msgs []filestore.Msg
	var bad error
	err := scan.MessageLines(r, func(n int, line []byte) error {
		m, err := filestore.ParseMessage(line)
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

// storeError gives a store error its exit code and what to do.
func storeError(err error, file string) error {
	switch {
	case errors.Is(err, filestore.ErrNoReply):
		return exitcode.Usagef("%v: append the prompt with its reply, or give --allow-empty", err)
	case errors.Is(err, filestore.ErrNoStamp), errors.Is(err, filestore.ErrNoParent),
		errors.Is(err, filestore.ErrEmpty), errors.Is(err, filestore.ErrIsDir):
		return exitcode.New(exitcode.Usage, err)
	case errors.Is(err, filestore.ErrNeedsFsck), errors.Is(err, filestore.ErrNewerVersion):
		return exitcode.Failuref("%v: nothing written; run panto-fsck %s", err, file)
	case errors.Is(err, filestore.ErrBusy):
		return exitcode.Failuref("%s is locked by another writer: nothing written; try again", file)
	case errors.Is(err, filestore.ErrLeafMoved):
		return exitcode.Failuref("%v: nothing written; replay the session and retry", err)
	case errors.Is(err, os.ErrNotExist):
		return exitcode.Failuref("%v", err)
	}
	return exitcode.New(exitcode.Failure, err)
}

func (c *truncateCmd) run(io cli.IO) error {
	cut, err := filestore.Truncate(c.File, c.After, c.Wait, index.Dir(io.Getenv))
	if err != nil {
		return storeError(err, c.File)
	}
	if cut == nil {
		fmt.Fprintf(io.Stderr, "%s: %s: nothing to cut\n", name, c.File)
		return nil
	}
	fmt.Fprintf(io.Stderr, "%s: %s: cut %d bytes (%d complete entries) at byte %d, saved as %s\n",
		name, c.File, cut.Bytes, cut.Entries, cut.From, cut.SavedAs)
	return nil
}

func sessionFiles(io cli.IO, all bool) ([]string, error) {
	env := catalog.EnvFrom(io.Getenv)
	var files []string
	var err error
	if all {
		base, berr := env.BaseDir()
		if berr != nil {
			return nil, exitcode.New(exitcode.Usage, berr)
		}
		files, err = catalog.AllFiles(base)
	} else {
		dir, derr := env.ProjectDir(io.Cwd)
		if derr != nil {
			return nil, exitcode.New(exitcode.Usage, derr)
		}
		files, err = catalog.Files(dir)
	}
	if err != nil {
		return nil, exitcode.New(exitcode.Failure, err)
	}
	return files, nil
}

// sessions describes the sessions of this directory (or of all), newest
// activity first. Those of another directory whose name encodes the same
// (/a/b and /a-b) are left out by their header's cwd; a session whose cwd
// encodes otherwise was moved here by hand, and is kept.
func sessions(io cli.IO, all bool) ([]catalog.Session, error) {
	files, err := sessionFiles(io, all)
	if err != nil {
		return nil, err
	}
	list, err := catalog.List(files, index.Dir(io.Getenv), func(err error) {
		cli.Warnf(io.Stderr, name, "%v: skipped (a session is a regular file)", err)
	})
	if err != nil {
		return nil, exitcode.New(exitcode.Failure, err)
	}
	if all {
		return list, nil
	}
	mine := list[:0]
	for _, s := range list {
		if s.Cwd == io.Cwd || catalog.EncodeCwd(s.Cwd) != catalog.EncodeCwd(io.Cwd) {
			mine = append(mine, s)
		}
	}
	return mine, nil
}

func (c *listCmd) run(io cli.IO, out io.Writer) error {
	list, err := sessions(io, c.All)
	if err != nil {
		return err
	}
	if c.JSON {
		enc := json.NewEncoder(out)
		enc.SetEscapeHTML(false)
		for _, s := range list {
			if err := enc.Encode(s); err != nil {
				return err
			}
		}
		return nil
	}
	ids := make([]string, len(list))
	for i, s := range list {
		ids[i] = s.ID
	}
	n := catalog.ShortLen(ids)
	tw := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	head := "ID\tCREATED\tMODIFIED\tMESSAGES"
	if c.All {
		head += "\tCWD"
	}
	fmt.Fprintln(tw, head)
	for _, s := range list {
		id := s.ID
		if len(id) > n {
			id = id[:n]
		}
		row := fmt.Sprintf("%s\t%s\t%s\t%d", id, s.Created.Local().Format("2006-01-02 15:04"), s.Modified.Local().Format("2006-01-02 15:04"), s.Messages)
		if c.All {
			row += "\t" + s.Cwd
		}
		if s.Problem != "" {
			row += "\t(damaged: run panto-fsck)"
		}
		fmt.Fprintln(tw, row)
	}
	return tw.Flush()
}

func runLatest(io cli.IO, out io.Writer) error {
	list, err := sessions(io, false)
	if err != nil {
		return err
	}
	if len(list) == 0 {
		return exitcode.Findingsf("no session for %s", io.Cwd)
	}
	_, err = fmt.Fprintln(out, list[0].Path)
	return err
}

func (c *resolveCmd) run(io cli.IO, out io.Writer) error {
	files, err := sessionFiles(io, c.All)
	if err != nil {
		return err
	}
	p, err := catalog.Resolve(files, c.Prefix)
	switch {
	case errors.Is(err, catalog.ErrAmbiguousID):
		return exitcode.New(exitcode.Usage, err)
	case errors.Is(err, catalog.ErrNoSuchSession):
		return exitcode.New(exitcode.Findings, err)
	case err != nil:
		return exitcode.New(exitcode.Failure, err)
	}
	_, err = fmt.Fprintln(out, p)
	return err
}
