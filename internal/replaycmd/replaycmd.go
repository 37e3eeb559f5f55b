// Package replaycmd is panto-replay: it rebuilds the conversation, the tree
// and the resume state from a session file, and never changes it.
package replaycmd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/panto-dev/panto/internal/agents"
	"github.com/panto-dev/panto/internal/cli"
	"github.com/panto-dev/panto/internal/exitcode"
	"github.com/panto-dev/panto/internal/pricing"
	"github.com/panto-dev/panto/internal/replay"
	"github.com/panto-dev/panto/internal/stores"
	"github.com/panto-dev/panto/internal/tty"
	"github.com/panto-dev/panto/pkg/scan"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/tidwall/gjson"
)

const name = "panto-replay"

type grammar struct {
	Version       cli.VersionFlag `help:"Print the version and exit."`
	File          string          `arg:"" optional:"" help:"Session file (in a database: a session id or a unique prefix); - or none for stdin."`
	Leaf          string          `help:"Replay the path to entry ID (a branch) instead of the last entry." placeholder:"ID"`
	Info          bool            `help:"Print the resume state as one JSON object."`
	Get           string          `help:"Print one field of the --info object as plain text (a gjson path: lastReply.text, danglingPrompt.parentId, pendingToolUses.#, pendingToolUses.0.input|@fromstr|command); nothing when it is null or absent." placeholder:"PATH"`
	Format        string          `enum:"messages,markdown,entries,html," default:"" help:"messages (message lines, the default on a pipe), markdown (a transcript, the default on a terminal), entries (the entry lines of the path), or html (one self-contained page)."`
	Pricing       string          `help:"models.toml (or LiteLLM's JSON) for the cost of each reply on an html page (default: $XDG_CONFIG_HOME/panto/models.toml, when there is one)." placeholder:"FILE"`
	Tree          bool            `help:"Print the whole tree of entries, branches and leaves marked."`
	Full          bool            `help:"Message lines of every message of the path, also those a compaction summarised (by default: what the model is sent, the summary in their place)."`
	cli.StoreFlag `embed:""`

	Site string `help:"Write a site of every session of every agent into DIR: an index (by project, newest first, with agent, title, time, messages and cost; a filter box) and a page per session (a huge one split into pages; images shown, times in the reader's zone). Run again, it renders only what changed. Then exit." placeholder:"DIR"`

	session string              // the session of a log that holds several: FILE#SESSION
	summary *replay.PageSummary // for --site: what a page says of its session
	origin  string              // for --site: the agent and id a log's header names ("" for panto's own)
	// for --site: the page shows times in the reader's zone (its one
	// script, allowed by its hash)
	localTimes bool
	pages      *replay.Pages // for --site: a huge session split into pages
	index      string        // for --site: the index, linked from each page
}

// Main runs panto-replay in this process.
func Main() int {
	cli.QuietPipe()
	return Run(os.Args[1:], cli.OS())
}

// Run runs panto-replay with args.
func Run(args []string, proc cli.IO) int {
	var g grammar
	_, code, done := cli.Parse(name, "Rebuild the conversation (and the tree) from a session file: panto's, or a Claude Code, Codex or pi log; read-only.", &g, args, proc, nil)
	if done {
		return code
	}
	return cli.Buffered(name, proc, func(out *bufio.Writer) (int, error) { return g.run(proc, out) })
}

// input returns the session to read as a ReaderAt: one of the store, or a
// pipe read into memory (it cannot be read twice).
func (g *grammar) input(proc cli.IO) (r io.ReaderAt, size int64, label string, closeFn func(), err error) {
	if g.File == "" || g.File == "-" {
		if f, ok := proc.Stdin.(*os.File); ok {
			if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
				return f, fi.Size(), "stdin", func() {}, nil
			}
		}
		cli.StdinHint(proc, name, "a session's lines")
		b, err := io.ReadAll(proc.Stdin)
		if err != nil {
			return nil, 0, "", nil, exitcode.Failuref("read stdin: %v", err)
		}
		return bytes.NewReader(b), int64(len(b)), "stdin", func() {}, nil
	}
	file := g.File
	if i := strings.LastIndex(file, "#"); i > 0 && g.Store == "" {
		// A log of several sessions (an OpenCode database): FILE#SESSION
		// names one, when FILE is a file and FILE#SESSION is none.
		if _, err := os.Stat(file); err != nil {
			if fi, err := os.Stat(file[:i]); err == nil && fi.Mode().IsRegular() {
				file, g.session = file[:i], file[i+1:]
			}
		}
	}
	st, err := stores.Open(g.Store, proc)
	if err != nil {
		return nil, 0, "", nil, err
	}
	defer st.Close()
	if g.session == "" { // FILE#SESSION names a file
		if file, err = stores.SessionArg(context.Background(), st, proc, file); err != nil {
			return nil, 0, "", nil, err
		}
	}
	f, err := st.Open(context.Background(), file)
	if err != nil {
		return nil, 0, "", nil, stores.ErrorOf(err, g.File, stores.Read)
	}
	return f, f.Size(), file, func() { f.Close() }, nil
}

func (g *grammar) run(proc cli.IO, out *bufio.Writer) (int, error) {
	if g.Site != "" {
		return g.site(proc, out)
	}
	r, size, label, closeFn, err := g.input(proc)
	if err != nil {
		return 0, err
	}
	defer closeFn()
	src, srcSize := r, size // the log as given, for its subagents
	r, size, left, f, err := foreign(proc, r, size, label, g.session, g.Format == "html")
	if err != nil {
		return 0, err
	}
	s, err := replay.Open(r, size)
	if err != nil {
		return 0, exitcode.Failuref("read %s: %v", label, err)
	}
	code := warn(proc.Stderr, label, s.Log, size)
	if left > 0 {
		code = exitcode.Findings // the reader of another agent's log left lines out (SPEC §11)
	}
	leaf, err := s.Leaf(g.Leaf)
	if err != nil {
		return 0, exitcode.Usagef("%s: %v: see panto-replay --tree for the entries", label, err)
	}
	var path []int32
	if leaf >= 0 {
		path = s.Log.Path(leaf)
		if first := s.Log.Nodes[path[0]]; first.Parent == scan.DanglingParent {
			cli.Warnf(proc.Stderr, name, "%s: entry %s (line %d) names a parent that is not in the file: the path starts there", label, s.Log.ID(path[0]), first.Line)
		}
	}
	switch {
	case g.Info || g.Get != "":
		in, err := s.Info(leaf)
		if err != nil {
			return 0, exitcode.New(exitcode.Failure, err)
		}
		in.CorruptLines += left
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(in); err != nil {
			return 0, err
		}
		if g.Get == "" {
			_, err = out.Write(b.Bytes())
			return code, err
		}
		if v := gjson.GetBytes(b.Bytes(), g.Get); v.Exists() && v.Type != gjson.Null {
			val := v.String()
			if cli.IsTerminal(proc.Stdout) { // a person reads it (panto-ask's reply): as every human view, escaped
				val = tty.Text(val)
			}
			out.WriteString(val)
			err = out.WriteByte('\n')
		}
		return code, err
	case g.Tree:
		return code, s.WriteTree(out)
	}
	format := g.Format
	if format == "" {
		format = "messages"
		if cli.IsTerminal(proc.Stdout) {
			format = "markdown"
		}
	}
	switch format {
	case "markdown":
		err = s.WriteMarkdown(out, path)
	case "html":
		prices, from, perr := pricing.ForFlag(g.Pricing, proc.Getenv, func(w string) { cli.Warnf(proc.Stderr, name, "%s", w) })
		if perr != nil {
			return 0, perr
		}
		o := replay.HTMLOptions{Branch: g.Leaf, Generator: "Made by " + name + " " + cli.Version + " from " + label + "."}
		if from != "" {
			o.Prices, o.PricesFrom = prices, from
		}
		if f == agents.Claude {
			p := g.File
			if p == "" {
				p = "-" // stdin: no directory beside it
			}
			o.Subagents = subagents(proc, agents.Source{Path: p, R: src, Size: srcSize})
		} else if origin := headerOrigin(r, size); origin.Get("agent").Str == "claude" && origin.Get("id").Str != "" && g.File != "" && g.File != "-" {
			o.Subagents = g.importedSubagents(proc, s, path, origin.Get("id").Str)
		}
		o.Summary, o.LocalTimes, o.Pages, o.Index = g.summary, g.localTimes, g.pages, g.index
		err = s.WriteHTML(out, path, o)
		if g.summary != nil {
			if og := headerOrigin(r, size); og.Get("id").Str != "" {
				g.origin = og.Get("agent").Str + "/" + og.Get("id").Str
			}
		}
	case "entries":
		err = s.EachLine(path, func(_ int32, line []byte) error {
			out.Write(line)
			return out.WriteByte('\n')
		})
	case "messages":
		if !g.Full {
			err = s.EachSent(path, func(_ int32, msg []byte) error {
				out.Write(msg)
				return out.WriteByte('\n')
			})
			break
		}
		err = s.EachLine(path, func(i int32, line []byte) error {
			if s.Log.Nodes[i].Kind != session.KindMessage {
				return nil
			}
			out.Write(s.Log.Nodes[i].Message(line))
			return out.WriteByte('\n')
		})
	}
	return code, err
}

// foreign turns another agent's log into the panto session it becomes (in
// a temporary file), so that it replays as one, and says how many of its
// lines the reader left out; a log in no known format is an error.
// A page (images) is given the log's images too (agents.Source.Images).
func foreign(proc cli.IO, r io.ReaderAt, size int64, label, session string, images bool) (io.ReaderAt, int64, int, agents.Format, error) {
	f, err := agents.Sniff(r, size)
	switch {
	case err != nil:
		return nil, 0, 0, f, exitcode.Failuref("read %s: %v", label, err)
	case f == agents.Panto:
		return r, size, 0, f, nil
	case f == agents.Unknown:
		return nil, 0, 0, f, exitcode.Findingsf("%s: %v", label, agents.ErrNotALog)
	}
	tmp, n, st, err := agents.Convert(agents.Source{Path: label, R: r, Size: size, Session: session, Images: images}, f)
	var several *agents.ErrSeveralSessions
	switch {
	case errors.As(err, &several):
		return nil, 0, 0, f, exitcode.Usagef("%v", err)
	case errors.Is(err, agents.ErrNotALog):
		return nil, 0, 0, f, exitcode.Findingsf("%s: %v", label, err)
	case err != nil:
		return nil, 0, 0, f, exitcode.Failuref("read %s: %v", label, err)
	}
	if k := len(st.Corrupt); k > 0 {
		cli.Warnf(proc.Stderr, name, "%s: %d lines are not JSON objects (line %d first): skipped, the rest read", label, k, st.Corrupt[0])
	}
	if st.Torn > 0 {
		cli.Warnf(proc.Stderr, name, "%s: line %d: incomplete final line (a writer may be mid-append): not read", label, st.Torn)
	}
	left := len(st.Corrupt)
	if st.Torn > 0 {
		left++
	}
	return tmp, n, left, f, nil // the file goes with the process
}

// subagents reads the subagents of a Claude Code log (agents.ClaudeSubagents
// says how each is tied to its call), each as the panto session it
// becomes, for the page to nest under their calls. One that does not read
// is a warning, and the page goes on without it.
func subagents(proc cli.IO, src agents.Source) map[string]replay.Subagent {
	subs, skipped, err := agents.ClaudeSubagentsSkipped(src)
	if err != nil {
		cli.Warnf(proc.Stderr, name, "%s: its subagents: %v: not shown", src.Path, err)
		return nil
	}
	for _, p := range skipped {
		cli.Warnf(proc.Stderr, name, "%s: not a regular file (a FIFO?): skipped", p)
	}
	out := map[string]replay.Subagent{}
	for _, sub := range subs {
		if !sub.Found { // the result names it, and it is nowhere: said under the call
			out[sub.ToolUseID] = replay.Subagent{Agent: sub.AgentID, From: sub.From}
			continue
		}
		s, err := openSubagent(sub)
		if err != nil {
			cli.Warnf(proc.Stderr, name, "%s: the subagent of tool call %s (%s): %v: not shown", src.Path, sub.ToolUseID, sub.From, err)
			continue
		}
		out[sub.ToolUseID] = replay.Subagent{Agent: sub.AgentID, From: sub.From, Session: s, Path: currentPath(s)}
	}
	return out
}

// openSubagent reads a subagent's log and opens the panto session it
// becomes (a temporary file: one at a time).
func openSubagent(sub agents.Subagent) (*replay.Session, error) {
	log, err := sub.Read()
	if err != nil {
		return nil, err
	}
	tmp, n, _, err := agents.Convert(agents.Source{Path: sub.From, R: bytes.NewReader(log), Size: int64(len(log)), Images: true}, agents.Claude)
	if err != nil {
		return nil, err
	}
	return replay.Open(tmp, n)
}

// currentPath is the path of s to its current leaf (none for no entry).
func currentPath(s *replay.Session) []int32 {
	if leaf, _ := s.Leaf(""); leaf >= 0 {
		return s.Log.Path(leaf)
	}
	return nil
}

// headerOrigin is the "origin" of a session's header line (SPEC §11): what
// it was imported from.
func headerOrigin(r io.ReaderAt, size int64) gjson.Result {
	line, _ := bufio.NewReaderSize(io.NewSectionReader(r, 0, size), 64<<10).ReadSlice('\n')
	return gjson.GetBytes(line, "origin")
}

// importedSubagents finds, for a session imported from Claude Code, the
// sessions of the same store imported from its subagents' files (their
// origin's parent is its origin's id), and ties each to the Task call of
// the path whose prompt is the subagent's first prompt, each once, in the
// store's order (the import keeps no agent id to tie them by).
func (g *grammar) importedSubagents(proc cli.IO, s *replay.Session, path []int32, originID string) map[string]replay.Subagent {
	type call struct{ id, prompt string }
	var calls []call
	s.EachLine(path, func(i int32, line []byte) error {
		gjson.GetBytes(s.Log.Nodes[i].Message(line), "content").ForEach(func(_, b gjson.Result) bool {
			if n := b.Get("name").Str; b.Get("type").Str == "toolUse" && (n == "Task" || n == "Agent") {
				calls = append(calls, call{b.Get("id").Str, gjson.Get(b.Get("input").Str, "prompt").Str})
			}
			return true
		})
		return nil
	})
	if len(calls) == 0 {
		return nil
	}
	st, err := stores.Open(g.Store, proc)
	if err != nil {
		return nil
	}
	defer st.Close()
	ctx := context.Background()
	list, err := st.List(ctx, s.Log.Header.Cwd, false, func(error) {})
	if err != nil {
		cli.Warnf(proc.Stderr, name, "%s: its subagents: %v: not shown", g.File, err)
		return nil
	}
	out := map[string]replay.Subagent{}
	for _, sum := range list {
		if sum.Agent != "claude" || sum.Prompt == "" {
			continue
		}
		// The list's prompt is a title (spaces folded, cut): a first
		// sieve; the subagent's own first prompt decides below.
		if !slices.ContainsFunc(calls, func(c call) bool { return session.PromptTitle(c.prompt) == sum.Prompt && out[c.id].Session == nil }) {
			continue
		}
		f, err := st.Open(ctx, sum.Path)
		if err != nil {
			continue
		}
		origin := headerOrigin(f, f.Size())
		if origin.Get("parent").Str != originID {
			f.Close()
			continue
		}
		sub, err := replay.Open(f, f.Size())
		if err != nil {
			f.Close()
			continue
		}
		p := currentPath(sub)
		first := firstPrompt(sub, p)
		k := slices.IndexFunc(calls, func(c call) bool { return c.prompt == first && out[c.id].Session == nil })
		if k < 0 {
			f.Close()
			continue
		}
		agent := strings.TrimPrefix(origin.Get("id").Str, "agent-")
		from := "the session " + sum.ID + " of this store, imported from " + origin.Get("path").Str
		out[calls[k].id] = replay.Subagent{Agent: agent, From: from, Session: sub, Path: p} // f is read as the page is written, and goes with the process
	}
	return out
}

// firstPrompt is the text of the first user message of the path.
func firstPrompt(s *replay.Session, path []int32) string {
	text := ""
	errFound := errors.New("found")
	s.EachLine(path, func(i int32, line []byte) error {
		if s.Log.Nodes[i].Role != session.User {
			return nil
		}
		gjson.GetBytes(s.Log.Nodes[i].Message(line), "content").ForEach(func(_, b gjson.Result) bool {
			if b.Get("type").Str == "text" {
				text = b.Get("text").Str
				return false
			}
			return true
		})
		return errFound
	})
	return text
}

// warn reports on stderr what the reader skipped, and returns 1 when a
// corrupt or unfinished line cut the reading short (SPEC §5).
func warn(w io.Writer, label string, l *scan.Log, size int64) int {
	code := exitcode.OK
	switch {
	case size == 0:
		cli.Warnf(w, name, "%s is empty: no session header", label)
		code = exitcode.Findings
	case !l.HeaderOK && l.Header.Type == "session":
		cli.Warnf(w, name, "%s: line 1: bad header (%s): reading what it can", label, l.Header.Problem)
	case !l.HeaderOK && l.Lines > 0 && (l.Stopped == nil || l.Stopped.Line > 1):
		cli.Warnf(w, name, "%s: line 1 is not a session header: reading what it can", label)
	case l.Header.Version > session.Version:
		cli.Warnf(w, name, "%s is format version %d, newer than %d: reading what it understands", label, l.Header.Version, session.Version)
	}
	skipped := append(append(append([]scan.Problem{}, l.Invalid...), l.DupIDs...), l.Headers...)
	for i, p := range skipped {
		if i == 10 {
			cli.Warnf(w, name, "%s: %d more invalid lines skipped", label, len(skipped)-10)
			break
		}
		cli.Warnf(w, name, "%s: %s: skipped", label, p)
	}
	if p := l.Stopped; p != nil {
		cli.Warnf(w, name, "%s: line %d: %s: read up to line %d (run panto-fsck %s)", label, p.Line, p.What, p.Line-1, label)
		code = exitcode.Findings
	}
	return code
}
