// Package logcmd is panto-log, the only writer of session files and the
// session catalog.
package logcmd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/alecthomas/kong"
	"github.com/panto-dev/panto/internal/cli"
	"github.com/panto-dev/panto/internal/stores"
	"github.com/panto-dev/panto/pkg/catalog"
	"github.com/panto-dev/panto/pkg/exitcode"
	"github.com/panto-dev/panto/pkg/filestore"
	"github.com/panto-dev/panto/pkg/pgstore"
	"github.com/panto-dev/panto/pkg/rawjson"
	"github.com/panto-dev/panto/pkg/replay"
	"github.com/panto-dev/panto/pkg/scan"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/panto-dev/panto/pkg/store"
	"github.com/panto-dev/panto/pkg/tty"
	"github.com/tidwall/gjson"
)

const name = "panto-log"

type grammar struct {
	Version kong.VersionFlag `help:"Print the version and exit."`
	Store   string           `help:"${storehelp}" placeholder:"URL"`

	New      newCmd      `cmd:"" help:"Print the name a new session for this directory would get: a file path, or an id in a database (creates nothing)."`
	Append   appendCmd   `cmd:"" help:"Append message lines from stdin to a session, durably (one batch); print the entry lines written."`
	Truncate truncateCmd `cmd:"" help:"Cut a torn tail, or every entry after --after ID; what is cut is kept (beside the file, or in panto_cuts)."`
	List     listCmd     `cmd:"" help:"List the sessions of this directory (or of all), newest activity first."`
	Latest   latestCmd   `cmd:"" help:"Print the name of the newest session of this directory (exit 1 if none)."`
	Resolve  resolveCmd  `cmd:"" help:"Print the name of the session whose id starts with PREFIX."`
	Export   exportCmd   `cmd:"" help:"Write a session as a session file on stdout."`
	Push     pushCmd     `cmd:"" help:"Copy file sessions into a database: only the entries not there yet (idempotent; safe to kill and run again)."`
	Pull     pullCmd     `cmd:"" help:"Copy a session from a database into a session file here, incrementally; print its path."`
	Import   importCmd   `cmd:"" help:"Turn Claude Code, Codex or pi logs into panto sessions in the store, incrementally; print the name of each session written."`

	Completion completionCmd `cmd:"" help:"Print the shell completion script for bash, zsh or fish (the same as --completion SHELL)."`
}

type completionCmd struct {
	Shell string `arg:"" enum:"bash,zsh,fish" help:"bash, zsh or fish."`
}

type exportCmd struct {
	Session string `arg:"" help:"The session: a file (in a database: an id or a unique prefix)."`
}

type pushCmd struct {
	Paths  []string      `arg:"" optional:"" help:"Session files or directories (default: every session of the sessions base)."`
	To     string        `required:"" help:"The database: postgres://…" placeholder:"URL"`
	Follow bool          `help:"Keep following: commit every complete line as it is written (each batch with its position, so a restart resumes where the database is); until SIGINT or SIGTERM."`
	Once   bool          `help:"One pass of --follow, then exit (for cron): exit 3 if a session could not be committed."`
	Status bool          `help:"Print, per session, the local and the database position and whether they agree (exit 1 if any does not)."`
	JSON   bool          `help:"With --follow or --once: one JSON line per committed batch on stdout; with --status: one JSON object per session."`
	Poll   time.Duration `help:"With --follow: look at every file every DURATION instead of watching for changes (file systems without inotify)." placeholder:"DURATION"`
	Force  bool          `help:"With --follow or --once: cut, into panto_cuts, the entries a session holds in the database beyond where its file parts from it that no follower committed (appended in the database since)."`
}

type pullCmd struct {
	ID   string `arg:"" help:"The session: an id or a unique prefix."`
	From string `required:"" help:"The database: postgres://…" placeholder:"URL"`
}

type appendCmd struct {
	File       string        `arg:"" help:"The session: a file (in a database: its id, or a unique prefix of an existing one); created by its first reply."`
	Provider   string        `help:"Provider stamped on user entries (default: the file's active one)."`
	Model      string        `help:"Model stamped on user entries (default: the file's active one)."`
	System     string        `help:"Append this system prompt first, before --user (no JSON needed)." placeholder:"TEXT"`
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
	File  string        `arg:"" help:"The session: a file (in a database: an id or a unique prefix)."`
	After string        `help:"Cut every entry after entry ID." placeholder:"ID"`
	Wait  time.Duration `default:"10s" help:"How long to wait for another writer's lock."`
}

type newCmd struct{}

type listCmd struct {
	All    bool   `help:"Sessions of every project."`
	JSON   bool   `help:"One JSON object per session."`
	Search string `help:"Only sessions whose title or first prompt holds TEXT (letter case aside)." placeholder:"TEXT"`
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
	ctx, code, done := cli.Parse(name, "The only writer of panto sessions, and the session catalog.", &g, args, io, nil)
	if done {
		return code
	}
	return cli.Buffered(name, io, func(out *bufio.Writer) (int, error) {
		if ctx.Command() == "completion <shell>" {
			return 0, cli.Completion(out, ctx.Model, g.Completion.Shell)
		}
		st, err := stores.Open(g.Store, io)
		if err != nil {
			return 0, err
		}
		defer st.Close()
		bg := context.Background()
		switch ctx.Command() {
		case "new":
			return 0, runNew(st, io, out)
		case "append <file>":
			return 0, g.Append.run(bg, st, io, out)
		case "truncate <file>":
			return 0, g.Truncate.run(bg, st, io)
		case "list":
			return 0, g.List.run(bg, st, io, out)
		case "latest":
			return 0, runLatest(bg, st, io, out)
		case "resolve <prefix>":
			return 0, g.Resolve.run(bg, st, io, out)
		case "export <session>":
			return 0, g.Export.run(bg, st, out)
		case "import", "import <paths>":
			if g.Import.Follow || g.Import.Once {
				return 0, g.Import.follow(io, out)
			}
			if g.Import.To != "" || g.Import.JSON || g.Import.Poll != 0 {
				return 0, exitcode.Usagef("--to, --json and --poll go with --follow or --once (import into a database without them: --store URL)")
			}
			return g.Import.run(bg, st, io, out)
		case "push", "push <paths>":
			switch {
			case g.Push.Force && !g.Push.Follow && !g.Push.Once:
				return 0, exitcode.Usagef("--force goes with --follow or --once")
			case g.Push.Status:
				return 0, g.Push.status(bg, st, io, out)
			case g.Push.Follow || g.Push.Once:
				return 0, g.Push.follow(st, io, out)
			case g.Push.JSON || g.Push.Poll != 0:
				return 0, exitcode.Usagef("--json and --poll go with --follow, --once or --status")
			}
			return 0, g.Push.run(bg, st, io)
		case "pull <id>":
			return 0, g.Pull.run(bg, st, io, out)
		}
		return 0, exitcode.Usagef("unknown command %q", ctx.Command())
	})
}

func runNew(st store.Store, io cli.IO, out io.Writer) error {
	n, err := st.NewName(io.Cwd)
	if err != nil {
		return stores.ErrorOf(err, io.Cwd, stores.Write)
	}
	_, err = fmt.Fprintln(out, shown(io, n))
	return err
}

func (c *appendCmd) run(ctx context.Context, st store.Store, io cli.IO, out io.Writer) error {
	if (c.Provider == "") != (c.Model == "") {
		return exitcode.Usagef("--provider and --model go together")
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
	if len(msgs) == 0 || !cli.IsTerminal(io.Stdin) {
		cli.StdinHint(io, name, "message lines")
		in, err := readMessages(io.Stdin)
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
		Provider: c.Provider, Model: c.Model, Parent: c.Parent, ExpectLeaf: c.ExpectLeaf,
		AllowEmpty: c.AllowEmpty, Cwd: io.Cwd,
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
		if m.Type == "compaction" {
			if id := gjson.GetBytes(append([]byte{'{'}, append(m.Raw, '}')...), "firstKeptEntryId").Str; id != "" {
				kept = append(kept, id)
			}
		}
	}
	if len(kept) == 0 {
		return nil
	}
	on := map[string]bool{}
	if r, err := st.Open(ctx, file); err == nil {
		s, err := replay.Open(r, r.Size())
		if err == nil {
			at := s.Log.Leaf()
			if parent != "" {
				at = s.Log.Lookup(parent)
			}
			if at >= 0 {
				for _, i := range s.Log.Path(at) {
					on[s.Log.ID(i)] = true
				}
			}
		}
		r.Close()
		if err != nil {
			return nil
		}
	}
	for _, id := range kept {
		if !on[id] {
			return exitcode.Usagef("a compaction keeps from %s, which is no entry on the path it is appended to: nothing appended (give an entry of the path: panto-replay --get lastPromptId)", tty.Line(id))
		}
	}
	return nil
}

// readMessages reads every message line of r (and compaction lines, as
// panto-turn --compact prints them); blank lines are skipped.
func readMessages(r io.Reader) ([]store.Msg, error) {
	var msgs []store.Msg
	var bad error
	err := scan.MessageLines(r, func(n int, line []byte) error {
		parse := store.ParseMessage
		if gjson.GetBytes(line, "type").Str == "compaction" {
			parse = store.ParseCompaction
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

// storeError gives a store error its exit code and what to do.
func storeError(err error, file string) error { return stores.Error(err, file) }

func (c *truncateCmd) run(ctx context.Context, st store.Store, io cli.IO) error {
	stores.SetWait(st, c.Wait)
	cut, err := st.Truncate(ctx, c.File, c.After)
	if err != nil {
		return storeError(err, c.File)
	}
	if cut == nil {
		cli.Notef(io.Stderr, name, "%s: nothing to cut", c.File)
		return nil
	}
	cli.Notef(io.Stderr, name, "%s: cut %d bytes (%d complete entries) at byte %d, saved as %s",
		c.File, cut.Bytes, cut.Entries, cut.From, cut.SavedAs)
	return nil
}

// sessions describes the sessions of this directory (or of all), newest
// activity first.
func sessions(ctx context.Context, st store.Store, io cli.IO, all bool) ([]store.Summary, error) {
	list, err := st.List(ctx, io.Cwd, all, func(err error) {
		cli.Warnf(io.Stderr, name, "%v: skipped (a session is a regular file)", err)
	})
	if err != nil {
		return nil, stores.ErrorOf(err, io.Cwd, stores.Read)
	}
	return list, nil
}

func (c *listCmd) run(ctx context.Context, st store.Store, io cli.IO, out io.Writer) error {
	// A listing lives a few milliseconds and holds what it builds: the
	// collector, started at the default 4 MB, costs a quarter of a list of
	// 10,000 sessions (54 → 41 ms, BENCHMARKS.md) for no memory returned.
	debug.SetGCPercent(400)
	list, err := sessions(ctx, st, io, c.All)
	if err != nil {
		return err
	}
	if c.Search != "" {
		list = search(list, c.Search)
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
	// The cells of every row in one slice, rows of a fixed width (a
	// listing has thousands): id, created, modified, messages, [cwd],
	// [damage]; "" where a row has no such cell.
	head := []string{"ID", "CREATED", "MODIFIED", "MESSAGES", "AGENT"}
	if c.All {
		head = append(head, "CWD")
	}
	head = append(head, "TITLE")
	width := len(head)
	cells := make([]string, 0, (len(list)+1)*width)
	cells = append(cells, head...)
	fmtMinute := minutes{}
	for _, s := range list {
		id := s.ID
		if len(id) > n {
			id = id[:n]
		}
		// What a row or a log says is escaped: a cwd that holds a
		// terminal escape or a newline must neither reach the terminal
		// raw nor forge a row.
		cells = append(cells, tty.Line(id), fmtMinute.of(s.Created), fmtMinute.of(s.Modified), strconv.Itoa(s.Messages), tty.Line(s.Agent))
		if c.All {
			cells = append(cells, tty.Line(s.Cwd))
		}
		title := tty.Line(s.Title)
		if s.Problem != "" {
			title = strings.TrimSpace("(damaged: run panto-fsck) " + title)
		}
		cells = append(cells, title)
	}
	rows := make([][]string, 0, len(list)+1)
	for i := 0; i < len(cells); i += width {
		rows = append(rows, cells[i:i+width])
	}
	return writeColumnsFit(out, rows, cli.Columns(io))
}

// search keeps the sessions whose title or first prompt holds text,
// letter case aside.
func search(list []store.Summary, text string) []store.Summary {
	text = strings.ToLower(text)
	out := list[:0]
	for _, s := range list {
		if strings.Contains(strings.ToLower(s.Title), text) || strings.Contains(strings.ToLower(s.Prompt), text) {
			out = append(out, s)
		}
	}
	return out
}

// minutes formats times in local time as 2006-01-02 15:04, each minute
// once: a listing formats thousands, most in a few minutes.
type minutes map[int64]string

func (m minutes) of(t time.Time) string {
	k := t.Unix() / 60
	if t.Unix()%60 < 0 {
		k-- // before 1970: floor, not truncation
	}
	s, ok := m[k]
	if !ok {
		s = minute(t)
		m[k] = s
	}
	return s
}

// minute formats t in local time as 2006-01-02 15:04, by hand.
func minute(t time.Time) string {
	t = t.Local()
	y, mo, d := t.Date()
	h, mi, _ := t.Clock()
	b := make([]byte, 0, 16)
	b = strconv.AppendInt(b, int64(y), 10)
	for _, f := range []struct {
		sep byte
		v   int
	}{{'-', int(mo)}, {'-', d}, {' ', h}, {':', mi}} {
		b = append(b, f.sep, byte('0'+f.v/10), byte('0'+f.v%10))
	}
	return string(b)
}

// writeColumns writes rows as aligned columns, two spaces apart; the last
// cell of a row is not padded (as text/tabwriter does, without its cost
// on ten thousand rows).
// writeColumns writes rows in aligned columns; the last cell of a row is
// not padded.
func writeColumns(w io.Writer, rows [][]string) error { return writeColumnsFit(w, rows, 0) }

// writeColumnsFit is writeColumns with the last cell of a row cut (with
// "…") so that the line fits columns, when that is not 0, leaving it at
// least 16 characters.
func writeColumnsFit(w io.Writer, rows [][]string, columns int) error {
	var width []int
	for _, r := range rows {
		for i, c := range r[:len(r)-1] {
			if i == len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	pad := strings.Repeat(" ", 256)
	for _, r := range rows {
		at := 0
		for i, c := range r {
			if i == len(r)-1 && columns > 0 {
				if n := utf8.RuneCountInString(c); at+n > columns {
					c = string([]rune(c)[:max(15, columns-at-1)]) + "…"
				}
			}
			bw.WriteString(c)
			if i < len(r)-1 {
				at += width[i] + 2
				for k := width[i] - utf8.RuneCountInString(c) + 2; k > 0; k -= len(pad) {
					bw.WriteString(pad[:min(k, len(pad))])
				}
			}
		}
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

func runLatest(ctx context.Context, st store.Store, io cli.IO, out io.Writer) error {
	list, err := sessions(ctx, st, io, false)
	if err != nil {
		return err
	}
	if len(list) == 0 {
		return exitcode.Findingsf("no session for %s", io.Cwd)
	}
	_, err = fmt.Fprintln(out, shown(io, list[0].Path))
	return err
}

func (c *resolveCmd) run(ctx context.Context, st store.Store, io cli.IO, out io.Writer) error {
	p, err := st.Resolve(ctx, io.Cwd, c.All, c.Prefix)
	switch {
	case errors.Is(err, store.ErrNoSuchSession): // nothing matched: a finding (SPEC §7)
		return exitcode.New(exitcode.Findings, err)
	case err != nil:
		return stores.ErrorOf(err, c.Prefix, stores.Read)
	}
	_, err = fmt.Fprintln(out, shown(io, p))
	return err
}

// shown is a session's name (a path, an id) as new, latest, resolve, pull
// and import print it on stdout: exact to a pipe, where a script takes it
// as it is, and with its control characters escaped on a terminal (a path
// holds a cwd, and an imported log's or a row's cwd is anybody's).
func shown(io cli.IO, name string) string {
	if cli.IsTerminal(io.Stdout) {
		return tty.Line(name)
	}
	return name
}

// run writes the session's complete lines (a torn tail left out) to out.
func (c *exportCmd) run(ctx context.Context, st store.Store, out io.Writer) error {
	r, err := st.Open(ctx, c.Session)
	if err != nil {
		return storeError(err, c.Session)
	}
	defer r.Close()
	w := &wholeLines{w: out}
	if _, err := io.Copy(w, r); err != nil {
		return exitcode.Failuref("export %s: %v", c.Session, err)
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

// database opens the database a --to or --from flag names.
func database(ctx context.Context, url string) (*pgstore.PG, error) {
	if !pgstore.IsConnString(url) {
		return nil, exitcode.Usagef("%q is not a database URL: give postgres://… or libpq's host=… dbname=…", pgstore.Redact(url))
	}
	db, err := pgstore.Open(ctx, url)
	switch {
	case errors.Is(err, store.ErrBadURL):
		return nil, exitcode.New(exitcode.Usage, err)
	case err != nil:
		return nil, exitcode.New(exitcode.Failure, err)
	}
	return db, nil
}

// files is the file store, which push reads and pull writes.
func files(st store.Store, what string) (*filestore.Files, error) {
	fs, ok := st.(*filestore.Files)
	if !ok {
		return nil, exitcode.Usagef("%s: run it without --store (or PANTO_STORE) and name the database with --to or --from", what)
	}
	return fs, nil
}

// run pushes every session file the arguments name (all of the sessions
// base without any). A file that cannot be pushed is reported, the others
// are pushed, and the exit code is 3.
func (c *pushCmd) run(ctx context.Context, st store.Store, io cli.IO) error {
	fs, err := files(st, "push copies file sessions")
	if err != nil {
		return err
	}
	db, err := database(ctx, c.To)
	if err != nil {
		return err
	}
	defer db.Close()
	paths := c.Paths
	if len(paths) == 0 {
		base, err := fs.Env.BaseDir()
		if err != nil {
			return exitcode.New(exitcode.Usage, err)
		}
		if _, err := os.Stat(base); errors.Is(err, os.ErrNotExist) {
			return nil // no sessions yet
		}
		paths = []string{base}
	}
	var sessions, pushed, had, failed int64
	for _, arg := range paths {
		fs.Each(ctx, arg, func(path string, err error) error {
			var res *store.Received
			if err == nil {
				res, err = push(ctx, fs, db, path)
			}
			if err != nil {
				failed++
				cli.Errorf(io.Stderr, name, "push %s: %v", path, err)
				return nil
			}
			if res.Ahead {
				cli.Warnf(io.Stderr, name, "%s: the database holds entries this file lacks: nothing to push (pull it)", path)
			}
			sessions++
			pushed += res.Entries
			had += res.Had
			return nil
		})
	}
	cli.Notef(io.Stderr, name, "pushed %d entries of %d sessions to %s (%d there already)", pushed, sessions, db.Where(), had)
	if failed > 0 {
		return exitcode.Failuref("%d sessions not pushed (see above)", failed)
	}
	return nil
}

// push copies one session file into the database.
func push(ctx context.Context, fs *filestore.Files, db store.Store, path string) (*store.Received, error) {
	r, err := fs.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return db.Receive(ctx, r)
}

// run pulls the session into the file store, at the path of its own cwd.
func (c *pullCmd) run(ctx context.Context, st store.Store, io cli.IO, out io.Writer) error {
	fs, err := files(st, "pull writes a session file")
	if err != nil {
		return err
	}
	db, err := database(ctx, c.From)
	if err != nil {
		return err
	}
	defer db.Close()
	id, err := db.Resolve(ctx, "", true, c.ID)
	if err != nil {
		return storeError(err, c.ID)
	}
	r, err := db.Open(ctx, id)
	if err != nil {
		return storeError(err, c.ID)
	}
	defer r.Close()
	res, err := fs.Receive(ctx, r)
	if err != nil {
		return storeError(err, id)
	}
	if res.Ahead {
		cli.Warnf(io.Stderr, name, "%s holds entries the database lacks: nothing to pull (push it)", res.Name)
	}
	cli.Notef(io.Stderr, name, "pulled %d bytes of session %s into %s", res.Bytes, id, res.Name)
	_, err = fmt.Fprintln(out, shown(io, res.Name))
	return err
}
